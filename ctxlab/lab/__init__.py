"""ctxlab.lab -- the teaching layer behind the chapter 11 lab notebooks.

This is the only part of ctxlab that uses pandas, matplotlib and ipywidgets. Importing
``ctxlab.lab`` itself stays cheap: the heavy submodules load on first use.

One teaching module per lab, each holding that lab's tables, figures, widgets and
self-checks; each builds on the core module the lab is about and serves one notebook:

=====  ==========================  =========================  ===================================
Lab    core module                 teaching module            notebook (``notebooks/``)
=====  ==========================  =========================  ===================================
11.1   :mod:`ctxlab.entries`       :mod:`ctxlab.lab.lab11_1`  ``11.1-summary-is-a-fact.ipynb``
11.2   :mod:`ctxlab.interactions`  :mod:`ctxlab.lab.lab11_2`  ``11.2-interaction-groups.ipynb``
11.3   :mod:`ctxlab.context`       :mod:`ctxlab.lab.lab11_3`  ``11.3-budgeted-context.ipynb``
11.4   :mod:`ctxlab.compaction`    :mod:`ctxlab.lab.lab11_4`  ``11.4-create-compaction.ipynb``
11.5   :mod:`ctxlab.context`       :mod:`ctxlab.lab.lab11_5`  ``11.5-resume-from-summary.ipynb``
11.x   :mod:`ctxlab.migration`     :mod:`ctxlab.lab.lab11_x`  ``11.x-migration.ipynb``
=====  ==========================  =========================  ===================================

Shared by every lab:

============================  ==========================================================
:mod:`ctxlab.lab.display`     the course style, the one table wrapper (:func:`show`),
                              widget boxes, group numbers, the estimator type
:mod:`ctxlab.lab.checks`      :class:`Verdict`, :func:`friendly` and the answer readers
                              (``id_list`` ...) of the self-checks
:mod:`ctxlab.lab.grading`     :func:`check_implementation`: the chapter's checks run
                              against the student's own function (the build-it cells),
                              one module per lab (``grading.lab11_1`` ...)
:mod:`ctxlab.lab.language`    :func:`set_language`: reports in English or Chinese
:mod:`ctxlab.lab.fonts`       a CJK font for Chinese figure text (English without one)
:mod:`ctxlab.lab.classroom`   each lab's classroom kit: timing plan, common mistakes,
                              exit quiz, instructor's guide (issue 27)
:mod:`ctxlab.lab.plans`       the timing plans the kit shows
:mod:`ctxlab.lab.quizzes`     the exit quizzes' questions, answers computed by ctxlab
:mod:`ctxlab.lab.handouts`    one-page summary sheets, ``make handouts`` (issue 27)
============================  ==========================================================

11.3's budget ledger (:mod:`ctxlab.lab.ledger`: :class:`~ctxlab.lab.ledger.Budget`, the ledger
table and figure) is re-exported by :mod:`~ctxlab.lab.lab11_3` and used by 11.5 too.

A later lab may reuse an earlier lab's function (11.3's ledger labels its groups with
11.2's :func:`~ctxlab.lab.lab11_2.group_label`); an earlier lab never imports a later one.

A notebook starts with :func:`setup_notebook`, which applies the course style and asks the
inline backend for retina PNG figures (nbval skips PNGs but compares text).
"""

from __future__ import annotations

import importlib
import io
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
        "checks",
        "classroom",
        "display",
        "grading",
        "language",
        "fonts",
        "handouts",
        "lab11_1",
        "lab11_2",
        "lab11_3",
        "lab11_4",
        "lab11_5",
        "lab11_x",
        "ledger",
        "plans",
        "quizzes",
    }
)

# Loaded from ctxlab.lab.grading on first use (it builds the chapter's fixtures).
_GRADING_NAMES = frozenset({"check_implementation", "LabReport", "CheckResult"})


def setup_notebook(language: str = "en") -> None:
    """Course style for matplotlib, retina PNG figures, and the notebook's language (``"zh"``:
    tables, verdicts, the fixtures' texts and, with a CJK font installed, figures in Chinese)."""
    from ctxlab import fixtures
    from ctxlab.lab import display, fonts
    from ctxlab.lab import language as lang

    lang.set_language(language)  # type: ignore[arg-type]  # checked there
    fixtures.set_language(lang.get_language())  # the session's texts in that language too

    def apply_style() -> None:
        display.use_course_style()
        drawn = fonts.use_figure_language(language, notice=None if first[0] else io.StringIO())
        lang.set_figure_language(drawn)
        first[0] = False

    first = [True]
    apply_style()
    try:
        from matplotlib_inline.backend_inline import set_matplotlib_formats
    except ImportError:  # pragma: no cover - outside Jupyter
        return
    set_matplotlib_formats("retina")  # type: ignore[no-untyped-call]
    apply_style()  # the inline backend may reset rcParams; re-apply (without a second notice)


def __getattr__(name: str) -> ModuleType | Any:
    if name == "check_implementation":  # grading's, noting each run for the mistakes list
        return importlib.import_module("ctxlab.lab.classroom").check_implementation
    if name in _GRADING_NAMES:
        return getattr(importlib.import_module("ctxlab.lab.grading"), name)
    if name in _SUBMODULES:
        return importlib.import_module(f"ctxlab.lab.{name}")
    raise AttributeError(f"module 'ctxlab.lab' has no attribute {name!r}")
