"""Refuses a one-entry path (`len(path) < 2`), as if a compaction needed two entries.

How a student gets there: they reason that the new entry needs a parent and, besides it,
something to summarise, and write the emptiness check as `len(path) < 2`. A path holding
one user message (the root u1, a whole interaction still waiting for its answer) has a leaf
to append after and a group head to keep from, yet is refused.

The chapter's rule (§ 摘要先成为 session 中的一条普通事实): 「它是一条追加到当前 leaf 后面的
CompactionSessionEntry」, and (§ compact-1 记录摘要与保留起点) 「函数从 activePath.at(-1) 得到
parentId」: any non-empty path has a leaf; only an empty one has none.
"""

import copy

from ctxlab import (
    CompactionError,
    CompactionSummary,
    group_interactions,  # Lab 11.2's reference
    parse_session_entry,  # Lab 11.1's reference: the strict parser
)


def create_compaction_entry(
    active_path, *, id, timestamp, summary, first_kept_entry_id, tokens_before
):
    path = list(active_path)
    if len(path) < 2:
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
    if isinstance(summary, CompactionSummary):
        wire_summary = summary.to_json()
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


def WITNESS():
    from ctxlab import MessageSessionEntry, fixtures

    u1 = fixtures.opening_path()[1]
    root = MessageSessionEntry(u1.id, None, u1.timestamp, u1.message)
    return ([root],), {
        "id": "compact-1",
        "timestamp": 100,
        "summary": fixtures.compact1_summary(),
        "first_kept_entry_id": "u1",
        "tokens_before": 3,
    }
