"""The notebook route in a fresh grading process (issue 25, item 4).

``check_implementation`` judges the student's function in the notebook's own process: a
function that holds the GIL in one long C call, or a thread it leaves running, reaches the
kernel itself (:mod:`.runner` and :mod:`.kept` say so and undo what they can). Where the
platform has ``os.fork`` (Linux), a run can instead be made in a *child* of the kernel: a
copy of it made at the moment of the call, with the student's function in it as the
notebook defined it (nothing is pickled). The child runs the checks as the kernel would and
tells the kernel each row as plain JSON over a pipe; the kernel keeps its own clock, ends
the child (its whole process group, ``SIGKILL``) when a check overruns its limit by more
than the child's own stop could take, and ends it after every run. Whatever the student's
code does in the child -- freeze the clock, set the switch interval, hold the GIL, switch
hooks off, leave threads that rewrite ctxlab's objects, ``os._exit`` -- ends with the child;
the next right answer is judged by a fresh copy of the kernel.

The cost is one ``fork`` per run (a few ms; see the README) and what the student's code
changes in the child is not seen by the notebook (a global it sets, its own memo tables).

The *isolation* is chosen by :func:`set_isolation` or ``CTXLAB_NOTEBOOK_ISOLATION``:

``"auto"`` (default)
    a child process on Linux, the notebook's own process elsewhere (macOS: ``fork`` of a
    process that has loaded system frameworks is unsafe; Windows and Pyodide: no fork);
``"process"``
    a child process where ``fork`` is available, otherwise the notebook's own process;
``"in-process"``
    always the notebook's own process (as before issue 25).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sys
import warnings
from collections.abc import Callable
from typing import Any, Final, Literal, TypeAlias

from ctxlab.errors import CtxlabError, shown
from ctxlab.lab.grading.declare import LabChecks, Row
from ctxlab.lab.grading.report import CheckResult
from ctxlab.lab.grading.runner import CALL_SINKS, NOT_RUN, STOP_SECONDS, clock
from ctxlab.lab.grading.text import COLON, Text
from ctxlab.lab.grading.usage import GradingUsageError

__all__ = [
    "ISOLATIONS",
    "Isolation",
    "get_isolation",
    "process_available",
    "run_in_child",
    "set_isolation",
    "use_process",
]

Isolation: TypeAlias = Literal["auto", "process", "in-process"]
ISOLATIONS: Final[tuple[Isolation, ...]] = ("auto", "process", "in-process")
ENV_VAR: Final = "CTXLAB_NOTEBOOK_ISOLATION"
#: How long past a check's limit and its own stop the kernel waits before ending the child.
GRACE_SECONDS: Final = 1.0
#: The most a child may send (rows are bounded; anything larger is not a grading child).
_MOST_BYTES: Final = 16 * 1024 * 1024

_isolation: list[Isolation | None] = [None]


def set_isolation(mode: str) -> str:
    """Choose where ``check_implementation`` runs the checks: ``"auto"``, ``"process"``
    or ``"in-process"``; returns the previous choice."""
    if mode not in ISOLATIONS:
        raise GradingUsageError(
            f"set_isolation: mode must be one of {', '.join(ISOLATIONS)}; got {shown(mode)}",
            option="mode",
        )
    previous = get_isolation()
    _isolation[0] = mode  # checked against ISOLATIONS above
    return previous


def get_isolation() -> Isolation:
    """The isolation in force: :func:`set_isolation`'s, else ``CTXLAB_NOTEBOOK_ISOLATION``,
    else ``"auto"``."""
    if _isolation[0] is not None:
        return _isolation[0]
    value = os.environ.get(ENV_VAR, "").strip().lower() or "auto"
    if value not in ISOLATIONS:
        raise CtxlabError(
            f"{ENV_VAR} must be one of {', '.join(ISOLATIONS)}; got {shown(value)}",
            option="mode",
        )
    return value  # checked against ISOLATIONS above


def process_available() -> bool:
    """Can a run be made in a forked child here? (POSIX with ``os.fork``, not Pyodide.)"""
    return hasattr(os, "fork") and sys.platform not in ("emscripten", "wasi", "win32")


def use_process() -> bool:
    """Should this run be made in a child process?"""
    mode = get_isolation()
    if mode == "in-process" or not process_available():
        return False
    return mode == "process" or sys.platform.startswith("linux")


# ----------------------------------------------------------------------------------------
# The kernel's side


RunChecks: TypeAlias = Callable[..., tuple[list[CheckResult], bool]]


def run_in_child(
    spec: LabChecks,
    checks: list[Row],
    function: Callable[..., Any],
    limit: float,
    run_checks: RunChecks,
) -> tuple[list[CheckResult], bool, list[str]]:
    """Run ``checks`` in forked children (a new one after a child that died); (rows, used
    the reference, ctxlab objects put back)."""

    rows: list[CheckResult] = []
    used = False
    repaired: list[str] = []
    while len(rows) < len(checks):
        start = len(rows)
        ended = _one_child(spec, checks, start, function, limit, run_checks)
        got, child_used, child_repaired, stop = ended
        used = used or child_used
        repaired.extend(where for where in child_repaired if where not in repaired)
        rows.extend(got)
        if stop is None:
            continue
        status, label, detail = stop
        check = checks[len(rows)]
        said = label + detail
        rows.append(check.row(False, said))
        if status == "hung":
            rows.extend(c.row(False, NOT_RUN) for c in checks[len(rows) :])
    return rows[: len(checks)], used, repaired


_Stop: TypeAlias = tuple[Literal["hung", "died"], Text, Text]


def _one_child(
    spec: LabChecks,
    checks: list[Row],
    start: int,
    function: Callable[..., Any],
    limit: float,
    run_checks: RunChecks,
) -> tuple[list[CheckResult], bool, list[str], _Stop | None]:
    """One child, from check ``start``: the rows it finished, used, repaired, and how it
    stopped early (None: it ran every check it was given)."""
    read_end, write_end = os.pipe()
    with warnings.catch_warnings():  # 3.12+: "fork() of a multi-threaded process"
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child (its coverage is not collected)
        os.close(read_end)
        _child(write_end, spec, checks[start:], function, run_checks)
    os.close(write_end)
    with contextlib.suppress(OSError):  # also done by the child: whichever runs first
        os.setpgid(pid, pid)
    try:
        return _listen(pid, read_end, checks, start, limit)
    finally:
        os.close(read_end)
        _end(pid)


def _listen(
    pid: int, fd: int, checks: list[Row], start: int, limit: float
) -> tuple[list[CheckResult], bool, list[str], _Stop | None]:
    import select  # here: Pyodide (no fork) never needs it

    rows: list[CheckResult] = []
    used = False
    repaired: list[str] = []
    label = Text("", "")
    wait = limit + STOP_SECONDS + GRACE_SECONDS
    deadline = clock() + wait
    buffer = b""
    total = 0
    while True:
        left = deadline - clock()
        if left <= 0:
            return rows, used, repaired, ("hung", label, _hung(limit))
        ready, _, _ = select.select([fd], [], [], min(left, 0.25))
        if not ready:
            continue
        chunk = os.read(fd, 65536)
        total += len(chunk)
        if not chunk or total > _MOST_BYTES:
            return rows, used, repaired, ("died", label, _died(pid))
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            try:
                message = json.loads(line)
                kind = message["kind"]
                if kind == "label":
                    label = Text(str(message["en"]), str(message["zh"])) + COLON
                elif kind == "start":
                    label = Text("", "")
                    deadline = clock() + wait
                elif kind == "row":
                    rows.append(CheckResult(**message["row"]))
                    used = used or message["used"] is True
                    repaired = [str(where) for where in message["repaired"]]
                elif kind == "done":
                    rows = [CheckResult(**row) for row in message["rows"]]
                    used = message["used"] is True
                    repaired = [str(where) for where in message["repaired"]]
                    return rows, used, repaired, None
            except Exception:  # not a grading child's message
                return rows, used, repaired, ("died", label, _died(pid))


def _hung(limit: float) -> Text:
    seconds = f"{limit:g} s"
    return Text(
        f"did not return within {seconds} (an endless loop? a blocking call?); its grading"
        " process was ended",
        f"{seconds} 内没有返回（死循环？阻塞调用？）；评分进程已被结束",
    )


def _died(pid: int) -> Text:
    import select

    how = ""
    for _ in range(40):  # the child's end, if it ended by itself (it is killed after)
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # pragma: no cover - already reaped
            break
        if done:
            if os.WIFSIGNALED(status):
                how = f" (signal {os.WTERMSIG(status)})"
            elif os.WIFEXITED(status):
                how = f" (exit code {os.WEXITSTATUS(status)})"
            break
        select.select([], [], [], 0.005)
    return Text(
        f"the grading process ended during this call{how}: did the function call os._exit,"
        " or crash Python? A lab function must return or raise",
        f"评分进程在这次调用中结束了{how}：函数调用了 os._exit，还是让 Python 崩溃了？"
        "实验函数必须返回结果或抛出异常",
    )


def _end(pid: int) -> None:
    """End the child and everything in its process group; reap it."""
    import signal

    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except OSError:
            continue
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


# ----------------------------------------------------------------------------------------
# The child's side


def _child(  # pragma: no cover - runs in the forked child
    fd: int,
    spec: LabChecks,
    checks: list[Row],
    function: Callable[..., Any],
    run_checks: RunChecks,
) -> None:
    """Run ``checks`` here, tell the kernel each step as one JSON line; never returns."""
    import signal

    try:
        with contextlib.suppress(OSError):
            os.setpgid(0, 0)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the kernel ends this child itself
        sys.stdout = sys.stderr = _Nowhere()  # never the kernel's streams (its sockets)

        def tell(label: Text | None) -> None:
            if label is not None:
                _send(fd, {"kind": "label", "en": label.en[:2000], "zh": label.zh[:2000]})

        CALL_SINKS.append(tell)  # this child only
        repaired: list[str] = []

        def progress(index: int, row: CheckResult | None, used: bool) -> None:
            if row is None:
                _send(fd, {"kind": "start", "index": index})
            else:
                message = {"row": _data(row), "used": used, "repaired": repaired}
                _send(fd, {"kind": "row", **message})

        rows, used = run_checks(spec, checks, function, repaired, progress)
        _send(
            fd,
            {
                "kind": "done",
                "rows": [_data(row) for row in rows],
                "used": used,
                "repaired": repaired,
            },
        )
    finally:
        os._exit(0)


def _data(row: CheckResult) -> dict[str, Any]:
    """A checked row as plain data (its fields but the check, which a checked row has not)."""
    return {f.name: getattr(row, f.name) for f in dataclasses.fields(row) if f.name != "run"}


def _send(fd: int, message: dict[str, Any]) -> None:
    data = (json.dumps(message, ensure_ascii=True) + "\n").encode()
    while data:
        data = data[os.write(fd, data) :]


class _Nowhere:
    """The child's stdout and stderr: what no check captures goes nowhere."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        return None
