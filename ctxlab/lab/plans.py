"""Each lab's timing plan: minutes per section and exercise, each row **core**
(fits the class period) or **stretch** (fast finishers, homework), read from
``data/plans.json``. The minutes are ctxlab's estimate from the size of each section, not
measured in class. The check rows of ctxlab's optional extras are stretch too
(:func:`stretch_checks`).
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ctxlab.errors import CtxlabError
from ctxlab.lab.language import Texts, tr

say = Texts("plans")

__all__ = [
    "LABS",
    "PLANS",
    "LabPlan",
    "PlanRow",
    "lab_id",
    "period_line",
    "stretch_checks",
    "timing_plan",
]

Mark = Literal["core", "stretch"]
Kind = Literal["section", "exercise", "build", "check", "kit"]

#: The labs with a kit; 11.x is the chapter's optional migration exercise.
LABS = ("11.1", "11.2", "11.3", "11.4", "11.5", "11.x")


def lab_id(lab: object) -> str:
    """``lab`` itself when it is one of :data:`LABS`; else a CtxlabError naming it."""
    if not isinstance(lab, str) or lab not in LABS:
        raise CtxlabError(f"lab must be one of {', '.join(LABS)}; got {lab!r}")
    return lab


@dataclass(frozen=True)
class PlanRow:
    """One row of a timing plan; ``cell`` is the notebook cell where it starts."""

    cell: str
    en: str
    zh: str
    minutes: int
    mark: Mark = "core"
    kind: Kind = "section"

    @property
    def title(self) -> str:
        return tr(self.en, self.zh)


@dataclass(frozen=True)
class LabPlan:
    """A lab's timing plan: its rows in notebook order, the class period (minutes) the core
    rows fit (``None``: an optional lab) and the notebook's file name."""

    lab: str
    period: int | None
    rows: tuple[PlanRow, ...]
    notebook: str

    @property
    def core_minutes(self) -> int:
        return sum(row.minutes for row in self.rows if row.mark == "core")

    @property
    def stretch_minutes(self) -> int:
        return sum(row.minutes for row in self.rows if row.mark == "stretch")

    @property
    def exercises(self) -> tuple[PlanRow, ...]:
        return tuple(row for row in self.rows if row.kind == "exercise")

    def __str__(self) -> str:
        head = tr(f"Timing plan — Lab {self.lab}", f"时间安排 — 实验 {self.lab}")
        lines = [head, period_line(self)]
        for row in self.rows:
            minutes = tr(f"{row.minutes:>3} min", f"{row.minutes:>3} 分钟")
            lines.append(f"  {minutes}  {_mark_text(row.mark)}  {row.title}")
        extras = _extras_line(self.lab)
        if extras:
            lines.append(extras)
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        heads = (tr("section or exercise", "小节或练习"), tr("min", "分钟"), tr("mark", "标记"))
        rows = []
        for row in self.rows:
            weight = "bold" if row.kind in ("exercise", "build") else "normal"
            colour = "#0072B2" if row.mark == "core" else "#888"
            rows.append(
                f'<tr><td style="text-align:left;font-weight:{weight}">'
                f"{html.escape(row.title)}</td>"
                f'<td style="text-align:right">{row.minutes}</td>'
                f'<td style="color:{colour}">{html.escape(_mark_text(row.mark))}</td></tr>'
            )
        extras = _extras_line(self.lab)
        title = tr(f"Timing plan — Lab {self.lab}", f"时间安排 — 实验 {self.lab}")
        return (
            f'<div class="ctxlab-timing-plan"><p><strong>{html.escape(title)}</strong><br>'
            f"{html.escape(period_line(self))}</p>"
            f'<table><thead><tr><th style="text-align:left">{heads[0]}</th><th>{heads[1]}</th>'
            f"<th>{heads[2]}</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
            + (f"<p>{html.escape(extras)}</p>" if extras else "")
            + "</div>"
        )


def _load() -> dict[str, LabPlan]:
    """Every lab's plan, from ``data/plans.json`` (each plan's ``note`` says what it assumes)."""
    data = json.loads(Path(__file__).with_name("data").joinpath("plans.json").read_text("utf-8"))
    return {
        lab: LabPlan(
            lab, plan["period"], tuple(PlanRow(*row) for row in plan["rows"]), plan["notebook"]
        )
        for lab, plan in data.items()
    }


#: Every lab's plan, in notebook order (:func:`_load`).
PLANS: dict[str, LabPlan] = _load()


def stretch_checks(lab: str) -> tuple[str, ...]:
    """The check table's rows of ``lab`` that are stretch: ctxlab's optional extras, the rows
    its grading file gives to ctxlab (``ctxlab.lab.grading.behaviour_source``). Every
    other row checks the chapter's rule (or the course's code): core."""
    from ctxlab.lab import grading

    if lab_id(lab) not in grading.LABS:
        return ()
    return tuple(
        k for k in grading.behaviour_keys(lab) if grading.behaviour_source(lab, k) == "ctxlab"
    )


def _mark_text(mark: Mark) -> str:
    return tr("core", "必做") if mark == "core" else tr("stretch", "选做")


def period_line(plan: LabPlan) -> str:
    """The plan's period in one line: core and stretch minutes (or: an optional lab)."""
    if plan.period is None:
        return say("an_optional_lab_the_chapter", plan=plan)
    return say("core_min_one_class_period", plan=plan)


def _extras_line(lab: str) -> str:
    keys = stretch_checks(lab)
    return say("check_table_the_rows_of", count=len(keys), names=", ".join(keys)) if keys else ""


def timing_plan(lab: str) -> LabPlan:
    """The timing plan of ``lab`` (a table in a notebook; ``str()`` gives it as text)."""
    return PLANS[lab_id(lab)]
