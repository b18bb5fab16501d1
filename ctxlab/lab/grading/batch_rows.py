"""What ``ctxlab grade`` reads of a :class:`~ctxlab.lab.grading.report.LabReport`, in one place.

The chapter-true checks (issue 24) give each row a ``source`` (``"chapter"``: a rule the
chapter states; ``"ctxlab"``: ctxlab's own extension), decide ``LabReport.passed`` by the
chapter's rows alone, and name the catalogued misconceptions the failures match
(:mod:`ctxlab.lab.grading.misconceptions`, each with a hint in English and Chinese). Until
that work is merged these functions read it with fallbacks: a row without ``source`` is
the chapter's, a report without ``misconceptions`` names none, and the hint is then the
first failed row's behaviour. Every other module of ``ctxlab grade`` reads a report only
through these functions.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any, Literal

from ctxlab.lab.grading.report import CheckResult, LabReport

__all__ = [
    "chapter_rows",
    "extra_rows",
    "hint",
    "misconceptions",
    "report_passed",
    "row_misconceptions",
    "row_source",
]

Source = Literal["chapter", "ctxlab"]


def row_source(result: CheckResult) -> Source:
    """``"chapter"`` or ``"ctxlab"``: whose rule the row checks (the chapter's by default)."""
    source = getattr(result, "source", "chapter")
    return "ctxlab" if source == "ctxlab" else "chapter"


def chapter_rows(report: LabReport) -> tuple[CheckResult, ...]:
    """The rows of the chapter's rules (they alone decide whether the lab is passed)."""
    rows = getattr(report, "chapter_results", None)
    if rows is not None:
        return tuple(rows)
    return tuple(r for r in report.results if row_source(r) == "chapter")


def extra_rows(report: LabReport) -> tuple[CheckResult, ...]:
    """The rows of ctxlab's own extensions (optional extras, reported apart)."""
    rows = getattr(report, "extra_results", None)
    if rows is not None:
        return tuple(rows)
    return tuple(r for r in report.results if row_source(r) == "ctxlab")


def report_passed(report: LabReport) -> bool:
    """Is the lab passed (decided by the chapter's rows)?"""
    return bool(report.passed)


def _catalogue() -> Any | None:
    try:
        return importlib.import_module("ctxlab.lab.grading.misconceptions")
    except ImportError:
        return None


def _matched(report: LabReport) -> list[Any]:
    """The catalogue's Misconception objects the report's failures match, most likely first."""
    catalogue = _catalogue()
    match = getattr(catalogue, "match", None)
    if match is None:
        return []
    failed = [r.key for r in report.results if not r.passed]
    if not failed:
        return []
    try:
        found = match(report.lab, failed)
    except Exception:  # a catalogue that cannot answer names none
        return []
    return list(found or ())


def _identifier(item: Any) -> str:
    return str(item if isinstance(item, str) else getattr(item, "id", item))


def misconceptions(report: LabReport) -> tuple[str, ...]:
    """The ids of the catalogued misconceptions the report's failures match (most likely
    first); none before the catalogue exists."""
    named = getattr(report, "misconceptions", None)
    if named is not None:
        return tuple(_identifier(item) for item in named)
    return tuple(_identifier(item) for item in _matched(report))


def row_misconceptions(report: LabReport, key: str) -> tuple[str, ...]:
    """The misconception ids a failed row points to: those whose catalogue entry names the
    row, or, when the catalogue does not say which rows, every one of the report's."""
    row = next((r for r in report.results if r.key == key), None)
    if row is None or row.passed:
        return ()
    ids = misconceptions(report)
    by_id = {_identifier(item): item for item in _matched(report)}
    named: list[str] = []
    for identifier in ids:
        keys = _keys_of(by_id.get(identifier))
        if keys is None or key in keys:
            named.append(identifier)
    return tuple(named)


def _keys_of(item: Any) -> Sequence[str] | None:
    for attribute in ("keys", "rows", "failed_keys", "behaviours"):
        keys = getattr(item, attribute, None)
        if isinstance(keys, (tuple, list, frozenset, set)):
            return [str(k) for k in keys]
    return None


def hint(report: LabReport, language: str) -> str:
    """The hint a student stuck on this report would see first, in ``language`` (``en`` or
    ``zh``): the most likely misconception's, else the first failed row's behaviour; empty
    when nothing failed."""
    zh = language == "zh"
    for item in _matched(report):
        text = getattr(item, "hint_zh" if zh else "hint_en", None)
        if isinstance(text, str) and text:
            return text
    failed = [r for r in report.results if not r.passed]
    if not failed:
        return ""
    first = next((r for r in failed if row_source(r) == "chapter"), failed[0])
    if zh:
        return f"先看这一条：{first.behaviour_zh}"
    return f"Start with this rule: {first.behaviour_en}"
