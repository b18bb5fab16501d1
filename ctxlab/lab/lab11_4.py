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
from ctxlab.entries import CompactionSessionEntry, SessionEntry
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
from ctxlab.lab.language import Texts, tr
from ctxlab.messages import SystemMessage
from ctxlab.store import InMemorySessionStore

say = Texts("lab11_4")

__all__ = [
    "check_compact2",
    "check_store_count",
    "check_valid_first_kept",
    "first_kept_costs",
    "first_kept_figure",
    "try_first_kept",
]


def try_first_kept(
    path: Sequence[SessionEntry], entry_id: str
) -> CompactionSessionEntry | CtxlabError:
    """compact-1 on ``path`` with ``entry_id`` as its first kept entry, or the error
    ``create_compaction_entry`` raised for it."""
    try:
        return create_compaction_entry(
            path,
            id="compact-1",
            timestamp=100,
            summary=fixtures.compact1_summary(),
            first_kept_entry_id=entry_id,
            tokens_before=29,
        )
    except CtxlabError as error:
        return error


def first_kept_costs(
    path: Sequence[SessionEntry] | None = None, estimate: TokenEstimator | None = None
) -> pd.DataFrame:
    """For each legal first kept id of ``path``: the conversation's tokens a resume keeps
    (the original messages from that id on) and those the summary stands in for."""
    entries = default_path(path)
    price = default_estimator(estimate)
    conversation = [e for e in message_entries(entries) if not isinstance(e.message, SystemMessage)]
    rows = []
    for entry in entries:
        outcome = try_first_kept(entries, entry.id)
        if isinstance(outcome, CtxlabError):
            continue
        _, candidates = resume_candidates([*entries, outcome])
        kept_ids = {c.id for c in candidates}
        kept = sum((price(e.message) for e in conversation if e.id in kept_ids), start=0)
        summarised = sum((price(e.message) for e in conversation if e.id not in kept_ids), start=0)
        rows.append({"first kept": entry.id, "kept tokens": kept, "summarised tokens": summarised})
    return pd.DataFrame(rows, columns=["first kept", "kept tokens", "summarised tokens"])


@styled
def first_kept_figure(
    path: Sequence[SessionEntry] | None = None, estimate: TokenEstimator | None = None
) -> Figure:
    """One bar per legal first kept id: the summarised tokens (hatched) then the kept tokens
    (solid), so the bars all end at the conversation's total."""
    frame = first_kept_costs(path, estimate)
    fig, ax = new_figure(FIGSIZE)
    ids = list(frame["first kept"])
    pairs = list(zip(frame["kept tokens"], frame["summarised tokens"], strict=True))
    for row, (kept, summarised) in enumerate(pairs):
        y = len(ids) - 1 - row
        ax.barh(y, summarised, height=0.6, **DROPPED)  # type: ignore[arg-type]
        ax.barh(y, kept, left=summarised, height=0.6, **KEPT)  # type: ignore[arg-type]
        if summarised:
            ax.text(summarised / 2, y, f"{summarised:g}", ha="center", va="center", fontsize=14,
                    bbox={"facecolor": "#FFFFFF", "edgecolor": "none", "pad": 1})  # fmt: skip
        ax.text(summarised + kept / 2, y, f"{kept:g}", ha="center", va="center", fontsize=14,
                color="#FFFFFF", fontweight="bold")  # fmt: skip
    ax.set_yticks(range(len(ids)), list(reversed(ids)))
    total = max((k + s for k, s in pairs), default=1)
    ax.set_xlim(0, total * 1.02)
    ax.set_ylim(-0.6, len(ids) - 0.4)
    ax.set_ylabel(say.figure("first_kept_ylabel"))
    ax.set_xlabel(say.figure("first_kept_xlabel"))
    ax.set_title(say.figure("first_kept_title"), loc="left")
    fig.legend(
        handles=[
            Patch(**KEPT, label=say.figure("first_kept_kept")),  # type: ignore[arg-type]
            Patch(**DROPPED, label=say.figure("first_kept_summarised")),  # type: ignore[arg-type]
        ],
        loc="outside lower center",
        ncols=2,
        frameon=False,
    )
    ax.spines["left"].set_color(PALETTE["black"])
    return fig


@exercise("valid first kept", "可作保留起点的 id 集合")
def check_valid_first_kept(answer: object) -> Verdict:
    """Exercise: the set of opening-path ids that ``create_compaction_entry`` accepts as
    ``first_kept_entry_id``."""
    chosen = set(id_list(answer, tr("your first kept ids", "你给出的保留起点")))
    valid = set(first_kept_costs()["first kept"])
    if chosen == valid:
        listed = ", ".join(sorted(valid))
        return Verdict(
            True,
            say("exactly_can_be_the_first", listed=listed),
            say("each_starts_a_whole_interaction"),
        )
    wrong = sorted(chosen - valid)
    missing = sorted(valid - chosen)
    details = []
    if wrong:
        refused = try_first_kept(fixtures.opening_path(), wrong[0])
        why = error_text(refused) if isinstance(refused, CtxlabError) else ""
        details.append(say("not_valid_for_example", wrong=", ".join(wrong), why=why))
    if missing:
        details.append(say("missing_is_also_accepted", missing=", ".join(missing)))
    return Verdict(
        False, say("that_is_not_the_set"), "\n".join(details), say("a_first_kept_entry_must")
    )


@exercise("store count", "Store 里的 entry 条数")
def check_store_count(after_create: object, after_append: object) -> Verdict:
    """Exercise: how many entries the store holds after ``create_compaction_entry`` and after
    ``store.append(compact1)``, starting from the ten opening entries."""
    counts = []
    for value in (after_create, after_append):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(say("expected_a_whole_number_of", value=value))
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
            say(
                "entries_after_creating_after_the",
                expected_create=expected_create,
                expected_append=expected_append,
            ),
            say("create_compaction_entry_is_pure"),
        )
    if counts[0] != expected_create:
        return Verdict(
            False,
            say("after_create_compaction_entry_the", count=counts[0]),
            "",
            say("does_create_compaction_entry_receive"),
        )
    return Verdict(
        False,
        say("after_store_append_the_store", count=counts[1]),
        "",
        say("an_append_adds_one_new"),
    )


@exercise("compact2", "compact-2")
def check_compact2(entry: object) -> Verdict:
    """Exercise 11.4-2: the second compaction, ``compact-2``, on the resumed path, compared
    field by field (the chapter gives only its first kept entry, ``u3``; the rest is ctxlab's)."""
    expected = fixtures.compact2()
    if not isinstance(entry, CompactionSessionEntry):
        kind = type(entry).__name__
        return Verdict(
            False,
            say("expected_a_compactionsessionentry_got", kind=kind),
            "",
            say("assign_the_value_returned_by"),
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
                say("field_differs", label=label, got=got, expected=expected, want=want),
                "",
                say("the_chapter_gives_only_compact", expected=expected),
            )
    if entry.summary != expected.summary:
        return Verdict(
            False,
            say("the_summary_differs_from_fixtures"),
            "",
            say("pass_summary_fixtures"),
        )
    title = say("this_is_ctxlab_s_the", expected=expected)
    return Verdict(True, title, say("parentid_came_from_the_path", expected=expected))
