"""Lab 11.4 "compact-1 记录摘要与保留起点": the teaching layer of notebook
``11.4-create-compaction.ipynb``.

Every verdict here is what ``create_compaction_entry`` itself answered, never a rule
re-checked: :func:`first_kept_figure` (tokens kept against tokens summarised, for every legal
first kept id) and the self-checks.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ctxlab import fixtures
from ctxlab.compaction import create_compaction_entry
from ctxlab.context import resume_candidates
from ctxlab.entries import CompactionSessionEntry, CompactionSummary, SessionEntry
from ctxlab.errors import CtxlabError
from ctxlab.interactions import message_entries
from ctxlab.lab.checks import Verdict, exercise, id_list
from ctxlab.lab.display import (
    DROPPED,
    FIGSIZE,
    KEPT,
    PALETTE,
    TokenEstimator,
    default_estimator,
    default_path,
    new_figure,
    styled,
)
from ctxlab.lab.errors_zh import error_text
from ctxlab.lab.language import figure_language, tr
from ctxlab.messages import SystemMessage
from ctxlab.store import InMemorySessionStore

__all__ = [
    "check_compact2",
    "check_store_count",
    "check_valid_first_kept",
    "first_kept_figure",
]


# -- the first kept entry --------------------------------------------------------------------------


def _try_first_kept(
    path: Sequence[SessionEntry], entry_id: str, compaction_id: str
) -> CompactionSessionEntry | CtxlabError:
    try:
        return create_compaction_entry(
            path,
            id=compaction_id,
            timestamp=100,
            summary=fixtures.compact1_summary(),
            first_kept_entry_id=entry_id,
            tokens_before=29,
        )
    except CtxlabError as error:
        return error


def _first_kept_costs(
    path: Sequence[SessionEntry] | None, estimate: TokenEstimator | None
) -> pd.DataFrame:
    """For each legal first kept id of ``path``: the conversation's tokens a resume keeps
    (the original messages from that id on) and those the summary stands in for."""
    entries = default_path(path)
    price = default_estimator(estimate)
    conversation = [e for e in message_entries(entries) if not isinstance(e.message, SystemMessage)]
    rows = []
    for entry in entries:
        outcome = _try_first_kept(entries, entry.id, "compact-1")
        if isinstance(outcome, CtxlabError):
            continue
        _, candidates = resume_candidates([*entries, outcome])
        kept_ids = {c.id for c in candidates}
        kept = sum((price(e.message) for e in conversation if e.id in kept_ids), start=0)
        summarised = sum((price(e.message) for e in conversation if e.id not in kept_ids), start=0)
        rows.append({"first kept": entry.id, "kept tokens": kept, "summarised tokens": summarised})
    return pd.DataFrame(rows, columns=["first kept", "kept tokens", "summarised tokens"])


#: The user-visible strings of :func:`first_kept_figure`, in one place.
FIRST_KEPT_FIGURE_TEXT = {
    "title": "Each legal first kept id: tokens kept vs summarised",
    "ylabel": "firstKeptEntryId",
    "xlabel": "tokens of the conversation (system replayed apart)",
    "kept": "kept: original messages",
    "summarised": "summarised: the summary stands in",
}
#: :data:`FIRST_KEPT_FIGURE_TEXT` in Chinese (drawn when figures are Chinese).
FIRST_KEPT_FIGURE_TEXT_ZH = {
    "title": "每个合法的保留起点：保留的 token 与摘要替代的 token",
    "ylabel": "firstKeptEntryId",
    "xlabel": "对话的 token（system 另行重放）",
    "kept": "保留：原消息",
    "summarised": "摘要替代：这部分由摘要代替",
}


@styled
def first_kept_figure(
    path: Sequence[SessionEntry] | None = None, estimate: TokenEstimator | None = None
) -> Figure:
    """One bar per legal first kept id: the summarised tokens
    (hatched) then the kept tokens (solid), so the bars all end at the conversation's
    total."""
    text = FIRST_KEPT_FIGURE_TEXT
    if figure_language() == "zh":
        text = FIRST_KEPT_FIGURE_TEXT_ZH
    frame = _first_kept_costs(path, estimate)
    fig, ax = new_figure(FIGSIZE)
    ids = list(frame["first kept"])
    for row, (kept, summarised) in enumerate(
        zip(frame["kept tokens"], frame["summarised tokens"], strict=True)
    ):
        y = len(ids) - 1 - row
        ax.barh(y, summarised, height=0.6, **DROPPED)  # type: ignore[arg-type]
        ax.barh(y, kept, left=summarised, height=0.6, **KEPT)  # type: ignore[arg-type]
        if summarised:
            ax.text(summarised / 2, y, f"{summarised:g}", ha="center", va="center", fontsize=14,
                    bbox={"facecolor": "#FFFFFF", "edgecolor": "none", "pad": 1})  # fmt: skip
        ax.text(summarised + kept / 2, y, f"{kept:g}", ha="center", va="center", fontsize=14,
                color="#FFFFFF", fontweight="bold")  # fmt: skip
    ax.set_yticks(range(len(ids)), list(reversed(ids)))
    total = max((k + s for k, s in zip(frame["kept tokens"], frame["summarised tokens"],
                                      strict=True)), default=1)  # fmt: skip
    ax.set_xlim(0, total * 1.02)
    ax.set_ylim(-0.6, len(ids) - 0.4)
    ax.set_ylabel(text["ylabel"])
    ax.set_xlabel(text["xlabel"])
    ax.set_title(text["title"], loc="left")
    fig.legend(
        handles=[
            Patch(**KEPT, label=text["kept"]),  # type: ignore[arg-type]
            Patch(**DROPPED, label=text["summarised"]),  # type: ignore[arg-type]
        ],
        loc="outside lower center",
        ncols=2,
        frameon=False,
    )
    ax.spines["left"].set_color(PALETTE["black"])
    return fig


# -- self-checks -----------------------------------------------------------------------------------


@exercise("valid first kept", "可作保留起点的 id 集合")
def check_valid_first_kept(answer: object) -> Verdict:
    """Exercise: the set of opening-path ids that ``create_compaction_entry`` accepts as
    ``first_kept_entry_id``."""
    chosen = set(id_list(answer, tr("your first kept ids", "你给出的保留起点")))
    path = fixtures.opening_path()
    tried = {
        entry_id: _try_first_kept(path, entry_id, "compact-1")
        for entry_id in [*(e.id for e in path), *sorted(chosen - {e.id for e in path})]
    }
    valid = {entry_id for entry_id, got in tried.items() if not isinstance(got, CtxlabError)}
    if chosen == valid:
        listed = ", ".join(sorted(valid))
        return Verdict(
            True,
            tr(
                f"exactly {listed} can be the first kept entry",
                f"恰好只有 {listed} 可以作为保留起点",
            ),
            tr(
                "Each starts a whole interaction, so keeping from it never separates a tool call"
                " from its result.",
                "它们都是一组的首条 user message：从组首开始保留，整组原样留下，"
                "工具往返不会被切开。",
            ),
        )
    wrong = sorted(chosen - valid)
    missing = sorted(valid - chosen)
    details = []
    if wrong:
        refused = tried[wrong[0]]
        why = error_text(refused) if isinstance(refused, CtxlabError) else ""
        details.append(
            tr(
                f"Not valid: {', '.join(wrong)}. For example: {why}",
                f"不合法：{', '.join(wrong)}。例如：{why}",
            )
        )
    if missing:
        details.append(
            tr(
                f"Missing: {', '.join(missing)} is also accepted.",
                f"漏掉了：{', '.join(missing)} 也会被接受。",
            )
        )
    return Verdict(
        False,
        tr(
            "that is not the set create_compaction_entry accepts",
            "这不是 create_compaction_entry 接受的那组 id",
        ),
        "\n".join(details),
        tr(
            "A first kept entry must be the user message that opens an interaction group.",
            "保留起点只能是一组的首条 user message。",
        ),
    )


@exercise("store count", "Store 里的 entry 条数")
def check_store_count(after_create: object, after_append: object) -> Verdict:
    """Exercise: how many entries the store holds after ``create_compaction_entry`` and after
    ``store.append(compact1)``, starting from the ten opening entries."""
    counts = []
    for value in (after_create, after_append):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(
                tr(
                    f"expected a whole number of entries, got {value!r}",
                    f"这里应当是 entry 的条数（整数），实际是 {value!r}",
                )
            )
        counts.append(value)
    path = fixtures.opening_path()
    store = InMemorySessionStore(path)
    entry = fixtures.compact1(path)
    expected_create = len(store.entries())
    store.append(entry)
    expected_append = len(store.entries())
    if counts == [expected_create, expected_append]:
        return Verdict(
            True,
            tr(
                f"{expected_create} entries after creating, {expected_append} after the append",
                f"创建之后有 {expected_create} 条 entry，append 之后有 {expected_append} 条",
            ),
            tr(
                "create_compaction_entry is pure; only the explicit store.append writes.",
                "create_compaction_entry 是纯函数；只有显式调用的 store.append 才会写入。",
            ),
        )
    if counts[0] != expected_create:
        return Verdict(
            False,
            tr(
                f"after create_compaction_entry the store does not hold {counts[0]} entries",
                f"create_compaction_entry 之后，Store 里并不是 {counts[0]} 条 entry",
            ),
            "",
            tr(
                "Does create_compaction_entry receive the store at all?",
                "create_compaction_entry 究竟有没有拿到 Store？",
            ),
        )
    return Verdict(
        False,
        tr(
            f"after store.append the store does not hold {counts[1]} entries",
            f"store.append 之后，Store 里并不是 {counts[1]} 条 entry",
        ),
        "",
        tr(
            "An append adds one new entry; nothing older is removed.",
            "一次 append 只加入一条新 entry，旧的 entry 一条也不会删除。",
        ),
    )


def _compaction_hint(expected: CompactionSessionEntry) -> str:
    """Where the right values stand: the chapter's call for compact-1; for compact-2 the
    chapter gives only the first kept entry (u3), the exercise gives the rest (ctxlab's)."""
    if expected.id == "compact-1":
        return tr(
            "Re-read the call in the chapter: id, timestamp, summary, firstKeptEntryId"
            " and tokensBefore; parentId is derived from the path.",
            "重读本章里的调用：id、timestamp、summary、firstKeptEntryId 和"
            " tokensBefore；parentId 由路径推出。",
        )
    return tr(
        f"The chapter gives only compact-2's first kept entry ({expected.first_kept_entry_id});"
        f" the exercise gives the rest (ctxlab's): id {expected.id!r}, timestamp"
        f" {expected.timestamp}, tokens_before={expected.tokens_before} and the summary, on"
        " fixtures.resumed_path(). Pass no parent: it is the path's last entry.",
        f"本章只给出 compact-2 的保留起点（{expected.first_kept_entry_id}）；其余的值由练习给出"
        f"（ctxlab 的）：id {expected.id!r}、timestamp {expected.timestamp}、"
        f"tokens_before={expected.tokens_before} 和 summary，路径用 fixtures.resumed_path()。"
        "不要传 parent：它就是路径的最后一条 entry。",
    )


def _check_chapter_compaction(
    entry: object, expected: CompactionSessionEntry, summary_name: str
) -> Verdict:
    """Compare a student's entry with compact-1 (the chapter's) or compact-2 (ctxlab's: the
    chapter gives only its first kept entry, u3), field by field."""
    whose_en, whose_zh = (
        ("the chapter's", "本章的") if expected.id == "compact-1" else ("ctxlab's", "ctxlab 的")
    )
    if not isinstance(entry, CompactionSessionEntry):
        kind = type(entry).__name__
        return Verdict(
            False,
            tr(
                f"expected a CompactionSessionEntry, got {kind}",
                f"应当是 CompactionSessionEntry，得到的却是 {kind}",
            ),
            "",
            tr(
                "Assign the value returned by create_compaction_entry(...).",
                "把 create_compaction_entry(...) 的返回值赋给这个变量。",
            ),
        )
    for label, got, want in (
        ("id", entry.id, expected.id),
        ("parentId", entry.parent_id, expected.parent_id),
        ("timestamp", entry.timestamp, expected.timestamp),
        ("firstKeptEntryId", entry.first_kept_entry_id, expected.first_kept_entry_id),
        ("tokensBefore", entry.tokens_before, expected.tokens_before),
    ):
        if got != want:
            return Verdict(
                False,
                tr(
                    f"{label} is {got!r}; {whose_en} {expected.id} has {want!r}",
                    f"{label} 是 {got!r}；{whose_zh} {expected.id} 是 {want!r}",
                ),
                "",
                _compaction_hint(expected),
            )
    summary: CompactionSummary = entry.summary
    if summary != expected.summary:
        return Verdict(
            False,
            tr(
                f"the summary differs from fixtures.{summary_name}()",
                f"summary 和 fixtures.{summary_name}() 不一样",
            ),
            "",
            tr(
                f"Pass summary=fixtures.{summary_name}().",
                f"传入 summary=fixtures.{summary_name}()。",
            ),
        )
    if expected.id == "compact-1":
        title = tr(f"this is the chapter's {expected.id}", f"这正是本章的 {expected.id}")
    else:  # the chapter gives compact-2's first kept entry (u3) only; the rest is ctxlab's
        title = tr(
            f"this is ctxlab's {expected.id}: the chapter gives only its first kept entry,"
            f" {expected.first_kept_entry_id}",
            f"这就是 ctxlab 的 {expected.id}：本章只给出它的保留起点"
            f" {expected.first_kept_entry_id}",
        )
    return Verdict(
        True,
        title,
        tr(
            f"parentId {expected.parent_id} came from the path's last entry; you never passed it.",
            f"parentId {expected.parent_id} 来自路径的最后一条 entry；你并没有传入它。",
        ),
    )


@exercise("compact2", "compact-2")
def check_compact2(entry: object) -> Verdict:
    """Exercise 11.4-2: the second compaction, ``compact-2``, on the resumed path (the
    chapter gives only its first kept entry, ``u3``; the rest is ctxlab's)."""
    return _check_chapter_compaction(entry, fixtures.compact2(), "compact2_summary")
