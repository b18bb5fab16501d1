"""The engine of :func:`check_implementation`: each lab's registered checks, run in order.

Each lab module of this package (:mod:`~ctxlab.lab.grading.lab11_1` ...) declares its lab
once with :func:`register_lab` -- the keyword the student's function is passed as, its
argument names, ctxlab's reference function -- and then each behaviour with
``@LAB.check(en, zh, source=..., ...)`` above the function that checks it, named after the
behaviour's key. ``source`` declares the row's kind, as data: ``"chapter"`` with the
chapter's sentence (``quote_zh`` verbatim, ``quote_en``; ``course=True`` when the rule is
the course's code as the notebook teaches it) or ``"ctxlab"`` with ``why_en``/``why_zh``.
A lab module is imported the first time its lab is asked for, so checking Lab 11.2 never
builds Lab 11.5's cases.

:func:`check_implementation` runs every check of a lab in order, each in its own thread with
the time limit of :func:`set_time_limit` (10 s by default), read once when the run starts:
a student's function that raises the limit changes nothing for the run it is in. After a
check that did not return in time, the remaining checks of that run are reported as not run
rather than waited for. A wrong lab name or a missing, extra or non-callable keyword is a
:class:`GradingUsageError`, never a failed row.

Each check sees ctxlab as grading found it (:class:`~.runner.Pristine`): a name of a ctxlab
module that the student's code rebound -- ``ctxlab.context.build_context``,
``ctxlab.fixtures.opening_path`` -- is put back before each check and when a lab's module
loads, and the student's own binding is put back after the run. The report says first, in
plain words, when the student's function is, wraps or called the lab's reference (it is
then not passed), and when earlier check threads could not be stopped.

The objects behind those names are kept too (:mod:`.kept`): what a student's code (or a
thread it left running) changed in them with ``object.__setattr__`` is put back before each
check, and the report names it. On Linux, ``check_implementation`` makes each run in a
forked copy of the kernel that the kernel ends afterwards, or as soon as a check overruns
(:mod:`.isolation`; ``set_isolation("in-process")`` turns it off).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
import math
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import ctxlab.entries
import ctxlab.fixtures  # kept pristine below, with every ctxlab module loaded
from ctxlab.errors import shown
from ctxlab.lab.grading import isolation
from ctxlab.lab.grading.calls import Trial
from ctxlab.lab.grading.kept import KeptObjects
from ctxlab.lab.grading.report import CheckResult, LabReport, Source
from ctxlab.lab.grading.runner import (
    NOT_RUN,
    Outcome,
    Pristine,
    Sealed,
    run_check,
    stuck_threads,
)
from ctxlab.lab.grading.text import Text, bounded_output, clean, kind
from ctxlab.lab.grading.usage import GradingUsageError

__all__ = [
    "LABS",
    "GradingUsageError",
    "LabChecks",
    "behaviour_keys",
    "behaviour_source",
    "check_behaviour",
    "check_implementation",
    "get_time_limit",
    "lab_keyword",
    "reference_functions",
    "register_lab",
    "set_time_limit",
]

#: The labs that have a build-it function, in order.
LABS: Final[tuple[str, ...]] = ("11.1", "11.2", "11.3", "11.4", "11.5")

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
# The registry


#: A check: given the student's function under watch, it returns or raises ``Failed``.
CheckFunction = Callable[[Trial], None]


@dataclass(frozen=True)
class _Check:
    """One behaviour of a lab: its key, its words in English and Chinese, its check, and its
    kind (the chapter's sentence it checks, or why ctxlab decides so)."""

    key: str
    en: str
    zh: str
    run: CheckFunction
    source: Source = "chapter"
    quote_zh: str = ""
    quote_en: str = ""
    why_en: str = ""
    why_zh: str = ""
    course: bool = False

    def row(
        self, passed: bool, detail: Text | None = None, output: str = "", output_cut: int = 0
    ) -> CheckResult:
        """This behaviour's row in a report, with its kind and quotes (every route makes its
        rows here: in-process, in a grading child, from the sandbox)."""
        return CheckResult(
            self.key,
            passed,
            self.en,
            self.zh,
            clean(detail.en) if detail else "",
            clean(detail.zh) if detail else "",
            output,
            output_cut,
            self.source,
            self.quote_zh,
            self.quote_en,
            self.why_en,
            self.why_zh,
            self.course,
        )


@dataclass(frozen=True)
class LabChecks:
    """One lab: the student's function (keyword, argument names), the reference, the checks.

    ``arg_names`` name the positional arguments in a "changed its input" detail.
    """

    lab: str
    keyword: str
    arg_names: tuple[str, ...]
    reference: Callable[..., Any]
    checks: list[_Check] = field(default_factory=list)

    def check(
        self,
        en: str,
        zh: str,
        *,
        source: Source,
        quote_zh: str = "",
        quote_en: str = "",
        why_en: str = "",
        why_zh: str = "",
        course: bool = False,
    ) -> Callable[[CheckFunction], CheckFunction]:
        """Register the decorated function as the check of one behaviour, in report order.

        The function's name is the behaviour's key (``worked_example_31``: what
        ``pytest -m lab11_3`` names the test, and what the mutation suite asserts); ``en``
        and ``zh`` are the behaviour in words. ``source="chapter"`` needs the chapter's
        sentence the row checks, ``quote_zh`` (verbatim; with ``course=True``, the course's
        code as the notebook states it) and ``quote_en``; ``source="ctxlab"`` needs
        ``why_en`` and ``why_zh``, one line on why ctxlab decides so.
        """
        if source == "chapter":
            complete = bool(quote_zh and quote_en) and not (why_en or why_zh)
        else:
            complete = source == "ctxlab" and bool(why_en and why_zh) and not (quote_zh or course)
        if not complete:  # pragma: no cover - a programming error
            raise GradingUsageError(
                f"lab {self.lab}: a {source!r} row needs "
                + ("quote_zh and quote_en" if source == "chapter" else "why_en and why_zh"),
                option="source",
            )

        def register(run: CheckFunction) -> CheckFunction:
            self.checks.append(
                _Check(
                    run.__name__, en, zh, run, source, quote_zh, quote_en, why_en, why_zh, course
                )
            )
            return run

        return register


_REGISTRY: dict[str, LabChecks] = {}

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


def register_lab(
    lab: str, keyword: str, arg_names: tuple[str, ...], reference: Callable[..., Any]
) -> LabChecks:
    """Declare ``lab`` (one of :data:`LABS`), by its module; a reloaded module starts afresh."""
    if lab not in LABS:  # pragma: no cover - a programming error
        raise GradingUsageError(f"register_lab: {lab!r} is not one of {LABS}", option="lab")
    _REGISTRY[lab] = LabChecks(lab, keyword, arg_names, reference)
    return _REGISTRY[lab]


def _lab(lab: object) -> LabChecks:
    if not isinstance(lab, str) or lab not in LABS:
        raise GradingUsageError(
            f"lab must be one of {', '.join(repr(x) for x in LABS)}; got {shown(lab)}", option="lab"
        )
    if lab not in _REGISTRY:  # its module registers it when first imported
        replaced = _PRISTINE.restore()  # it binds ctxlab's functions as they were
        try:
            importlib.import_module(f"{__package__}.lab{lab.replace('.', '_')}")
        finally:
            _PRISTINE.put_back(replaced)
        for name, module in sorted(sys.modules.items()):  # with the labs it builds on
            if name.startswith(f"{__package__}.lab"):
                _PRISTINE.keep(module)
                _KEPT.keep(module)
    return _REGISTRY[lab]


def _function(spec: LabChecks, functions: Mapping[str, object]) -> Callable[..., Any]:
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


def lab_keyword(lab: str) -> str:
    """The keyword (and function name) a lab checks: ``"11.2"`` -> ``"group_interactions"``."""
    return _lab(lab).keyword


def behaviour_keys(lab: str) -> tuple[str, ...]:
    """The keys of a lab's behaviours, in report order."""
    return tuple(check.key for check in _lab(lab).checks)


def behaviour_source(lab: str, key: str) -> Source:
    """The kind of one behaviour of a lab: ``"chapter"`` or ``"ctxlab"``."""
    for check in _lab(lab).checks:
        if check.key == key:
            return check.source
    raise GradingUsageError(f"lab {lab} has no behaviour {key!r}", option="key")


def reference_functions(lab: str) -> dict[str, Callable[..., Any]]:
    """ctxlab's own function for a lab, as the keyword :func:`check_implementation` takes.

    It is handed out as a right answer to check (the tests and the mutation audit run it):
    its report is passed. A student's function that is ``ctxlab.build_context`` itself, or
    calls it, is not (the report says so first).
    """
    spec = _lab(lab)
    if lab not in _HANDED_OUT:
        reference = spec.reference

        @functools.wraps(reference)
        def handed_out(*args: Any, **kwargs: Any) -> Any:
            return reference(*args, **kwargs)

        del handed_out.__wrapped__
        _HANDED_OUT[lab] = handed_out
    return {spec.keyword: _HANDED_OUT[lab]}


#: Each lab's reference as :func:`reference_functions` hands it out (checked as a right
#: answer, not as "the student used the reference").
_HANDED_OUT: dict[str, Callable[..., Any]] = {}


# ----------------------------------------------------------------------------------------
# Running the checks


def _result(check: _Check, outcome: Outcome) -> CheckResult:
    output, cut = bounded_output(outcome.output, outcome.output_cut)
    return check.row(outcome.status == "pass", outcome.detail, output, cut)


#: ctxlab's functions that also count as a lab's own solution when passed as the student's
#: (bound now, as grading found them): 11.1's reference wraps the core parser.
_ALSO_REFERENCE: Final[dict[str, tuple[object, ...]]] = {
    "11.1": (ctxlab.entries.parse_session_entry,),
}


def _is_reference(lab: str, function: object, reference: object) -> bool:
    """Is ``function`` the reference, or does it unwrap to it (``functools.wraps``,
    ``functools.partial``)? Read without running any of the student's code."""
    references = (reference, *_ALSO_REFERENCE.get(lab, ()))
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
    checks: list[_Check],
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
    handed_out = function is _HANDED_OUT.get(spec.lab)
    used = not handed_out and _is_reference(spec.lab, function, spec.reference)
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
                lab=spec.lab,
            )
            hung = outcome.status == "hung"
            used = used or (outcome.used_reference and not handed_out)
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


def check_implementation(lab: str, **functions: Callable[..., Any]) -> LabReport:
    """Run lab ``lab``'s chapter checks against the student's function.

    ``check_implementation("11.2", group_interactions=group_interactions)``. Never raises
    for a wrong, crashing, hanging or unwritten function: each is a ✘ row. A wrong lab
    name or a missing, extra or non-callable keyword is a :class:`GradingUsageError`.
    A kernel interrupt while a check runs stops that check's thread and is raised again.
    """
    spec = _lab(lab)
    function = _function(spec, functions)
    repaired: list[str] = _KEPT.repair()  # what the notebook changed, before any copy
    if isolation.use_process():  # a fresh copy of the kernel runs the checks: .isolation
        limit = get_time_limit()
        results, used, more = isolation.run_in_child(
            spec, spec.checks, function, limit, _run_checks
        )
        repaired.extend(where for where in more if where not in repaired)
    else:
        results, used = _run_checks(spec, spec.checks, function, repaired)
    report = LabReport(
        spec.lab, spec.keyword, tuple(results), used, stuck_threads(), repaired=tuple(repaired)
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


def check_behaviour(lab: str, key: str, **functions: Callable[..., Any]) -> CheckResult:
    """Run one behaviour of a lab (what ``pytest -m lab11_N`` runs, one test per key)."""
    spec = _lab(lab)
    function = _function(spec, functions)
    for check in spec.checks:
        if check.key == key:
            return _run_checks(spec, [check], function)[0][0]
    raise GradingUsageError(
        f"lab {lab} has no behaviour {key!r}; it has {', '.join(behaviour_keys(lab))}", option="key"
    )
