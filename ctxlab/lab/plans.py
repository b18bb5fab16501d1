"""Each lab's timing plan (issue 27, item 4): minutes per section and per exercise.

Each row is marked **core** (fits the class period) or **stretch** (for fast finishers or
homework). The minutes are ctxlab's *estimate* made from the size of each section (words
to read, predict prompts, cells to run, exercises) and the size of the build-it solution;
they are not measured in a class. The check table's rows of ctxlab's optional extras (each
lab's grading file's ``"ctxlab"`` rows) are stretch too: :func:`stretch_checks`.

:func:`timing_plan` gives a lab's plan (a table in a notebook; ``str()`` gives it as
text); :mod:`ctxlab.lab.classroom` re-exports it. Everything here is ctxlab's teaching
material, not the chapter's. Every text exists in English and Chinese, picked when it is
rendered (:func:`ctxlab.lab.language.tr`).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ctxlab.lab.language import tr

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
        from ctxlab.errors import CtxlabError

        raise CtxlabError(f"lab must be one of {', '.join(LABS)}; got {lab!r}")
    return lab


# ------------------------------------------------------------------------------ the plan


@dataclass(frozen=True)
class PlanRow:
    """One row of a timing plan: a section or an exercise of the notebook.

    ``cell`` is the id of the notebook cell where it starts (a section's heading cell, an
    exercise's check cell), so a test can tie each row to the notebook source.
    """

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
    """A lab's timing plan: its rows in notebook order and the class period they fit."""

    lab: str
    #: The class period the core rows fit, in minutes (``None``: an optional lab).
    period: int | None
    rows: tuple[PlanRow, ...]

    @property
    def core_minutes(self) -> int:
        return sum(row.minutes for row in self.rows if row.mark == "core")

    @property
    def stretch_minutes(self) -> int:
        return sum(row.minutes for row in self.rows if row.mark == "stretch")

    @property
    def exercises(self) -> tuple[PlanRow, ...]:
        return tuple(row for row in self.rows if row.kind == "exercise")

    def _repr_html_(self) -> str:
        return _plan_html(self)

    def __str__(self) -> str:
        return _plan_text(self)

    def __repr__(self) -> str:
        return str(self)


_r = PlanRow  # the plans below are long: one short name for a row


def _kit(lab: str, quiz_minutes: int, mistakes_minutes: int, recap_minutes: int) -> tuple[
    PlanRow, PlanRow, PlanRow
]:  # fmt: skip
    n = lab.replace(".", "-")
    return (
        _r(f"{n}-k01", "Recap of earlier chapters, this plan", "复习前面几章，看本计划",
           recap_minutes, kind="kit"),
        _r(f"{n}-k04", "Common mistakes", "常见错误", mistakes_minutes, kind="kit"),
        _r(f"{n}-k06", "Exit quiz", "课末小测", quiz_minutes, kind="kit"),
    )  # fmt: skip


def _plan(lab: str, period: int | None, rows: Sequence[PlanRow], quiz: int, mistakes: int,
          recap: int) -> LabPlan:  # fmt: skip
    recap_row, mistakes_row, quiz_row = _kit(lab, quiz, mistakes, recap)
    return LabPlan(lab, period, (rows[0], recap_row, *rows[1:], mistakes_row, quiz_row))


_BUILD_EN, _BUILD_ZH = (
    "Build it (the chapter's rows of the check table)",
    "动手实现（检查表中本章的各行）",
)
_CHECK_EN, _CHECK_ZH = (
    "Check your lab: read the ✘ rows, fix, re-run",
    "检查你的实验：读 ✘ 行，修改，重跑",
)

#: Every lab's plan. The core rows of 11.1-11.5 add up to the lab's class period (90, 90, 90,
#: 90 and 90 minutes); stretch rows are extra time. The minutes are an estimate (see the
#: module docstring), to be adjusted after a class has been timed.
PLANS: dict[str, LabPlan] = {
    # 11.1 (issue 32): one 90-minute period. The build-it minutes are ctxlab's estimate from
    # the rules the function implements and the lines a student writes (the reference answer
    # is ~75 lines); no class has been timed yet, and the row says so.
    "11.1": LabPlan(
        "11.1",
        90,
        (
            _r(
                "11-1-00",
                "Goals; the chapter's names in ctxlab",
                "学习目标；本章名字在 ctxlab 中的写法",
                3,
            ),
            _r(
                "11-1-03",
                "The opening path: costs and groups, 32 vs 29",
                "开篇路径：成本与分组，32 和 29",
                10,
            ),
            _r("11-1-06", "compact-1, a new entry after a3", "compact-1：a3 之后的一条新 entry", 5),
            _r("11-1-09", "The strict parser; corrupt records", "严格的 parser；损坏记录", 8),
            _r("11-1-17", "Two stores, one parser", "两个 Store，一个 parser", 5),
            _r(
                "11-1-28",
                "Exercise B: a summary of your own",
                "练习 B：自己写一份摘要",
                6,
                "core",
                "exercise",
            ),
            _r("11-1-p01", "What the function reads and returns", "函数读什么、返回什么", 3),
            _r(
                "11-1-b01",
                "Build it: 8 rules of the chapter, ~75 lines"
                " (an estimate, not yet timed with a class)",
                "动手实现：本章 8 条规则，约 75 行（估计值，尚未在课堂上实测）",
                35,
                kind="build",
            ),
            _r("11-1-29", _CHECK_EN, _CHECK_ZH, 5, kind="check"),
            _r(
                "11-1-30",
                "The check table's ctxlab extras",
                "检查表中 ctxlab 的扩展检查",
                10,
                "stretch",
            ),
            _r("11-1-k04", "Common mistakes", "常见错误", 2, kind="kit"),
            _r("11-1-k06", "Exit quiz", "课末小测", 5, kind="kit"),
            _r("11-1-s01", "Summary and an open question", "小结与一个开放问题", 3),
        ),
    ),
    # 11.2 (issue 32): one 90-minute period; the build-it minutes are an estimate from the
    # rules and the lines (the reference answer is ~60 lines), not yet timed with a class.
    "11.2": LabPlan(
        "11.2",
        90,
        (
            _r("11-2-00", "Goals", "学习目标", 2),
            _r(
                "11-2-02",
                "Groups: each user message opens one",
                "分组：每条 user message 开启一组",
                3,
            ),
            _r(
                "11-2-16",
                "Exercise A: the group u3 starts",
                "练习 A：u3 开始的那一组",
                5,
                "core",
                "exercise",
            ),
            _r("11-2-03", "The walk, read in code", "读代码里的遍历", 6),
            _r("11-2-f03", "A system message between two groups", "两组之间的 system message", 3),
            _r("11-2-04", "Pairing by id", "按 id 配对", 4),
            _r("11-2-07", "Where may the budget cut?", "预算可以在哪里切开？", 2),
            _r(
                "11-2-18",
                "Exercise B: every legal cut",
                "练习 B：所有合法切点",
                4,
                "core",
                "exercise",
            ),
            _r("11-2-10", "Broken pairings are refused", "配对出错就拒绝", 3),
            _r(
                "11-2-20",
                "Exercise C: which entry does the error name?",
                "练习 C：错误信息说的是哪条 entry？",
                4,
                "core",
                "exercise",
            ),
            _r("11-2-p01", "What the function reads and returns", "函数读什么、返回什么", 4),
            _r(
                "11-2-b01",
                "Build it: 5 rules of the chapter, ~60 lines"
                " (an estimate, not yet timed with a class)",
                "动手实现：本章 5 条规则，约 60 行（估计值，尚未在课堂上实测）",
                30,
                kind="build",
            ),
            _r("11-2-21", _CHECK_EN, _CHECK_ZH, 10, kind="check"),
            _r(
                "11-2-22",
                "The check table's ctxlab extras",
                "检查表中 ctxlab 的扩展检查",
                8,
                "stretch",
            ),
            _r("11-2-k04", "Common mistakes", "常见错误", 3, kind="kit"),
            _r("11-2-k06", "Exit quiz", "课末小测", 5, kind="kit"),
            _r("11-2-s01", "Summary and an open question", "小结与一个开放问题", 2),
        ),
    ),
    # 11.3: one 90-minute period (两节课). Assumes Labs 11.1-11.2 done and every cell run once
    # while reading. The 32 build-it minutes are an estimate: the only timed attempt on record
    # (/work/wt/timings.md, 0.1 min by an AI developer fresh from the chapter) is no student's.
    "11.3": _plan(
        "11.3",
        90,
        (
            _r("11-3-00", "Goals", "学习目标", 2),
            _r("11-3-02", "The call; the messages sent", "调用方式；真正发送的 messages", 8),
            _r(
                "11-3-04",
                "The ledger computed here: fixed costs, group costs, the newest-first walk",
                "在这里算预算账本：固定成本、每组成本、从最新一组往前走",
                11,
            ),
            _r("11-3-f07", "No system message on the path", "路径上没有 system message", 4),
            _r(
                "11-3-09",
                "Too big on its own: single_group_overflow",
                "单独一组就放不下：single_group_overflow",
                5,
            ),
            _r(
                "11-3-23",
                "Exercise A: what survives 40 tokens?",
                "练习 A：40 个 token 能留下什么？",
                4,
                "core",
                "exercise",
            ),
            _r(
                "11-3-25",
                "Exercise B: the smallest budget that keeps everything",
                "练习 B：能保留全部内容的最小预算",
                4,
                "core",
                "exercise",
            ),
            _r("11-3-17", "Three sliders", "三个滑块", 4, "stretch"),
            _r("11-3-p01", "What the function reads and returns", "函数读什么、返回什么", 3),
            _r("11-3-b01", _BUILD_EN, _BUILD_ZH, 32, kind="build"),
            _r("11-3-b03", "Your build_context beside the reference", "与参考实现对照", 4),
            _r("11-3-26", _CHECK_EN, _CHECK_ZH, 5, kind="check"),
        ),
        quiz=5,
        mistakes=2,
        recap=1,
    ),
    # 11.4: one 90-minute period. Same assumptions as 11.3; the 32 build-it minutes are an
    # estimate (timings.md: 0.1 min by an AI developer, no student's time).
    "11.4": _plan(
        "11.4",
        90,
        (
            _r("11-4-00", "Goals", "学习目标", 2),
            _r(
                "11-4-03",
                "Creating compact-1; the parent comes from the path",
                "创建 compact-1；parent 来自路径",
                9,
            ),
            _r("11-4-f03", "The result passes through the parser", "结果要经过 parser", 7),
            _r(
                "11-4-07",
                "Which entries can be the first kept one?",
                "哪些 entry 可以作为保留起点？",
                4,
            ),
            _r(
                "11-4-15",
                "Exercise 1: the legal first kept ids",
                "练习 1：合法的保留起点",
                4,
                "core",
                "exercise",
            ),
            _r("11-4-09", "A system patch; u1 for compact-2", "system patch；compact-2 与 u1", 7),
            _r("11-4-12", "Creating and writing", "创建与写入", 4),
            _r(
                "11-4-19",
                "Exercise 2: entries in the store after create",
                "练习 2：创建之后 Store 里有几条",
                3,
                "core",
                "exercise",
            ),
            _r(
                "11-4-17",
                "Exercise 3: create compact-2 yourself",
                "练习 3：自己创建 compact-2",
                6,
                "stretch",
                "exercise",
            ),
            _r("11-4-p01", "What the function reads and returns", "函数读什么、返回什么", 3),
            _r("11-4-b01", _BUILD_EN, _BUILD_ZH, 32, kind="build"),
            _r("11-4-23", _CHECK_EN, _CHECK_ZH, 6, kind="check"),
        ),
        quiz=6,
        mistakes=2,
        recap=1,
    ),
    # 11.5 has no recap cell and no timing cell (issue 32: boilerplate lives in the
    # course-start notebook), so its plan is laid out whole rather than with _plan's kit.
    # The build-it minutes are ctxlab's estimate, not a timed attempt: they assume the
    # student's Lab 11.3 build_context passes and is copied in (the resume is ~20 new lines);
    # the notebook's instructor note 11-5-01 says so to the lecturer.
    "11.5": LabPlan(
        "11.5",
        90,
        (
            _r("11-5-00", "Goals", "学习目标", 1),
            _r("11-5-03", "After compact-1: the path", "compact-1 之后：路径", 3),
            _r(
                "11-5-06",
                "Resuming step by step: newest compaction, summary message, candidates",
                "一步一步恢复：最新的 compaction、摘要消息、候选",
                6,
            ),
            _r("11-5-09", "The ledger with a summary row", "带摘要行的预算账本", 7),
            _r(
                "11-5-13",
                "Exercise 1: kept at max_tokens = 31",
                "练习 1：max_tokens = 31 时保留什么",
                4,
                "core",
                "exercise",
            ),
            _r("11-5-14", "A second compaction", "再压缩一次", 2),
            _r(
                "11-5-19",
                "Exercise 2: which summary is read?",
                "练习 2：读取哪一份摘要？",
                3,
                "core",
                "exercise",
            ),
            _r(
                "11-5-20",
                "System state crosses the compaction boundary",
                "system 状态跨过 compaction 边界",
                3,
            ),
            _r(
                "11-5-26",
                "Exercise 3: the replayed content",
                "练习 3：重放出的 content",
                5,
                "core",
                "exercise",
            ),
            _r("11-5-27", "The same path, built twice", "同一条路径构建两次", 3),
            _r(
                "11-5-30",
                "Try it: with and without the compaction (slider)",
                "动手试：有无 compaction 对比（滑块）",
                4,
                "stretch",
            ),
            _r("11-5-p01", "What the function reads and returns", "函数读什么、返回什么", 3),
            _r(
                "11-5-b01",
                "Build it (estimate: assumes a working Lab 11.3 build_context to copy)",
                "动手实现（估计值：前提是有能用的实验 11.3 build_context 可以复制）",
                35,
                kind="build",
            ),
            _r("11-5-35", _CHECK_EN, _CHECK_ZH, 7, kind="check"),
            _r("11-5-k04", "Common mistakes", "常见错误", 1, kind="kit"),
            _r("11-5-k06", "Exit quiz", "课末小测", 5, kind="kit"),
            _r("11-5-g04", "Summary and a question to think about", "小结与思考题", 2),
        ),
    ),
    "11.x": _plan(
        "11.x",
        None,
        (
            _r("11-x-00", "Goals: an optional exercise", "学习目标：可选练习", 1, "stretch"),
            _r(
                "11-x-03",
                "The parser refuses every old shape",
                "parser 拒绝每一种旧形状",
                4,
                "stretch",
            ),
            _r("11-x-05", "Migrating outside the boundary", "在边界外迁移", 8, "stretch"),
            _r("11-x-13", "A whole session file", "整个 session 文件", 4, "stretch"),
            _r(
                "11-x-17",
                "Exercise 1: rename the draft names",
                "练习 1：改掉草案字段名",
                6,
                "stretch",
                "exercise",
            ),
            _r(
                "11-x-19",
                "Exercise 2: migrate whole records",
                "练习 2：迁移整条记录",
                12,
                "stretch",
                "exercise",
            ),
        ),
        quiz=0,
        mistakes=0,
        recap=2,
    ),
}

# 11.x has no quiz and no mistakes section: drop its zero-minute kit rows, mark the recap stretch.
PLANS["11.x"] = LabPlan(
    "11.x",
    None,
    tuple(
        PlanRow(r.cell, r.en, r.zh, r.minutes, "stretch", r.kind)
        for r in PLANS["11.x"].rows
        if r.minutes
    ),
)


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
        return tr(
            f"An optional lab (the chapter's 「可选迁移练习」): every part is stretch, about "
            f"{plan.stretch_minutes} min as homework or a spare period.",
            f"可选实验（本章的「可选迁移练习」）：全部为选做，约 {plan.stretch_minutes} 分钟，"
            "可作课后作业或机动课时。",
        )
    return tr(
        f"Core: {plan.core_minutes} min, one class period of {plan.period} min. Stretch: "
        f"+{plan.stretch_minutes} min, for fast finishers or homework. The minutes are ctxlab's "
        "estimate from the size of each section, not a measurement.",
        f"必做：{plan.core_minutes} 分钟，正好一节 {plan.period} 分钟的课。选做：另加 "
        f"{plan.stretch_minutes} 分钟，留给先做完的同学或课后。分钟数是 ctxlab 按各节篇幅"
        "估出来的，不是实测。",
    )


def _extras_line(lab: str) -> str:
    keys = stretch_checks(lab)
    if not keys:
        return ""
    names = ", ".join(keys)
    return tr(
        f"Check table: the rows of the chapter's rules are core; the {len(keys)} rows of "
        f"ctxlab's extensions ({names}) are stretch (optional).",
        f"检查表：本章规则的各行为必做；ctxlab 扩展的 {len(keys)} 行（{names}）为选做。",
    )


def _plan_text(plan: LabPlan) -> str:
    head = tr(f"Timing plan — Lab {plan.lab}", f"时间安排 — 实验 {plan.lab}")
    lines = [head, period_line(plan)]
    for row in plan.rows:
        minutes = tr(f"{row.minutes:>3} min", f"{row.minutes:>3} 分钟")
        lines.append(f"  {minutes}  {_mark_text(row.mark)}  {row.title}")
    extras = _extras_line(plan.lab)
    if extras:
        lines.append(extras)
    return "\n".join(lines)


def _plan_html(plan: LabPlan) -> str:
    heads = (tr("section or exercise", "小节或练习"), tr("min", "分钟"), tr("mark", "标记"))
    rows = []
    for row in plan.rows:
        weight = "bold" if row.kind in ("exercise", "build") else "normal"
        colour = "#0072B2" if row.mark == "core" else "#888"
        rows.append(
            f'<tr><td style="text-align:left;font-weight:{weight}">{html.escape(row.title)}</td>'
            f'<td style="text-align:right">{row.minutes}</td>'
            f'<td style="color:{colour}">{html.escape(_mark_text(row.mark))}</td></tr>'
        )
    extras = _extras_line(plan.lab)
    title = tr(f"Timing plan — Lab {plan.lab}", f"时间安排 — 实验 {plan.lab}")
    return (
        f'<div class="ctxlab-timing-plan"><p><strong>{html.escape(title)}</strong><br>'
        f"{html.escape(period_line(plan))}</p>"
        f'<table><thead><tr><th style="text-align:left">{heads[0]}</th><th>{heads[1]}</th>'
        f"<th>{heads[2]}</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        + (f"<p>{html.escape(extras)}</p>" if extras else "")
        + "</div>"
    )


def timing_plan(lab: str) -> LabPlan:
    """The timing plan of ``lab`` (a table in a notebook; ``str()`` gives it as text)."""
    return PLANS[lab_id(lab)]
