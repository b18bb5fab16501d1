"""The budget ledger of Lab 11.3 (chapter 11, § 31 个 token 怎样留下第二、三组), used by 11.5
too: what ``build_context`` decided, group by group, as a table (:func:`ledger_styler`) and a
figure (:func:`budget_figure`). Kept groups, fixed costs and the ``reason`` all come from the
core's result; the ledger only lays them out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ctxlab.compaction import SummaryLanguage
from ctxlab.context import ContextResult, build_context, resume_candidates
from ctxlab.entries import CompactionSessionEntry, SessionEntry
from ctxlab.interactions import InteractionGroup, group_interactions
from ctxlab.lab.display import (
    DROPPED,
    FIGSIZE_TALL,
    KEPT,
    PALETTE,
    CourseTable,
    TokenEstimator,
    default_estimator,
    default_path,
    group_colour,
    in_language,
    new_figure,
    show,
    styled,
    tidy_number,
)
from ctxlab.lab.lab11_2 import group_label
from ctxlab.lab.language import Texts, tr, tr_figure

say = Texts("ledger")

__all__ = [
    "CHAPTER_BUDGET",
    "Budget",
    "BudgetLedger",
    "LedgerGroup",
    "budget_alt_text",
    "budget_figure",
    "budget_ledger",
    "ledger_styler",
]


# -- the ledger ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Budget:
    """One budget for ``build_context``. ``Budget()`` is the chapter's 31/4/2; ``estimate=None``
    means the chapter's test estimator (``fixtures.opening_estimator``)."""

    max_tokens: int | float = 31
    reserved_output: int | float = 4
    safety_margin: int | float = 2
    estimate: TokenEstimator | None = None
    summary_language: SummaryLanguage = "zh"

    def options(self) -> dict[str, Any]:
        """The keyword arguments of ``build_context`` for this budget."""
        return {
            "max_tokens": self.max_tokens,
            "reserved_output": self.reserved_output,
            "safety_margin": self.safety_margin,
            "estimate_tokens": default_estimator(self.estimate),
            "summary_language": self.summary_language,
        }

    def build(self, path: Sequence[SessionEntry]) -> ContextResult:
        """``build_context(path, **self.options())``."""
        return build_context(path, **self.options())

    def label(self) -> str:
        """``31/4/2``: max_tokens/reserved_output/safety_margin."""
        parts = (self.max_tokens, self.reserved_output, self.safety_margin)
        return "/".join(str(tidy_number(v)) for v in parts)


#: The chapter's budget: 31/4/2, the test estimator, a Chinese summary.
CHAPTER_BUDGET = Budget()


@dataclass(frozen=True)
class LedgerGroup:
    """One candidate group as the ledger shows it."""

    number: int
    interaction: InteractionGroup
    cost: int | float
    kept: bool
    running_total: int | float  # after this group (kept) or what it would have made


@dataclass(frozen=True)
class BudgetLedger:
    """``build_context``'s result and the per-group view of it, newest group first."""

    result: ContextResult
    summary_cost: int | float
    groups: tuple[LedgerGroup, ...]


def _candidate_groups(path: Sequence[SessionEntry]) -> list[InteractionGroup]:
    """The groups the budget chooses from: after the newest compaction's first kept entry."""
    _, candidates = resume_candidates(path)
    return group_interactions(candidates)


def budget_ledger(
    path: Sequence[SessionEntry] | None = None, budget: Budget = CHAPTER_BUDGET
) -> BudgetLedger:
    """Run ``build_context`` and explain its result group by group (kept ids and fixed costs
    from the result; a dropped group's running total is what keeping it would have made)."""
    entries = default_path(path)
    price = default_estimator(budget.estimate)
    result = budget.build(entries)
    kept_ids = set(result.kept_entry_ids)
    newest_first = list(enumerate(_candidate_groups(entries), 1))[::-1]
    costs = [sum((price(e.message) for e in group.entries), start=0) for _, group in newest_first]
    kept = [group.head.id in kept_ids for _, group in newest_first]
    summary_cost = result.tokens.messages - sum(c for c, k in zip(costs, kept, strict=True) if k)
    running = summary_cost
    ledger: list[LedgerGroup] = []
    for (number, group), cost, is_kept in zip(newest_first, costs, kept, strict=True):
        ledger.append(LedgerGroup(number, group, cost, is_kept, running + cost))
        if is_kept:
            running += cost
    return BudgetLedger(result, summary_cost, tuple(ledger))


#: The ledger's columns, English → Chinese.
_LEDGER_COLUMNS = {"item": "项目", "tokens": "token", "running total": "累计", "decision": "决定"}


def _ledger(path: Sequence[SessionEntry] | None, budget: Budget) -> tuple[pd.DataFrame, list[str]]:
    """The ledger's rows in the current language and each row's kind (``fixed``,
    ``budget``, ``kept``, ``dropped`` or ``""``), which the styler colours by."""
    view = budget_ledger(path, budget)
    n = tidy_number
    t = view.result.tokens
    available = n(t.available_for_messages)
    fixed = tr("fixed", "固定成本")
    for_messages = tr("= available for messages", "= 消息额度")
    # (kind, item, tokens, running total, decision)
    rows: list[tuple[str, object, object, object, str]] = [
        ("", "max_tokens", n(t.max_tokens), "", ""),
        ("fixed", tr("− system (replayed)", "− system（重放）"), n(t.system), "", fixed),
        ("fixed", "− reserved_output", n(t.reserved_output), "", fixed),
        ("fixed", "− safety_margin", n(t.safety_margin), "", fixed),
        ("budget", for_messages, available, "", tr("budget", "预算")),
    ]
    if any(isinstance(e, CompactionSessionEntry) for e in default_path(path)):
        summary = n(view.summary_cost)
        item = tr("summary (newest compaction)", "摘要（最新的 compaction）")
        rows.append(("kept", item, summary, summary, tr("kept first", "最先保留")))
    stopped = False
    for group in view.groups:
        total = n(group.running_total)
        if group.kept:
            if group.running_total > t.available_for_messages:
                decision = say("kept_whole_overflow", total=total, available=available)
            else:
                decision = tr("kept", "保留")
        elif not stopped:
            decision = say("dropped_would_make", total=total, available=available)
            stopped = True
        else:
            decision = tr("dropped: the choice already stopped", "丢弃：选择已经停止")
        item = f"{group_label(group.number, group.interaction)} ({n(group.cost)})"
        running = total if group.kept else ""
        rows.append(("kept" if group.kept else "dropped", item, n(group.cost), running, decision))
    reason = tr(f"reason: {view.result.reason}", f"reason：{view.result.reason}")
    rows.append(("", reason, n(t.total), "", tr("total sent", "发送总计")))
    frame = pd.DataFrame([row[1:] for row in rows], columns=list(_LEDGER_COLUMNS))
    return in_language(frame, _LEDGER_COLUMNS), [row[0] for row in rows]


_DROPPED_ROW = (
    "background: repeating-linear-gradient(45deg, #FFFFFF, #FFFFFF 6px,"
    " #DDDDDD 6px, #DDDDDD 8px); color: #555555; text-decoration: line-through"
)
_LEDGER_ROW_STYLE = {
    "kept": "background-color: #009E7333; font-weight: bold",
    "dropped": _DROPPED_ROW,
    "budget": "font-weight: bold; border-top: 2px solid #000000",
}


def ledger_styler(
    path: Sequence[SessionEntry] | None = None, budget: Budget = CHAPTER_BUDGET
) -> CourseTable:
    """The budget ledger of chapter 11.3 as a table in the notebook's language, kept rows
    green, dropped rows hatched grey. Its ``.data`` is the frame."""
    frame, kinds = _ledger(path, budget)
    return show(frame, "ledger", row_styles=[_LEDGER_ROW_STYLE.get(kind, "") for kind in kinds])


# -- figures ---------------------------------------------------------------------------------------


def budget_alt_text(view: BudgetLedger) -> str:
    """What :func:`budget_figure` shows, in words (its alt text), in the notebook's language."""
    t = view.result.tokens
    n = tidy_number
    end = n(t.system + t.reserved_output + t.safety_margin + t.available_for_messages)
    costs = [
        ("system", t.system),
        ("reserved_output", t.reserved_output),
        ("safety_margin", t.safety_margin),
    ]
    if view.summary_cost:
        costs.append((tr("summary", "摘要"), view.summary_cost))
    fixed = tr(", ", "、").join(f"{name} {n(cost)}" for name, cost in costs)
    groups = tr("; ", "；").join(
        tr(
            f"group {g.number} ({n(g.cost)}) {'kept' if g.kept else 'dropped'}",
            f"第 {g.number} 组（{n(g.cost)}）{'保留' if g.kept else '丢弃'}",
        )
        for g in view.groups
    )
    return say(
        "budget_of_max_tokens_fixed",
        max_tokens=n(t.max_tokens),
        fixed=fixed,
        groups=groups or tr("no groups", "没有组"),
        end=end,
        reason=view.result.reason,
        total=n(t.total),
    )


@styled
def budget_figure(
    path: Sequence[SessionEntry] | None = None, budget: Budget = CHAPTER_BUDGET
) -> Figure:
    """Fixed costs, then each group newest first (kept solid, dropped hatched), as a waterfall;
    the dashed line is where the budget ends: fixed costs + ``available_for_messages``."""
    view = budget_ledger(path, budget)
    t = view.result.tokens
    fixed_style = {"edgecolor": PALETTE["black"], "linewidth": 1.5}
    rows: list[tuple[str, float, dict[str, object]]] = [
        ("system", float(t.system), {**fixed_style, "facecolor": "#BBBBBB"}),
        ("reserved_output", float(t.reserved_output), {**fixed_style, "facecolor": "#888888"}),
        ("safety_margin", float(t.safety_margin), {**fixed_style, "facecolor": "#555555"}),
    ]
    if view.summary_cost:
        summary_style = {**KEPT, "facecolor": PALETTE["yellow"]}
        rows.append((tr_figure("summary", "摘要"), float(view.summary_cost), summary_style))
    for group in view.groups:
        style = {**KEPT, "facecolor": group_colour(group.number)} if group.kept else dict(DROPPED)
        label = group_label(group.number, group.interaction, figure=True)
        rows.append((label, float(group.cost), style))

    # Fixed margins instead of constrained layout: a slider redraws this figure, and
    # the layout solver would more than double the time of each redraw.
    fig, ax = new_figure(FIGSIZE_TALL, constrained=False)
    # The legend sits under the x axis label (bottom right), so the title is the top line.
    fig.subplots_adjust(left=0.19, right=0.98, top=0.9, bottom=0.27)
    start = 0.0
    for index, (_, cost, style) in enumerate(rows):
        ax.barh(index, cost, left=start, height=0.7, **style)  # type: ignore[arg-type]
        ax.text(start + cost + 0.3, index, f"{cost:g}", va="center", ha="left", fontsize=14)
        start += cost
    fixed = float(t.system + t.reserved_output + t.safety_margin)
    budget_end = fixed + float(t.available_for_messages)
    ax.axvline(budget_end, color=PALETTE["black"], linestyle="--", linewidth=2)
    right = max(start, budget_end, float(t.max_tokens)) * 1.1 + 2
    on_left = budget_end > 0.6 * right  # keep the label inside the axes
    ends = tr_figure(f" budget ends: {budget_end:g} ", f" 预算到此为止：{budget_end:g} ")
    ax.text(budget_end, -0.9, ends, va="center",
            ha="right" if on_left else "left", fontsize=14, fontweight="bold")  # fmt: skip

    ax.set_yticks(range(len(rows)), [label for label, _, _ in rows])
    ax.invert_yaxis()
    ax.set_ylim(len(rows) - 0.5, -1.3)
    ax.set_xlim(0, right)
    ax.set_xlabel(tr_figure("tokens (running total)", "token（累计）"))
    ax.set_title(say.figure("max_tokens_total", t=t, view=view), loc="left")
    # The alt text of the picture (the static figure's and the widget's image), in the
    # notebook's language even when the figure itself has to be drawn in English.
    fig.set_label(budget_alt_text(view))
    kept_label = tr_figure("kept (solid)", "保留（实心）")
    dropped_label = tr_figure("dropped (hatched)", "丢弃（斜线）")
    fig.legend(
        handles=[
            Patch(**{**KEPT, "facecolor": "#FFFFFF"}, label=kept_label),  # type: ignore[arg-type]
            Patch(**DROPPED, label=dropped_label),  # type: ignore[arg-type]
        ],
        loc="lower right",
        bbox_to_anchor=(0.98, 0.0),
        ncols=2,
        frameon=False,
    )
    return fig
