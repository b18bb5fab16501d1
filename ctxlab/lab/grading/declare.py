"""How a lab's file declares its checks: :class:`LabChecks` and its rows (issue 24).

A lab's file (:mod:`~ctxlab.lab.grading.lab11_1` ... ``lab11_5``) is data plus small check
functions, and everything the grader knows about that lab is in it:

* ``LAB = LabChecks(lab, keyword, arg_names, reference, solution=..., ...)`` -- the
  student's function (its keyword and argument names), ctxlab's reference, and ctxlab's
  solution of the lab: the functions whose running means the student's function used it
  (the sandbox stubs them out; the report's notice names them);
* one row per behaviour, ``@LAB.check(en, zh, source=..., ...)`` above the function that
  checks it, named after the row's key; ``source="chapter"`` with the chapter's sentence
  (``quote_zh`` verbatim, ``quote_en``; ``course=True`` for the course's code as the
  notebook teaches it) or ``source="ctxlab"`` with ``why_en``/``why_zh``;
* its misconception catalogue is data, ``catalogue/lab11_N.json`` (:mod:`.misconceptions`),
  read when ``LAB`` is made (:meth:`LabChecks.misconceptions`).

The engine (:mod:`.engine`) runs a :class:`LabChecks` it is given and never imports a lab;
:mod:`.labs` is the one place that knows where each lab's file is.
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

__all__ = ["CheckFunction", "LabChecks", "Row", "helper_functions", "methods"]

#: A check: given the student's function under watch, it returns or raises ``Failed``.
CheckFunction = Callable[[Trial], None]


#: One behaviour of a lab, declared: the same type as its row in a report (``run`` is its
#: check; :meth:`~.report.CheckResult.row` makes the row).
Row = CheckResult


@dataclass(frozen=True)
class LabChecks:
    """One lab, as its file declares it.

    ``arg_names`` name the positional arguments in a "changed its input" detail.
    ``solution``: ctxlab's functions whose running during the student's call means the
    student's function is, wraps or calls ctxlab's solution (the reference and the private
    helpers only it runs; never the functions of earlier labs the notebook allows).
    ``stubbed``: those of them that the sandbox's copy of ctxlab replaces by a raise (the
    ones nothing but the solution runs, not even reading the student's result).
    ``also_reference``: functions that count as the reference when passed as the student's.
    ``solution_name`` and ``helpers`` name them in the report's notice; ``budget``: the
    details name budgets ``a/b/c`` (the report adds the legend).
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
                Row(
                    run.__name__,
                    False,
                    en,
                    zh,
                    source=source,
                    quote_zh=quote_zh,
                    quote_en=quote_en,
                    why_en=why_en,
                    why_zh=why_zh,
                    course=course,
                    run=run,
                )
            )
            return run

        return register

    def __post_init__(self) -> None:
        # The catalogue is read with the lab's file: what grading keeps of the file
        # (:mod:`.kept`) holds it from the start.
        if not self.catalogue:
            self.misconceptions(*load(self.lab))

    def misconceptions(self, items: tuple[Misconception, ...], inputs: dict[str, str]) -> None:
        """Set the lab's misconception catalogue, in order, and its evidence's inputs."""
        for item in items:
            if not item.id.startswith(f"{self.lab}/"):  # pragma: no cover - a programming error
                raise GradingUsageError(f"misconception {item.id} is not of lab {self.lab}")
        self.catalogue[:] = items
        self.inputs.clear()
        self.inputs.update(inputs)

    @property
    def steps(self) -> list[Row]:
        """What the check loop runs: the rows, then, when a row failed, the search for a
        known mistake (:func:`~.misconceptions.diagnose`; never a row of the report)."""
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
    """The module-level functions of ``module`` that its ``__all__`` does not export (its
    helpers, private or shared with another ctxlab module) and the methods of such classes
    (those defined there, not imported)."""
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
