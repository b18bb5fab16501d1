"""Grade one file of one lab in a child process: :func:`grade_file` -> :class:`GradeOutcome`.

PROVISIONAL: replaced by the sandbox branch at merge.

This stand-in has the sandbox branch's API exactly (``Status``, :class:`GradeOutcome`,
:func:`grade_file`, :func:`missing_protections`) and runs on today's terminal-route
machinery (:class:`~ctxlab.lab.grading.remote.Worker` and
:func:`~ctxlab.lab.grading.remote.run_behaviour`): the student's file is imported and called
only in a child process, every verdict is made here. It has none of the sandbox's limits
(CPU, memory, files, processes, bubblewrap); :func:`missing_protections` says so.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ctxlab.lab.grading.engine import GradingUsageError, _lab, get_time_limit
from ctxlab.lab.grading.remote import Worker, run_behaviour
from ctxlab.lab.grading.report import CheckResult, LabReport

__all__ = ["GradeOutcome", "Status", "grade_file", "missing_protections"]

Status = Literal["ok", "timeout", "crashed", "refused", "invalid"]


@dataclass(frozen=True)
class GradeOutcome:
    """One file graded for one lab: how it went, why, the report (if the checks ran)."""

    lab: str
    status: Status
    reason: str
    report: LabReport | None
    seconds: float
    cpu_seconds: float


def missing_protections() -> tuple[str, ...]:
    """What this runner does not protect against (the stand-in has no sandbox at all)."""
    return ("cpu-limit", "memory-limit", "file-limit", "process-limit", "filesystem", "network")


def _cpu() -> float:
    """CPU seconds of this process and its waited-for children so far."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return time.process_time()
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _start_status(message: str) -> Status:
    if "did not answer within" in message:
        return "timeout"
    if "ended by" in message or "exited with code" in message:
        return "crashed"
    return "invalid"


def grade_file(path: Path, lab: str, *, time_limit: float | None = None) -> GradeOutcome:
    """Run lab ``lab``'s checks on the function defined in ``path``, in a child process."""
    began, cpu_began = time.perf_counter(), _cpu()

    def outcome(status: Status, reason: str, report: LabReport | None) -> GradeOutcome:
        return GradeOutcome(
            lab, status, reason, report, time.perf_counter() - began, _cpu() - cpu_began
        )

    try:
        spec = _lab(lab)
    except GradingUsageError as error:
        return outcome("invalid", str(error), None)
    limit = get_time_limit() if time_limit is None else time_limit
    worker = Worker(Path(path), lab)
    status: Status = "ok"
    reason = ""
    results: list[CheckResult] = []
    try:
        try:
            worker.start(limit=limit)
        except GradingUsageError as error:
            return outcome(_start_status(str(error)), str(error), None)
        for check in spec.checks:
            if worker.state == "gone":
                try:
                    worker.start(limit=limit)
                except GradingUsageError as error:
                    worker.state = "hung"  # every later check: not run
                    status, reason = "crashed", str(error)
            verdict = run_behaviour(worker, check.key, limit=limit)
            if worker.state == "hung" and status == "ok":
                status, reason = "timeout", f"a check ran longer than {limit:g} s"
            elif worker.state == "gone" and status == "ok":
                status, reason = "crashed", "the process running the file died during a check"
            detail = verdict.message.partition("\n")[2] if not verdict.passed else ""
            results.append(
                CheckResult(
                    check.key,
                    verdict.passed,
                    check.en,
                    check.zh,
                    detail,
                    detail,
                    verdict.output,
                )
            )
    finally:
        worker.close()
    return outcome(status, reason, LabReport(lab, spec.keyword, tuple(results)))
