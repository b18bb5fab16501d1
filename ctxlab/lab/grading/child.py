"""Where a student's function runs in a child process (issue 25; issue 35, item 2).

A :class:`Child` answers one lab's calls on a private channel (:mod:`.worker`); the grader
runs every check and makes every verdict, each reply read as a call's plain record
(:func:`read_record`). A child is *spawned* on a student's file (``python -I -S``, confined as
:mod:`.confine` says: the terminal route and class grading, :mod:`.sandbox`), or *forked*
from the notebook's kernel with the student's function already in the copy (Linux,
:func:`set_isolation`): nothing is pickled to the kernel, and the forked child's word on a
use of the lab's solution is taken (it is the student's own kernel; a spawned child's never
is). :class:`InChild` is the engine's caller for both: each call waits at most for what is
left of its check's time limit; a child that misses it, or dies, is ended with its process
group and the next check starts a new one. After a lab, a spawned child's leftovers are
killed too (the run's marker in their environment; a subreaper reaps the rest).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import CodeType
from typing import IO, Any, Final, Literal, TypeAlias

from ctxlab.lab.grading.calls import Failed, Trial
from ctxlab.lab.grading.confine import (
    LIVE,
    NOBODY,
    Launch,
    child_as_nobody,
    end_cgroup,
    prepare_launch,
    sweep,
)
from ctxlab.lab.grading.declare import Row
from ctxlab.lab.grading.misconceptions import DIAGNOSIS
from ctxlab.lab.grading.runner import NOT_RUN, Outcome, at, clock, get_isolation, hung, unreadable
from ctxlab.lab.grading.text import Text, same
from ctxlab.lab.grading.worker import channel, pack, serve

__all__ = [
    "Child",
    "ChildGone",
    "InChild",
    "Spawn",
    "Status",
    "escape",
    "process_available",
    "read_record",
    "sandbox_folder",
    "use_process",
]

#: How much of the child's standard error is kept (the start and the end), in bytes.
STDERR_KEEP: Final = 4096

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def escape(text: str, *, newlines: bool = False) -> str:
    """``text`` with every control character (terminal escapes, bidi overrides) shown as
    ``\\xNN``/``\\uNNNN``; newlines kept unless ``newlines`` (then ``\\n``)."""
    text = _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)
    if newlines:
        text = text.replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t")
    return text


_BASE: list[Path] = []


def sandbox_folder() -> Path:
    """This process's folder of sandbox files (removed at exit)."""
    if not _BASE:
        base = Path(tempfile.mkdtemp(prefix="ctxlab-sandbox-"))
        base.chmod(0o711)
        _BASE.append(base)
        import atexit

        atexit.register(shutil.rmtree, base, True)
    return _BASE[0]


# ----------------------------------------------------------------------------------------
# The notebook's switch: a forked child, or the kernel itself


def process_available() -> bool:
    """Can a run be made in a forked child here? (POSIX with ``os.fork``, not Pyodide.)"""
    return hasattr(os, "fork") and sys.platform not in ("emscripten", "wasi", "win32")


def use_process() -> bool:
    """Should this notebook run call the student's function in a forked child?"""
    mode = get_isolation()
    if mode in ("in-process", "trace") or not process_available():
        return False
    return mode == "process" or sys.platform.startswith("linux")


# ----------------------------------------------------------------------------------------
# The child, seen from here


class ChildGone(BaseException):
    """The child cannot answer (a ``BaseException``: no check's ``except`` takes it).
    ``late``: it did not answer in time; ``out_of_cpu``: it was ended by its CPU-time limit
    (both a timeout, not a crash); ``code``: its exit code (negative: a signal's number)."""

    def __init__(
        self, why: str, *, late: bool = False, out_of_cpu: bool = False, code: int | None = None
    ) -> None:
        super().__init__(why)
        self.why = why
        self.late = late
        self.out_of_cpu = out_of_cpu
        self.code = code


@dataclass(frozen=True)
class Spawn:
    """How a child is spawned: on the student's file ``path`` (which must define
    ``keyword``, Lab ``lab``'s function), with ``cpu`` seconds of CPU time for its whole
    life, importing ctxlab from ``lib``."""

    path: Path
    lab: str
    keyword: str
    cpu: int
    lib: Path


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
    """A copy of this process that serves ``function``'s calls (watched for
    ``references``) on three pipes: its standard input, output and error."""
    import warnings

    pipes = [os.pipe() for _ in range(3)]  # requests, replies, standard error
    with warnings.catch_warnings():  # 3.12+: "fork() of a multi-threaded process"
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the forked child (its coverage is not collected)
        try:
            os.setpgid(0, 0)
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # the kernel ends this child itself
            for target, fd in enumerate((pipes[0][0], pipes[1][1], pipes[2][1])):
                os.dup2(fd, target)
            for fd in (fd for pipe in pipes for fd in pipe):
                os.close(fd)
            # never the kernel's own streams (its sockets): standard error, drained
            error = io.FileIO(2, "w", closefd=False)
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
    the function ``how`` in it (its calls watched for ``references``, the lab's solution)."""

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
        self.work: Path | None = None
        self._buffer = bytearray()
        self._head = bytearray()
        self._tail = bytearray()
        self.stderr_bytes = 0
        self.started = False

    # -------------------------------------------------------------- start and stop

    def start(self, deadline: float) -> dict[str, Any]:
        """Start the child; its first reply (``ready``/``import_error``/``missing``)."""
        self.stop()
        self._buffer = bytearray()
        self._head, self._tail, self.stderr_bytes = bytearray(), bytearray(), 0
        how = self.how
        process = self._spawn(how) if isinstance(how, Spawn) else _fork(how, self.references)
        self.process = process
        LIVE.add(process.pid)
        threading.Thread(target=self._drain, args=(process,), daemon=True).start()
        return self.reply(deadline)

    def _spawn(self, spawn: Spawn) -> subprocess.Popen[bytes]:
        work = Path(tempfile.mkdtemp(prefix="run-", dir=sandbox_folder()))
        for sub in ("home", "tmp"):
            (work / sub).mkdir()
        shutil.copyfile(spawn.path, work / "submission.py")
        if child_as_nobody():
            for path in (work, work / "home", work / "tmp", work / "submission.py"):
                os.chown(path, NOBODY, NOBODY)
        self.work = work
        self.launch = launch = prepare_launch(
            work, spawn.lib, "submission.py", spawn.keyword, spawn.lab, spawn.cpu
        )
        return subprocess.Popen(
            launch.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=launch.cwd,
            env=launch.env,
            start_new_session=os.name == "posix",
            preexec_fn=launch.preexec,
            close_fds=True,
        )

    def stop(self, *, graceful: bool = False) -> None:
        """Kill the child, everything it started, and remove its folder. ``graceful`` (a
        spawned child): first close its channel and give it a moment to exit by itself (so
        that its CPU time is counted: a killed pid namespace's processes are not reaped)."""
        process, launch = self.process, self.launch
        if process is not None and graceful and launch is not None and process.stdin:
            with contextlib.suppress(OSError):
                process.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(0.5)
        if process is not None:
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
            if launch.cgroup is not None:
                end_cgroup(launch.cgroup)
            sweep(launch.token)
        if self.work is not None:
            shutil.rmtree(self.work, ignore_errors=True)
        self.process = self.launch = self.work = None

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    # -------------------------------------------------------------- the channel

    def _drain(self, process: subprocess.Popen[bytes] | _Forked) -> None:
        stream = process.stderr
        assert stream is not None
        with contextlib.suppress(OSError, ValueError):
            while chunk := os.read(stream.fileno(), 65536):
                self.stderr_bytes += len(chunk)
                room = STDERR_KEEP - len(self._head)
                if room > 0:
                    self._head += chunk[:room]
                    chunk = chunk[room:]
                self._tail = (self._tail + chunk)[-STDERR_KEEP:]
        with contextlib.suppress(OSError):
            stream.close()

    def reply(self, deadline: float) -> dict[str, Any]:
        """The reply to the last request: one line of JSON (at most :data:`MAX_REPLY`
        bytes) by ``deadline`` (on :func:`~.runner.clock`), else :class:`ChildGone`."""
        import json

        process = self.process
        assert process is not None and process.stdout is not None
        timer = None
        if os.name == "nt":  # no select() on a pipe: a timer ends a child that is late
            timer = threading.Timer(max(deadline - clock(), 0.0), process.kill)
            timer.start()
        searched = 0
        try:
            while (end := self._buffer.find(b"\n", searched)) < 0:
                searched = len(self._buffer)
                if searched > self.MAX_REPLY:
                    raise ChildGone(f"it sent a reply larger than {self.MAX_REPLY:,} bytes")
                if not _readable(process.stdout.fileno(), deadline):
                    raise ChildGone("it did not answer in time", late=True)
                chunk = os.read(process.stdout.fileno(), 1 << 16)
                if not chunk and clock() >= deadline:
                    raise ChildGone("it did not answer in time", late=True)
                if not chunk:
                    raise _gone(process, self.launch is not None and self.launch.sandboxed)
                self._buffer += chunk
        finally:
            if timer is not None:
                timer.cancel()
        line, rest = bytes(self._buffer[:end]), self._buffer[end + 1 :]
        if rest:
            raise ChildGone("it sent a reply nobody asked for")
        self._buffer = rest
        try:
            reply = json.loads(line.decode("ascii"))
        except (ValueError, RecursionError):
            reply = None
        if not isinstance(reply, dict):
            raise ChildGone("it sent a reply that is not a JSON object")
        return reply

    def stderr_text(self) -> str:
        head = self._head.decode("utf-8", "replace")
        if self.stderr_bytes <= STDERR_KEEP:
            return head
        tail = bytes(self._tail)[-(STDERR_KEEP - len(self._head) or STDERR_KEEP) :]
        cut = self.stderr_bytes - len(self._head) - len(tail)
        middle = f"\n[... {cut:,} bytes cut ...]\n" if cut > 0 else ""
        return head + middle + tail.decode("utf-8", "replace")

    def call(
        self, args: tuple[Any, ...], kwargs: Mapping[str, Any], deadline: float
    ) -> dict[str, Any]:
        """One call of the student's function, answered by ``deadline``: its record."""
        process = self.process
        if process is None or process.stdin is None:
            raise ChildGone("it is not running")
        request = pack((tuple(args), dict(kwargs), self.arg_names))
        try:
            process.stdin.write(request)
            process.stdin.flush()
        except (OSError, ValueError):
            raise _gone(process, self.launch is not None and self.launch.sandboxed) from None
        return read_record(self.reply(deadline), forked=self.forked)


_RECORD_KEYS: Final = {
    "returned",
    "raised",
    "too_large",
    "changed",
    "output",
    "output_cut",
    "reference",
}


def read_record(reply: dict[str, Any], *, forked: bool = False) -> dict[str, Any]:
    """A reply as the call's record :class:`Trial` reads, or :class:`ChildGone` when it is
    not one. A spawned child's word on a use of the solution (``reference``) is never
    taken and what it printed is escaped; a ``forked`` child, the student's own kernel,
    is believed and shown as it printed, as in the kernel itself."""
    if "worker_error" in reply:
        raise ChildGone(f"it failed: {escape(str(reply['worker_error']))[:600]}")
    if not set(reply) <= _RECORD_KEYS or len({"returned", "raised", "too_large"} & set(reply)) != 1:
        raise ChildGone("it sent a reply that is not a call's record")
    changed = reply.get("changed", [])
    raised = reply.get("raised")
    if (
        not isinstance(reply.get("output", ""), str)
        or type(reply.get("output_cut", 0)) is not int
        or type(reply.get("reference", False)) is not bool
        or not isinstance(changed, list)
        or not all(isinstance(name, str) for name in changed)
        or ("raised" in reply and not _is_error(raised))
        or ("too_large" in reply and not isinstance(reply["too_large"], str))
    ):
        raise ChildGone("it sent a reply that is not a call's record")
    if forked:
        return reply
    return {**reply, "reference": False, "output": escape(reply.get("output", ""))}


def _readable(fd: int, deadline: float) -> bool:
    """Has ``fd`` data, or its end (True), before ``deadline`` (False)? Waited for in short
    slices, so that a kernel interrupt lands at once (Windows: see :meth:`Child.reply`)."""
    if os.name == "nt":
        return True
    import select

    waiting = select.poll()  # not select(): any fd number
    waiting.register(fd, select.POLLIN)
    while (left := deadline - clock()) > 0:
        if waiting.poll(min(left, 0.1) * 1000):
            return True
    return False


def _is_error(data: object) -> bool:
    return (
        isinstance(data, dict)
        and isinstance(data.get("type"), str)
        and isinstance(data.get("base"), str)
        and isinstance(data.get("message"), str)
        and isinstance(data.get("attributes", {}), dict)
    )


def _gone(process: subprocess.Popen[bytes] | _Forked, bwrap: bool) -> ChildGone:
    """Why the child's channel closed, from how its process ended (``bwrap``: it is
    bubblewrap, which passes a signal's end on as the exit code 128 + its number)."""
    try:
        code = process.wait(2)
    except subprocess.TimeoutExpired:
        return ChildGone("it closed its channel")
    signalled = -code if code < 0 else code - 128 if code > 128 and bwrap else 0
    if signalled:
        xcpu = getattr(signal, "SIGXCPU", None)
        if xcpu is not None and signalled == xcpu:
            return ChildGone("it used up its CPU time", out_of_cpu=True, code=-signalled)
        try:
            name = signal.Signals(signalled).name
        except ValueError:
            name = f"signal {signalled}"
        return ChildGone(f"the process running your file was ended by {name}", code=-signalled)
    if code == 0:
        return ChildGone("the process running your file ended", code=0)
    return ChildGone(f"the process running your file exited with code {code}", code=code)


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


class InChild:
    """The engine's caller (:class:`~.engine.Caller`) whose calls ``child`` answers: each
    row's check runs here, each of its calls given what is left of the row's time limit
    (the child's start counted in it). What ended a file's lab early (``status``,
    ``reason``, ``invalid``) is kept for its outcome; checks lost to a child that died
    share one time limit between them. In a ``with`` block, the child is ended after it."""

    def __init__(self, child: Child) -> None:
        self.child = child
        self.status: Status = "ok"
        self.reason = ""
        self.invalid: Text | None = None
        self.lost = 0.0  # seconds of checks lost to a dying child

    def __enter__(self) -> InChild:
        return self

    def __exit__(self, *exc: object) -> None:
        self.child.stop(graceful=True)

    def run(self, row: Row, limit: float) -> Outcome:
        begun = clock()
        child, left = self.child, limit - self.lost
        deadline = begun + left

        def call(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
            return child.call(args, kwargs, deadline)

        trial = Trial(_not_here, child.arg_names, caller=call)
        detail, how = self._start(left, deadline) if not child.alive() else (None, "ran")
        if how == "ran":
            detail, how = self._check(row, trial, left)
        output, stop = trial.output, None
        if row.key == DIAGNOSIS:  # a known mistake looked for: never the verdict
            detail = detail if how == "ran" else None
        elif how == "invalid":
            self.invalid = stop = detail or same("")
        elif how == "hung" and self.status == "crashed":  # out of the time its deaths left
            stop = _KEPT_DYING[child.forked]
        elif how == "hung":
            self.status, self.reason = "timeout", f"{row.key}: {_plain(detail)}"
            stop = NOT_RUN
        elif how == "gone":
            self.lost += clock() - begun
            if self.status == "ok":
                self.status, self.reason = "crashed", f"{row.key}: {_plain(detail)}"
            if self.lost >= limit - 0.05:
                stop = _KEPT_DYING[child.forked]
            output = f"{output}\n{child.stderr_text()}".strip("\n")
        clean = str if child.forked else escape  # the kernel shows its own as printed
        said = None if detail is None else Text(clean(detail.en), clean(detail.zh))
        status: Literal["pass", "fail"] = "pass" if said is None else "fail"
        used = trial.used_reference
        return Outcome(status, said, clean(output), trial.output_cut, used, stop)

    def _check(self, row: Row, trial: Trial, limit: float) -> tuple[Text | None, _How]:
        """Run ``row``'s check here, its calls answered by the child."""
        try:
            row.run(trial)
        except Failed as failure:
            return failure.text, "ran"
        except ChildGone as gone:
            self.child.stop()
            how: _How = "hung" if gone.late or gone.out_of_cpu else "gone"
            return self._lost(trial, gone, limit), how
        except KeyboardInterrupt:
            raise
        except BaseException as error:
            return at(trial) + unreadable(error), "ran"
        return None, "ran"

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
        first = not child.started
        try:
            hello = child.start(deadline)
        except ChildGone as gone:
            child.stop()
            if gone.late or gone.out_of_cpu:
                cpu = spawn.cpu if spawn is not None else 0
                within = f"{cpu} s of CPU time" if gone.out_of_cpu else f"{limit:g} s"
                within_zh = f"{cpu} 秒 CPU 时间" if gone.out_of_cpu else f"{limit:g} 秒"
                return (
                    Text(
                        f"importing your file did not end within {within}",
                        f"导入你的文件没有在 {within_zh}内结束",
                    ),
                    "hung",
                )
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
            return Text(why, why), ("invalid" if first else "gone")
        child.started = True
        return None, "ran"


def _plain(detail: Text | None) -> str:
    return "" if detail is None else detail.en


def _is_hello(reply: dict[str, Any]) -> bool:
    """The worker's first line: ``{"ready": true}``, ``{"import_error": str}`` or
    ``{"missing": str, "got": str}``, and nothing else."""
    if reply == {"ready": True}:
        return True
    if set(reply) == {"import_error"}:
        return isinstance(reply["import_error"], str)
    if set(reply) == {"missing", "got"}:
        return isinstance(reply["missing"], str) and isinstance(reply["got"], str)
    return False


def _not_here(*args: Any, **kwargs: Any) -> Any:  # pragma: no cover - never called
    raise AssertionError("the student's function runs in the child process")
