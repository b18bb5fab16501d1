"""Where a student's function runs in a child process (issue 35, item 2).

A :class:`Child` answers one lab's calls, *spawned* on a student's file (:func:`main`,
confined by :mod:`.confine`) or *forked* from the notebook's kernel with the function in the
copy (Linux; only a forked child's word on a use of the lab's solution is taken). Its
original stdin and stdout are a private channel (:func:`channel`): a greeting, then for each
request (a pickle from the trusted grader) the call's plain-JSON record on one ASCII line,
read by :func:`read_record`. :class:`InChild` is the engine's caller: a child that is late or
dies is ended with its process group, and the next check starts a new one.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import io
import json
import os
import pickle
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from types import CodeType
from typing import IO, Any, BinaryIO, Final, Literal, TypeAlias

from ctxlab.lab.grading.calls import Trial
from ctxlab.lab.grading.confine import LIVE, Launch, prepare_launch
from ctxlab.lab.grading.declare import Row
from ctxlab.lab.grading.misconceptions import DIAGNOSIS
from ctxlab.lab.grading.perform import perform, safe_message
from ctxlab.lab.grading.plain import type_name
from ctxlab.lab.grading.runner import (
    NOT_RUN,
    Outcome,
    at,
    attempt,
    clear_stray_stop,
    clock,
    hung,
    outcome,
)
from ctxlab.lab.grading.text import Text, same

#: How many bytes of the child's standard error are kept (at the start and at the end).
STDERR_KEEP: Final = 4096

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def escape(text: str, *, newlines: bool = False) -> str:
    """``text`` with every control character (terminal escapes, bidi overrides) shown as
    ``\\xNN``/``\\uNNNN``; newlines kept unless ``newlines`` (then ``\\n``)."""
    text = _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)
    if newlines:
        text = text.replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t")
    return text


@dataclass(eq=False)
class ChildGone(BaseException):
    """The child cannot answer (a ``BaseException``: no check's ``except`` takes it): too
    ``late``, ``out_of_cpu`` (both a timeout), or ended with exit ``code`` (-signal)."""

    why: str
    _: KW_ONLY
    late: bool = False
    out_of_cpu: bool = False
    code: int | None = None


@dataclass(frozen=True)
class Spawn:
    """A child spawned on the student's file ``path`` (defining ``keyword``), with ``cpu``
    seconds of CPU time for its life, importing ctxlab from ``lib``."""

    path: Path
    lab: str
    keyword: str
    cpu: int
    lib: Path


# ----------------------------------------------------------------------------------------
# The child's side

#: The name the student's file is imported as (in the child only).
MODULE_NAME: Final = "ctxlab_student_impl"


def channel() -> tuple[BinaryIO, BinaryIO]:
    """(requests, replies): the original fds 0 and 1, moved out of the student's way."""
    private = os.dup(0), os.dup(1)  # not inherited by processes the student's code starts
    if sys.platform == "win32":  # no newline translation on the channel
        import msvcrt

        for fd in private:
            msvcrt.setmode(fd, os.O_BINARY)
    requests = os.fdopen(private[0], "rb")  # buffered: read(n) returns n bytes, or EOF
    replies = os.fdopen(private[1], "wb", buffering=0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)  # C-level writes and subprocesses' stdout go to standard error
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - lives as long as we do
    sys.stdout = sys.stderr
    return requests, replies


def _reply(replies: BinaryIO, message: dict[str, Any]) -> None:
    try:
        line = json.dumps(message, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError) as error:
        line = json.dumps({"worker_error": f"the reply could not be written as JSON: {error}"})
    replies.write(line.encode("ascii") + b"\n")


def _exit_on_hangup(stream: BinaryIO) -> None:
    """Exit as soon as the grader closes the channel, even during a call (Windows has no
    ``poll``: there the grader ends the child)."""
    import select

    if not hasattr(select, "poll"):
        return
    hangup = select.poll()
    hangup.register(stream.fileno(), 0)  # no event asked for: a hang-up or an error only

    def wait() -> None:
        hangup.poll()
        os._exit(0)

    threading.Thread(target=wait, name="ctxlab-hangup", daemon=True).start()


def serve(
    function: Callable[..., Any],
    requests: BinaryIO,
    replies: BinaryIO,
    references: frozenset[CodeType] = frozenset(),
) -> None:
    """Answer ``function``'s calls, watched for ``references``, until the grader closes the
    channel (then exit)."""
    _reply(replies, {"ready": True})
    _exit_on_hangup(requests)
    while True:
        try:  # a pickle ends itself
            args, kwargs, arg_names = pickle.load(requests)
        except (EOFError, pickle.UnpicklingError):
            os._exit(0)
        record = perform(function, args, kwargs, arg_names=arg_names, references=references)
        _reply(replies, record)


def main() -> int:
    """The spawned child, on ``argv`` (file, keyword): serve the file's function."""
    path, keyword = Path(sys.argv[1]), sys.argv[2]
    requests, replies = channel()
    sys.path.insert(0, str(path.parent))
    try:
        spec = importlib.util.spec_from_file_location(MODULE_NAME, path)  # path: a .py file
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[MODULE_NAME] = module
        spec.loader.exec_module(module)
    except BaseException as error:  # whatever the file raises at import, SystemExit too
        _reply(replies, {"import_error": f"{type(error).__name__}: {safe_message(error)}"})
        return 0
    function: Callable[..., Any] | None = getattr(module, keyword, None)
    if not callable(function):
        got = "None" if function is None else f"a {type_name(function)}"
        _reply(replies, {"missing": keyword, "got": got})
        return 0
    serve(function, requests, replies)
    return 0


# ----------------------------------------------------------------------------------------
# The child, seen from here


class _Forked:
    """A forked child, with what :class:`Child` uses of a :class:`subprocess.Popen`."""

    def __init__(self, pid: int, stdin: IO[bytes], stdout: IO[bytes], stderr: IO[bytes]):
        self.pid, self.stdin, self.stdout, self.stderr = pid, stdin, stdout, stderr
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                done, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # pragma: no cover - reaped elsewhere
                done, status = self.pid, 0
            if done:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float) -> int:
        deadline = clock() + timeout
        while (code := self.poll()) is None:
            if clock() > deadline:
                raise subprocess.TimeoutExpired("fork", timeout)
            time.sleep(0.0005)
        return code

    def kill(self) -> None:
        os.kill(self.pid, signal.SIGKILL)


def _fork(function: Callable[..., Any], references: frozenset[CodeType]) -> _Forked:
    """A copy of this process serving ``function``'s calls on its stdin, stdout, stderr."""
    import warnings

    pipes = [os.pipe() for _ in range(3)]  # requests, replies, standard error
    with warnings.catch_warnings():  # 3.12+: "fork() of a multi-threaded process"
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the forked child (its coverage is not collected)
        try:
            clear_stray_stop()  # a stop sent to a kernel thread that is not in this copy
            os.setpgid(0, 0)
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # the kernel ends this child itself
            for target, fd in enumerate((pipes[0][0], pipes[1][1], pipes[2][1])):
                os.dup2(fd, target)
            for fd in (fd for pipe in pipes for fd in pipe):
                os.close(fd)
            error = io.FileIO(2, "w", closefd=False)  # never the kernel's own (its sockets)
            sys.stderr = io.TextIOWrapper(error, "utf-8", "backslashreplace", line_buffering=True)
            serve(function, *channel(), references)
        finally:
            os._exit(0)
    with contextlib.suppress(OSError):  # also done by the child: whichever runs first
        os.setpgid(pid, pid)
    for fd in (pipes[0][0], pipes[1][1], pipes[2][1]):
        os.close(fd)
    ends = os.fdopen(pipes[0][1], "wb"), os.fdopen(pipes[1][0], "rb"), os.fdopen(pipes[2][0], "rb")
    return _Forked(pid, *ends)


class Child:
    """One child process serving one lab's calls: spawned as ``how`` says, or forked with
    the function ``how`` in it (its calls watched for ``references``)."""

    MAX_REPLY: Final = 16 * 1024 * 1024

    def __init__(
        self,
        arg_names: tuple[str, ...],
        how: Spawn | Callable[..., Any],
        references: frozenset[CodeType] = frozenset(),
    ) -> None:
        self.arg_names = arg_names
        self.how = how
        self.references = references
        self.forked = not isinstance(how, Spawn)
        self.process: subprocess.Popen[bytes] | _Forked | None = None
        self.launch: Launch | None = None
        self._stderr, self._cut = bytearray(), 0
        self.started = False

    def start(self, deadline: float) -> dict[str, Any]:
        """Start the child; its first reply (``ready``/``import_error``/``missing``)."""
        self.stop()
        self._stderr, self._cut = bytearray(), 0
        how = self.how
        if isinstance(how, Spawn):
            launch = self.launch = prepare_launch(how.path, how.lib, how.keyword, how.cpu)
            process: subprocess.Popen[bytes] | _Forked = subprocess.Popen(
                launch.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=launch.work,
                env=launch.env,
                start_new_session=os.name == "posix",
                preexec_fn=launch.preexec,
                close_fds=True,
            )
        else:
            process = _fork(how, self.references)
        self.process = process
        LIVE.add(process.pid)
        threading.Thread(target=self._drain, args=(process,), daemon=True).start()
        return self.reply(deadline)

    def stop(self, *, graceful: bool = False) -> None:
        """Kill the child, everything it started, and remove its folder; ``graceful`` (spawned):
        first let it exit by itself, so that its CPU time is counted."""
        process, launch = self.process, self.launch
        if process is not None:
            if graceful and launch is not None and process.stdin:
                with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                    process.stdin.close()
                    process.wait(0.5)
            if os.name == "posix":
                with contextlib.suppress(OSError):
                    os.killpg(process.pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(5)
            LIVE.discard(process.pid)
            for stream in (process.stdin, process.stdout):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
        if launch is not None:
            launch.end()
        self.process = self.launch = None

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def _drain(self, process: subprocess.Popen[bytes] | _Forked) -> None:
        stream = process.stderr
        assert stream is not None
        with contextlib.suppress(OSError, ValueError):
            while chunk := os.read(stream.fileno(), 65536):
                self._stderr += chunk
                if len(self._stderr) > 2 * STDERR_KEEP:  # the start and the end are kept
                    self._cut += len(self._stderr) - 2 * STDERR_KEEP
                    del self._stderr[STDERR_KEEP:-STDERR_KEEP]
        with contextlib.suppress(OSError):
            stream.close()

    def reply(self, deadline: float) -> dict[str, Any]:
        """The reply to the last request: one JSON line by ``deadline``, else ChildGone."""
        process = self.process
        assert process is not None and process.stdout is not None
        timer = None
        if os.name == "nt":  # no select() on a pipe: a timer ends a child that is late
            timer = threading.Timer(max(deadline - clock(), 0.0), process.kill)
            timer.start()
        buffer, searched, fd = bytearray(), 0, process.stdout.fileno()
        try:
            while (end := buffer.find(b"\n", searched)) < 0:
                searched = len(buffer)
                if searched > self.MAX_REPLY:
                    raise ChildGone(f"it sent a reply larger than {self.MAX_REPLY:,} bytes")
                chunk = os.read(fd, 1 << 16) if _readable(fd, deadline) else b""
                if not chunk and clock() >= deadline:
                    raise ChildGone("it did not answer in time", late=True)
                if not chunk:
                    raise self._gone()
                buffer += chunk
        finally:
            if timer is not None:
                timer.cancel()
        if end + 1 < len(buffer):
            raise ChildGone("it sent a reply nobody asked for")
        try:
            reply = json.loads(buffer[:end].decode("ascii"))
        except (ValueError, RecursionError):
            reply = None
        if not isinstance(reply, dict):
            raise ChildGone("it sent a reply that is not a JSON object")
        return reply

    def stderr_text(self) -> str:
        if not self._cut:
            return self._stderr.decode("utf-8", "replace")
        head, tail = self._stderr[:STDERR_KEEP], self._stderr[STDERR_KEEP:]
        middle = f"\n[... {self._cut:,} bytes cut ...]\n"
        return head.decode("utf-8", "replace") + middle + tail.decode("utf-8", "replace")

    def call(
        self, args: tuple[Any, ...], kwargs: Mapping[str, Any], deadline: float
    ) -> dict[str, Any]:
        """One call of the student's function, answered by ``deadline``: its record."""
        process = self.process
        if process is None or process.stdin is None:
            raise ChildGone("it is not running")
        request = (tuple(args), dict(kwargs), self.arg_names)
        try:
            process.stdin.write(pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL))
            process.stdin.flush()
        except (OSError, ValueError):
            raise self._gone() from None
        return read_record(self.reply(deadline), forked=self.forked)

    def _gone(self) -> ChildGone:
        """Why the child's channel closed (bubblewrap passes a signal on as exit code 128 + n)."""
        assert self.process is not None
        bwrap = self.launch is not None and self.launch.sandboxed
        try:
            code = self.process.wait(2)
        except subprocess.TimeoutExpired:
            return ChildGone("it closed its channel")
        signalled = -code if code < 0 else code - 128 if code > 128 and bwrap else 0
        if signalled:
            if signalled == getattr(signal, "SIGXCPU", None):
                return ChildGone("it used up its CPU time", out_of_cpu=True, code=-signalled)
            try:
                name = signal.Signals(signalled).name
            except ValueError:
                name = f"signal {signalled}"
            return ChildGone(f"the process running your file was ended by {name}", code=-signalled)
        if code == 0:
            return ChildGone("the process running your file ended", code=0)
        return ChildGone(f"the process running your file exited with code {code}", code=code)


_ENDS: Final = {"returned", "raised", "too_large"}  # exactly one in a call's record
#: Each field a call's record may have, and what its value must be.
_RECORD: Final[dict[str, Callable[[Any], bool]]] = {
    "returned": lambda value: True,
    "raised": lambda value: (
        isinstance(value, dict)
        and all(isinstance(value.get(key), str) for key in ("type", "base", "message"))
        and isinstance(value.get("attributes", {}), dict)
    ),
    "too_large": lambda value: isinstance(value, str),
    "changed": lambda value: isinstance(value, list) and all(isinstance(n, str) for n in value),
    "output": lambda value: isinstance(value, str),
    "output_cut": lambda value: type(value) is int,
    "reference": lambda value: type(value) is bool,
}


def read_record(reply: dict[str, Any], *, forked: bool = False) -> dict[str, Any]:
    """A reply as the call's record :class:`Trial` reads, or :class:`ChildGone`. A spawned
    child's ``reference`` is never taken and its output is escaped; a ``forked`` one's are."""
    if "worker_error" in reply:
        raise ChildGone(f"it failed: {escape(str(reply['worker_error']))[:600]}")
    fits = all(key in _RECORD and _RECORD[key](value) for key, value in reply.items())
    if not fits or len(_ENDS & set(reply)) != 1:
        raise ChildGone("it sent a reply that is not a call's record")
    if forked:
        return reply
    return {**reply, "reference": False, "output": escape(reply.get("output", ""))}


def _readable(fd: int, deadline: float) -> bool:
    """Has ``fd`` data or its end before ``deadline``? Polled in slices (an interrupt lands)."""
    if os.name == "nt":
        return True
    import select

    waiting = select.poll()  # not select(): any fd number
    waiting.register(fd, select.POLLIN)
    while (left := deadline - clock()) > 0:
        if waiting.poll(min(left, 0.1) * 1000):
            return True
    return False


# ----------------------------------------------------------------------------------------
# The engine's caller

Status = Literal["ok", "timeout", "crashed", "refused", "invalid"]
_How: TypeAlias = Literal["ran", "hung", "gone", "invalid"]

_ENDED = Text("; its grading process was ended", "；评分进程已被结束")
_KEPT_DYING = (
    Text(
        "not run: the process running your file kept dying (one time limit spent)",
        "未运行：运行你的文件的进程一再退出（已用完一个时间限制）",
    ),
    Text(
        "not run: the grading process kept dying (one time limit spent)",
        "未运行：评分进程一再退出（已用完一个时间限制）",
    ),
)


@dataclass
class InChild(contextlib.AbstractContextManager["InChild"]):
    """The engine's caller whose calls ``child`` answers within what is left of the row's
    time limit (the child's start counted). What ended a file's lab early (``status``,
    ``reason``, ``invalid``) is kept; checks lost to a dying child share one time limit."""

    child: Child
    status: Status = "ok"
    reason: str = ""
    invalid: Text | None = None
    lost: float = 0.0  # seconds of checks lost to a dying child

    def __exit__(self, *exc: object) -> None:
        self.child.stop(graceful=True)

    def run(self, row: Row, limit: float) -> Outcome:
        begun = clock()
        child, left = self.child, limit - self.lost
        deadline = begun + left
        call = functools.partial(child.call, deadline=deadline)
        trial = Trial(_not_here, child.arg_names, caller=call)
        detail, how = self._start(left, deadline) if not child.alive() else (None, "ran")
        if how == "ran":  # the check runs here, its calls answered by the child
            try:
                detail = attempt(row, trial, (ChildGone, KeyboardInterrupt))
            except ChildGone as gone:
                child.stop()
                detail = self._lost(trial, gone, left)
                how = "hung" if gone.late or gone.out_of_cpu else "gone"
        output, stop = trial.output, None
        if row.key == DIAGNOSIS:  # a known mistake looked for: never the verdict
            detail = detail if how == "ran" else None
        elif how == "invalid":
            self.invalid = stop = detail or same("")
        elif how == "hung" and self.status == "crashed":  # out of the time its deaths left
            stop = _KEPT_DYING[child.forked]
        elif how == "hung":
            self.status, self.reason = "timeout", f"{row.key}: {detail.en if detail else ''}"
            stop = NOT_RUN
        elif how == "gone":
            self.lost += clock() - begun
            if self.status == "ok":
                self.status, self.reason = "crashed", f"{row.key}: {detail.en if detail else ''}"
            if self.lost >= limit - 0.05:
                stop = _KEPT_DYING[child.forked]
            output = f"{output}\n{child.stderr_text()}".strip("\n")
        clean = str if child.forked else escape  # the kernel shows its own as printed
        said = None if detail is None else Text(clean(detail.en), clean(detail.zh))
        return outcome(trial, said, clean(output), stop)

    def _lost(self, trial: Trial, gone: ChildGone, limit: float) -> Text:
        """What a row says of a call that did not come back."""
        if gone.out_of_cpu and isinstance(self.child.how, Spawn):
            cpu = f"{self.child.how.cpu} s"
            return at(trial) + Text(
                f"the process running your file used up its CPU time ({cpu} for the whole lab;"
                " an endless loop? busy threads?)",
                f"运行你的文件的进程用完了它的 CPU 时间（整个实验共 {cpu}；死循环？忙碌的线程？）",
            )
        if gone.late:
            return hung(trial, limit) + _ENDED if self.child.forked else hung(trial, limit)
        if not self.child.forked:
            return at(trial) + Text(
                f"the call did not come back: {gone.why} (os._exit? a crash? a limit?)",
                f"这次调用没有返回结果：{gone.why}（os._exit？程序崩溃？超出限制？）",
            )
        code = gone.code
        how = "" if code is None else f" (signal {-code})" if code < 0 else f" (exit code {code})"
        return at(trial) + Text(
            f"the grading process ended during this call{how}: did the function call os._exit,"
            " or crash Python? A lab function must return or raise",
            f"评分进程在这次调用中结束了{how}：函数调用了 os._exit，还是让 Python 崩溃了？"
            "实验函数必须返回结果或抛出异常",
        )

    def _start(self, limit: float, deadline: float) -> tuple[Text | None, _How]:
        """Start the child, within ``limit`` s (by ``deadline``); how that ended."""
        child = self.child
        spawn = child.how if isinstance(child.how, Spawn) else None
        try:
            hello = child.start(deadline)
        except ChildGone as gone:
            child.stop()
            if gone.late or gone.out_of_cpu:
                cpu = spawn.cpu if spawn is not None else 0
                within = f"{cpu} s of CPU time" if gone.out_of_cpu else f"{limit:g} s"
                within_zh = f"{cpu} 秒 CPU 时间" if gone.out_of_cpu else f"{limit:g} 秒"
                en = f"importing your file did not end within {within}"
                return Text(en, f"导入你的文件没有在 {within_zh}内结束"), "hung"
            tail = escape(child.stderr_text()[-600:])
            why = f"importing your file failed: {gone.why}\n{tail}".strip()
            return Text(why, f"导入你的文件失败：{gone.why}\n{tail}".strip()), "gone"
        if not _is_hello(hello):
            child.stop()
            return Text(
                "the process running your file sent something else than its greeting",
                "运行你的文件的进程发来的不是它的问候",
            ), "gone"
        if "ready" not in hello and spawn is not None:
            child.stop()
            if "import_error" in hello:
                why = f"importing {spawn.path} failed: {escape(str(hello['import_error']))}"
            else:
                got = escape(str(hello.get("got", "None")))
                flag = f"-m lab{spawn.lab.replace('.', '_')}"
                why = (
                    f"{spawn.path} defines no function {spawn.keyword}(), which Lab"
                    f" {spawn.lab} checks (it is {got}). Define it, or choose the lab with {flag}."
                )
            return Text(why, why), ("gone" if child.started else "invalid")
        child.started = True
        return None, "ran"


def _is_hello(reply: dict[str, Any]) -> bool:
    """Is ``reply`` the worker's first line, and nothing else?"""
    if reply == {"ready": True}:
        return True
    texts = all(isinstance(value, str) for value in reply.values())
    return texts and set(reply) in ({"import_error"}, {"missing", "got"})


def _not_here(*args: Any, **kwargs: Any) -> Any:  # pragma: no cover - never called
    raise AssertionError("the student's function runs in the child process")
