"""The labs: where each lab's file is (the one module that imports one, when that lab is
first asked for), and the public face of grading (spec §10)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any, Final

import ctxlab.lab.grading.engine as engine
import ctxlab.lab.grading.inprocess as inprocess
from ctxlab.errors import shown
from ctxlab.lab.grading import drawn
from ctxlab.lab.grading.declare import LabChecks
from ctxlab.lab.grading.misconceptions import Misconception
from ctxlab.lab.grading.report import CheckResult, LabReport, Source
from ctxlab.lab.grading.usage import GradingUsageError

LABS: Final[tuple[str, ...]] = ("11.1", "11.2", "11.3", "11.4", "11.5")

_PREFIX: Final = f"{__package__}.lab11_"

#: The grading modules the labs' files check with, kept like ctxlab's own (a student's
#: ``expect.diff = ...`` lasts no longer than its check).
_CHECKED_WITH: Final = ("calls", "cases", "drawn_entries", "expect", "text")
inprocess.keep(*(importlib.import_module(f"{__package__}.{name}") for name in _CHECKED_WITH))
# drawn holds the seed and the time limit in lists it fills at run time: only its names
inprocess.keep(drawn, objects=False)

_LOADED: dict[str, LabChecks] = {}


def load(lab: object) -> LabChecks:
    """Lab ``lab`` as its file declares it; a :class:`GradingUsageError` for another name."""
    if not isinstance(lab, str) or lab not in LABS:
        raise GradingUsageError(
            f"lab must be one of {', '.join(repr(x) for x in LABS)}; got {shown(lab)}", option="lab"
        )
    if lab not in _LOADED:
        with inprocess.as_found():
            module = importlib.import_module(_PREFIX + lab.split(".")[1])
        # the lab's file is kept as it loaded
        inprocess.keep(*(m for n, m in sorted(sys.modules.items()) if n.startswith(_PREFIX)))
        _LOADED[lab] = module.LAB
    return _LOADED[lab]


def check_implementation(
    lab: str, *, seed: object = None, **functions: Callable[..., Any]
) -> LabReport:
    """Run lab ``lab``'s checks against the student's function:
    ``check_implementation("11.2", group_interactions=group_interactions)``.

    The random rows draw from ``seed`` (fresh unless given or set by ``CTXLAB_SEED``). A
    wrong lab or keyword is a :class:`GradingUsageError`; a wrong function, a ✘ row.
    """
    spec = load(lab)
    function = engine.function_of(spec, functions)
    return engine.check(spec, function, drawn.fresh_seed(seed))


def check_behaviour(
    lab: str, key: str, *, seed: object = None, **functions: Callable[..., Any]
) -> CheckResult:
    """Run one behaviour of a lab (``pytest -m lab11_N``, one test per key)."""
    spec = load(lab)
    function = engine.function_of(spec, functions)
    return engine.check_one(spec, key, function, drawn.fresh_seed(seed))


def lab_keyword(lab: str) -> str:
    """The keyword (and function name) a lab checks: ``"11.2"`` -> ``"group_interactions"``."""
    return load(lab).keyword


def behaviour_keys(lab: str) -> tuple[str, ...]:
    """The keys of a lab's behaviours, in report order."""
    return tuple(check.key for check in load(lab).checks)


def behaviour_source(lab: str, key: str) -> Source:
    """The kind of one behaviour of a lab: ``"chapter"`` or ``"ctxlab"``."""
    return load(lab).row(key).source


def catalogue(lab: str) -> tuple[Misconception, ...]:
    """A lab's misconception catalogue, in order."""
    return tuple(load(lab).catalogue)


def reference_functions(lab: str) -> dict[str, Callable[..., Any]]:
    """ctxlab's own function for a lab, by keyword, handed out as a right answer."""
    spec = load(lab)
    return {spec.keyword: engine.handed_out(spec)}
