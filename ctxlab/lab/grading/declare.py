"""How a lab's file declares its rows: :class:`LabChecks`.

A lab's file holds ``LAB = LabChecks(lab, keyword, arg_names, reference, solution=...)``
and one ``@LAB.check(en, zh, source=..., ...)`` row per behaviour above the function that
checks it (named after the row's key): ``source="chapter"`` with the chapter's sentence
(``quote_zh`` verbatim, ``quote_en``; ``course=True`` for the course's code) or
``source="ctxlab"`` with ``why_en``/``why_zh``. Its misconception catalogue is read from
``catalogue/lab11_N.json`` when ``LAB`` is made. The engine runs it and imports no lab.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from types import CodeType, FunctionType, ModuleType
from typing import Any

from ctxlab.lab.grading.calls import Trial
from ctxlab.lab.grading.misconceptions import DIAGNOSIS, Misconception, diagnose, load
from ctxlab.lab.grading.report import CheckResult, LabFacts, Source
from ctxlab.lab.grading.usage import GradingUsageError

#: A check: given the student's function under watch, it returns or raises ``Failed``.
CheckFunction = Callable[[Trial], None]
#: One behaviour, declared: the same type as its row in a report (``run`` is its check).
Row = CheckResult


@dataclass(frozen=True)
class LabChecks:
    """One lab, as its file declares it.

    ``arg_names`` name the arguments in a "changed its input" detail. ``solution``: ctxlab's
    functions whose running means the student's function uses ctxlab's solution (never
    earlier labs' functions); ``stubbed``: those the sandbox replaces by a raise;
    ``also_reference``: functions that count as the reference when passed as the student's;
    ``solution_name``/``helpers`` name them in the report; ``budget``: the report adds the
    ``a/b/c`` legend.
    """

    lab: str
    keyword: str
    arg_names: tuple[str, ...]
    reference: Callable[..., Any]
    solution: tuple[Callable[..., Any], ...] = ()
    stubbed: tuple[Callable[..., Any], ...] = ()
    also_reference: tuple[Callable[..., Any], ...] = ()
    solution_name: str = ""
    helpers: str = ""
    budget: bool = False
    checks: list[Row] = field(default_factory=list)
    catalogue: list[Misconception] = field(default_factory=list)
    #: The inputs the catalogue's evidence names (JSON text, by id).
    inputs: dict[str, str] = field(default_factory=dict)

    def check(
        self, en: str, zh: str, *, source: Source, **about: Any
    ) -> Callable[[CheckFunction], CheckFunction]:
        """Register the decorated function, named after the row's key, as the check of one
        behaviour (``en``/``zh``), in report order; ``about``: the rest of its :class:`Row`,
        a chapter row's quote or a ctxlab row's why (``tests/test_check_kinds.py`` holds
        every row to it)."""

        def register(run: CheckFunction) -> CheckFunction:
            self.checks.append(Row(run.__name__, False, en, zh, source=source, run=run, **about))
            return run

        return register

    def __post_init__(self) -> None:
        """Read the lab's misconception catalogue and its evidence's inputs."""
        items, inputs = load(self.lab)
        self.catalogue[:] = items
        self.inputs.update(inputs)

    @property
    def steps(self) -> list[Row]:
        """The rows, then the search for a known mistake (:func:`~.misconceptions.diagnose`;
        run only when a row failed, never a row of the report)."""
        run = functools.partial(diagnose, tuple(self.catalogue), self.inputs)
        why = "the catalogue's evidence", "目录中的证据"
        step = Row(DIAGNOSIS, False, *why, source="ctxlab", why_en=why[0], why_zh=why[1], run=run)
        return [*self.checks, step]

    @property
    def facts(self) -> LabFacts:
        """What a report of this lab says beyond its rows."""
        return LabFacts(self.solution_name, self.helpers, self.budget, tuple(self.catalogue))

    @property
    def solution_code(self) -> frozenset[CodeType]:
        """The code objects of :attr:`solution` (what a call is watched for)."""
        return frozenset(function.__code__ for function in self.solution)

    def row(self, key: str) -> Row:
        """The row ``key`` (a :class:`GradingUsageError` naming the lab's keys if none)."""
        for check in self.checks:
            if check.key == key:
                return check
        keys = ", ".join(check.key for check in self.checks)
        raise GradingUsageError(
            f"lab {self.lab} has no behaviour {key!r}; it has {keys}", option="key"
        )


def methods(cls: type) -> list[Callable[..., Any]]:
    """The functions defined in ``cls``'s own body (its methods)."""
    return [value for value in vars(cls).values() if isinstance(value, FunctionType)]


def helper_functions(module: ModuleType) -> list[Callable[..., Any]]:
    """The functions (and methods of classes) defined in ``module`` that its ``__all__``
    does not export: its helpers."""
    found: list[Callable[..., Any]] = []
    exported = set(getattr(module, "__all__", ()))
    for name, value in vars(module).items():
        if name in exported or name.startswith("__"):
            continue
        if getattr(value, "__module__", None) != module.__name__:
            continue
        if isinstance(value, FunctionType):
            found.append(value)
        elif isinstance(value, type):
            found += methods(value)
    return found
