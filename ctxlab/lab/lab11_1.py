"""Lab 11.1 "摘要先成为 session 中的一条普通事实" (a summary is first an ordinary fact in the
session): the teaching layer of notebook ``11.1-summary-is-a-fact.ipynb``.

The core of this lab is :mod:`ctxlab.entries` (the entry types and the strict parser). The
answers are computed by the core -- ``parse_session_entry``, ``group_interactions`` --
never re-implemented here.

* tables -- :func:`path_table` / :func:`path_styler` (the path, one row per entry, tinted by
  interaction group), :func:`wire_json`, :func:`corruption_table` /
  :func:`corruption_styler` (every error message whole, wrapped), :func:`parse_verdict`;
* figure -- :func:`cost_figure`: each entry's cost under the test estimator, coloured by the
  interaction group ``group_interactions`` will put it in (system: no group);
* widget -- :func:`build_parse_widget`: pick ``compact-1`` or one of its corruptions, see
  the parser's verdict (:func:`parse_cases`, :func:`parse_view` are its pure parts);
* self-checks -- :func:`check_repaired_compaction` (exercise 11.1-A) and
  :func:`check_my_summary` (11.1-B);
* store messages -- :func:`store_text`: a JSONL store's warning or refusal (the torn last
  line, a ctxlab extension) as the notebook's language shows it.

Every text shown to a student exists in English and Chinese and is picked at render time
(:func:`ctxlab.lab.language.tr`, :func:`~ctxlab.lab.language.tr_figure` for figure text);
the frames keep their English column names and the stylers rename them for display.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import ipywidgets as widgets
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ctxlab import fixtures
from ctxlab.entries import (
    CompactionSessionEntry,
    MessageSessionEntry,
    SessionEntry,
    parse_session_entry,
)
from ctxlab.errors import CtxlabError
from ctxlab.lab.checks import Verdict, as_mapping, exercise
from ctxlab.lab.display import (
    FIGSIZE,
    PALETTE,
    CourseTable,
    TokenEstimator,
    default_estimator,
    default_path,
    entry_kind,
    group_colour,
    group_numbers,
    group_row_colours,
    new_figure,
    show,
    styled,
    tool_ids,
    verdict_html,
    widget_box,
)
from ctxlab.lab.errors_zh import error_text, message_zh
from ctxlab.lab.language import get_language, tr, tr_figure
from ctxlab.messages import text_of
from ctxlab.store import StoreWarning

__all__ = [
    "VALID_CASE",
    "build_parse_widget",
    "check_my_summary",
    "check_repaired_compaction",
    "corruption_styler",
    "corruption_table",
    "cost_figure",
    "draft_compaction",
    "parse_cases",
    "parse_verdict",
    "parse_view",
    "path_styler",
    "path_table",
    "preview",
    "store_text",
    "wire_json",
]

#: The name of the valid case in :func:`parse_verdict` (the widget's first choice).
VALID_CASE = "valid compact-1"

#: Chinese labels of the cases (keys stay English: they are the fixtures' names).
CASE_LABELS_ZH: Mapping[str, str] = {
    VALID_CASE: "合法的 compact-1",
    "files instead of changedFiles": "用 files 代替 changedFiles",
    "nextSteps instead of next": "用 nextSteps 代替 next",
    "invariants beside constraints": "constraints 旁多了 invariants",
    "compactedEntryIds on the entry": "entry 上多了 compactedEntryIds",
    "goal missing": "缺少 goal",
    "blank goal": "goal 为空白",
    "a decision that is not a string": "decisions 中有一项不是字符串",
    "blank firstKeptEntryId": "firstKeptEntryId 为空",
    "parentId null": "parentId 为 null",
    "negative tokensBefore": "tokensBefore 为负数",
    "tokensBefore is NaN": "tokensBefore 是 NaN",
    "tokensBefore is true": "tokensBefore 是 true",
}

#: Chinese column headers of this lab's tables (English names are the frames' own).
HEADERS_ZH: Mapping[str, str] = {
    "id": "id",
    "parent": "parent",
    "role": "角色",
    "text": "文本",
    "tool call ids": "tool call 的 id",
    "cost": "成本",
    "case": "情形",
    "error": "parser 的错误信息",
}


def case_label(case: str) -> str:
    """A case's name in the current language (the English name is the key)."""
    return tr(case, CASE_LABELS_ZH.get(case, case))


def _for_display(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its column headers in the current language (English: unchanged)."""
    return frame.rename(columns={c: tr(c, HEADERS_ZH.get(c, c)) for c in frame.columns})


# -- tables ----------------------------------------------------------------------------------------


def preview(text: str, width: int = 36) -> str:
    """One line of at most ``width`` characters (newlines shown as ⏎)."""
    flat = text.replace("\n", " ⏎ ")
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def path_table(
    path: Sequence[SessionEntry] | None = None, estimate: TokenEstimator | None = None
) -> pd.DataFrame:
    """One row per entry: id, parent, role (or entry type), text preview, tool call ids, cost.

    The cost is the estimator's price of the entry's message (default: the chapter's test
    estimator); entries that are not messages have no cost of their own (``"—"``).
    """
    price = default_estimator(estimate)
    rows: list[dict[str, object]] = []
    for entry in default_path(path):
        cost: int | float | str = "—"
        if isinstance(entry, MessageSessionEntry):
            text, cost = text_of(entry.message), price(entry.message)
        elif isinstance(entry, CompactionSessionEntry):
            text = tr(
                f"summary: {entry.summary.goal} (first kept: {entry.first_kept_entry_id})",
                f"摘要：{entry.summary.goal}（保留起点：{entry.first_kept_entry_id}）",
            )
        else:
            text = f"{entry.key} = {json.dumps(entry.value)}"
        rows.append(
            {
                "id": entry.id,
                "parent": entry.parent_id if entry.parent_id is not None else "—",
                "role": entry_kind(entry),
                "text": preview(text),
                "tool call ids": tool_ids(entry),
                "cost": cost,
            }
        )
    return pd.DataFrame(rows, columns=["id", "parent", "role", "text", "tool call ids", "cost"])


def path_styler(
    path: Sequence[SessionEntry] | None = None, estimate: TokenEstimator | None = None
) -> CourseTable:
    """:func:`path_table`, each row tinted with its interaction group's colour."""
    entries = default_path(path)
    frame = path_table(entries, estimate)
    try:
        numbers = group_numbers(entries)
    except CtxlabError:
        numbers = {}
    table = show(_for_display(frame), "path")
    table.apply(group_row_colours(numbers), axis=1)
    return table


def wire_json(entry: SessionEntry | Mapping[str, Any]) -> str:
    """An entry's wire form as pretty JSON, keys in the wire order."""
    wire = entry if isinstance(entry, Mapping) else entry.to_json()
    return json.dumps(wire, indent=2, ensure_ascii=False)


def parse_verdict(case: str) -> str:
    """What ``parse_session_entry`` says about ``compact-1`` or one of its corruptions.

    ``case`` is :data:`VALID_CASE` or a key of ``fixtures.compaction_corruptions()``.
    """
    corruptions = fixtures.compaction_corruptions()
    if case == VALID_CASE:
        wire: Mapping[str, Any] = fixtures.compact1().to_json()
    elif case in corruptions:
        wire = corruptions[case]
    else:
        known = ", ".join([VALID_CASE, *corruptions])
        return tr(
            f"unknown case {case!r}; pick one of: {known}",
            f"没有情形 {case!r}；可选：{known}",
        )
    try:
        entry = parse_session_entry(wire)
    except CtxlabError as error:
        return tr(f"rejected ✘ {error}", f"拒绝 ✘ {error_text(error)}")
    return tr(
        f"accepted ✔ {entry.type} entry {entry.id} (parent {entry.parent_id})",
        f"接受 ✔ {entry.type} entry {entry.id}（parent 为 {entry.parent_id}）",
    )


def corruption_table() -> pd.DataFrame:
    """Each corruption of ``compact-1`` and the parser's error message: the chapter's own
    (``files`` for ``changedFiles``) first, then ctxlab's (a ctxlab extension)."""
    rows = []
    for case, wire in fixtures.compaction_corruptions().items():
        try:
            parse_session_entry(wire)
        except CtxlabError as error:
            message = error_text(error)
        else:  # pragma: no cover - would mean the parser lets a corruption through
            message = tr("(accepted!)", "（竟然被接受了！）")
        rows.append({"case": case, "error": message})
    return pd.DataFrame(rows, columns=["case", "error"])


def corruption_styler() -> CourseTable:
    """:func:`corruption_table` as a course table: every error message whole, wrapped in its
    cell (the chapter's point is that the error names the entry and the field)."""
    frame = corruption_table()
    frame["case"] = [case_label(case) for case in frame["case"]]
    caption = tr(
        "parse_session_entry(corrupted compact-1)", "parse_session_entry(损坏的 compact-1)"
    )
    return show(_for_display(frame), "corruptions", caption)


# -- figure ----------------------------------------------------------------------------------------

#: The user-visible strings of :func:`cost_figure`, in one place: (English, Chinese).
COST_FIGURE_TEXT: Mapping[str, tuple[str, str]] = {
    "title": (
        "Each entry's cost, coloured by the group it will form",
        "每条 entry 的成本，按它将进入的组着色",
    ),
    "xlabel": ("entry (path order)", "entry（路径顺序）"),
    "ylabel": ("tokens (test estimator)", "token 数（测试估算器）"),
    "no_group": ("system: no group", "system：不属于任何组"),
    "group": ("group {n}: {cost:g}", "第 {n} 组：{cost:g}"),
}


@styled
def cost_figure(
    path: Sequence[SessionEntry] | None = None, estimate: TokenEstimator | None = None
) -> Figure:
    """One bar per message entry of the path: its cost under ``estimate`` (default: the
    chapter's test estimator), coloured by the interaction group ``group_interactions``
    puts it in. System messages belong to no group: grey, hatched."""
    text = {key: tr_figure(en, zh) for key, (en, zh) in COST_FIGURE_TEXT.items()}
    entries = [e for e in default_path(path) if isinstance(e, MessageSessionEntry)]
    price = default_estimator(estimate)
    numbers = group_numbers(entries)
    fig, ax = new_figure(FIGSIZE)
    for x, entry in enumerate(entries):
        cost = float(price(entry.message))
        number = numbers.get(entry.id)
        if number is None:
            style: dict[str, Any] = {"facecolor": "#DDDDDD", "edgecolor": PALETTE["grey"],
                                     "hatch": "..", "linewidth": 1.2}  # fmt: skip
        else:
            style = {"facecolor": group_colour(number), "edgecolor": PALETTE["black"],
                     "linewidth": 1.2}  # fmt: skip
        ax.bar(x, cost, width=0.75, **style)
        ax.text(x, cost + 0.1, f"{cost:g}", ha="center", va="bottom", fontsize=14)
    ax.set_xticks(range(len(entries)), [e.id for e in entries], rotation=0)
    top = max((float(price(e.message)) for e in entries), default=1.0)
    ax.set_ylim(0, top * 1.3 + 0.5)
    ax.set_xlabel(text["xlabel"])
    ax.set_ylabel(text["ylabel"])
    ax.set_title(text["title"], loc="left")
    handles = [Patch(facecolor="#DDDDDD", edgecolor=PALETTE["grey"], hatch="..",
                     label=text["no_group"])]  # fmt: skip
    for n in sorted(set(numbers.values())):
        total = sum(float(price(e.message)) for e in entries if numbers.get(e.id) == n)
        handles.append(Patch(facecolor=group_colour(n), edgecolor=PALETTE["black"],
                             label=text["group"].format(n=n, cost=total)))  # fmt: skip
    ax.legend(handles=handles, loc="upper left", ncols=len(handles), frameon=False,
              fontsize=14)  # fmt: skip
    return fig


# -- widget: pick a corruption, see the parser's verdict -------------------------------------------


def parse_cases() -> tuple[str, ...]:
    """The dropdown's choices: the valid ``compact-1`` first, then each corruption."""
    return (VALID_CASE, *fixtures.compaction_corruptions())


def parse_view(case: str) -> str:
    """What ``parse_session_entry`` says about the chosen case (pure)."""
    return parse_verdict(case)


def build_parse_widget() -> Any:
    """Dropdown "case" → the parser's verdict (class ``ctxlab-parse-verdict``)."""
    cases = parse_cases()
    options: list[Any] = (
        [(case_label(case), case) for case in cases] if get_language() == "zh" else list(cases)
    )
    dropdown = widgets.Dropdown(
        options=options,
        value=VALID_CASE,
        description=tr("case", "情形"),
        layout={"width": "480px"},
    )
    verdict = widgets.HTML(verdict_html(parse_view(dropdown.value)))
    verdict.add_class("ctxlab-parse-verdict")

    def update(_: object = None) -> None:
        verdict.value = verdict_html(parse_view(dropdown.value))

    dropdown.observe(update, names="value")
    return widget_box(
        [dropdown, verdict], controls={"case": dropdown}, outputs={"verdict": verdict}
    )


# -- self-checks -----------------------------------------------------------------------------------


_CHAPTER_COMPACTIONS = {"compact-1": fixtures.compact1, "compact-2": fixtures.compact2}


def _no_such_compaction(entry_id: str) -> str:
    return tr(
        f"no chapter compaction {entry_id!r}; use compact-1 or compact-2",
        f"本章没有 compaction {entry_id!r}；请用 compact-1 或 compact-2",
    )


def draft_compaction(entry_id: str = "compact-2") -> dict[str, Any]:
    """A chapter compaction written with old names: the chapter's early-draft ``files`` for
    ``changedFiles``, and ``nextSteps`` (an old name of ctxlab's migration exercise) for
    ``next`` (exercise 11.1-A repairs it). A fresh dict each call."""
    if entry_id not in _CHAPTER_COMPACTIONS:
        raise CtxlabError(_no_such_compaction(entry_id))
    wire = _CHAPTER_COMPACTIONS[entry_id]().to_json()
    summary = wire["summary"]
    wire["summary"] = {
        ("files" if key == "changedFiles" else "nextSteps" if key == "next" else key): value
        for key, value in summary.items()
    }
    return wire


def _refused(error: CtxlabError) -> Verdict:
    """The verdict when the parser refuses an exercise's answer: what ``friendly`` says, but
    with the parser's message in the notebook's language (``friendly`` shows the core's
    English message)."""
    return Verdict(
        False,
        tr("ctxlab rejected the answer", "parser 拒绝了这个答案"),
        f"{type(error).__name__}: {error_text(error)}",
        tr(
            "Read the message: it names the entry id, field or option at fault.",
            "读一读这条错误信息：它写明了出错的 entry id 和字段。",
        ),
    )


@exercise("repaired compaction", "迁移好的记录 repaired")
def check_repaired_compaction(answer: object, *, entry_id: str = "compact-1") -> Verdict:
    """Exercise 11.1-A: repair a chapter compaction written with old names (see
    :func:`draft_compaction`; ``entry_id`` is ``compact-1`` or ``compact-2``)."""
    if entry_id not in _CHAPTER_COMPACTIONS:
        raise CtxlabError(_no_such_compaction(entry_id))
    wire = as_mapping(answer, tr("the repaired record", "修复后的记录"))
    try:
        entry = parse_session_entry(wire)
    except CtxlabError as error:
        return _refused(error)
    expected = _CHAPTER_COMPACTIONS[entry_id]()
    if entry == expected:
        return Verdict(
            True,
            tr(
                f"the parser accepts it, and it is exactly {entry_id} again",
                f"parser 接受了它，而且它又恰好是 {entry_id}",
            ),
            tr(
                "The old names were migrated outside the parser; the parser stayed strict.",
                "旧字段名在 parser 之外完成了迁移；parser 本身仍然严格。",
            ),
        )
    differences = [
        name for name, value in expected.to_json().items() if entry.to_json().get(name) != value
    ]
    return Verdict(
        False,
        tr(
            f"the parser accepts it, but it is not the original {entry_id}",
            f"parser 接受了它，但它已不是原来的 {entry_id}",
        ),
        tr(
            f"These fields differ from {entry_id}: {', '.join(differences)}",
            f"这些字段与 {entry_id} 不同：{', '.join(differences)}",
        ),
        tr(
            "Only rename the fields: keep their values and change nothing else.",
            "只改字段名：保留它们的值，其他一概不动。",
        ),
    )


@exercise("my summary", "你写的摘要 my_summary")
def check_my_summary(answer: object) -> Verdict:
    """Exercise 11.1-B: write a seven-field summary of your own that the parser accepts."""
    summary = as_mapping(answer, tr("your summary", "你的摘要"))
    wire = fixtures.compact1().to_json()
    wire["summary"] = dict(summary)
    try:
        entry = parse_session_entry(wire)
    except CtxlabError as error:
        return _refused(error)
    assert entry.type == "compaction"
    if dict(summary) == fixtures.compact1_summary().to_json():
        return Verdict(
            False,
            tr("that is compact-1's own summary", "这是 compact-1 自己的摘要"),
            hint=tr(
                "Write a summary of your own: any goal, and six lists of strings.",
                "写一份你自己的摘要：goal 随意，再加六个字符串列表。",
            ),
        )
    items = sum(len(v) for v in summary.values() if isinstance(v, list))
    return Verdict(
        True,
        tr("the parser accepts your seven-field summary", "parser 接受了你的七字段摘要"),
        tr(
            f"goal: {entry.summary.goal!r}; {items} list items in six lists",
            f"goal：{entry.summary.goal!r}；六个列表共 {items} 项",
        ),
    )


# -- store messages (ctxlab extension: the torn last line) -----------------------------------------


def store_text(item: StoreWarning | CtxlabError) -> str:
    """A JSONL store's warning (``read().warnings``) or refusal (a ``SessionStoreError``) as
    the notebook shows it: the core's English message, or in the Chinese edition its Chinese
    rendering (:mod:`ctxlab.lab.errors_zh`; an unknown message stays English)."""
    if isinstance(item, StoreWarning):
        return tr(item.message, message_zh(item.message))
    return error_text(item)
