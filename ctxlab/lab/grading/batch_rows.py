"""What ``ctxlab grade`` reads of a :class:`~ctxlab.lab.grading.report.LabReport`, in one place.

Each row has its kind (``CheckResult.source``: ``"chapter"``, a rule the chapter states or
the course's code decides; ``"ctxlab"``, ctxlab's own extension); ``LabReport.passed`` is
decided by the chapter's rows alone, and ``LabReport.misconceptions`` names the catalogued
misconceptions the failures match (:mod:`ctxlab.lab.grading.misconceptions`, each with a
hint in English and Chinese). Every other module of ``ctxlab grade`` reads a report only
through these functions.
"""

from __future__ import annotations

from ctxlab.lab.grading.misconceptions import Misconception, hint_lines
from ctxlab.lab.grading.report import CheckResult, LabReport, Source

__all__ = [
    "chapter_rows",
    "extra_rows",
    "folded",
    "hint",
    "lead",
    "misconceptions",
    "report_passed",
    "row_misconceptions",
    "row_source",
]


def row_source(result: CheckResult) -> Source:
    """``"chapter"`` or ``"ctxlab"``: whose rule the row checks."""
    return result.source


def chapter_rows(report: LabReport) -> tuple[CheckResult, ...]:
    """The rows of the chapter's rules (they alone decide whether the lab is passed)."""
    return tuple(report.chapter_results)


def extra_rows(report: LabReport) -> tuple[CheckResult, ...]:
    """The rows of ctxlab's own extensions (optional extras, reported apart)."""
    return tuple(report.extra_results)


def report_passed(report: LabReport) -> bool:
    """Is the lab passed (decided by the chapter's rows)?"""
    return bool(report.passed)


def misconceptions(report: LabReport) -> tuple[str, ...]:
    """The ids of the catalogued misconceptions the report's failures match, most likely
    first."""
    return tuple(report.misconceptions)


def _matched(report: LabReport) -> list[Misconception]:
    by_id = {item.id: item for item in report.facts.catalogue}
    return [by_id[name] for name in report.misconceptions if name in by_id]


def row_misconceptions(report: LabReport, key: str) -> tuple[str, ...]:
    """The matched misconceptions whose signature names this failed row."""
    row = next((r for r in report.results if r.key == key), None)
    if row is None or row.passed:
        return ()
    return tuple(item.id for item in _matched(report) if key in item.signature)


def lead(report: LabReport) -> str:
    """The key of the failed row the report's table opens with (empty when none failed)."""
    head = report.lead[0]
    return head.key if head is not None else ""


def folded(report: LabReport, key: str) -> bool:
    """Is this failed row folded under the matched mistake (it says nothing new)?"""
    return any(row.key == key for row in report.lead[1])


def hint(report: LabReport, language: str) -> str:
    """The hint a student stuck on this report would see first, in ``language`` (``en`` or
    ``zh``): the most likely misconception's, else the behaviour of the failed row the
    table opens with; empty when nothing failed."""
    zh = language == "zh"
    for item in _matched(report):
        text = hint_lines(item, 1, passed=report.passed)  # as the notebook's first rung
        return text.zh if zh else text.en
    first = report.lead[0]
    if first is None:
        return ""
    if zh:
        return f"先看这一条：{first.behaviour_zh}"
    return f"Start with this rule: {first.behaviour_en}"
