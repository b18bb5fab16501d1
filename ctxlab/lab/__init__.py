"""ctxlab.lab -- the teaching layer behind the chapter 11 lab notebooks.

This is the only part of ctxlab that uses pandas, matplotlib and ipywidgets. Importing
``ctxlab.lab`` itself stays cheap: the heavy submodules load on first use.

==========================  ==========================================================
:mod:`ctxlab.lab.style`      one matplotlib style, 14 pt+, Okabe–Ito colours
:mod:`ctxlab.lab.checks`     :class:`Verdict` and :func:`friendly` for self-checks
:mod:`ctxlab.lab.grading`    :func:`check_implementation`: the chapter's checks run
                             against the student's own function (the build-it cells)
:mod:`ctxlab.lab.language`   :func:`set_language`: reports in English or Chinese
:mod:`ctxlab.lab.tables`     DataFrames and Stylers (path, grouping, ledger)
:mod:`ctxlab.lab.plots`      matplotlib figures (timeline, budget, sweep)
:mod:`ctxlab.lab.widgets`    ipywidgets over the pure table/plot functions
:mod:`ctxlab.lab.exercises`  the self-check functions of labs 11.1-11.3
==========================  ==========================================================

A notebook starts with :func:`setup_notebook`, which applies the course style and asks the
inline backend for retina PNG figures (nbval skips PNGs but compares text).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ctxlab.lab.checks import Verdict, friendly, not_answered
from ctxlab.lab.language import get_language, set_language

if TYPE_CHECKING:
    from ctxlab.lab.grading import CheckResult, LabReport, check_implementation

__all__ = [
    "CheckResult",
    "LabReport",
    "Verdict",
    "check_implementation",
    "friendly",
    "get_language",
    "not_answered",
    "set_language",
    "setup_notebook",
]

_SUBMODULES = frozenset(
    {
        "style",
        "checks",
        "grading",
        "language",
        "tables",
        "plots",
        "widgets",
        "exercises",
        "compaction_views",
    }
)

# Loaded from ctxlab.lab.grading on first use (it builds the chapter's fixtures).
_GRADING_NAMES = frozenset({"check_implementation", "LabReport", "CheckResult"})


def setup_notebook() -> None:
    """Course style for matplotlib, retina PNG figures, and pandas display options."""
    from ctxlab.lab import style

    style.use_course_style()
    try:
        from matplotlib_inline.backend_inline import set_matplotlib_formats
    except ImportError:  # pragma: no cover - outside Jupyter
        return
    set_matplotlib_formats("retina")  # type: ignore[no-untyped-call]
    style.use_course_style()  # the inline backend may reset rcParams; re-apply


def __getattr__(name: str) -> ModuleType | Any:
    if name in _GRADING_NAMES:
        return getattr(importlib.import_module("ctxlab.lab.grading"), name)
    if name in _SUBMODULES:
        return importlib.import_module(f"ctxlab.lab.{name}")
    raise AttributeError(f"module 'ctxlab.lab' has no attribute {name!r}")
