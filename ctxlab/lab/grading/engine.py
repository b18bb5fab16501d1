"""The engine: run a lab's rows, in order, on a student's function.

It is given a :class:`~.declare.LabChecks` and never imports a lab. :func:`run_rows` is
grading's one loop, for every route: each row run through a :class:`Caller` (this process,
:class:`~.inprocess.InProcess`, or a child process, :class:`~.child.InChild`); after a row
that did not return in time, the rest are "not run". The time limit is read once per run.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from ctxlab.errors import shown
from ctxlab.lab.grading import drawn
from ctxlab.lab.grading.child import Child, InChild
from ctxlab.lab.grading.declare import LabChecks, Row
from ctxlab.lab.grading.inprocess import InProcess, as_found, repair
from ctxlab.lab.grading.misconceptions import DIAGNOSIS, found_in, to_diagnose
from ctxlab.lab.grading.report import CheckResult, LabReport
from ctxlab.lab.grading.runner import Outcome, stuck_threads, use_process
from ctxlab.lab.grading.text import Text, bounded_output, kind
from ctxlab.lab.grading.usage import GradingUsageError

_time_limit: list[float] = [10.0]  # seconds (set_time_limit)


def set_time_limit(seconds: float) -> float:
    """Give every check at most ``seconds`` (default 10); returns the previous limit."""
    number = not isinstance(seconds, bool) and isinstance(seconds, (int, float))
    if not number or not math.isfinite(seconds) or seconds <= 0:
        must = "finite and > 0" if number else "a number > 0"
        raise GradingUsageError(
            f"set_time_limit: seconds must be {must}, got {shown(seconds)}", option="seconds"
        )
    previous, _time_limit[0] = _time_limit[0], float(seconds)
    return previous


def get_time_limit() -> float:
    """The time limit of one check, in seconds."""
    return _time_limit[0]


def function_of(spec: LabChecks, functions: Mapping[str, object]) -> Callable[..., Any]:
    """The student's function among ``check_implementation``'s keywords (a
    :class:`GradingUsageError` when it is missing, extra or not callable)."""
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
    """ctxlab's reference, handed out as a right answer to check: its report is passed,
    unlike a student's function that is or calls it."""
    if spec.lab not in _HANDED_OUT:
        reference = spec.reference

        @functools.wraps(reference)
        def handed(*args: Any, **kwargs: Any) -> Any:
            return reference(*args, **kwargs)

        del handed.__wrapped__
        _HANDED_OUT[spec.lab] = handed
    return _HANDED_OUT[spec.lab]


_HANDED_OUT: dict[str, Callable[..., Any]] = {}


def _is_reference(spec: LabChecks, function: object) -> bool:
    """Does ``function`` unwrap to the reference (``functools.wraps``, ``partial``)? Read
    without running any of the student's code."""
    references = (spec.reference, *spec.also_reference)
    for _ in range(100):
        if any(function is known for known in references):
            return True
        if issubclass(type(function), functools.partial):
            function = functools.partial.func.__get__(function)
            continue
        try:
            function = inspect.getattr_static(function, "__wrapped__", None)
        except Exception:  # pragma: no cover - getattr_static runs no student code
            return False
        if function is None:
            return False
    return False


class Caller(Protocol):
    """Where a student's code runs: here (:class:`InProcess`) or in a child (:class:`InChild`)."""

    def run(self, row: Row, limit: float) -> Outcome:
        """Run ``row``'s check within ``limit`` seconds: how it ended."""


def run_rows(rows: Sequence[Row], caller: Caller, limit: float) -> tuple[list[CheckResult], bool]:
    """The one loop of grading: (each row's result, did a call run the reference)."""
    results: list[CheckResult] = []
    used = False
    stop: Text | None = None
    for row in rows:
        if stop is not None:
            results.append(row.row(False, stop))
            continue
        if row.key == DIAGNOSIS:
            if not to_diagnose([(r.passed, r.detail_en) for r in results]):
                results.append(row.row(True))  # nothing to look for
                continue
            failed = [(r.key, r.source) for r in results if not r.passed]
            look: Callable[..., None] = row.run  # for the mistakes that explain these rows
            row = dataclasses.replace(row, run=functools.partial(look, failed=failed))
        outcome = caller.run(row, limit)
        stop = outcome.stop
        used = used or outcome.used_reference
        output, cut = bounded_output(outcome.output, outcome.output_cut)
        results.append(row.row(outcome.detail is None, outcome.detail, output, cut))
    return results, used


def _run_checks(
    spec: LabChecks,
    checks: list[Row],
    function: Callable[..., Any],
    repaired: list[str] | None = None,
    *,
    forked: bool = False,
) -> tuple[list[CheckResult], bool]:
    """Run ``checks`` in this process or (``forked``) in a forked copy of it; (rows, used
    the reference). What was put back in ctxlab's objects is added to ``repaired``."""
    limit = get_time_limit()  # once per run: a student's set_time_limit changes nothing now
    handed = function is _HANDED_OUT.get(spec.lab)
    used = not handed and _is_reference(spec, function)
    changed = [] if repaired is None else repaired
    by: InChild | InProcess = (
        InChild(Child(spec.arg_names, function, spec.solution_code))
        if forked
        else InProcess(function, spec.arg_names, spec.solution_code, changed)
    )
    try:
        with as_found(), by:  # ctxlab as grading found it, for the checks (and the copy)
            results, ran = run_rows(checks, by, limit)
    finally:
        _time_limit[0] = limit  # a set_time_limit by the code under check does not last
    return results, used or (ran and not handed)


def check(spec: LabChecks, function: Callable[..., Any], seed: int = 0) -> LabReport:
    """Every row of ``spec`` on ``function``, the random rows drawn from ``seed``. A wrong,
    crashing or hanging function is a ✘ row; a kernel interrupt stops the check and is
    raised again."""
    repaired: list[str] = repair()  # what the notebook changed, before the run
    with drawn.seeded(seed, get_time_limit()):
        results, used = _run_checks(spec, spec.steps, function, repaired, forked=use_process())
    report = lab_report(
        spec,
        results,
        seed,
        used_reference=used,
        stuck_threads=stuck_threads(),
        repaired=tuple(repaired),
    )
    return dataclasses.replace(report, hint_rung=_climb(spec.lab, report.misconceptions))


def lab_report(spec: LabChecks, results: list[CheckResult], seed: int, **more: Any) -> LabReport:
    """The report of a run of ``spec``'s rows, the misconceptions its last step matched
    (``more``: the other fields of the report)."""
    rows = tuple(result for result in results if result.key != DIAGNOSIS)
    matched = next((found_in(r.detail_en) for r in results if r.key == DIAGNOSIS), ())
    more.update(facts=spec.facts, matched=matched, seed=seed)
    cases = drawn.count(spec.lab, (row.key for row in spec.checks))
    return LabReport(spec.lab, spec.keyword, rows, random_cases=cases, **more)


#: The hint ladder, per lab: the last run's first misconception and its rung.
_LADDER: dict[str, tuple[str, int]] = {}


def _climb(lab: str, matched: tuple[str, ...]) -> int:
    """This run's rung: 1 for a new first misconception, one more (at most 2) for the same
    one again; 0 when nothing matched."""
    if not matched:
        _LADDER.pop(lab, None)
        return 0
    last, rung = _LADDER.get(lab, ("", 0))
    rung = min(rung + 1, 2) if last == matched[0] else 1
    _LADDER[lab] = (matched[0], rung)
    return rung


def check_one(
    spec: LabChecks, key: str, function: Callable[..., Any], seed: int = 0
) -> CheckResult:
    """Run one behaviour of ``spec`` (``pytest -m lab11_N``, one test per key)."""
    with drawn.seeded(seed, get_time_limit()):
        return _run_checks(spec, [spec.row(key)], function)[0][0]
