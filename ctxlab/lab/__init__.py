"""ctxlab.lab -- the teaching layer behind the chapter 11 lab notebooks.

The only part of ctxlab that uses pandas, matplotlib and ipywidgets; importing it stays cheap
(submodules load on first use). One module per lab, ``lab11_1`` ... ``lab11_5`` and
``lab11_x``, holds that lab's tables, figures, widgets and self-checks for one notebook; an
earlier lab never imports a later one (11.3's :mod:`~ctxlab.lab.ledger` serves 11.5 too).
Shared: :mod:`~ctxlab.lab.display`, :mod:`~ctxlab.lab.checks`, :mod:`~ctxlab.lab.language`
(texts in ``data/texts.json``), :mod:`~ctxlab.lab.errors_zh`, :mod:`~ctxlab.lab.fonts`,
:mod:`~ctxlab.lab.grading` and the classroom kit (:mod:`~ctxlab.lab.classroom`,
:mod:`~ctxlab.lab.plans`, :mod:`~ctxlab.lab.quizzes`, :mod:`~ctxlab.lab.handouts`).
A notebook starts with :func:`setup_notebook` (course style, retina PNG figures, language).
"""

from __future__ import annotations

import importlib
import io
import pkgutil
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

_SUBMODULES = frozenset(module.name for module in pkgutil.iter_modules(__path__))

# Loaded from ctxlab.lab.grading on first use (it builds the chapter's fixtures).
_GRADING_NAMES = frozenset({"check_implementation", "LabReport", "CheckResult"})


def setup_notebook(language: str = "en") -> None:
    """Course style for matplotlib, retina PNG figures, and the notebook's language (``"zh"``:
    tables, verdicts, the fixtures' texts and, with a CJK font installed, figures in Chinese)."""
    from ctxlab import fixtures
    from ctxlab.lab import display

    set_language(language)  # type: ignore[arg-type]  # checked there
    fixtures.set_language(get_language())  # the session's texts in that language too
    display.use_course_style(language)
    try:
        from matplotlib_inline.backend_inline import set_matplotlib_formats
    except ImportError:  # pragma: no cover - outside Jupyter
        return
    set_matplotlib_formats("retina")  # type: ignore[no-untyped-call]
    # the inline backend may reset rcParams: re-apply (without a second notice)
    display.use_course_style(language, notice=io.StringIO())


def __getattr__(name: str) -> ModuleType | Any:
    if name == "check_implementation":  # grading's, noting each run for the mistakes list
        return importlib.import_module("ctxlab.lab.classroom").check_implementation
    if name in _GRADING_NAMES:
        return getattr(importlib.import_module("ctxlab.lab.grading"), name)
    if name in _SUBMODULES:
        return importlib.import_module(f"ctxlab.lab.{name}")
    raise AttributeError(f"module 'ctxlab.lab' has no attribute {name!r}")
