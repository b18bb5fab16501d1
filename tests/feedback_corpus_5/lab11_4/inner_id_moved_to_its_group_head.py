"""Moves a first kept id inside a group to its group's head (a2 becomes u2) instead of refusing it.

How a student gets here: the student understands that a cut may only fall between groups,
but reads the rule as something the function should make true rather than check: when the
caller names an entry inside a group, it "helpfully" keeps from the start of that group, so
no tool round trip is cut. The caller asked for a2 and silently gets a compaction keeping
u2; only an id that belongs to no group is refused.

The chapter (§ compact-1 记录摘要与保留起点): 「它是恢复上下文时保留原消息的起点，只能指向一组的
首条 user message。u2 合法；a2、calls、r-test 都位于组内，不能成为切点。」
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
    heads = {e.id: g.entries[0].id for g in groups for e in g.entries}
    if first_kept_entry_id not in heads:
        raise CompactionError(
            f"compaction {id}: firstKeptEntryId {first_kept_entry_id!r} is not the first"
            " message of a whole interaction"
        )
    first_kept_entry_id = heads[first_kept_entry_id]  # keep the whole group it is in
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
        "first_kept_entry_id": "a2",
        "tokens_before": 29,
    }
