"""Lets an empty first_kept_entry_id default to the first group's head instead of refusing it.

How a student gets here: the student reads firstKeptEntryId as "where the kept part
starts" and gives it a friendly default — no cut given, keep from the first interaction —
with the usual `first_kept_entry_id or …`. But `or` replaces every falsy value, so an empty
id "" is not refused: it silently becomes u1 and a compaction that keeps everything is
recorded.

The chapter (§摘要先成为 session 中的一条普通事实): 「goal、parentId 和 firstKeptEntryId 不能为
空」; (§compact-1 记录摘要与保留起点): 「只能指向一组的首条 user message」 — the cut is the
caller's to give, and an empty one is refused, not replaced.
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
    if not path:
        raise CompactionError(f"compaction {id}: the active path is empty: no leaf to append after")
    if any(entry.id == id for entry in path):
        raise CompactionError(f"compaction {id}: the id {id} is already on the path")
    groups = group_interactions([e for e in path if e.type == "message"])
    heads = {g.entries[0].id for g in groups}
    first_kept_entry_id = first_kept_entry_id or groups[0].entries[0].id
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
    from ctxlab import fixtures

    return (fixtures.opening_path(),), {
        "id": "compact-1",
        "timestamp": 100,
        "summary": fixtures.compact1_summary(),
        "first_kept_entry_id": "",
        "tokens_before": 29,
    }
