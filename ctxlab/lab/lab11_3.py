"""Lab 11.3 "31 个 token 怎样留下第二、三组" (how 31 tokens keep the second and third
groups): the teaching layer of notebook ``11.3-budgeted-context.ipynb``.

The core of this lab is :mod:`ctxlab.context` (``build_context``). Which groups are kept,
the fixed costs and the ``reason`` all come from its result; the ledger only lays them out.

* tables -- :func:`budget_ledger` (the result, group by group), :func:`ledger_table` /
  :func:`ledger_styler` (the chapter's ledger: kept rows green, dropped rows hatched),
  :func:`sweep_table` (every ``max_tokens`` from 0 to 60), :func:`option_errors_styler`
  (options and estimates that are not finite numbers >= 0, and the error naming each),
  :func:`sent_messages_table` / :func:`message_arrow` (the final ``messages`` list, with
  which entry each comes from and whether it is in ``keptEntryIds``),
  :func:`without_system_messages` (the path with no system message), and
  :func:`estimator_table` (each message priced by another estimator beside the chapter's
  test estimator);
* figures -- :func:`budget_figure` (a waterfall of the fixed costs, then each group newest
  first, kept solid or dropped hatched, against the line where the budget ends; its alt
  text, :func:`budget_alt_text`, says the same in words) and :func:`sweep_figure` (groups
  kept and ``reason`` against ``max_tokens``);
* widget -- :func:`build_budget_widget`: three sliders redraw the ledger, the figure (an
  ``<img>`` with the figure's alt text, :func:`figure_html`), the kept ids and the reason
  (:func:`budget_view` is its pure part); given the student's own ``build_context``
  (``student=``) it also shows :func:`compare_builds`: the student's result beside the
  reference's, the first difference marked; its first position is the first budget where
  the two differ (:func:`find_difference` searches every ``max_tokens`` of the slider on
  :func:`chapter_paths`, each call of the student's function bounded by
  :func:`bounded_call`), later positions compare the slider's values;
* self-checks -- :func:`check_available` (exercise 11.3-A), :func:`check_kept_ids` (11.3-B)
  and :func:`check_smallest_budget_for_all` (11.3-C).
"""

from __future__ import annotations

import base64
import dataclasses
import html
import math
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ctxlab import fixtures
from ctxlab.compaction import SummaryLanguage
from ctxlab.context import ContextResult, build_context, resume_candidates
from ctxlab.entries import CompactionSessionEntry, MessageSessionEntry, SessionEntry
from ctxlab.errors import CtxlabError
from ctxlab.interactions import InteractionGroup, group_interactions
from ctxlab.lab.checks import Verdict, as_number, exercise, id_list
from ctxlab.lab.display import (
    DROPPED,
    FIGSIZE,
    FIGSIZE_TALL,
    KEPT,
    PALETTE,
    CourseFigure,
    CourseTable,
    SafeCall,
    TokenEstimator,
    call_safely,
    default_estimator,
    default_path,
    figure_png,
    group_colour,
    new_figure,
    show,
    slider,
    styled,
    tidy_number,
    widget_box,
)
from ctxlab.lab.errors_zh import error_text
from ctxlab.lab.lab11_1 import path_table
from ctxlab.lab.lab11_2 import group_label
from ctxlab.lab.language import get_language, tr, tr_figure
from ctxlab.messages import AgentMessage, SystemMessage, UserMessage

__all__ = [
    "CHAPTER_BUDGET",
    "SEARCH_MAX_TOKENS",
    "Budget",
    "BudgetLedger",
    "BudgetView",
    "BuildDifference",
    "LedgerGroup",
    "bounded_call",
    "budget_alt_text",
    "budget_figure",
    "budget_ledger",
    "budget_view",
    "build_budget_widget",
    "chapter_paths",
    "check_available",
    "check_kept_ids",
    "check_smallest_budget_for_all",
    "compare_builds",
    "compare_table",
    "difference_table",
    "estimator_table",
    "figure_html",
    "find_difference",
    "ledger_styler",
    "ledger_table",
    "message_arrow",
    "option_errors",
    "option_errors_styler",
    "path_table",
    "sent_messages_table",
    "sweep_figure",
    "sweep_table",
    "without_system_messages",
]


# -- tables ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Budget:
    """One budget for ``build_context``: the values the ledger, its styler, the figures, the
    comparison and the widget of this lab all take, as one value.

    ``Budget()`` is the chapter's 31/4/2 with the test estimator; change one field with
    ``Budget(max_tokens=40)`` or ``dataclasses.replace(budget, max_tokens=40)``.
    ``estimate=None`` means the chapter's test estimator (``fixtures.opening_estimator``).
    """

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
    label: str
    cost: int | float
    kept: bool
    running_total: int | float  # after this group (kept) or what it would have made
    span: str = ""  # "u3…a3": the group's first and last entry ids


def _group_name(group: LedgerGroup, *, figure: bool = False) -> str:
    """``group 3: u3…a3`` in English, ``第 3 组：u3…a3`` in Chinese (``figure``: the language
    figure text is drawn in)."""
    if not group.span:
        return group.label
    # Both texts from the number and span: ``label`` is already in the text language
    # (11.2's group_label), which a figure without a CJK font must not use.
    en = f"group {group.number}: {group.span}"
    zh = f"第 {group.number} 组：{group.span}"
    return tr_figure(en, zh) if figure else tr(en, zh)


def _in_language(frame: pd.DataFrame, zh_columns: dict[str, str]) -> pd.DataFrame:
    """``frame`` with its column headers in Chinese when the notebook is Chinese.

    The frames are built with English keys (the code and the tests index them so); only
    the headers a student reads change."""
    return frame.rename(columns=zh_columns) if get_language() == "zh" else frame


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
    """Run ``build_context`` and explain its result group by group.

    Which groups were kept comes from ``result.kept_entry_ids``; the fixed numbers from
    ``result.tokens``; each group's cost is the estimator's price of its messages. The
    running total of a dropped group is what keeping it too would have made.
    """
    entries = default_path(path)
    price = default_estimator(budget.estimate)
    result = budget.build(entries)
    kept_ids = set(result.kept_entry_ids)
    groups = _candidate_groups(entries)
    kept_cost: int | float = 0
    rows: list[tuple[int, InteractionGroup, int | float, bool]] = []
    for number in range(len(groups), 0, -1):
        group = groups[number - 1]
        cost = sum((price(e.message) for e in group.entries), start=0)
        kept = group.head.id in kept_ids
        rows.append((number, group, cost, kept))
        if kept:
            kept_cost += cost
    summary_cost = result.tokens.messages - kept_cost
    running = summary_cost
    ledger: list[LedgerGroup] = []
    for number, group, cost, kept in rows:
        ids = group.entry_ids
        span = ids[0] if len(ids) == 1 else f"{ids[0]}…{ids[-1]}"
        ledger.append(
            LedgerGroup(number, group_label(number, group), cost, kept, running + cost, span)
        )
        if kept:
            running += cost
    return BudgetLedger(result, summary_cost, tuple(ledger))


_LEDGER_COLUMNS = ["item", "tokens", "running total", "decision"]
_LEDGER_ZH = {"item": "项目", "tokens": "token", "running total": "累计", "decision": "决定"}


def _ledger(path: Sequence[SessionEntry] | None, budget: Budget) -> tuple[pd.DataFrame, list[str]]:
    """The ledger's rows in the current language and each row's kind (``fixed``,
    ``budget``, ``kept``, ``dropped`` or ``""``), which the styler colours by."""
    view = budget_ledger(path, budget)
    n = tidy_number
    t = view.result.tokens
    available = n(t.available_for_messages)
    fixed = tr("fixed", "固定成本")
    rows: list[dict[str, object]] = [
        {"item": "max_tokens", "tokens": n(t.max_tokens), "running total": "", "decision": ""},
        {"item": tr("− system (replayed)", "− system（重放）"), "tokens": n(t.system),
         "running total": "", "decision": fixed},
        {"item": "− reserved_output", "tokens": n(t.reserved_output), "running total": "",
         "decision": fixed},
        {"item": "− safety_margin", "tokens": n(t.safety_margin), "running total": "",
         "decision": fixed},
        {"item": tr("= available for messages", "= 消息额度"), "tokens": available,
         "running total": "", "decision": tr("budget", "预算")},
    ]  # fmt: skip
    kinds = ["", "fixed", "fixed", "fixed", "budget"]
    has_summary = any(isinstance(e, CompactionSessionEntry) for e in default_path(path))
    if has_summary:
        rows.append(
            {
                "item": tr("summary (newest compaction)", "摘要（最新的 compaction）"),
                "tokens": n(view.summary_cost),
                "running total": n(view.summary_cost),
                "decision": tr("kept first", "最先保留"),
            }
        )
        kinds.append("kept")
    stopped = False
    for group in view.groups:
        total = n(group.running_total)
        if group.kept:
            if group.running_total > t.available_for_messages:
                decision = tr(
                    f"kept whole: overflow, {total} > {available}",
                    f"整组保留：超出，{total} > {available}",
                )
            else:
                decision = tr("kept", "保留")
        elif not stopped:
            decision = tr(
                f"dropped: would make {total} > {available}",
                f"丢弃：加上它会变成 {total} > {available}",
            )
            stopped = True
        else:
            decision = tr("dropped: the choice already stopped", "丢弃：选择已经停止")
        rows.append(
            {
                "item": f"{_group_name(group)} ({n(group.cost)})",
                "tokens": n(group.cost),
                "running total": total if group.kept else "",
                "decision": decision,
            }
        )
        kinds.append("kept" if group.kept else "dropped")
    rows.append(
        {
            "item": tr(f"reason: {view.result.reason}", f"reason：{view.result.reason}"),
            "tokens": n(t.total),
            "running total": "",
            "decision": tr("total sent", "发送总计"),
        }
    )
    kinds.append("")
    frame = pd.DataFrame(rows, columns=_LEDGER_COLUMNS)
    return _in_language(frame, _LEDGER_ZH), kinds


def ledger_table(
    path: Sequence[SessionEntry] | None = None, budget: Budget = CHAPTER_BUDGET
) -> pd.DataFrame:
    """The budget ledger of chapter 11.3 as a table: item, tokens, running total, decision
    (headers and words in the notebook's language)."""
    frame, _ = _ledger(path, budget)
    return frame


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
    """:func:`ledger_table` with kept rows green and dropped rows hatched grey."""
    frame, kinds = _ledger(path, budget)

    def row_style(row: pd.Series) -> list[str]:
        return [_LEDGER_ROW_STYLE.get(kinds[int(row.name)], "")] * len(row)

    table = show(frame, "ledger")
    table.apply(row_style, axis=1)
    return table


def sweep_table(
    path: Sequence[SessionEntry] | None = None,
    budget: Budget = CHAPTER_BUDGET,
    *,
    max_tokens: Iterable[int] = range(61),
) -> pd.DataFrame:
    """``build_context`` at every ``max_tokens``: groups kept, kept ids, reason, total.

    ``max_tokens`` and ``reason`` keep their names in every language (the notebook groups
    by them); the other headers follow the notebook's language."""
    frame = _sweep_frame(path, budget, max_tokens)
    return _in_language(
        frame, {"groups kept": "保留的组数", "total": "总计 total", "kept ids": "保留的 entry id"}
    )


def _sweep_frame(
    path: Sequence[SessionEntry] | None, budget: Budget, max_tokens: Iterable[int]
) -> pd.DataFrame:
    """:func:`sweep_table` with its English headers, whatever the language."""
    entries = default_path(path)
    heads = {g.head.id for g in _candidate_groups(entries)}
    rows = []
    for value in max_tokens:
        result = dataclasses.replace(budget, max_tokens=value).build(entries)
        rows.append(
            {
                "max_tokens": value,
                "groups kept": sum(1 for i in result.kept_entry_ids if i in heads),
                "reason": result.reason,
                "total": tidy_number(result.tokens.total),
                "kept ids": ", ".join(result.kept_entry_ids),
            }
        )
    return pd.DataFrame(rows, columns=["max_tokens", "groups kept", "reason", "total", "kept ids"])


def _bad_estimate(value: object) -> TokenEstimator:
    def estimate(message: AgentMessage | str) -> Any:
        return value

    return estimate


def option_errors() -> dict[str, dict[str, Any]]:
    """The chapter's rule "四个配置数值和估算器的每次返回值都要是非负有限数" (the budget
    numbers and every estimate must be finite numbers >= 0), broken one at a time: each case
    is the ``build_context`` keyword arguments that differ from the chapter's call."""
    return {
        "max_tokens = -1": {"max_tokens": -1},
        "max_tokens = NaN": {"max_tokens": math.nan},
        "reserved_output = inf": {"reserved_output": math.inf},
        "safety_margin = True": {"safety_margin": True},
        'safety_margin = "2"': {"safety_margin": "2"},
        "the estimator returns -1": {"estimate_tokens": _bad_estimate(-1)},
        "the estimator returns NaN": {"estimate_tokens": _bad_estimate(math.nan)},
    }


def option_errors_styler(path: Sequence[SessionEntry] | None = None) -> CourseTable:
    """Each case of :func:`option_errors` and what ``build_context`` says (whole, wrapped).

    The errors are ctxlab's own, in the edition's language (the core's English message in
    the English edition, its Chinese rendering by :mod:`ctxlab.lab.errors_zh` in the zh one)."""
    entries = default_path(path)
    rows = []
    for case, changes in option_errors().items():
        options: dict[str, Any] = {
            "max_tokens": 31,
            "reserved_output": 4,
            "safety_margin": 2,
            "estimate_tokens": fixtures.opening_estimator,
            **changes,
        }
        try:
            build_context(entries, **options)
        except CtxlabError as error:
            said = f"{type(error).__name__}: {error_text(error)}"
        else:  # pragma: no cover - would mean a broken option was accepted
            said = tr("(accepted!)", "（竟然被接受了！）")
        shown_case = case.replace(
            "the estimator returns", tr("the estimator returns", "估算器返回")
        )
        rows.append({"case": shown_case, "build_context says": said})
    frame = pd.DataFrame(rows, columns=["case", "build_context says"])
    frame = _in_language(frame, {"case": "情形", "build_context says": "build_context 的回答"})
    caption = tr(
        "build_context(path, max_tokens=31, ...) with one bad value",
        "build_context(path, max_tokens=31, ...)，每次只换一个坏值",
    )
    return show(frame, "option_errors", caption)


def without_system_messages(path: Sequence[SessionEntry] | None = None) -> list[SessionEntry]:
    """``path`` with its system message entries left out (each parent relinked to the entry
    before it): a path on which ``build_context`` replays no system message."""
    result: list[SessionEntry] = []
    for entry in default_path(path):
        if isinstance(entry, MessageSessionEntry) and isinstance(entry.message, SystemMessage):
            continue
        if not result:
            if isinstance(entry, CompactionSessionEntry) or entry.parent_id is None:
                result.append(entry)
            else:  # the first entry left becomes the root
                result.append(dataclasses.replace(entry, parent_id=None))
        elif entry.parent_id != result[-1].id:
            result.append(dataclasses.replace(entry, parent_id=result[-1].id))
        else:
            result.append(entry)
    return result


def _head_label(message: AgentMessage) -> str:
    if isinstance(message, SystemMessage):
        return f'system("{message.content}")' if "\n" not in message.content else "system(…)"
    return "summary"


def message_arrow(result: ContextResult) -> str:
    """The result's ``messages`` as the chapter writes them:
    ``system("sys") → u2 → a2 → u3 → calls → r-test → r-read → a3``."""
    head = len(result.messages) - len(result.kept_entry_ids)
    parts = [_head_label(message) for message in result.messages[:head]]
    return " → ".join([*parts, *result.kept_entry_ids])


def sent_messages_table(result: ContextResult) -> pd.DataFrame:
    """One row per message of ``result.messages``: its role, the entry it comes from and
    whether that id is in ``keptEntryIds`` (the replayed system message and a synthetic
    summary come from no single entry, so they are never listed there)."""
    head = len(result.messages) - len(result.kept_entry_ids)
    rows = []
    for position, message in enumerate(result.messages, 1):
        if position <= head:
            source = (
                tr("replayed from the path's system messages", "由路径上的 system message 重放")
                if isinstance(message, SystemMessage)
                else tr("the newest compaction's summary", "最新 compaction 的摘要")
            )
            rows.append({"#": position, "role": message.role, "comes from": source,
                         "in keptEntryIds": tr("no", "否")})  # fmt: skip
        else:
            entry_id = result.kept_entry_ids[position - head - 1]
            rows.append({"#": position, "role": message.role,
                         "comes from": f"entry {entry_id}",
                         "in keptEntryIds": tr("yes", "是")})  # fmt: skip
    frame = pd.DataFrame(rows, columns=["#", "role", "comes from", "in keptEntryIds"])
    return _in_language(
        frame, {"role": "角色", "comes from": "来自", "in keptEntryIds": "在 keptEntryIds 里？"}
    )


def estimator_table(
    path: Sequence[SessionEntry] | None = None, estimate: TokenEstimator | None = None
) -> CourseTable:
    """Each message entry of ``path`` priced twice: by ``estimate`` (default: the chapter's
    test estimator) and by the chapter's test estimator, whose costs the chapter's table
    lists. Headers follow the notebook's language."""
    entries = [e for e in default_path(path) if isinstance(e, MessageSessionEntry)]
    price = default_estimator(estimate)
    name = getattr(estimate, "__name__", "estimate") if estimate is not None else "test"
    other = f"cost ({name})"
    frame = path_table(entries, estimate=price)[["id", "role", "text", "cost"]]
    frame = frame.rename(columns={"cost": other}).assign(
        **{"cost (test estimator)": [fixtures.opening_estimator(e.message) for e in entries]}
    )
    shown_frame = _in_language(
        frame,
        {
            "role": "角色",
            "text": "文本",
            other: f"成本（{name}）",
            "cost (test estimator)": "成本（测试估算器）",
        },
    )
    caption = tr(
        "the same path, priced by two estimators",
        "同一条路径，用两种估算器分别估算",
    )
    return show(shown_frame, "estimators", caption)


# -- figures ---------------------------------------------------------------------------------------


def budget_alt_text(view: BudgetLedger) -> str:
    """What :func:`budget_figure` shows, in words (its alt text), in the notebook's
    language: the fixed costs, each group newest first with its cost and whether it was
    kept, where the budget ends, the reason and the total."""
    t = view.result.tokens
    n = tidy_number
    end = n(t.system + t.reserved_output + t.safety_margin + t.available_for_messages)
    fixed_en = (
        f"system {n(t.system)}, reserved_output {n(t.reserved_output)}, "
        f"safety_margin {n(t.safety_margin)}"
    )
    fixed_zh = (
        f"system {n(t.system)}、reserved_output {n(t.reserved_output)}、"
        f"safety_margin {n(t.safety_margin)}"
    )
    if view.summary_cost:
        fixed_en += f", summary {n(view.summary_cost)}"
        fixed_zh += f"、摘要 {n(view.summary_cost)}"
    groups_en = "; ".join(
        f"group {g.number} ({n(g.cost)}) {'kept' if g.kept else 'dropped'}" for g in view.groups
    )
    groups_zh = "；".join(
        f"第 {g.number} 组（{n(g.cost)}）{'保留' if g.kept else '丢弃'}" for g in view.groups
    )
    return tr(
        f"Budget of max_tokens {n(t.max_tokens)}: fixed costs {fixed_en}; then, newest "
        f"first, {groups_en or 'no groups'}; the budget ends at {end}; reason "
        f"{view.result.reason}, total {n(t.total)}",
        f"max_tokens {n(t.max_tokens)} 的预算：固定成本 {fixed_zh}；再从最新一组往前："
        f"{groups_zh or '没有组'}；预算到 {end} 为止；reason {view.result.reason}，"
        f"total {n(t.total)}",
    )


@styled
def budget_figure(
    path: Sequence[SessionEntry] | None = None, budget: Budget = CHAPTER_BUDGET
) -> Figure:
    """Fixed costs, then each group newest first (kept solid, dropped hatched), as a waterfall.

    The dashed line is where the budget ends: fixed costs + ``available_for_messages``.
    """
    view = budget_ledger(path, budget)
    t = view.result.tokens
    fixed_style = {"edgecolor": PALETTE["black"], "linewidth": 1.5}
    rows: list[tuple[str, float, dict[str, object]]] = [
        ("system", float(t.system), {**fixed_style, "facecolor": "#BBBBBB"}),
        ("reserved_output", float(t.reserved_output), {**fixed_style, "facecolor": "#888888"}),
        ("safety_margin", float(t.safety_margin), {**fixed_style, "facecolor": "#555555"}),
    ]
    if view.summary_cost:
        rows.append(
            (
                tr_figure("summary", "摘要"),
                float(view.summary_cost),
                {**KEPT, "facecolor": PALETTE["yellow"]},
            )
        )
    for group in view.groups:
        style = {**KEPT, "facecolor": group_colour(group.number)} if group.kept else dict(DROPPED)
        rows.append((_group_name(group, figure=True), float(group.cost), style))

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
    ax.set_title(
        tr_figure(
            f"max_tokens {t.max_tokens:g}: {view.result.reason}, total {t.total:g}",
            f"max_tokens {t.max_tokens:g}：{view.result.reason}，total {t.total:g}",
        ),
        loc="left",
    )
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


_REASON_STYLE: dict[str, dict[str, object]] = {
    "single_group_overflow": {"facecolor": "#D55E0033", "hatch": "xx", "edgecolor": "#D55E00"},
    "trimmed": {"facecolor": "#E69F0033", "hatch": "//", "edgecolor": "#E69F00"},
    "within_budget": {"facecolor": "#009E7333", "hatch": "", "edgecolor": "#009E73"},
}


@styled
def sweep_figure(
    path: Sequence[SessionEntry] | None = None,
    budget: Budget = CHAPTER_BUDGET,
    *,
    max_tokens: Iterable[int] = range(61),
    mark: int | None = 31,
) -> Figure:
    """Groups kept (a step line) and ``reason`` (hatched bands) against ``max_tokens``."""
    frame = _sweep_frame(path, budget, max_tokens)
    budgets = [int(v) for v in frame["max_tokens"]]
    kept = [int(v) for v in frame["groups kept"]]
    reasons = [str(v) for v in frame["reason"]]

    fig, ax = new_figure(FIGSIZE)
    top = max(kept, default=0) + 0.8
    start = 0
    for i in range(1, len(budgets) + 1):
        if i == len(budgets) or reasons[i] != reasons[start]:
            ax.axvspan(budgets[start] - 0.5, budgets[i - 1] + 0.5, ymax=1.0, linewidth=0,
                       **_REASON_STYLE[reasons[start]])  # type: ignore[arg-type]  # fmt: skip
            start = i
    ax.step(budgets, kept, where="mid", color=PALETTE["black"], linewidth=3)
    if mark is not None and mark in budgets:
        y = kept[budgets.index(mark)]
        ax.plot([mark], [y], "o", color=PALETTE["black"], markersize=10)
        ax.annotate(
            tr_figure(f"max_tokens {mark}: {y} groups", f"max_tokens {mark}：{y} 组"),
            (mark, y),
            xytext=(mark - 14, y + 0.45),
            fontsize=14,
            arrowprops={"arrowstyle": "->", "linewidth": 1.5},
            bbox={"boxstyle": "round", "facecolor": "#FFFFFF", "edgecolor": "#000000"},
        )
    ax.set_ylim(0, top)
    ax.set_yticks(range(0, int(top) + 1))
    ax.set_xlim(budgets[0] - 0.5, budgets[-1] + 0.5)
    ax.set_xlabel("max_tokens")
    ax.set_ylabel(tr_figure("groups kept", "保留的组数"))
    ax.set_title(
        tr_figure(
            f"Sweep (reserved_output {budget.reserved_output:g}, "
            f"safety_margin {budget.safety_margin:g})",
            f"逐个试 max_tokens（reserved_output {budget.reserved_output:g}，"
            f"safety_margin {budget.safety_margin:g}）",
        ),
        loc="left",
    )
    seen = list(dict.fromkeys(reasons))
    ax.legend(
        handles=[Patch(**_REASON_STYLE[r], label=r) for r in seen],  # type: ignore[arg-type]
        loc="lower right",
        frameon=True,
        framealpha=0.95,
    )
    return fig


# -- the student's build_context beside the reference ----------------------------------------

_TOKEN_FIELDS = (
    "max_tokens",
    "system",
    "messages",
    "reserved_output",
    "safety_margin",
    "available_for_messages",
    "total",
)
COMPARE_COLUMNS = ["", "reference", "yours", "same?"]


def _message_names(path: Sequence[SessionEntry], messages: Iterable[object]) -> str:
    """The messages of a result as the chapter names them: system → summary(compact-1) → u2 …"""
    compactions = [e for e in path if isinstance(e, CompactionSessionEntry)]
    names = []
    for index, message in enumerate(messages):
        entry = next(
            (e for e in path if isinstance(e, MessageSessionEntry) and e.message == message), None
        )
        if index == 0 and isinstance(message, SystemMessage):
            names.append("system")
        elif entry is not None:
            names.append(entry.id)
        elif (
            compactions
            and isinstance(message, UserMessage)
            and message.timestamp == compactions[-1].timestamp
        ):
            names.append(f"summary({compactions[-1].id})")
        else:
            names.append(f"{getattr(message, 'role', type(message).__name__)}?")
    return " → ".join(names) or tr("(none)", "（无）")


def _result_rows(path: Sequence[SessionEntry], result: object) -> list[tuple[str, str]]:
    """(what, value) rows of a ContextResult-like value; raises if it cannot be read."""
    kept = getattr(result, "kept_entry_ids")  # noqa: B009 - a student's object may lack it
    tokens = getattr(result, "tokens")  # noqa: B009
    rows = [
        (
            tr("kept ids", "保留的 entry id"),
            ", ".join(str(i) for i in kept) or tr("(nothing)", "（无）"),
        ),
        ("reason", str(getattr(result, "reason"))),  # noqa: B009
    ]
    for name in _TOKEN_FIELDS:
        value = getattr(tokens, name)
        rows.append(
            (
                f"tokens.{name}",
                str(tidy_number(value) if isinstance(value, (int, float)) else value),
            )
        )
    rows.append(("messages", _message_names(path, getattr(result, "messages"))))  # noqa: B009
    return rows


def _direct_call(function: Callable[..., Any], *args: Any, **kwargs: Any) -> SafeCall:
    """The student's function called in this thread, unbounded (where no thread can start)."""
    try:
        return SafeCall(True, function(*args, **kwargs))
    except NotImplementedError:
        return SafeCall(
            False,
            error=tr(
                "not written yet (the stub raises NotImplementedError)",
                "还没有写（stub 抛出 NotImplementedError）",
            ),
        )
    except Exception as error:  # student code may raise anything
        text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        return SafeCall(False, error=tr("raised ", "抛出了 ") + text[:300])


def bounded_call(
    function: Callable[..., Any], *args: Any, seconds: float = 5.0, **kwargs: Any
) -> SafeCall:
    """One call of the student's function, bounded in time: :func:`call_safely` (a daemon
    thread with a time limit), so a function that never returns becomes a row, not a frozen
    kernel. Under Pyodide (JupyterLite), where no thread can be started, a direct call."""
    if sys.platform == "emscripten":  # pragma: no cover - Pyodide has no threads
        return _direct_call(function, *args, **kwargs)
    try:
        return call_safely(function, *args, seconds=seconds, **kwargs)
    except RuntimeError:  # "can't start new thread": call it directly instead
        return _direct_call(function, *args, **kwargs)


#: Where :func:`compare_builds` looks for a difference: every ``max_tokens`` the lab's slider
#: offers (0-60), with the chapter's ``reserved_output`` 4 and ``safety_margin`` 2.
SEARCH_MAX_TOKENS: tuple[int, ...] = tuple(range(61))


@dataclass(frozen=True)
class BuildDifference:
    """The first place where the student's ``build_context`` differs from the reference's
    (``found``), or, when it never does, the chapter's budget on the first path searched."""

    found: bool
    path_name: str
    path: tuple[SessionEntry, ...]
    budget: Budget
    frame: pd.DataFrame
    searched: str  # where the search looked, in the notebook's language


def chapter_paths() -> list[tuple[str, list[SessionEntry]]]:
    """The chapter's paths of this lab, named: the opening path, and the same path without
    its system message (「路径上没有 system message 时，这一项为 0」)."""
    opening = fixtures.opening_path()
    return [
        (tr("the opening path", "开篇路径"), opening),
        (
            tr("the opening path without sys", "去掉 sys 的开篇路径"),
            without_system_messages(opening),
        ),
    ]


def _differs(frame: pd.DataFrame) -> bool:
    return any(str(mark) != "✔" for mark in frame.iloc[:, 3])


def find_difference(
    student: Callable[..., Any],
    path: Sequence[SessionEntry] | None = None,
    *,
    max_tokens: Iterable[int] = SEARCH_MAX_TOKENS,
    seconds: float = 5.0,
) -> BuildDifference:
    """Search for the first budget where ``student`` and the reference ``build_context``
    disagree (ctxlab's search; the chapter's rule is the reference).

    Order: the chapter's budget 31/4/2 first, then every ``max_tokens`` from the smallest
    up (reserved 4, safety 2), on ``path`` or else on each of :func:`chapter_paths`. Each
    call of ``student`` is bounded (:func:`bounded_call`); the search stops at the first
    difference, and a function that raises or hangs is a difference at once.
    """
    paths = chapter_paths() if path is None else [(tr("this path", "这条路径"), list(path))]
    budgets = [CHAPTER_BUDGET] + [
        Budget(mt) for mt in max_tokens if mt != CHAPTER_BUDGET.max_tokens
    ]
    values = sorted(int(b.max_tokens) for b in budgets)
    searched = tr(
        f"max_tokens {values[0]}–{values[-1]} (reserved_output 4, safety_margin 2) on "
        + " and ".join(name for name, _ in paths),
        f"max_tokens 从 {values[0]} 到 {values[-1]}（reserved_output 4，safety_margin 2），"
        + "、".join(name for name, _ in paths),
    )
    for name, entries in paths:
        for budget in budgets:
            frame = compare_table(entries, student, budget, seconds=seconds)
            if _differs(frame):
                return BuildDifference(True, name, tuple(entries), budget, frame, searched)
    name, entries = paths[0]
    frame = compare_table(entries, student, CHAPTER_BUDGET, seconds=seconds)
    return BuildDifference(False, name, tuple(entries), CHAPTER_BUDGET, frame, searched)


def compare_table(
    path: Sequence[SessionEntry] | None,
    student: Callable[..., Any],
    budget: Budget = CHAPTER_BUDGET,
    *,
    seconds: float = 5.0,
) -> pd.DataFrame:
    """The student's ``build_context`` beside the reference's, for the same arguments.

    One row each for the kept ids, the reason, the seven token numbers and the messages
    (named by entry id); ``same?`` is ✔, or ✘ with "first difference" on the first row that
    differs. A student function that raises, hangs or returns something unreadable gives
    one row saying so (it never raises here). Headers, row names and marks follow the
    notebook's language; the messages of ``call_safely`` stay as it words them.
    """
    entries = default_path(path)
    options = budget.options()
    del options["summary_language"]  # a student's build_context may not take it
    reference = build_context(entries, **options)
    expected = _result_rows(entries, reference)
    call = bounded_call(student, list(entries), seconds=seconds, **options)
    problem = call.error
    got: list[tuple[str, str]] = []
    if call.ok:
        try:
            got = _result_rows(entries, call.value)
        except Exception as error:
            kind = type(call.value).__name__
            problem = (
                tr(
                    f"returned {kind}, which is not a ContextResult",
                    f"返回了 {kind}，它不是 ContextResult",
                )
                + f" ({type(error).__name__}: {error})"
            )
    first_difference = _first_difference()
    if problem:
        rows = [{"": tr("your build_context", "你的 build_context"),
                 "reference": tr("(see below)", "（见下方）"), "yours": problem,
                 "same?": first_difference}]  # fmt: skip
        rows += [
            {"": what, "reference": value, "yours": "", "same?": ""} for what, value in expected
        ]
        return _in_language(pd.DataFrame(rows, columns=COMPARE_COLUMNS), _COMPARE_ZH)
    rows = []
    first = True
    for (what, want), (_, have) in zip(expected, got, strict=True):
        if want == have:
            mark = "✔"
        elif first:
            mark, first = first_difference, False
        else:
            mark = "✘"
        rows.append({"": what, "reference": want, "yours": have, "same?": mark})
    return _in_language(pd.DataFrame(rows, columns=COMPARE_COLUMNS), _COMPARE_ZH)


_COMPARE_ZH = {"reference": "参考实现", "yours": "你的结果", "same?": "相同？"}


def _first_difference() -> str:
    return tr("✘ first difference", "✘ 第一处不同")


_COMPARE_ROW_STYLE = {
    "first": "background-color: #D55E0033; font-weight: bold; border: 2px solid #D55E00",
    "differs": "background-color: #D55E0014",
    "same": "background-color: #009E7314",
    "": "color: #555555",
}


def _compare_kind(mark: str) -> str:
    if mark == _first_difference():
        return "first"
    if mark.startswith("✘"):
        return "differs"
    return "same" if mark == "✔" else ""


def _styled_compare(frame: pd.DataFrame, caption: str) -> CourseTable:
    kinds = [_compare_kind(str(mark)) for mark in frame.iloc[:, 3]]

    def row_style(row: pd.Series) -> list[str]:
        return [_COMPARE_ROW_STYLE[kinds[int(row.name)]]] * len(row)

    table = show(frame, "compare", caption)
    table.apply(row_style, axis=1)
    return table


def difference_table(difference: BuildDifference) -> CourseTable:
    """A :class:`BuildDifference` as the course shows it: where the first difference is (or
    where the search looked), the first difference outlined in red."""
    label = difference.budget.label()
    if difference.found:
        caption = tr(
            f"first difference: {difference.path_name}, budget {label}",
            f"第一处不同：{difference.path_name}，预算 {label}",
        )
    else:
        caption = tr(
            f"no difference found: searched {difference.searched}; shown: budget {label}",
            f"没有找到不同：查过 {difference.searched}；下表是预算 {label}",
        )
    return _styled_compare(difference.frame, caption)


def compare_builds(
    path: Sequence[SessionEntry] | None,
    student: Callable[..., Any],
    budget: Budget | None = None,
    *,
    seconds: float = 5.0,
) -> CourseTable:
    """The student's ``build_context`` beside the reference's, the first difference outlined.

    Without ``budget``: :func:`find_difference` searches the lab's budgets (on ``path``, or
    on the chapter's paths when ``path`` is None) and shows the first place where the two
    differ, or says where it looked (:func:`difference_table`). With ``budget``: that one
    budget on ``path`` only (:func:`compare_table`)."""
    if budget is None:
        return difference_table(find_difference(student, path, seconds=seconds))
    frame = compare_table(path, student, budget, seconds=seconds)
    caption = tr(
        f"your build_context vs the reference, budget {budget.label()}",
        f"你的 build_context 与参考实现对照，预算 {budget.label()}",
    )
    return _styled_compare(frame, caption)


# -- widget: three sliders redraw the ledger, the plot, the kept ids and the reason ----------------


@dataclass(frozen=True)
class BudgetView:
    """Everything the 11.3 widget shows for one slider position."""

    reason: str  # "reason: trimmed"
    kept: str  # "kept: u2, a2, u3, calls, r-test, r-read, a3"
    ledger_html: str
    figure: Figure


def budget_view(max_tokens: int, reserved_output: int, safety_margin: int) -> BudgetView:
    """Build the context for the opening path and render its ledger and budget plot (pure)."""
    budget = Budget(max_tokens, reserved_output, safety_margin)
    view = budget_ledger(None, budget)
    styler = ledger_styler(None, budget)
    figure = budget_figure(None, budget)
    kept = ", ".join(view.result.kept_entry_ids) or tr("(nothing)", "（无）")
    return BudgetView(
        reason=tr(f"reason: {view.result.reason}", f"结果原因 reason：{view.result.reason}"),
        kept=tr(f"kept: {kept}", f"保留（kept_entry_ids）：{kept}"),
        ledger_html=styler.to_html(),
        figure=figure,
    )


def figure_html(fig: Figure) -> str:
    """The figure as the widget shows it: an ``<img>`` of its PNG (inline, base64) whose
    ``alt`` is the figure's alt text (:meth:`CourseFigure.alt_text`, the same text the
    static figure's output carries)."""
    alt = fig.alt_text() if isinstance(fig, CourseFigure) else str(fig.get_label() or "")
    data = base64.b64encode(figure_png(fig)).decode("ascii")
    return (
        f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}"'
        ' style="width: 100%; height: auto">'
    )


def build_budget_widget(
    render: Callable[[int, int, int], BudgetView] = budget_view,
    *,
    student: Callable[..., Any] | None = None,
    seconds: float = 5.0,
) -> Any:
    """Sliders max_tokens (0-60, 31), reserved_output (4), safety_margin (2) → ledger + plot.

    With ``student`` (your own ``build_context``), a panel under the sliders shows
    :func:`compare_builds` (output ``"compare"``): first the search's result
    (:func:`difference_table`; the sliders start at its budget when it is on the opening
    path), then the comparison at each slider position. Each call of ``student`` is bounded
    by ``seconds``."""
    first: BuildDifference | None = None
    start = 31
    if student is not None:  # the first position: the first difference the search finds
        first = find_difference(student, seconds=seconds)
        if first.found and first.path_name == chapter_paths()[0][0]:
            start = int(first.budget.max_tokens)
    controls = {
        "max_tokens": slider(tr("max_tokens", "总窗口 max_tokens"), start, 60),
        "reserved_output": slider(tr("reserved_output", "回答预留 reserved_output"), 4, 20),
        "safety_margin": slider(tr("safety_margin", "安全余量 safety_margin"), 2, 20),
    }
    if get_language() == "zh":  # the longer Chinese descriptions need a wider label
        for control in controls.values():
            control.style.description_width = "190px"
            control.layout.width = "540px"
    reason = widgets.Label()
    reason.add_class("ctxlab-reason")
    kept = widgets.Label()
    kept.add_class("ctxlab-kept")
    ledger = widgets.HTML()
    # max_width keeps the figure inside a narrow notebook column; wrapping puts it under
    # the ledger instead of cutting it off at the right. An HTML widget rather than an
    # Image: ipywidgets' Image has no alt text, an <img> in HTML carries the figure's.
    image = widgets.HTML(layout={"width": "760px", "max_width": "100%"})
    image.add_class("ctxlab-figure")
    compare = widgets.HTML()
    compare.add_class("ctxlab-compare")

    def update(_: object = None) -> None:
        values = (
            controls["max_tokens"].value,
            controls["reserved_output"].value,
            controls["safety_margin"].value,
        )
        view = render(*values)
        reason.value = view.reason
        kept.value = view.kept
        ledger.value = view.ledger_html
        image.value = figure_html(view.figure)
        if student is not None and _ is not None:  # a slider moved: compare there
            compare.value = compare_builds(
                None, student, Budget(*values), seconds=seconds
            ).to_html()

    update()
    if first is not None:  # the first position: the search's result, found once
        compare.value = difference_table(first).to_html()
    for control in controls.values():
        control.observe(update, names="value")
    return widget_box(
        [
            widgets.VBox(list(controls.values())),
            *([compare] if student is not None else []),
            reason,
            kept,
            widgets.HBox(
                [ledger, image], layout={"flex_flow": "row wrap", "align_items": "flex-start"}
            ),
        ],
        controls=controls,
        outputs={
            "reason": reason,
            "kept": kept,
            "ledger": ledger,
            "figure": image,
            **({"compare": compare} if student is not None else {}),
        },
    )


# -- self-checks -----------------------------------------------------------------------------------


def _context(
    max_tokens: int | float, reserved_output: int | float, safety_margin: int | float
) -> ContextResult:
    return Budget(max_tokens, reserved_output, safety_margin).build(fixtures.opening_path())


@exercise("available", "消息额度 available_for_messages")
def check_available(
    answer: object, *, max_tokens: int = 40, reserved_output: int = 4, safety_margin: int = 2
) -> Verdict:
    """Exercise 11.3-A: ``available_for_messages`` for another budget (default 40/4/2)."""
    value = as_number(answer, "available_for_messages")
    tokens = _context(max_tokens, reserved_output, safety_margin).tokens
    if value == tokens.available_for_messages:
        return Verdict(
            True,
            tr(
                f"available_for_messages is {tokens.available_for_messages:g}",
                f"available_for_messages 是 {tokens.available_for_messages:g}",
            ),
            f"max(0, {max_tokens} − system {tokens.system:g} − {reserved_output}"
            f" − {safety_margin})",
        )
    return Verdict(
        False,
        tr(
            f"{value:g} is not what build_context computes",
            f"{value:g} 不是 build_context 算出的值",
        ),
        hint=tr(
            "Subtract the replayed system message, reserved_output and safety_margin from "
            "max_tokens; never below 0.",
            "从 max_tokens 里减去重放出的 system message、reserved_output 和 safety_margin；"
            "结果不会低于 0。",
        ),
    )


@exercise("kept ids", "保留的 entry id（kept_entry_ids）")
def check_kept_ids(
    answer: object, *, max_tokens: int = 20, reserved_output: int = 4, safety_margin: int = 2
) -> Verdict:
    """Exercise 11.3-B: ``kept_entry_ids`` for another budget (default 20/4/2)."""
    ids = id_list(answer, tr("your kept ids", "你的答案"))
    result = _context(max_tokens, reserved_output, safety_margin)
    if tuple(ids) == result.kept_entry_ids:
        return Verdict(
            True,
            tr(
                f"kept: {', '.join(ids)}; reason {result.reason}",
                f"保留：{', '.join(ids)}；reason 是 {result.reason}",
            ),
        )
    if "sys" in ids:
        return Verdict(
            False,
            tr("sys is not a kept entry", "sys 不是被保留的 entry"),
            hint=tr(
                "The replayed system message is always sent but never listed in kept_entry_ids.",
                "重放出的 system message 总会发送，但从不列在 kept_entry_ids 里。",
            ),
        )
    available = f"{result.tokens.available_for_messages:g}"
    return Verdict(
        False,
        tr("that is not what build_context keeps", "这不是 build_context 保留的内容"),
        hint=tr(
            f"Available for messages is {available}. Start from "
            "the newest group; what happens when even that one does not fit?",
            f"消息额度是 {available}。从最新一组开始；如果连这一组都放不下，会怎样？",
        ),
    )


@exercise("smallest budget for all", "能保留全部组的最小预算")
def check_smallest_budget_for_all(
    answer: object, *, reserved_output: int = 4, safety_margin: int = 2
) -> Verdict:
    """Exercise 11.3-C: the smallest ``max_tokens`` that keeps all three groups."""
    value = as_number(answer, "max_tokens")
    if value < 0:
        raise CtxlabError(
            tr(f"max_tokens must be >= 0, got {value:g}", f"max_tokens 必须 >= 0，实际是 {value:g}")
        )
    result = _context(value, reserved_output, safety_margin)
    if result.reason != "within_budget":
        return Verdict(
            False,
            tr(
                f"with max_tokens {value:g} the reason is {result.reason}",
                f"max_tokens 为 {value:g} 时，reason 是 {result.reason}",
            ),
            tr(
                f"kept: {', '.join(result.kept_entry_ids)}",
                f"保留：{', '.join(result.kept_entry_ids)}",
            ),
            tr(
                "Add the cost of every group to the fixed costs.",
                "把每一组的成本都加到固定成本上。",
            ),
        )
    smaller = _context(value - 1, reserved_output, safety_margin)
    if smaller.reason == "within_budget":
        return Verdict(
            False,
            tr(
                f"{value:g} keeps all three groups, but so does {value - 1:g}",
                f"{value:g} 能保留全部三组，但 {value - 1:g} 也能",
            ),
            hint=tr("Look for the smallest budget.", "找出最小的预算。"),
        )
    return Verdict(
        True,
        tr(
            f"{value:g} is the smallest max_tokens that keeps every group",
            f"{value:g} 是保留全部组的最小 max_tokens",
        ),
    )
