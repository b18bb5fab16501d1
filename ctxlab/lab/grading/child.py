"""The sandboxed child process (issue 25): started, talked to, and ended with all it left.

A :class:`Child` runs :mod:`.worker` on one student's file, in its own session, started as
:mod:`.confine` prepares it. It answers on a bounded channel (reply size, replies only when
asked, standard error drained by a thread into a bounded buffer, never a file); each reply
is read as a call's record (:func:`read_record`), control characters escaped. After the
lab its whole process group is killed (``killpg``), and so is every process that still
carries the run's marker in its environment (a double fork into a new session); one that
the grader inherits is reaped (:func:`guard_parent`, :func:`reap_strays`).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from ctxlab.lab.grading.confine import (
    MARKER,
    NOBODY,
    Launch,
    child_as_nobody,
    end_cgroup,
    prepare_launch,
)
from ctxlab.lab.grading.labs import load
from ctxlab.lab.grading.worker import pack

__all__ = [
    "Child",
    "ChildGone",
    "escape",
    "guard_parent",
    "own_children",
    "read_record",
    "reap_strays",
    "sandbox_folder",
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
# Ending what the child left


def _marked(needle: bytes) -> list[int]:
    """The live (not zombie) processes whose environment holds ``needle`` (Linux)."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                with open(f"/proc/{entry.name}/environ", "rb") as stream:
                    environ = stream.read(1 << 20)
                if needle not in environ.split(b"\0"):
                    continue
                with open(f"/proc/{entry.name}/stat", "rb") as stream:
                    stat = stream.read()
            except OSError:
                continue
            if stat[stat.rfind(b")") + 2 :][:1] not in (b"Z", b"X"):
                found.append(int(entry.name))
    return found


def _sweep(token: str, seconds: float = 3.0) -> int:
    """Kill every process whose environment carries ``token`` (Linux), and wait until
    none is left (at most ``seconds``); how many were killed."""
    if not sys.platform.startswith("linux"):
        return 0
    needle = f"{MARKER}={token}".encode()
    killed = 0
    deadline = time.monotonic() + seconds
    while True:  # what forks while we look, or is still dying, is found by the next round
        found = _marked(needle)
        if not found or time.monotonic() > deadline:
            return killed
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGSTOP)
                os.kill(pid, signal.SIGKILL)
                killed += 1
        time.sleep(0.01)


_PARENT_GUARDED: list[bool] = []
#: The pids of the children this process started and has not ended yet (every thread's).
_LIVE: set[int] = set()
_PR_SET_DUMPABLE: Final = 4
_PR_SET_CHILD_SUBREAPER: Final = 36


def _prctl(option: int, value: int) -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def guard_parent() -> None:
    """Linux: this process is not dumpable (a process of the same user can neither
    ``ptrace`` it nor open its ``/proc/PID/mem``), and it is a *subreaper*: a process that
    the child leaves behind (a double fork, a new session, an emptied environment) becomes
    this process's child when its parent dies, where :func:`reap_strays` finds it."""
    if _PARENT_GUARDED or not sys.platform.startswith("linux"):
        return
    _PARENT_GUARDED.append(True)
    _prctl(_PR_SET_DUMPABLE, 0)
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def own_children() -> set[int]:
    """The pids whose parent is this process (Linux)."""
    me = str(os.getpid())
    found: set[int] = set()
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as stream:
                    stat = stream.read().decode("ascii", "replace")
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2 :].split()
            if len(fields) > 1 and fields[1] == me:
                found.add(int(entry.name))
    return found


def reap_strays(before: set[int]) -> int:
    """Kill and reap this process's children that were not there before the run and are
    no live sandbox child (a grandchild the submission left, reparented here)."""
    if not sys.platform.startswith("linux"):
        return 0
    killed = 0
    for _ in range(20):
        strays = own_children() - before - _LIVE
        if not strays:
            break
        for pid in strays:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
        for pid in strays:
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)
    return killed


# ----------------------------------------------------------------------------------------
# The child, seen from here


class ChildGone(BaseException):
    """The child cannot answer (a ``BaseException``: no check's ``except`` takes it).
    ``out_of_cpu``: it was ended by its CPU-time limit (a timeout, not a crash)."""

    def __init__(self, why: str, *, out_of_cpu: bool = False) -> None:
        super().__init__(why)
        self.why = why
        self.out_of_cpu = out_of_cpu


class Child:
    """One sandboxed child serving one lab's calls: it runs the file ``path`` with ``cpu``
    seconds of CPU time for its whole life and imports ctxlab from ``lib``."""

    MAX_REPLY: Final = 16 * 1024 * 1024

    def __init__(self, path: Path, lab: str, cpu: int, lib: Path) -> None:
        self.path = path
        self.lab = lab
        self.cpu = cpu
        self.lib = lib
        self.keyword = load(lab).keyword
        self.process: subprocess.Popen[bytes] | None = None
        self.launch: Launch | None = None
        self.work: Path | None = None
        self._replies: list[dict[str, Any] | ChildGone] = []
        self._wake = threading.Condition()
        self._asked = 0
        self._head = bytearray()
        self._tail = bytearray()
        self.stderr_bytes = 0
        self.started = False

    # -------------------------------------------------------------- start and stop

    def start(self, limit: float) -> dict[str, Any]:
        """Start the child; its first reply (``ready``/``import_error``/``missing``)."""
        self.stop()
        work = Path(tempfile.mkdtemp(prefix="run-", dir=sandbox_folder()))
        for sub in ("home", "tmp"):
            (work / sub).mkdir()
        shutil.copyfile(self.path, work / "submission.py")
        if child_as_nobody():
            for path in (work, work / "home", work / "tmp", work / "submission.py"):
                os.chown(path, NOBODY, NOBODY)
        self.work = work
        self.launch = launch = prepare_launch(
            work, self.lib, "submission.py", self.keyword, self.lab, self.cpu
        )
        self._replies = []
        self._asked = 1  # the hello
        self._head, self._tail, self.stderr_bytes = bytearray(), bytearray(), 0
        self.process = subprocess.Popen(
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
        _LIVE.add(self.process.pid)
        threading.Thread(
            target=self._read, args=(self.process, launch.sandboxed), daemon=True
        ).start()
        threading.Thread(target=self._drain, args=(self.process,), daemon=True).start()
        return self.reply(limit)

    def stop(self, *, graceful: bool = False) -> None:
        """Kill the child, everything it started, and remove its folder. ``graceful``: first
        close its channel and give it a moment to exit by itself (so that its CPU time is
        counted: a killed pid namespace's processes are not reaped here)."""
        process, launch = self.process, self.launch
        if process is not None and graceful and process.stdin is not None:
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
            _LIVE.discard(process.pid)
            for stream in (process.stdin,):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
        if launch is not None:
            if launch.cgroup is not None:
                end_cgroup(launch.cgroup)
            _sweep(launch.token)
        if self.work is not None:
            shutil.rmtree(self.work, ignore_errors=True)
        self.process = self.launch = self.work = None

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    # -------------------------------------------------------------- the channel

    def _read(self, process: subprocess.Popen[bytes], bwrap: bool) -> None:
        import json

        stream = process.stdout
        assert stream is not None
        while True:
            try:
                line = stream.readline(self.MAX_REPLY + 1)
            except (OSError, ValueError):
                line = b""
            message: dict[str, Any] | ChildGone
            if not line:
                message = _gone(process, bwrap)
            elif len(line) > self.MAX_REPLY or not line.endswith(b"\n"):
                message = ChildGone(f"it sent a reply larger than {self.MAX_REPLY:,} bytes")
            else:
                try:
                    parsed = json.loads(line.decode("ascii"))
                except (ValueError, RecursionError):
                    parsed = None
                message = (
                    parsed
                    if isinstance(parsed, dict)
                    else ChildGone("it sent a reply that is not a JSON object")
                )
            with self._wake:
                if not isinstance(message, ChildGone) and len(self._replies) >= self._asked:
                    message = ChildGone("it sent a reply nobody asked for")
                self._replies.append(message)
                self._wake.notify_all()
            if isinstance(message, ChildGone):
                with contextlib.suppress(OSError):
                    stream.close()
                return

    def _drain(self, process: subprocess.Popen[bytes]) -> None:
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

    def reply(self, limit: float) -> dict[str, Any]:
        deadline = time.monotonic() + max(limit, 0.0)
        index = self._asked - 1
        with self._wake:
            while len(self._replies) <= index:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ChildGone(f"it did not answer within {limit:g} s")
                self._wake.wait(left)
            reply = self._replies[index]
        if isinstance(reply, ChildGone):
            raise reply
        return reply

    def stderr_text(self) -> str:
        head = self._head.decode("utf-8", "replace")
        if self.stderr_bytes <= STDERR_KEEP:
            return head
        tail = bytes(self._tail)[-(STDERR_KEEP - len(self._head) or STDERR_KEEP) :]
        cut = self.stderr_bytes - len(self._head) - len(tail)
        middle = f"\n[... {cut:,} bytes cut ...]\n" if cut > 0 else ""
        return head + middle + tail.decode("utf-8", "replace")

    def call(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        process = self.process
        if process is None or process.stdin is None:
            raise ChildGone("it is not running")
        request = pack((tuple(args), dict(kwargs), load(self.lab).arg_names))
        with self._wake:
            self._asked += 1
        try:
            process.stdin.write(request)
            process.stdin.flush()
        except (OSError, ValueError):
            raise _gone(process, self.launch is not None and self.launch.sandboxed) from None
        # the check's own time limit ends this wait (the child is killed)
        return read_record(self.reply(3600.0))


_RECORD_KEYS: Final = {
    "returned",
    "raised",
    "too_large",
    "changed",
    "output",
    "output_cut",
    "reference",
}


def read_record(reply: dict[str, Any]) -> dict[str, Any]:
    """A reply as the call's record :class:`Trial` reads (``reference`` always False: the
    child's word is never taken for it), or :class:`ChildGone` when it is not one."""
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
    return {**reply, "reference": False, "output": escape(reply.get("output", ""))}


def _is_error(data: object) -> bool:
    return (
        isinstance(data, dict)
        and isinstance(data.get("type"), str)
        and isinstance(data.get("base"), str)
        and isinstance(data.get("message"), str)
        and isinstance(data.get("attributes", {}), dict)
    )


def _gone(process: subprocess.Popen[bytes], bwrap: bool) -> ChildGone:
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
            return ChildGone("it used up its CPU time", out_of_cpu=True)
        try:
            name = signal.Signals(signalled).name
        except ValueError:
            name = f"signal {signalled}"
        return ChildGone(f"the process running your file was ended by {name}")
    if code == 0:
        return ChildGone("the process running your file ended")
    return ChildGone(f"the process running your file exited with code {code}")
