"""The terminal route: a lab's checks judged here, the student's file run in a child process.

``pytest -m lab11_N --ctxlab-impl=PATH.py`` (issue 17, items 6 and 7). The notebook's
``check_implementation`` calls the student's function in its own process: it is formative,
and a determined student can fool it (read the grader's frames, patch its modules). Here
the student's file is imported and called only in a child process
(:mod:`~ctxlab.lab.grading.worker`); what comes back is the plain JSON of each call
(:data:`~ctxlab.lab.grading.perform.CallRecord`, size-limited and parsed here as JSON,
never unpickled); every check, expected value and verdict is computed in this process,
where none of the student's code ever ran.

:class:`Worker` is one child for one lab, started once (:meth:`Worker.start` reports an
import error or a missing function as :class:`~ctxlab.lab.grading.GradingUsageError`) and
kept for the session. :func:`run_behaviour` runs one behaviour's check with the lab's
:class:`~ctxlab.lab.grading.calls.Trial` calling through the worker, in a thread, within
the time limit:

* a check that does not end in time kills the child (with every process it started, on
  POSIX), and every later check of that lab is "not run" at once: a hang costs one time
  limit per lab, as in the notebook;
* a child that dies during a call (``os._exit``, a crash) fails that check with a plain
  message; the next check starts a fresh child;
* a check whose calls ran ctxlab's own solution of the lab fails with a notice that says so.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final, Literal

import ctxlab
from ctxlab.lab.grading.calls import Failed, Trial
from ctxlab.lab.grading.engine import GradingUsageError, _lab, get_time_limit
from ctxlab.lab.grading.perform import CallRecord
from ctxlab.lab.grading.report import Source, reference_notice
from ctxlab.lab.grading.runner import NOT_RUN, _at, _hung
from ctxlab.lab.grading.text import Text, clean, exception_text, same
from ctxlab.lab.grading.worker import pack

__all__ = [
    "MAX_REPLY",
    "NOT_RUN",
    "START_LIMIT",
    "Verdict",
    "Worker",
    "WorkerGone",
    "run_behaviour",
]

#: The longest reply line accepted from a child, in bytes (a result within
#: :mod:`.plain`'s limits is far smaller).
MAX_REPLY: Final = 64 * 1024 * 1024
#: How long a child may take to import ctxlab and the student's file, in seconds.
START_LIMIT: Final = 60.0


_RECORD_KEYS: Final = {
    "returned",
    "raised",
    "too_large",
    "changed",
    "output",
    "output_cut",
    "reference",
}


class WorkerGone(BaseException):
    """The child cannot answer (it died, was killed, or sent something unreadable).

    A ``BaseException``, so that no check's ``except Exception`` takes it for a result.
    """

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


@dataclass(frozen=True)
class Verdict:
    """One behaviour, judged: ``passed``, and ``message`` (the behaviour, then the detail);
    ``source`` is the row's kind (a ctxlab row is an optional extra, not the lab's verdict)."""

    lab: str
    key: str
    passed: bool
    message: str
    output: str = ""
    source: Source = "chapter"


class Worker:
    """One child process serving one lab's calls of the function in ``path``."""

    def __init__(self, path: Path, lab: str) -> None:
        self.path = path
        self.lab = lab
        self.keyword = _lab(lab).keyword
        #: ``"ready"``, ``"hung"`` (killed after a time limit: later checks are not run),
        #: ``"gone"`` (died: the next check starts a fresh child) or ``"new"``.
        self.state: Literal["new", "ready", "hung", "gone"] = "new"
        self._process: subprocess.Popen[bytes] | None = None
        self._replies: queue.Queue[dict[str, Any] | WorkerGone] = queue.Queue()
        self._stderr: IO[bytes] | None = None

    # ------------------------------------------------------------------ the process

    def start(self, limit: float = START_LIMIT) -> None:
        """Start the child and wait for it to import the file; a usage error if it cannot."""
        self.close()
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed by close()
        root = str(Path(ctxlab.__file__).resolve().parent.parent)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [root, *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
        )
        env["PYTHONIOENCODING"] = "utf-8"
        options: dict[str, Any] = {}
        if os.name == "posix":
            options["start_new_session"] = True  # its own process group: killed as a whole
        command = [sys.executable, "-m", "ctxlab.lab.grading.worker", str(self.path)]
        self._process = subprocess.Popen(
            [*command, self.keyword, self.lab],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
            **options,
        )
        self._replies = queue.Queue()
        reader = threading.Thread(
            target=self._read,
            args=(self._process, self._replies),
            name=f"ctxlab-worker-{self.lab}",
            daemon=True,
        )
        reader.start()
        try:
            hello = self._reply(limit)
        except WorkerGone as gone:
            self.kill("gone")
            raise GradingUsageError(
                f"--ctxlab-impl: importing {self.path} failed: {gone.why}", option="path"
            ) from None
        if "import_error" in hello:
            self.kill("gone")
            raise GradingUsageError(
                f"--ctxlab-impl: importing {self.path} failed: {clean(str(hello['import_error']))}",
                option="path",
            )
        if "missing" in hello:
            self.kill("gone")
            flag = f"-m lab{self.lab.replace('.', '_')}"
            got = str(hello.get("got", "None"))
            there = "" if got == "None" else f" ({self.keyword} is {clean(got)})"
            raise GradingUsageError(
                f"--ctxlab-impl {self.path}: defines no function {self.keyword}(), which"
                f" Lab {self.lab} checks{there}. Define it, or choose the lab with {flag}.",
                option=self.keyword,
            )
        self.state = "ready"

    @staticmethod
    def _read(
        process: subprocess.Popen[bytes], replies: queue.Queue[dict[str, Any] | WorkerGone]
    ) -> None:
        """Parse the child's reply lines (JSON, at most :data:`MAX_REPLY` bytes each)."""
        stream = process.stdout
        assert stream is not None
        try:
            while True:
                try:
                    line = stream.readline(MAX_REPLY + 1)
                except (OSError, ValueError):
                    line = b""
                if not line:
                    replies.put(WorkerGone(_exit_text(process)))
                    return
                if len(line) > MAX_REPLY or not line.endswith(b"\n"):
                    replies.put(WorkerGone(f"it sent a reply larger than {MAX_REPLY:,} bytes"))
                    return
                try:
                    message = json.loads(line.decode("ascii"))
                except (ValueError, RecursionError):
                    message = None
                if not isinstance(message, dict):
                    replies.put(WorkerGone("it sent a reply that is not a JSON object"))
                    return
                replies.put(message)
        finally:
            with contextlib.suppress(OSError):
                stream.close()

    def _reply(self, limit: float) -> dict[str, Any]:
        try:
            reply = self._replies.get(timeout=limit)
        except queue.Empty:
            raise WorkerGone(f"it did not answer within {limit:g} s") from None
        if isinstance(reply, WorkerGone):
            raise reply
        return reply

    def kill(self, state: Literal["hung", "gone"]) -> None:
        """Kill the child (its whole process group on POSIX); later calls see ``state``."""
        self.state = state
        process = self._process
        if process is None:
            return
        if process.poll() is None:
            try:
                if os.name == "posix":
                    os.killpg(process.pid, signal.SIGKILL)
                else:  # pragma: no cover - Windows: TerminateProcess
                    process.kill()
            except OSError:  # already gone
                pass
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(5)
        if process.stdin is not None:  # (its stdout is closed by the thread reading it)
            with contextlib.suppress(OSError):
                process.stdin.close()

    def close(self) -> None:
        """End the child (if any) and forget it."""
        if self._process is not None:
            self.kill("gone")
            self._process = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        self.state = "new"

    def alive(self) -> bool:
        """Is the child running?"""
        return self._process is not None and self._process.poll() is None

    def stderr_tail(self, size: int = 600) -> str:
        """The end of what the child wrote to standard error (its own messages, a crash)."""
        stream = self._stderr
        if stream is None:
            return ""
        try:
            stream.seek(0, os.SEEK_END)
            end = stream.tell()
            stream.seek(max(0, end - size))
            return stream.read().decode("utf-8", "replace").strip()
        except (OSError, ValueError):  # pragma: no cover
            return ""

    # ------------------------------------------------------------------ one call

    def call(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> CallRecord:
        """A :data:`~ctxlab.lab.grading.calls.Caller`: one call in the child, its record."""
        process = self._process
        if self.state != "ready" or process is None or process.stdin is None:
            raise WorkerGone("it is not running")
        request = pack((tuple(args), dict(kwargs), _lab(self.lab).arg_names))
        try:
            process.stdin.write(request)
            process.stdin.flush()
        except (OSError, ValueError):
            raise WorkerGone(_exit_text(process)) from None
        # The check's time limit is kept by run_behaviour, which kills the child when it
        # runs out (this wait then ends); the timeout here only guards against a leak.
        reply = self._reply(get_time_limit() + START_LIMIT)
        return _record(reply)


def _record(reply: dict[str, Any]) -> CallRecord:
    """The reply as a CallRecord of the shape :class:`Trial` reads, or WorkerGone."""
    if "worker_error" in reply:
        raise WorkerGone(f"it failed: {clean(str(reply['worker_error']))}")
    if not set(reply) <= _RECORD_KEYS or len({"returned", "raised", "too_large"} & set(reply)) != 1:
        raise WorkerGone("it sent a reply that is not a call's record")
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
        raise WorkerGone("it sent a reply that is not a call's record")
    return reply


def _is_error(data: object) -> bool:
    return (
        isinstance(data, dict)
        and isinstance(data.get("type"), str)
        and isinstance(data.get("base"), str)
        and isinstance(data.get("message"), str)
        and isinstance(data.get("attributes", {}), dict)
    )


def _exit_text(process: subprocess.Popen[bytes]) -> str:
    try:
        code = process.wait(2)
    except subprocess.TimeoutExpired:
        return "it closed its channel"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:  # pragma: no cover
            name = f"signal {-code}"
        return f"the process running your file was ended by {name}"
    return f"the process running your file exited with code {code}"


# ----------------------------------------------------------------------------------------
# One behaviour


def _not_callable(*args: Any, **kwargs: Any) -> Any:  # pragma: no cover - never called
    raise AssertionError("on the terminal route the student's function runs in the child")


def run_behaviour(worker: Worker, key: str, *, limit: float | None = None) -> Verdict:
    """Run behaviour ``key`` of ``worker``'s lab, calling the student's function through
    ``worker``, within ``limit`` seconds (default: :func:`get_time_limit`)."""
    spec = _lab(worker.lab)
    check = next((c for c in spec.checks if c.key == key), None)
    if check is None:
        raise GradingUsageError(f"lab {spec.lab} has no behaviour {key!r}", option="key")
    seconds = get_time_limit() if limit is None else limit
    if worker.state == "hung":
        return _verdict(worker, check.key, check.en, NOT_RUN, source=check.source)
    if worker.state != "ready":
        worker.start()
    trial = Trial(_not_callable, spec.arg_names, caller=worker.call)
    box: list[Text | None] = []
    lost: list[WorkerGone] = []

    def target() -> None:
        try:
            check.run(trial)
            box.append(None)
        except Failed as failure:
            box.append(failure.text)
        except WorkerGone as gone:
            lost.append(gone)
        except BaseException as error:  # the result could not even be read
            text = exception_text(error)
            box.append(
                _at(trial)
                + Text(
                    f"the result could not be checked ({text}); is it the type the reference"
                    " returns?",
                    f"无法检查返回结果（{text}）；返回值的类型和参考实现一致吗？",
                )
            )

    thread = threading.Thread(target=target, name=f"ctxlab-check-{key}", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        worker.kill("hung")  # the call it waits for then ends with WorkerGone
        thread.join(5)
        hung = _hung(trial, seconds)
        return _verdict(worker, check.key, check.en, hung, trial.output, source=check.source)
    if lost:  # the child died or sent nonsense: this check fails, the next starts afresh
        worker.kill("gone")
        detail: Text | None = _at(trial) + _gone(lost[0].why, worker.stderr_tail())
    elif not worker.alive():  # pragma: no cover - it died after its last reply
        worker.kill("gone")
        detail = box[0] if box else None
    else:
        detail = box[0] if box else same("the check ended without a result")
    if trial.used_reference:
        notice = reference_notice(worker.lab, worker.keyword, rows=False)
        detail = notice if detail is None else notice + same("\n") + detail
    return _verdict(worker, check.key, check.en, detail, trial.output, source=check.source)


def _verdict(
    worker: Worker,
    key: str,
    behaviour: str,
    detail: Text | None,
    output: str = "",
    *,
    source: Source = "chapter",
) -> Verdict:
    if detail is None:
        return Verdict(worker.lab, key, True, behaviour, output, source)
    return Verdict(worker.lab, key, False, f"{behaviour}\n{clean(detail.en)}", output, source)


def _gone(why: str, stderr: str) -> Text:
    tail = f"\n{clean(stderr)}" if stderr else ""
    return Text(
        f"the call did not come back: {why} (os._exit? a crash?){tail}",
        f"这次调用没有返回结果：{why}（os._exit？程序崩溃？）{tail}",
    )
