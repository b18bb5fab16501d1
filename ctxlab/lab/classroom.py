"""The classroom kit of each lab (issue 27, items 4 and 5): timing plan, common mistakes,
exit quiz and the instructor's guide.

Everything here is ctxlab's teaching material, not the chapter's: the chapter gives the rules
and names its tests; the minutes, the mistakes and the quiz questions are ctxlab's.

* :func:`timing_plan` -- minutes per section and per exercise, each marked **core** (fits the
  class period) or **stretch** (for fast finishers or homework). The minutes are an
  *estimate* made from the size of each section (words to read, predict prompts, cells to
  run, exercises) and the size of the build-it solution; they are not measured in a class.
  The check table's rows of ctxlab's optional extras (each lab's grading file's ``"ctxlab"``
  rows) are stretch too: :func:`stretch_checks`.
* :func:`common_mistakes` -- one line (the entry's title) and the hint for each mistake
  students make in the lab's build-it, from the misconception catalogue
  (:mod:`ctxlab.lab.grading.misconceptions`; see :func:`mistake_catalogue`). It unfolds only
  after the student's first check run with a ✘ row in the kernel (:func:`check_implementation`
  here, which ``from ctxlab.lab import check_implementation`` gives, notes each run).
* :func:`check_quiz` -- the exit quiz's auto-check: one verdict per question, like the
  exercises' checkers (:mod:`ctxlab.lab.checks`); an unanswered ``...`` says "not answered
  yet". Each question is tied to one of the chapter's tests of the lab
  (:attr:`Question.test`, the chapter's own words, quoted verbatim), and its expected answer
  is computed with ctxlab, not written down.
* :func:`instructor_guide` -- for the instructor edition: the plan in short, where students
  get stuck (from the catalogue) and how to grade the class's notebooks with
  ``python -m ctxlab grade``.

Every text exists in English and Chinese and is picked when it is rendered
(:func:`ctxlab.lab.language.tr`). This module needs neither pandas nor matplotlib.
"""

from __future__ import annotations

import functools
import html
import inspect
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ctxlab.lab.checks import Verdict, as_number, friendly, id_list, not_answered
from ctxlab.lab.language import get_language, tr

if TYPE_CHECKING:
    from ctxlab.lab.grading import LabReport

__all__ = [
    "LABS",
    "PLANS",
    "QUIZZES",
    "ChapterTest",
    "LabPlan",
    "Mistake",
    "PlanRow",
    "Question",
    "QuizReport",
    "check_implementation",
    "check_quiz",
    "check_quiz_answer",
    "common_mistakes",
    "failed_check_seen",
    "instructor_guide",
    "mistake_catalogue",
    "note_check_run",
    "stretch_checks",
    "timing_plan",
]

Mark = Literal["core", "stretch"]
Kind = Literal["section", "exercise", "build", "check", "kit"]

#: The labs with a kit; 11.x is the chapter's optional migration exercise.
LABS = ("11.1", "11.2", "11.3", "11.4", "11.5", "11.x")


def _lab(lab: object) -> str:
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


def _r(cell: str, en: str, zh: str, minutes: int, mark: Mark = "core", kind: Kind = "section",
       ) -> PlanRow:  # fmt: skip
    return PlanRow(cell, en, zh, minutes, mark, kind)


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

    if _lab(lab) not in grading.LABS:
        return ()
    return tuple(
        k for k in grading.behaviour_keys(lab) if grading.behaviour_source(lab, k) == "ctxlab"
    )


def _mark_text(mark: Mark) -> str:
    return tr("core", "必做") if mark == "core" else tr("stretch", "选做")


def _period_line(plan: LabPlan) -> str:
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
    lines = [head, _period_line(plan)]
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
        f"{html.escape(_period_line(plan))}</p>"
        f'<table><thead><tr><th style="text-align:left">{heads[0]}</th><th>{heads[1]}</th>'
        f"<th>{heads[2]}</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        + (f"<p>{html.escape(extras)}</p>" if extras else "")
        + "</div>"
    )


def timing_plan(lab: str) -> LabPlan:
    """The timing plan of ``lab`` (a table in a notebook; ``str()`` gives it as text)."""
    return PLANS[_lab(lab)]


# ------------------------------------------------------------------------- common mistakes


@dataclass(frozen=True)
class Mistake:
    """One mistake of the misconception catalogue as the kit shows it: its id, the lab, one
    line saying what students do (the entry's title), the hint that gets them out, the
    check-table rows (behaviour keys) where it shows as ✘, and whose rule it breaks."""

    id: str
    lab: str
    line_en: str
    line_zh: str
    hint_en: str
    hint_zh: str
    checks: tuple[str, ...] = field(default=())
    rule: Literal["chapter", "ctxlab"] = "chapter"

    @property
    def line(self) -> str:
        if self.rule == "ctxlab":
            return tr(
                f"{self.line_en} (ctxlab's optional extra)", f"{self.line_zh}（ctxlab 的选做扩展）"
            )
        return tr(self.line_en, self.line_zh)

    @property
    def hint(self) -> str:
        return tr(self.hint_en, self.hint_zh)


def mistake_catalogue(lab: str) -> tuple[Mistake, ...]:
    """The mistakes of ``lab``, in catalogue order: its entries of the misconception catalogue
    (:mod:`ctxlab.lab.grading.misconceptions`, loaded with the lab's checks)."""
    from ctxlab.lab.grading import LABS as GRADED
    from ctxlab.lab.grading import behaviour_keys
    from ctxlab.lab.grading.labs import catalogue

    if _lab(lab) not in GRADED:
        return ()
    keys = behaviour_keys(lab)
    return tuple(
        Mistake(
            item.id,
            lab,
            item.title_en,
            item.title_zh,
            item.hint_en,
            item.hint_zh,
            tuple(key for key in keys if key in item.signature),
            item.rule,
        )
        for item in catalogue(lab)
    )


#: The labs whose check (:func:`check_implementation` below, the notebook's check cell) has
#: shown a ✘ row in this kernel: the common-mistakes list stays folded until then (issue 32,
#: item 3: the list names every mistake and its hint, so before the student's first failed
#: check it would answer the build-it for them).
_FAILED_CHECKS: set[str] = set()


#: A ✘ row with this in its (English) detail judged no code of the student's: the build-it
#: stub still raises NotImplementedError. Such a run is no failed check.
_NOT_WRITTEN = "not written yet"


def note_check_run(report: Any) -> None:
    """Record a check run of the notebook: a report with a ✘ row on the student's own code
    (not the unwritten stub) unfolds its lab's common-mistakes list (:func:`common_mistakes`)."""
    for result in getattr(report, "results", ()):
        detail = str(getattr(result, "detail_en", getattr(result, "detail", "")))
        if not getattr(result, "passed", True) and _NOT_WRITTEN not in detail:
            _FAILED_CHECKS.add(str(getattr(report, "lab", "")))
            return


def failed_check_seen(lab: str) -> bool:
    """Whether a check of ``lab`` with a ✘ row has run in this kernel."""
    return _lab(lab) in _FAILED_CHECKS


def check_implementation(lab: str, **functions: Callable[..., Any]) -> LabReport:
    """:func:`ctxlab.lab.grading.check_implementation`, noting the run for
    :func:`common_mistakes` (``from ctxlab.lab import check_implementation`` gives this)."""
    from ctxlab.lab import grading

    report = grading.check_implementation(lab, **functions)
    note_check_run(report)
    return report


@dataclass(frozen=True, repr=False)
class MistakeList:
    """What :func:`common_mistakes` shows: one row per mistake (id, one line, hint).

    ``unfolded`` is False before the student's first failed check: it then renders one line
    saying when the list appears, and none of its rows."""

    lab: str
    mistakes: tuple[Mistake, ...]
    unfolded: bool = True

    @property
    def rows(self) -> list[tuple[str, str, str]]:
        return [(m.id, m.line, m.hint) for m in self.mistakes]

    def _folded_line(self) -> str:
        return tr(
            "This list appears after your first check run with a ✘ row: write your function, "
            "run the check cell, then run this cell again.",
            "这份清单在你第一次运行检查、出现 ✘ 行之后才显示：先写函数，运行检查单元格，"
            "再回来运行这一格。",
        )

    def __str__(self) -> str:
        lines = [tr(f"Common mistakes — Lab {self.lab}", f"常见错误 — 实验 {self.lab}")]
        if not self.mistakes:
            lines.append(tr("(none catalogued for this lab)", "（本实验没有收录常见错误）"))
        elif not self.unfolded:
            lines.append(self._folded_line())
            return "\n".join(lines)
        for ident, line, hint in self.rows:
            lines.append(f"• {line} [{ident}]")
            lines.append("  " + tr("Hint: ", "提示：") + hint)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        if self.mistakes and not self.unfolded:
            return (
                '<div class="ctxlab-common-mistakes"><p>'
                f"{html.escape(self._folded_line())}</p></div>"
            )
        heads = (tr("mistake", "错误"), tr("hint", "提示"), "id")
        body = "".join(
            f'<tr><td style="text-align:left">{html.escape(line)}</td>'
            f'<td style="text-align:left">{html.escape(hint)}</td>'
            f"<td><code>{html.escape(ident)}</code></td></tr>"
            for ident, line, hint in self.rows
        )
        return (
            '<div class="ctxlab-common-mistakes"><table><thead><tr>'
            + "".join(f'<th style="text-align:left">{h}</th>' for h in heads)
            + f"</tr></thead><tbody>{body}</tbody></table></div>"
        )


def common_mistakes(lab: str, *, always: bool = False) -> MistakeList:
    """The lab's common mistakes, one line and the hint each (from the catalogue).

    The list unfolds only after a check of ``lab`` with a ✘ row has run in this kernel
    (:func:`failed_check_seen`); before that it is one line saying so. ``always=True`` shows
    it regardless (the lecturer's view)."""
    lab = _lab(lab)
    return MistakeList(lab, mistake_catalogue(lab), always or failed_check_seen(lab))


# ------------------------------------------------------------------------------ the quiz


@dataclass(frozen=True)
class ChapterTest:
    """One of the chapter's tests, by the chapter's own name for it (verbatim)."""

    name: str
    en: str


#: The chapter's tests, in the words of 「15 项测试固定到哪里」, by the lab whose
#: ``--test-name-pattern="Lab 11.N"`` run they belong to.
CHAPTER_TESTS: dict[str, tuple[ChapterTest, ...]] = {
    "11.1": (
        ChapterTest("严格 compaction schema", "strict compaction schema"),
        ChapterTest("两个 Store 的重开", "both stores reopen"),
    ),
    "11.2": (
        ChapterTest("user 分组", "user groups"),
        ChapterTest("call/result 配对", "call/result pairing"),
    ),
    "11.3": (
        ChapterTest("固定成本", "fixed costs"),
        ChapterTest("完整组裁剪", "whole-group trimming"),
        ChapterTest("最新组超限", "newest group overflows"),
    ),
    "11.4": (ChapterTest("纯创建", "pure creation"),),
    "11.5": (
        ChapterTest("最新摘要恢复", "resume from the newest summary"),
        ChapterTest("二次压缩", "a second compaction"),
        ChapterTest("跨压缩边界的 system 重放", "system replay across the compaction boundary"),
        ChapterTest("公开副本隔离", "isolated public copies"),
    ),
}

AnswerKind = Literal["choice", "choices", "number", "ids", "text"]


@dataclass(frozen=True)
class Question:
    """One exit-quiz question: its number, the chapter's test it is tied to, the kind of
    answer, and a function computing the expected answer with ctxlab."""

    lab: str
    number: int
    test: str
    kind: AnswerKind
    expected: Callable[[], object]
    why_en: str
    why_zh: str


def _build(path: object, max_tokens: int) -> object:
    import ctxlab
    from ctxlab import fixtures

    return ctxlab.build_context(
        path,  # type: ignore[arg-type]
        max_tokens=max_tokens, reserved_output=4, safety_margin=2,
        estimate_tokens=fixtures.opening_estimator,
    )  # fmt: skip


def _refused(action: Callable[[], object]) -> bool:
    from ctxlab.errors import CtxlabError

    try:
        action()
    except CtxlabError:
        return True
    return False


# -- 11.1


def _q11_1_draft() -> str:
    import json
    import tempfile
    from pathlib import Path

    import ctxlab
    from ctxlab import fixtures

    wire = fixtures.compact1().to_json()
    wire["summary"]["files"] = ["context.ts"]  # beside changedFiles, not instead of it
    records = [entry.to_json() for entry in fixtures.opening_path()] + [wire]
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / "session.jsonl"
        lines = (json.dumps(record, ensure_ascii=False) + "\n" for record in records)
        file.write_text("".join(lines), encoding="utf-8")
        try:
            count = len(ctxlab.JsonlSessionStore.open(file).entries())
        except ctxlab.CtxlabError as error:
            return "b" if "compact-1" in str(error) and "11" in str(error) else "?"
    return "a" if count == 10 else "c"


def _q11_1_fields() -> int:
    from ctxlab import CompactionSummary

    return len(CompactionSummary(goal="g").to_json())  # six empty lists are still six keys


def _q11_1_tokens_before() -> list[str]:
    import ctxlab
    from ctxlab import fixtures

    options = {"a": -1, "b": 0, "c": 12345, "d": "29"}
    refused = []
    for letter, value in options.items():
        wire = fixtures.compact1().to_json()
        wire["tokensBefore"] = value
        if _refused(functools.partial(ctxlab.parse_session_entry, wire)):
            refused.append(letter)
    return refused


def _q11_1_reopen() -> int:
    import tempfile
    from pathlib import Path

    import ctxlab
    from ctxlab import fixtures

    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / "session.jsonl"
        store = ctxlab.JsonlSessionStore.open(file)
        for entry in fixtures.resumed_path():  # ten entries, compact-1, u4, a4
            store.append(entry)
        return len(ctxlab.JsonlSessionStore.open(file).entries())


def _q11_1_no_special_code() -> str:
    import ctxlab

    stores = (ctxlab.InMemorySessionStore, ctxlab.JsonlSessionStore)
    methods = {name for store in stores for name in dir(store) if "compact" in name.lower()}
    return "b" if not methods else "a"


# -- 11.2


def _message_entries(path: Sequence[object]) -> list[object]:
    return [entry for entry in path if getattr(entry, "type", None) == "message"]


def _reordered(*order: str) -> list[object]:
    """The opening path's message entries, group 3 in the given order (parent ids are not
    read by the grouping)."""
    from ctxlab import fixtures

    by_id = {entry.id: entry for entry in fixtures.opening_path()}
    head = ["sys", "u1", "a1", "u2", "a2"]
    return [by_id[entry_id] for entry_id in (*head, *order)]


def _q11_2_groups() -> int:
    import ctxlab
    from ctxlab import fixtures

    return len(ctxlab.group_interactions(_message_entries(fixtures.resumed_path())))  # type: ignore[arg-type]


def _q11_2_patch() -> str:
    import ctxlab
    from ctxlab import MessageSessionEntry, SystemMessage

    path = _reordered("u3", "calls", "r-test", "r-read", "a3")
    patch = MessageSessionEntry("patch-3", "calls", 7.5, SystemMessage("Prefer small diffs.", 7.5))
    path.insert(path.index(next(e for e in path if e.id == "calls")) + 1, patch)  # type: ignore[attr-defined]
    groups = ctxlab.group_interactions(path)  # type: ignore[arg-type]
    if any("patch-3" in group.entry_ids for group in groups):
        return "c"
    whole = groups[-1].entry_ids == ("u3", "calls", "r-test", "r-read", "a3")
    return "b" if len(groups) == 3 and whole else "a"


def _q11_2_before_call() -> str:
    import ctxlab

    path = _reordered("u3", "r-test", "r-read", "calls", "a3")
    return "b" if _refused(lambda: ctxlab.group_interactions(path)) else "a"  # type: ignore[arg-type]


def _q11_2_read1() -> str:
    import ctxlab

    path = _reordered("u3", "calls", "r-test", "a3", "r-read")
    groups = ctxlab.group_interactions(path)  # type: ignore[arg-type]
    return next(group.entry_ids[0] for group in groups if "r-read" in group.entry_ids)


def _q11_2_missing() -> str:
    import ctxlab
    from ctxlab import fixtures

    path = _message_entries(fixtures.missing_result_path())
    return "b" if _refused(functools.partial(ctxlab.group_interactions, path)) else "a"  # type: ignore[arg-type]


# -- 11.3


def _tokens(max_tokens: int) -> object:
    from ctxlab import fixtures

    return _build(fixtures.opening_path(), max_tokens).tokens  # type: ignore[attr-defined]


def _q11_3_available_25() -> int:
    return int(_tokens(25).available_for_messages)  # type: ignore[attr-defined]


def _q11_3_available_5() -> int:
    return int(_tokens(5).available_for_messages)  # type: ignore[attr-defined]


def _q11_3_kept_30() -> list[str]:
    from ctxlab import fixtures

    return list(_build(fixtures.opening_path(), 30).kept_entry_ids)  # type: ignore[attr-defined]


def _q11_3_reason_15() -> str:
    from ctxlab import fixtures

    return str(_build(fixtures.opening_path(), 15).reason)  # type: ignore[attr-defined]


def _q11_3_total_allowed() -> str:
    from ctxlab import fixtures

    result = _build(fixtures.opening_path(), 15)
    return "b" if result.tokens.total > 15 else "a"  # type: ignore[attr-defined]


# -- 11.4


def _q11_4_parent() -> str:
    import ctxlab
    from ctxlab import fixtures

    meta = ctxlab.MetadataSessionEntry("meta-1", "a4", 102, "model", "course-model-2")
    entry = ctxlab.create_compaction_entry(
        [*fixtures.resumed_path(), meta],
        id="compact-2",
        timestamp=200,
        summary=fixtures.compact2_summary(),
        first_kept_entry_id="u3",
        tokens_before=40,
    )
    return entry.parent_id


def _q11_4_no_parent_argument() -> str:
    import ctxlab

    names = inspect.signature(ctxlab.create_compaction_entry).parameters
    return "b" if not any("parent" in name for name in names) else "a"


def _q11_4_refused() -> list[str]:
    import ctxlab
    from ctxlab import fixtures

    path = fixtures.opening_path()
    wire = fixtures.compact1_summary().to_json()
    options: dict[str, dict[str, Any]] = {
        "a": {"summary": {**wire, "goal": ""}},  # the chapter: goal 不能为空
        "b": {"summary": {**wire, "goal": "banana"}},
        "c": {"tokens_before": 12345},
        "d": {"first_kept_entry_id": "a2"},
    }
    refused = []
    for letter, change in options.items():
        arguments: dict[str, Any] = {
            "id": "compact-1",
            "timestamp": 100,
            "summary": wire,
            "first_kept_entry_id": "u2",
            "tokens_before": 29,
            **change,
        }
        if _refused(functools.partial(ctxlab.create_compaction_entry, path, **arguments)):
            refused.append(letter)
    return refused


def _q11_4_store_count() -> int:
    import ctxlab
    from ctxlab import fixtures

    store = ctxlab.InMemorySessionStore()
    for entry in fixtures.resumed_path():
        store.append(entry)
    created = [
        ctxlab.create_compaction_entry(  # creating writes nothing, however often
            store.entries(), id="compact-2", timestamp=200, summary=fixtures.compact2_summary(),
            first_kept_entry_id="u3", tokens_before=33,
        )
        for _ in range(2)
    ]  # fmt: skip
    store.append(created[0])  # the caller's append
    return len(store.entries())


def _q11_4_patch2() -> str:
    import ctxlab
    from ctxlab import fixtures

    path = fixtures.system_patch_path()

    def create() -> object:
        return ctxlab.create_compaction_entry(
            path, id="compact-9", timestamp=999, summary=fixtures.compact1_summary(),
            first_kept_entry_id="patch-2", tokens_before=1,
        )  # fmt: skip

    return "b" if _refused(create) else "a"


# -- 11.5


def _q11_5_kept_35() -> list[str]:
    from ctxlab import fixtures

    return list(_build(fixtures.resumed_path(), 35).kept_entry_ids)  # type: ignore[attr-defined]


def _q11_5_second() -> str:
    import ctxlab
    from ctxlab import fixtures

    result = _build(fixtures.resumed_path(), 40)
    second = result.messages[1]  # type: ignore[attr-defined]
    text = ctxlab.text_of(second)
    return "b" if second.role == "user" and text.startswith("【会话压缩摘要】") else "a"


def _q11_5_first_kept_after_third() -> str:
    import ctxlab
    from ctxlab import fixtures

    path = list(fixtures.recompacted_path())
    path.append(
        ctxlab.create_compaction_entry(
            path, id="compact-3", timestamp=300, summary=fixtures.compact1_summary(),
            first_kept_entry_id="u4", tokens_before=20,
        )
    )  # fmt: skip
    kept = _build(path, 40).kept_entry_ids  # type: ignore[attr-defined]
    return str(kept[0]) if kept else ""


def _q11_5_timestamp() -> str:
    import ctxlab
    from ctxlab import fixtures

    path = [entry for entry in fixtures.system_patch_path() if entry.id != "sys"]
    replayed = ctxlab.current_system_message(e.message for e in path if e.type == "message")
    assert replayed is not None
    for entry in path:
        message: Any = getattr(entry, "message", None)
        if getattr(message, "role", None) == "system" and message.timestamp == replayed.timestamp:
            return entry.id
    return ""


def _q11_5_isolated() -> str:
    from ctxlab import fixtures

    path = fixtures.resumed_path()
    first, second = _build(path, 40), _build(path, 40)
    wire = first.to_json()  # type: ignore[attr-defined]
    wire["keptEntryIds"].clear()  # not the summary text the lab's cell edits
    wire["messages"].append(dict(wire["messages"][-1]))
    fresh = _build(fixtures.resumed_path(), 40)
    same = second.to_json() == fresh.to_json() == first.to_json()  # type: ignore[attr-defined]
    return "a" if same and path == fixtures.resumed_path() else "b"


def _q(lab: str, number: int, test: str, kind: AnswerKind, expected: Callable[[], object],
       why_en: str, why_zh: str) -> Question:  # fmt: skip
    return Question(lab, number, test, kind, expected, why_en, why_zh)


#: The exit quiz of each lab 11.1-11.5 (11.x, the optional exercise, has none: the chapter
#: lists no test of it). The questions' text is in the notebook source (cell ``11-N-k06``).
QUIZZES: dict[str, tuple[Question, ...]] = {
    "11.1": (
        _q(
            "11.1",
            1,
            "严格 compaction schema",
            "choice",
            _q11_1_draft,
            "Reopening parses each line again: an unknown key is refused even beside the current"
            " one, and the error names line 11 and compact-1.",
            "重新打开时每一行都再解析一次：即使与当前字段并存，未知字段也被拒绝；"
            "错误指出第 11 行和 compact-1。",
        ),
        _q(
            "11.1",
            2,
            "严格 compaction schema",
            "number",
            _q11_1_fields,
            "goal and six lists: an empty list is still written, as [].",
            "goal 和六个列表：空列表也照样写出来，写成 []。",
        ),
        _q(
            "11.1",
            3,
            "严格 compaction schema",
            "choices",
            _q11_1_tokens_before,
            "Only a finite number ≥ 0 is accepted; 12345 is accepted: it is never recomputed.",
            "只接受非负有限数；12345 也能通过：它不会被重新估算。",
        ),
        _q(
            "11.1",
            4,
            "两个 Store 的重开",
            "number",
            _q11_1_reopen,
            "Ten opening entries, compact-1, u4 and a4: reopening parses every line again.",
            "十条开篇 entry、compact-1、u4 和 a4：重新打开时每一行都再解析一次。",
        ),
        _q(
            "11.1",
            5,
            "两个 Store 的重开",
            "choice",
            _q11_1_no_special_code,
            "A store that snapshots through parse_session_entry needs no compaction code.",
            "通过 parse_session_entry 获取快照的 Store 不需要 compaction 专用代码。",
        ),
    ),
    "11.2": (
        _q(
            "11.2",
            1,
            "user 分组",
            "number",
            _q11_2_groups,
            "Three groups, then u4 opens a fourth; sys and compact-1 are in none.",
            "先是三组，u4 再开启第四组；sys 和 compact-1 都不属于任何一组。",
        ),
        _q(
            "11.2",
            2,
            "user 分组",
            "choice",
            _q11_2_patch,
            "A system message belongs to no group, wherever it stands; it ends none.",
            "system message 不管在哪里，都不属于任何一组，也不结束任何一组。",
        ),
        _q(
            "11.2",
            3,
            "call/result 配对",
            "choice",
            _q11_2_before_call,
            "Pairing reads ids only: both results may stand before their call.",
            "配对只看 id：两条 result 都可以排在它们的 call 前面。",
        ),
        _q(
            "11.2",
            4,
            "call/result 配对",
            "text",
            _q11_2_read1,
            "A group runs up to the next user message; r-read pairs with read-1 by id.",
            "一组一直延续到下一条 user message；r-read 按 id 与 read-1 配对。",
        ),
        _q(
            "11.2",
            5,
            "call/result 配对",
            "choice",
            _q11_2_missing,
            "When the group ends, every call must have its result: the error names the call.",
            "group 结束时，所有 call 都要配齐 result：错误信息指出那个 call。",
        ),
    ),
    "11.3": (
        _q(
            "11.3",
            1,
            "固定成本",
            "number",
            _q11_3_available_25,
            "25 − 3 − 4 − 2 = 16.",
            "25 − 3 − 4 − 2 = 16。",
        ),
        _q(
            "11.3",
            2,
            "固定成本",
            "number",
            _q11_3_available_5,
            "The fixed costs exceed the window: the message budget is 0, never negative.",
            "固定成本超过总窗口：消息额度降到 0，不会变成负数。",
        ),
        _q(
            "11.3",
            3,
            "完整组裁剪",
            "ids",
            _q11_3_kept_30,
            "21 tokens: group 3 (15) fits, group 2 would make 22: the choice stops at u3.",
            "21 个 token：第三组（15）放得下，再加第二组就是 22：选择停在 u3。",
        ),
        _q(
            "11.3",
            4,
            "最新组超限",
            "text",
            _q11_3_reason_15,
            "6 tokens left, the newest group needs 15: it comes back whole.",
            "只剩 6 个 token，最新一组需要 15：它仍被完整返回。",
        ),
        _q(
            "11.3",
            5,
            "最新组超限",
            "choice",
            _q11_3_total_allowed,
            "3 + 15 + 4 + 2 = 24 > 15: the function cannot safely cut a call, a result or"
            " the final answer out of a group.",
            "3 + 15 + 4 + 2 = 24 > 15：函数不能安全地从组内剪掉 call、result 或终态回答。",
        ),
    ),
    "11.4": (
        _q(
            "11.4",
            1,
            "纯创建",
            "text",
            _q11_4_parent,
            "The parent is the path's last entry, whatever its type (meta-1 here).",
            "parent 是路径的最后一条 entry，不论它是什么类型（这里是 meta-1）。",
        ),
        _q(
            "11.4",
            2,
            "纯创建",
            "choice",
            _q11_4_no_parent_argument,
            "No parent argument: one answer, not two.",
            "没有 parent 参数：只有一份答案，不会有两份。",
        ),
        _q(
            "11.4",
            3,
            "纯创建",
            "choices",
            _q11_4_refused,
            "Only the shape is checked: an empty goal and a cut inside a group are refused.",
            "只校验形状：为空的 goal 和组内的切点被拒绝。",
        ),
        _q(
            "11.4",
            4,
            "纯创建",
            "number",
            _q11_4_store_count,
            "14: creating writes nothing, however often; only the one append writes.",
            "14 条：创建多少次都不写入；只有那一次 append 写入。",
        ),
        _q(
            "11.4",
            5,
            "纯创建",
            "choice",
            _q11_4_patch2,
            "A system message cannot be a cut point.",
            "system message 不能成为切点。",
        ),
    ),
    "11.5": (
        _q(
            "11.5",
            1,
            "最新摘要恢复",
            "ids",
            _q11_5_kept_35,
            "35 − 3 − 4 − 2 = 26 = 4 (the summary) + 7 (u4/a4) + 15 (group 3): an exact fit;"
            " group 2 would make 33.",
            "35 − 3 − 4 − 2 = 26 = 4（摘要）+ 7（u4/a4）+ 15（第三组），正好放下；"
            "再加第二组就是 33。",
        ),
        _q(
            "11.5",
            2,
            "最新摘要恢复",
            "choice",
            _q11_5_second,
            "[system?, summary, ...kept suffix].",
            "[system?, 摘要, ...保留的后缀]。",
        ),
        _q(
            "11.5",
            3,
            "二次压缩",
            "text",
            _q11_5_first_kept_after_third,
            "Only the newest compaction is read: compact-3 keeps from u4"
            " (compact-2 would keep u3 too).",
            "只读取最新的 compaction：compact-3 从 u4 开始保留"
            "（若读 compact-2，u3 那组也会留下）。",
        ),
        _q(
            "11.5",
            4,
            "跨压缩边界的 system 重放",
            "text",
            _q11_5_timestamp,
            "The replay reads the whole path; its timestamp is the first system message's"
            " (patch-1 once sys is gone).",
            "重放读取整条路径；它的 timestamp 取第一条 system message 的"
            "（去掉 sys 后是 patch-1）。",
        ),
        _q(
            "11.5",
            5,
            "公开副本隔离",
            "choice",
            _q11_5_isolated,
            "Each result is its own deep copy: the second build is deep-equal to the first.",
            "每次结果都是独立的深副本：第二次构建与第一次深相等。",
        ),
    ),
}


def _letters(answer: object, what: str) -> list[str]:
    """A choice answer as lower-case letters: ``"b"``, ``"B"``, ``"(b)"``, ``"Ｂ"``, or for
    several ``"a, d"``, ``"ad"``, ``["a", "d"]``."""
    items: list[object] = list(answer) if isinstance(answer, (list, tuple, set)) else [answer]
    letters: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise TypeError(
                tr(
                    f"{what}: answer with a letter such as 'b', got {item!r}",
                    f"{what}：请用字母作答，例如 'b'，收到的是 {item!r}",
                )
            )
        text = unicodedata.normalize("NFKC", item).lower()
        letters.extend(ch for ch in text if ch.isalpha() and ch.isascii())
    return letters


def _text(answer: object, what: str) -> str:
    if not isinstance(answer, str):
        raise TypeError(
            tr(
                f"{what}: answer with a string, got {answer!r}",
                f"{what}：请用字符串作答，收到的是 {answer!r}",
            )
        )
    return unicodedata.normalize("NFKC", answer).strip().strip("'\"")


def _question(lab: str, number: object) -> Question:
    questions = QUIZZES.get(_lab(lab), ())
    for question in questions:
        if question.number == number:
            return question
    from ctxlab.errors import CtxlabError

    raise CtxlabError(f"Lab {lab} has no quiz question {number!r} (it has {len(questions)})")


def _judge(question: Question, answer: object) -> Verdict:
    what = tr(f"question {question.number}", f"第 {question.number} 题")
    expected = question.expected()
    if question.kind == "choice":
        letters = _letters(answer, what)
        right = letters == [expected]
        shown = "".join(letters)
    elif question.kind == "choices":
        letters = _letters(answer, what)
        right = sorted(set(letters)) == sorted(expected)  # type: ignore[call-overload]
        shown = ", ".join(sorted(set(letters)))
    elif question.kind == "number":
        value = as_number(answer, what)
        right = value == expected
        shown = str(value)
    elif question.kind == "ids":
        ids = id_list(answer, what)
        right = ids == expected
        shown = ", ".join(ids)
    else:
        value_text = _text(answer, what)
        right = value_text == expected
        shown = value_text
    test = tr(f"the chapter's test 「{question.test}」", f"本章的测试「{question.test}」")
    if right:
        return Verdict(True, f"{what}: {shown}" if get_language() != "zh" else f"{what}：{shown}",
                       tr(question.why_en, question.why_zh) + f" ({test})"
                       if get_language() != "zh" else f"{question.why_zh}（{test}）")  # fmt: skip
    return Verdict(
        False,
        tr(f"{what}: {shown} is not it", f"{what}：{shown} 不对"),
        hint=tr(
            f"This question checks {test}: re-read that section of the notebook.",
            f"这道题考的是{test}：回头再读一读 notebook 里讲它的那一节。",
        ),
    )


def check_quiz_answer(lab: str, number: int, answer: object) -> Verdict:
    """The verdict on one answer of ``lab``'s exit quiz (``...``: not answered yet)."""
    question = _question(lab, number)

    @friendly
    def check(value: object) -> Verdict:
        return _judge(question, value)

    verdict = check(answer)
    if answer is ... or answer is None:
        return not_answered(tr(f"question {number}", f"第 {number} 题"))
    return verdict


@dataclass(frozen=True, repr=False)
class QuizReport:
    """The verdicts of a whole exit quiz, one per question, in order."""

    lab: str
    verdicts: tuple[Verdict, ...]

    @property
    def score(self) -> int:
        return sum(verdict.ok for verdict in self.verdicts)

    @property
    def passed(self) -> bool:
        return self.score == len(self.verdicts)

    def headline(self) -> str:
        return tr(
            f"Exit quiz — Lab {self.lab}: {self.score}/{len(self.verdicts)} right",
            f"课末小测 — 实验 {self.lab}：答对 {self.score}/{len(self.verdicts)} 题",
        )

    def __str__(self) -> str:
        return "\n".join([self.headline(), *(str(v) for v in self.verdicts)])

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        return (
            f'<div class="ctxlab-quiz"><p><strong>{html.escape(self.headline())}</strong></p>'
            + "".join(verdict._repr_html_() for verdict in self.verdicts)
            + "</div>"
        )


def check_quiz(lab: str, *answers: object) -> QuizReport:
    """Check the answers of ``lab``'s exit quiz, in question order, one verdict each."""
    questions = QUIZZES.get(_lab(lab), ())
    if len(answers) != len(questions):
        from ctxlab.errors import CtxlabError

        raise CtxlabError(
            f"check_quiz: Lab {lab}'s quiz has {len(questions)} questions,"
            f" got {len(answers)} answers"
        )
    return QuizReport(
        lab,
        tuple(check_quiz_answer(lab, q.number, a) for q, a in zip(questions, answers, strict=True)),
    )


# ----------------------------------------------------------------------- instructor guide

GRADE_COMMAND = "python -m ctxlab grade SUBMISSIONS... --out grades/"


@dataclass(frozen=True, repr=False)
class InstructorGuide:
    """The instructor edition's guide to a lab: plan, where students get stuck, grading."""

    lab: str

    def _parts(self) -> tuple[str, list[str], list[str]]:
        plan = timing_plan(self.lab)
        stuck = []
        for mistake in mistake_catalogue(self.lab):
            rows = ", ".join(mistake.checks) if mistake.checks else "—"
            stuck.append(
                tr(
                    f"{mistake.line}. ✘ in: {rows}. Hint: {mistake.hint}",
                    f"{mistake.line}。✘ 出现在：{rows}。可以提示：{mistake.hint}",
                )
            )
        lab = self.lab
        grading = [
            tr(
                "After the lab, download each student's .ipynb (JupyterLab: File → Download; "
                "JupyterLite: the same, from the browser's storage).",
                "课后，下载每个学生的 .ipynb（JupyterLab：文件 → 下载；"
                "JupyterLite 同样，文件在浏览器的存储里）。",
            ),
            tr(
                "Put them in one folder per student: submissions/<student>/"
                f"{_notebook_name(lab)} (the folder names the student).",
                f"每个学生一个文件夹：submissions/<学生>/{_notebook_name(lab)}（文件夹名就是学生名）。",
            ),
            tr(
                "Run: python -m ctxlab grade submissions/*/*.ipynb --out grades/ "
                "(each notebook runs in its own sandboxed process).",
                "运行：python -m ctxlab grade submissions/*/*.ipynb --out grades/"
                "（每个 notebook 在各自的沙箱进程里运行）。",
            ),
            tr(
                "Open grades/report.html (the class report: which rules the class missed, "
                "the misconceptions seen) and grades.csv (one line per student and lab: "
                "chapter_passed/chapter_total, extras, status).",
                "打开 grades/report.html（全班报告：全班没做对的规则、出现的常见错误）和 "
                "grades.csv（每个学生每个实验一行：chapter_passed/chapter_total、扩展项、status）。",
            ),
        ]
        return _period_line(plan), stuck, grading

    def __str__(self) -> str:
        period, stuck, grading = self._parts()
        lines = [tr(f"Instructor's guide — Lab {self.lab}", f"教师指南 — 实验 {self.lab}"), period]
        if stuck:
            lines.append(tr("Where students get stuck:", "学生容易卡住的地方："))
            lines.extend(f"• {line}" for line in stuck)
        if self.lab in QUIZZES:
            lines.append(tr("Grading after the lab:", "课后评分："))
            lines.extend(f"{n}. {line}" for n, line in enumerate(grading, start=1))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        period, stuck, grading = self._parts()
        title = tr(f"Instructor's guide — Lab {self.lab}", f"教师指南 — 实验 {self.lab}")
        out = [
            f'<div class="ctxlab-instructor-guide"><p><strong>{html.escape(title)}'
            f"</strong><br>{html.escape(period)}</p>"
        ]
        if stuck:
            out.append(
                f"<p>{html.escape(tr('Where students get stuck:', '学生容易卡住的地方：'))}</p><ul>"
            )
            out.extend(f"<li>{html.escape(line)}</li>" for line in stuck)
            out.append("</ul>")
        if self.lab in QUIZZES:
            out.append(f"<p>{html.escape(tr('Grading after the lab:', '课后评分：'))}</p><ol>")
            out.extend(f"<li>{html.escape(line)}</li>" for line in grading)
            out.append("</ol>")
        out.append("</div>")
        return "".join(out)


def _notebook_name(lab: str) -> str:
    return {
        "11.1": "11.1-summary-is-a-fact.ipynb",
        "11.2": "11.2-interaction-groups.ipynb",
        "11.3": "11.3-budgeted-context.ipynb",
        "11.4": "11.4-create-compaction.ipynb",
        "11.5": "11.5-resume-from-summary.ipynb",
        "11.x": "11.x-migration.ipynb",
    }[lab]


def instructor_guide(lab: str) -> InstructorGuide:
    """The instructor edition's guide to ``lab``: the plan in short, where students get
    stuck (from the misconception catalogue) and how to grade the class with ``ctxlab grade``."""
    return InstructorGuide(_lab(lab))
