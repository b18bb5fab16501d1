"""One graded (student, lab) of ``ctxlab grade`` (spec §11): :class:`GradedLab`.

The one record from a submission to ``grades.csv``, ``rows.csv``, Gradescope
(:mod:`.autograder`) and ``report.html`` (:mod:`.class_report`): made from the sandbox's
outcome (:meth:`GradedLab.of`) or for a submission not graded (:meth:`GradedLab.ungraded`);
carried as JSON between the grading processes and through the cache.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import TYPE_CHECKING, Any

from ctxlab.lab.grading.submissions import KEYWORDS, LabSource
from ctxlab.lab.grading.text import Text

if TYPE_CHECKING:
    from ctxlab.lab.grading.misconceptions import Misconception
    from ctxlab.lab.grading.report import CheckResult, LabReport
    from ctxlab.lab.grading.sandbox import GradeOutcome

__all__ = ["GradedLab", "GradedRow"]


def _known(cls: type[Any], data: Mapping[str, Any]) -> dict[str, Any]:
    names = {field.name for field in fields(cls)}
    values = {key: value for key, value in data.items() if key in names}
    values["misconceptions"] = tuple(values.get("misconceptions", ()))
    return values


@dataclass(frozen=True)
class GradedRow:
    """One row of a graded lab (``source``: ``chapter`` or ``ctxlab``); ``misconceptions``:
    the ids matched when it failed; ``folded``: it fails with the row the table opens with."""

    key: str
    source: str
    passed: bool
    behaviour_en: str = ""
    behaviour_zh: str = ""
    detail_en: str = ""
    detail_zh: str = ""
    misconceptions: tuple[str, ...] = ()
    folded: bool = False

    def behaviour(self, language: str) -> str:
        return (self.behaviour_zh if language == "zh" else "") or self.behaviour_en

    def detail(self, language: str) -> str:
        return (self.detail_zh if language == "zh" else "") or self.detail_en


@dataclass(frozen=True)
class GradedLab:
    """One graded (student, lab): ``status`` (``ok``, ``timeout``, ``crashed``, ``refused``,
    ``invalid``) and ``reason``; the counts of the chapter's rows and ctxlab's extras; the
    misconceptions matched, most likely first; the hint the student would see first; the
    key of the row the table opens with (``lead``); the rows (none when no check ran)."""

    student: str
    lab: str
    file: str = ""
    status: str = "ok"
    reason: str = ""
    passed: bool = False
    chapter_passed: int = 0
    chapter_total: int = 0
    extras_passed: int = 0
    extras_total: int = 0
    misconceptions: tuple[str, ...] = ()
    hint_en: str = ""
    hint_zh: str = ""
    lead: str = ""
    function: str = ""
    rows: tuple[GradedRow, ...] = ()
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    seed: int | None = None

    @property
    def graded(self) -> bool:
        """Did the checks run (a report with rows), whatever the status?"""
        return bool(self.rows)

    def hint(self, language: str) -> str:
        return (self.hint_zh if language == "zh" else "") or self.hint_en

    def to_json(self) -> dict[str, Any]:
        """Plain JSON (``seed`` left out when there is none)."""
        data = asdict(self)
        if self.seed is None:
            del data["seed"]
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GradedLab:
        """A record from its JSON (a field the JSON lacks takes its default)."""
        values = _known(cls, data)
        values["rows"] = tuple(GradedRow(**_known(GradedRow, r)) for r in values.get("rows", ()))
        return cls(**values)

    @classmethod
    def ungraded(cls, source: LabSource, status: str, reason: str) -> GradedLab:
        """``source`` with no report: ``status`` and ``reason`` say why."""
        function = KEYWORDS.get(source.lab, "")
        return cls(source.student, source.lab, str(source.path), status, reason, function=function)

    @classmethod
    def of(cls, source: LabSource, outcome: GradeOutcome) -> GradedLab:
        """The record of ``source`` graded in the sandbox."""
        base = replace(
            cls.ungraded(source, outcome.status, outcome.reason),
            seconds=round(float(outcome.seconds), 3),
            cpu_seconds=round(float(outcome.cpu_seconds), 3),
        )
        report = outcome.report
        if report is None:
            return base
        chapter, extras = report.chapter_results, report.extra_results
        by_id = {item.id: item for item in report.facts.catalogue}
        matched = [by_id[name] for name in report.misconceptions if name in by_id]
        lead, folded_rows = report.lead
        folded = {row.key for row in folded_rows}
        hint = _hint(report, matched)
        return replace(
            base,
            passed=bool(report.passed),
            chapter_passed=sum(r.passed for r in chapter),
            chapter_total=len(chapter),
            extras_passed=sum(r.passed for r in extras),
            extras_total=len(extras),
            misconceptions=tuple(report.misconceptions),
            hint_en=hint.en,
            hint_zh=hint.zh,
            lead=lead.key if lead is not None else "",
            function=report.function,
            rows=tuple(_row(r, matched, folded) for r in report.results),
            seed=report.seed,
        )


def _row(r: CheckResult, matched: list[Misconception], folded: set[str]) -> GradedRow:
    ids = () if r.passed else tuple(item.id for item in matched if r.key in item.signature)
    texts = (r.behaviour_en, r.behaviour_zh, r.detail_en, r.detail_zh)
    return GradedRow(r.key, r.source, bool(r.passed), *texts, ids, r.key in folded)


def _hint(report: LabReport, matched: list[Misconception]) -> Text:
    """The hint a student stuck on this report sees first: the likeliest misconception's,
    else the leading failed row's behaviour; empty when nothing failed."""
    from ctxlab.lab.grading.misconceptions import hint_lines

    if matched:
        return hint_lines(matched[0], 1, passed=report.passed)  # as the notebook's first rung
    first = report.lead[0]
    if first is None:
        return Text("", "")
    return Text(f"Start with this rule: {first.behaviour_en}", f"先看这一条：{first.behaviour_zh}")
