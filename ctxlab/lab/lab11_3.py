"""Lab 11.3 "31 个 token 怎样留下第二、三组": the teaching layer of notebook
``11.3-budgeted-context.ipynb`` (the core: ``build_context``).

The ledger (:mod:`ctxlab.lab.ledger`, re-exported here), the messages sent
(:func:`message_arrow`), the student's ``build_context`` beside the reference
(:func:`compare_builds`; :func:`find_difference` searches budgets), the three-slider widget
(:func:`build_budget_widget`; :func:`budget_view` is its pure part) and the self-checks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Any

import ipywidgets as widgets
import pandas as pd
from matplotlib.figure import Figure

from ctxlab import fixtures
from ctxlab.context import ContextResult, ContextTokens, build_context
from ctxlab.entries import CompactionSessionEntry, MessageSessionEntry, SessionEntry
from ctxlab.errors import CtxlabError
from ctxlab.lab.checks import Verdict, as_number, exercise, id_list
from ctxlab.lab.display import (
    CourseTable,
    call_safely,
    default_path,
    figure_html,
    figure_widget,
    in_language,
    relinked,
    show,
    slider,
    tidy_number,
    widget_box,
)
from ctxlab.lab.language import Texts, get_language, tr
from ctxlab.lab.ledger import (
    CHAPTER_BUDGET,
    Budget,
    budget_alt_text,
    budget_figure,
    budget_ledger,
    ledger_styler,
)
from ctxlab.messages import AgentMessage, SystemMessage, UserMessage

say = Texts("lab11_3")

__all__ = [
    "CHAPTER_BUDGET",
    "SEARCH_MAX_TOKENS",
    "Budget",
    "BudgetView",
    "BuildDifference",
    "budget_alt_text",
    "budget_figure",
    "budget_ledger",
    "budget_view",
    "build_budget_widget",
    "chapter_paths",
    "check_kept_ids",
    "check_smallest_budget_for_all",
    "compare_builds",
    "compare_table",
    "difference_table",
    "find_difference",
    "ledger_styler",
    "message_arrow",
    "without_system_messages",
]


# -- the path and the messages sent ----------------------------------------------------------------


def without_system_messages(path: Sequence[SessionEntry] | None = None) -> list[SessionEntry]:
    """``path`` with its system message entries left out (each parent relinked to the entry
    before it): a path on which ``build_context`` replays no system message."""
    return relinked(
        entry
        for entry in default_path(path)
        if not (isinstance(entry, MessageSessionEntry) and isinstance(entry.message, SystemMessage))
    )


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


# -- the student's build_context beside the reference ----------------------------------------

_TOKEN_FIELDS = tuple(field.name for field in fields(ContextTokens))
#: The compare table's columns, English → Chinese.
_COMPARE_COLUMNS = {"": "", "reference": "参考实现", "yours": "你的结果", "same?": "相同？"}


def _message_names(path: Sequence[SessionEntry], messages: Iterable[object]) -> str:
    """The messages of a result as the chapter names them: system → summary(compact-1) → u2 …"""
    latest = next((e for e in reversed(path) if isinstance(e, CompactionSessionEntry)), None)
    names = []
    for index, message in enumerate(messages):
        entry = next(
            (e for e in path if isinstance(e, MessageSessionEntry) and e.message == message), None
        )
        if index == 0 and isinstance(message, SystemMessage):
            names.append("system")
        elif entry is not None:
            names.append(entry.id)
        elif latest and isinstance(message, UserMessage) and message.timestamp == latest.timestamp:
            names.append(f"summary({latest.id})")
        else:
            names.append(f"{getattr(message, 'role', type(message).__name__)}?")
    return " → ".join(names) or tr("(none)", "（无）")


def _result_rows(path: Sequence[SessionEntry], result: object) -> list[tuple[str, str]]:
    """(what, value) rows of a ContextResult-like value; raises if it cannot be read."""
    kept = getattr(result, "kept_entry_ids")  # noqa: B009 - a student's object may lack it
    tokens = getattr(result, "tokens")  # noqa: B009
    kept_ids = ", ".join(str(i) for i in kept) or tr("(nothing)", "（无）")
    rows = [(tr("kept ids", "保留的 entry id"), kept_ids)]
    rows.append(("reason", str(getattr(result, "reason"))))  # noqa: B009
    rows += [(f"tokens.{name}", str(tidy_number(getattr(tokens, name)))) for name in _TOKEN_FIELDS]
    rows.append(("messages", _message_names(path, getattr(result, "messages"))))  # noqa: B009
    return rows


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


def find_difference(
    student: Callable[..., Any],
    path: Sequence[SessionEntry] | None = None,
    *,
    max_tokens: Iterable[int] = SEARCH_MAX_TOKENS,
    seconds: float = 5.0,
) -> BuildDifference:
    """The first budget where ``student`` and the reference ``build_context`` disagree
    (ctxlab's search): 31/4/2 first, then every ``max_tokens`` from the smallest up, on
    ``path`` or else on each of :func:`chapter_paths`. Raising or hanging is a difference."""
    paths = chapter_paths() if path is None else [(tr("this path", "这条路径"), list(path))]
    budgets = [CHAPTER_BUDGET, *(Budget(m) for m in max_tokens if m != CHAPTER_BUDGET.max_tokens)]
    values = sorted(int(b.max_tokens) for b in budgets)
    names = tr(" and ", "、").join(name for name, _ in paths)
    searched = say("max_tokens_searched_on", low=values[0], high=values[-1], paths=names)
    for name, entries in paths:
        for budget in budgets:
            frame = compare_table(entries, student, budget, seconds=seconds)
            if any(str(mark) != "✔" for mark in frame.iloc[:, 3]):
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
    """The student's ``build_context`` beside the reference's, for the same arguments: one
    row each for the kept ids, the reason, the token numbers and the messages, the first
    row that differs marked. A function that raises, hangs or returns something unreadable
    gives one row saying so (this never raises)."""
    entries = default_path(path)
    options = budget.options()
    del options["summary_language"]  # a student's build_context may not take it
    reference = build_context(entries, **options)
    expected = _result_rows(entries, reference)
    call = call_safely(student, list(entries), seconds=seconds, **options)
    problem = call.error
    got: list[tuple[str, str]] = []
    if call.ok:
        try:
            got = _result_rows(entries, call.value)
        except Exception as error:
            kind = type(call.value).__name__
            problem = (
                say("returned_which_is_not_a", kind=kind) + f" ({type(error).__name__}: {error})"
            )
    first_difference = tr("✘ first difference", "✘ 第一处不同")
    if problem:
        rows = [(tr("your build_context", "你的 build_context"), tr("(see below)", "（见下方）"),
                 problem, first_difference)]  # fmt: skip
        rows += [(what, value, "", "") for what, value in expected]
    else:
        rows = []
        for (what, want), (_, have) in zip(expected, got, strict=True):
            if want == have:
                mark = "✔"
            elif first_difference not in (row[3] for row in rows):
                mark = first_difference
            else:
                mark = "✘"
            rows.append((what, want, have, mark))
    return in_language(pd.DataFrame(rows, columns=list(_COMPARE_COLUMNS)), _COMPARE_COLUMNS)


#: Each row's style by its mark; any other mark is the first difference's.
_COMPARE_ROW_STYLE = {
    "✘": "background-color: #D55E0014",
    "✔": "background-color: #009E7314",
    "": "color: #555555",
}
_FIRST_DIFFERENCE_STYLE = (
    "background-color: #D55E0033; font-weight: bold; border: 2px solid #D55E00"
)


def _styled_compare(frame: pd.DataFrame, caption: str) -> CourseTable:
    styles = [
        _COMPARE_ROW_STYLE.get(str(mark), _FIRST_DIFFERENCE_STYLE) for mark in frame.iloc[:, 3]
    ]
    return show(frame, "compare", caption, styles)


def difference_table(difference: BuildDifference) -> CourseTable:
    """A :class:`BuildDifference` as the course shows it: where the first difference is (or
    where the search looked), the first difference outlined in red."""
    label = difference.budget.label()
    if difference.found:
        caption = say("first_difference_budget", difference=difference, label=label)
    else:
        caption = say("no_difference_found_searched_shown", difference=difference, label=label)
    return _styled_compare(difference.frame, caption)


def compare_builds(
    path: Sequence[SessionEntry] | None,
    student: Callable[..., Any],
    budget: Budget | None = None,
    *,
    seconds: float = 5.0,
) -> CourseTable:
    """The student's ``build_context`` beside the reference's, the first difference outlined:
    at the first difference :func:`find_difference` finds, or at ``budget`` on ``path``."""
    if budget is None:
        return difference_table(find_difference(student, path, seconds=seconds))
    frame = compare_table(path, student, budget, seconds=seconds)
    caption = say("your_build_context_vs_the", label=budget.label())
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
    kept = ", ".join(view.result.kept_entry_ids) or tr("(nothing)", "（无）")
    return BudgetView(
        reason=tr(f"reason: {view.result.reason}", f"原因（reason）：{view.result.reason}"),
        kept=tr(f"kept: {kept}", f"保留（kept_entry_ids）：{kept}"),
        ledger_html=ledger_styler(None, budget).to_html(),
        figure=budget_figure(None, budget),
    )


def build_budget_widget(
    render: Callable[[int, int, int], BudgetView] = budget_view,
    *,
    student: Callable[..., Any] | None = None,
    seconds: float = 5.0,
) -> Any:
    """Sliders max_tokens (0-60, 31), reserved_output (4), safety_margin (2) → ledger + plot.
    With ``student`` (your own ``build_context``), output ``"compare"`` shows the search's
    first difference (the sliders start there), then :func:`compare_builds` at each position."""
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
    image = figure_widget()  # wraps under the ledger in a narrow column
    compare = widgets.HTML()
    compare.add_class("ctxlab-compare")

    def update(_: object = None) -> None:
        values = [control.value for control in controls.values()]  # max, reserved, margin
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


@exercise("kept ids", "保留的 entry id（kept_entry_ids）")
def check_kept_ids(
    answer: object, *, max_tokens: int = 20, reserved_output: int = 4, safety_margin: int = 2
) -> Verdict:
    """Exercise 11.3-B: ``kept_entry_ids`` for another budget (default 20/4/2)."""
    ids = id_list(answer, tr("your kept ids", "你的答案"))
    result = _context(max_tokens, reserved_output, safety_margin)
    if tuple(ids) == result.kept_entry_ids:
        return Verdict(True, say("kept_reason", ids=", ".join(ids), result=result))
    if "sys" in ids:
        return Verdict(
            False,
            tr("sys is not a kept entry", "sys 不是被保留的 entry"),
            hint=say("the_replayed_system_message_is"),
        )
    available = f"{result.tokens.available_for_messages:g}"
    return Verdict(
        False,
        tr("that is not what build_context keeps", "这不是 build_context 保留的内容"),
        hint=say("available_for_messages_is_add", available=available),
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
            say("with_max_tokens_the_reason", value=value, result=result),
            say("kept", kept=", ".join(result.kept_entry_ids)),
            say("add_the_cost_of_every"),
        )
    smaller = _context(value - 1, reserved_output, safety_margin)
    if smaller.reason == "within_budget":
        return Verdict(
            False,
            say("keeps_all_three_groups_but", value=value, smaller=value - 1),
            hint=tr("Look for the smallest budget.", "找出最小的预算。"),
        )
    return Verdict(True, say("is_the_smallest_max_tokens", value=value))
