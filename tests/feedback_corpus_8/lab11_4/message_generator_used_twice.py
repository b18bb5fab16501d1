"""Searches a generator of messages with any() before grouping it, so grouping starts at a2.

How a student gets there: they write the message filter as a generator expression, then add
a quick "is the first kept id on the path at all?" test with `any()` over it before calling
group_interactions. `any()` stops at u2 and leaves the generator there, so group_interactions
sees a2 first and refuses the path: the chapter's own compact-1 (keeping u2) cannot be created.

The chapter's rule (§ compact-1 记录摘要与保留起点): 「u2 合法」 and 「函数复用 groupInteractions()
找到这些组首」: the groups are those of all the path's messages.
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
    messages = (e for e in path if e.type == "message")
    if not any(e.id == first_kept_entry_id for e in messages):
        raise CompactionError(f"compaction {id}: {first_kept_entry_id!r} is not on the path")
    groups = group_interactions(list(messages))
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
    from ctxlab import fixtures

    path = fixtures.opening_path()
    return (path,), {
        "id": "compact-1",
        "timestamp": 100,
        "summary": fixtures.compact1_summary(),
        "first_kept_entry_id": "u2",
        "tokens_before": 29,
    }
