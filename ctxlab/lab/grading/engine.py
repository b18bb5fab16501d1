"""The engine: run a lab's checks, in order, on a student's function.

It is given a lab as its file declares it (:class:`~.declare.LabChecks`: rows, kinds,
quotes, catalogue) and never imports a lab: :mod:`.labs` loads a lab's file (inside
:func:`as_found`) and calls :func:`check`.

:func:`check` runs every check of a lab in order, each in its own thread with the time limit
of :func:`set_time_limit` (10 s by default), read once when the run starts: a student's
function that raises the limit changes nothing for the run it is in. After a check that did
not return in time, the remaining checks of that run are reported as not run rather than
waited for. A missing, extra or non-callable keyword is a :class:`GradingUsageError`
(:func:`function_of`), never a failed row.

Each check sees ctxlab as grading found it (:class:`~.runner.Pristine`): a name of a ctxlab
module that the student's code rebound -- ``ctxlab.context.build_context``,
``ctxlab.fixtures.opening_path`` -- is put back before each check and when a lab's file
loads, and the student's own binding is put back after the run. The report says first, in
plain words, when the student's function is, wraps or called the lab's solution (it is then
not passed), and when earlier check threads could not be stopped.

The objects behind those names are kept too (:mod:`.kept`): what a student's code (or a
thread it left running) changed in them with ``object.__setattr__`` is put back before each
check, and the report names it. On Linux, each run is made in a forked copy of the kernel
that the kernel ends afterwards, or as soon as a check overruns (:mod:`.isolation`;
``set_isolation("in-process")`` turns it off).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import math
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from types import ModuleType
from typing import Any, Final

import ctxlab.fixtures  # noqa: F401 - loaded now, so that it is kept as grading found it
import ctxlab.lab.grading.isolation as isolation
from ctxlab.errors import shown
from ctxlab.lab.grading import drawn
from ctxlab.lab.grading.declare import LabChecks, Row
from ctxlab.lab.grading.kept import KeptObjects
from ctxlab.lab.grading.misconceptions import DIAGNOSIS, to_diagnose
from ctxlab.lab.grading.report import CheckResult, LabReport, diagnosed
from ctxlab.lab.grading.runner import (
    NOT_RUN,
    Outcome,
    Pristine,
    Sealed,
    run_check,
    stuck_threads,
)
from ctxlab.lab.grading.text import bounded_output, kind
from ctxlab.lab.grading.usage import GradingUsageError

__all__ = [
    "GradingUsageError",
    "as_found",
    "check",
    "check_one",
    "function_of",
    "get_time_limit",
    "handed_out",
    "keep",
    "set_time_limit",
]

_DEFAULT_TIME_LIMIT: Final = 10.0
_time_limit: list[float] = [_DEFAULT_TIME_LIMIT]


def set_time_limit(seconds: float) -> float:
    """Give every check at most ``seconds`` (default 10); returns the previous limit."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise GradingUsageError(
            f"set_time_limit: seconds must be a number > 0, got {shown(seconds)}", option="seconds"
        )
    if not math.isfinite(seconds) or seconds <= 0:
        raise GradingUsageError(
            f"set_time_limit: seconds must be finite and > 0, got {shown(seconds)}",
            option="seconds",
        )
    previous = _time_limit[0]
    _time_limit[0] = float(seconds)
    return previous


def get_time_limit() -> float:
    """The time limit of one check, in seconds."""
    return _time_limit[0]


# ----------------------------------------------------------------------------------------
# ctxlab as grading found it

#: ctxlab's modules (not the teaching layer) as they were when grading loaded, and then
#: each lab's module as it was when it loaded.
_PRISTINE = Pristine()
for _name, _module in sorted(sys.modules.items()):
    if _name == "ctxlab" or (_name.startswith("ctxlab.") and not _name.startswith("ctxlab.lab")):
        _PRISTINE.keep(_module, tables=True)  # its private tables too (no caches there)
_PRISTINE.keep(time)  # a student's ``time.monotonic = ...`` lasts no longer than its run

#: The objects behind those names, and then behind each lab module's (see :mod:`.kept`).
_KEPT = KeptObjects()
for _name, _module in sorted(sys.modules.items()):
    if _name == "ctxlab" or (_name.startswith("ctxlab.") and not _name.startswith("ctxlab.lab")):
        _KEPT.keep(_module)


@contextlib.contextmanager
def as_found() -> Iterator[None]:
    """ctxlab's modules as grading found them, for as long as a lab's file loads (it binds
    ctxlab's functions as they were, whatever the notebook rebound)."""
    replaced = _PRISTINE.restore()
    try:
        yield
    finally:
        _PRISTINE.put_back(replaced)


def keep(*modules: ModuleType) -> None:
    """Keep ``modules`` (a lab's file and those it builds on) as they are now: put back
    before each check, like ctxlab's own."""
    for module in modules:
        _PRISTINE.keep(module)
        _KEPT.keep(module)


def function_of(spec: LabChecks, functions: Mapping[str, object]) -> Callable[..., Any]:
    """The student's function among ``functions`` (the keywords given to
    ``check_implementation``); a :class:`GradingUsageError` when it is missing, extra or not
    callable."""
    extra = sorted(set(functions) - {spec.keyword})
    if extra:
        raise GradingUsageError(
            f"check_implementation: lab {spec.lab} takes {spec.keyword}=..., not {extra[0]}=",
            option=extra[0],
        )
    if spec.keyword not in functions:
        raise GradingUsageError(
            f"check_implementation: lab {spec.lab} needs your function: "
            f"check_implementation({spec.lab!r}, {spec.keyword}={spec.keyword})",
            option=spec.keyword,
        )
    function = functions[spec.keyword]
    if not callable(function):
        raise GradingUsageError(
            f"check_implementation: {spec.keyword} must be a function, got {kind(function)}",
            option=spec.keyword,
        )
    return function


def handed_out(spec: LabChecks) -> Callable[..., Any]:
    """ctxlab's reference of ``spec``'s lab, handed out as a right answer to check (the
    tests and the mutation audit run it): its report is passed. A student's function that
    is ``ctxlab.build_context`` itself, or calls it, is not (the report says so first).
    """
    if spec.lab not in _HANDED_OUT:
        reference = spec.reference

        @functools.wraps(reference)
        def handed(*args: Any, **kwargs: Any) -> Any:
            return reference(*args, **kwargs)

        del handed.__wrapped__
        _HANDED_OUT[spec.lab] = handed
    return _HANDED_OUT[spec.lab]


#: Each lab's reference as :func:`handed_out` hands it out (checked as a right answer, not
#: as "the student used the reference").
_HANDED_OUT: dict[str, Callable[..., Any]] = {}


# ----------------------------------------------------------------------------------------
# Running the checks


def _result(check: Row, outcome: Outcome) -> CheckResult:
    output, cut = bounded_output(outcome.output, outcome.output_cut)
    return check.row(outcome.status == "pass", outcome.detail, output, cut)


def _is_reference(spec: LabChecks, function: object) -> bool:
    """Is ``function`` the reference, or does it unwrap to it (``functools.wraps``,
    ``functools.partial``)? Read without running any of the student's code."""
    references = (spec.reference, *spec.also_reference)
    for _ in range(100):
        if any(function is known for known in references):
            return True
        if issubclass(type(function), functools.partial):
            function = functools.partial.func.__get__(function)
            continue
        try:
            wrapped = inspect.getattr_static(function, "__wrapped__", None)
        except Exception:  # pragma: no cover - getattr_static runs no student code
            return False
        if wrapped is None:
            return False
        function = wrapped
    return False


def _run_checks(
    spec: LabChecks,
    checks: list[Row],
    function: Callable[..., Any],
    repaired: list[str] | None = None,
    progress: Callable[[int, CheckResult | None, bool], None] | None = None,
) -> tuple[list[CheckResult], bool]:
    """Run ``checks`` in order with the time limit as it is now; (rows, used the reference).

    The limit is read once: a ``set_time_limit`` by the code under check changes nothing
    for this run, and is undone when it ends.

    Before each check ctxlab's modules are put back as grading found them, the objects
    behind their names too (what was changed is added to ``repaired``), with the grader's
    switch interval; after the run the student's own bindings are put back.
    ``progress(index, row, used)`` is told when each check starts (``row`` None) and ends
    (the grading child of :mod:`.isolation` reports to the notebook's process with it).
    """
    limit = get_time_limit()  # once per run: a student's set_time_limit changes nothing now
    handed = function is _HANDED_OUT.get(spec.lab)
    references = spec.solution_code
    used = not handed and _is_reference(spec, function)
    results: list[CheckResult] = []
    hung = False
    students = _PRISTINE.restore()
    sealed = Sealed().__enter__()
    changed = repaired if repaired is not None else []
    try:
        for index, check in enumerate(checks):
            if hung:
                results.append(_result(check, Outcome("fail", NOT_RUN)))
                continue
            if check.key == DIAGNOSIS and not to_diagnose(
                [(r.passed, r.detail_en) for r in results]
            ):
                results.append(check.row(True))  # nothing to look for
                continue
            if progress is not None:
                progress(index, None, used)
            _PRISTINE.restore()  # what an earlier check's call rebound, put back
            changed.extend(where for where in _KEPT.repair() if where not in changed)
            sealed.reset()
            outcome = run_check(
                check.run,
                function,
                spec.arg_names,
                name=f"ctxlab-check-{check.key}",
                limit=limit,
                references=references,
            )
            hung = outcome.status == "hung"
            used = used or (outcome.used_reference and not handed)
            results.append(_result(check, outcome))
            if progress is not None:
                progress(index, results[-1], used)
    finally:
        sealed.__exit__()
        _PRISTINE.restore()
        _PRISTINE.put_back(students)
        _time_limit[0] = limit  # a set_time_limit by the code under check does not last
    changed.extend(where for where in _KEPT.repair() if where not in changed)
    return results, used


def check(spec: LabChecks, function: Callable[..., Any], seed: int = 0) -> LabReport:
    """Run every check of ``spec`` on the student's ``function``, in order; the random rows
    draw from ``seed`` (a forked grading child inherits it).

    Never raises for a wrong, crashing, hanging or unwritten function: each is a ✘ row.
    A kernel interrupt while a check runs stops that check's thread and is raised again.
    """
    repaired: list[str] = _KEPT.repair()  # what the notebook changed, before any copy
    with drawn.seeded(seed, get_time_limit()):
        if isolation.use_process():  # a fresh copy of the kernel runs the checks: .isolation
            limit = get_time_limit()
            results, used, more = isolation.run_in_child(
                spec, spec.steps, function, limit, _run_checks
            )
            repaired.extend(where for where in more if where not in repaired)
        else:
            results, used = _run_checks(spec, spec.steps, function, repaired)
    rows, matched = diagnosed(results)
    report = LabReport(
        spec.lab,
        spec.keyword,
        rows,
        used,
        stuck_threads(),
        repaired=tuple(repaired),
        facts=spec.facts,
        matched=matched,
        seed=seed,
        random_cases=drawn.count(spec.lab, (row.key for row in spec.checks)),
    )
    return dataclasses.replace(report, hint_rung=_climb(spec.lab, report.misconceptions))


#: The hint ladder, per lab: the misconception the last run of the lab matched first, and
#: the rung its report showed.
_LADDER: dict[str, tuple[str, int]] = {}
_TOP_RUNG: Final = 2


def _climb(lab: str, matched: tuple[str, ...]) -> int:
    """The rung of this run: 1 for a new first misconception, one more (at most
    :data:`_TOP_RUNG`) when the last run of ``lab`` matched the same one; 0, and the ladder
    starts again, when nothing matched (a pass or another failure)."""
    if not matched:
        _LADDER.pop(lab, None)
        return 0
    last, rung = _LADDER.get(lab, ("", 0))
    rung = min(rung + 1, _TOP_RUNG) if last == matched[0] else 1
    _LADDER[lab] = (matched[0], rung)
    return rung


def check_one(
    spec: LabChecks, key: str, function: Callable[..., Any], seed: int = 0
) -> CheckResult:
    """Run one behaviour of ``spec`` (what ``pytest -m lab11_N`` runs, one test per key)."""
    with drawn.seeded(seed, get_time_limit()):
        return _run_checks(spec, [spec.row(key)], function)[0][0]
