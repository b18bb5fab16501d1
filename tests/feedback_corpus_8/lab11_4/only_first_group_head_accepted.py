"""Puts the refusal in the `if`'s else inside the loop: only u1 is accepted, u2 refused.

How a student gets there: they replace the set lookup with a loop over the groups that stops
when a head matches, and write the refusal as the `else` of the `if` instead of the `else`
of the `for`. The loop then refuses as soon as the first group's head (u1) is not the one
asked for, so the chapter's own example (compact-1 keeping u2) is refused.

The chapter's rule (§ compact-1 记录摘要与保留起点): 「firstKeptEntryId 的含义和 parent 不同。
它是恢复上下文时保留原消息的起点，只能指向 一组的首条 user message。u2 合法；a2、calls、r-test
都位于组内，不能成为 切点。」 Any group's head is a legal cut point, not only the first one's.
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
    for g in groups:
        if g.entries[0].id == first_kept_entry_id:
            break
        else:
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
