"""Looks for the summary's `toJSON` (JS's name) with getattr, so a CompactionSummary is refused.

The student ported the JSON.stringify convention "an object with a toJSON() method knows its
own wire form" as `getattr(summary, "toJSON", None)`, optional-chaining style. ctxlab's method
is `to_json`; the getattr finds nothing, the summary object is deep-copied as it is, and the
parser refuses it (a summary must be an object with the seven fields), so the chapter's own
call with a CompactionSummary fails. A dict summary still works.

The chapter's rule it breaks (§ compact-1 记录摘要与保留起点):
「调用者准备好 结构化 summary 后，再调用：」 createCompactionEntry with that summary, the
entry's field being 「summary: CompactionSummary;」 (§ 摘要先成为 session 中的一条普通事实).
"""

import copy

from ctxlab import (
    CompactionError,
    group_interactions,  # Lab 11.2's reference
    parse_session_entry,  # Lab 11.1's reference: the strict parser
)


def create_compaction_entry(
    active_path, *, id, timestamp, summary, first_kept_entry_id, tokens_before
):
    path = list(active_path)
    if not path:
        raise CompactionError(f"compaction {id}: the active path is empty: no leaf to append after")
    if any(entry.id == id for entry in path):
        raise CompactionError(f"compaction {id}: the id {id} is already on the path")
    groups = group_interactions([e for e in path if e.type == "message"])
    heads = {g.entries[0].id for g in groups}
    if first_kept_entry_id not in heads:
        raise CompactionError(
            f"compaction {id}: firstKeptEntryId {first_kept_entry_id!r} is not the first"
            " message of a whole interaction"
        )
    to_json = getattr(summary, "toJSON", None)
    if to_json is not None:  # noqa: SIM108
        wire_summary = to_json()
    else:
        wire_summary = copy.deepcopy(summary)
    candidate = {
        "type": "compaction",
        "id": id,
        "parentId": path[-1].id,
        "timestamp": timestamp,
        "summary": wire_summary,
        "firstKeptEntryId": first_kept_entry_id,
        "tokensBefore": tokens_before,
    }
    return parse_session_entry(candidate)


# --- the input on which this function and ctxlab's reference differ ---


def WITNESS():
    """The chapter's own call, with compact-1's CompactionSummary object."""
    from ctxlab import fixtures

    options = dict(
        id="compact-1",
        timestamp=100,
        summary=fixtures.compact1_summary(),
        first_kept_entry_id="u2",
        tokens_before=29,
    )
    return (fixtures.opening_path(),), options
