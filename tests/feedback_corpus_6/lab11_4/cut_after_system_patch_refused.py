"""Refuses a group head right after a system message on the path (u2 after patch-1, u1 after sys).

A student who reads 「裁剪位置只能落在 a1/u2 或 a2/u3 之间」 literally checks that the first kept
entry is a group head AND that the path entry right before it is not a system message (as if
the cut had to follow the end of a group), so a system patch between two groups makes the
next head unusable.

The chapter's rule (§ compact-1 记录摘要与保留起点): firstKeptEntryId 「只能指向一组的首条 user
message」, found with groupInteractions(), and (§ 两个 tool result 仍属于 u3 开始的同一组)
「system message 出现在两组之间时也一样跳过，不会切开或混入哪一组」; the chapter's own
system-patch path keeps from u2, right after patch-1 (§ system 状态跨过 compaction 边界).
"""

import math

from ctxlab import CompactionSessionEntry, CompactionSummary, group_interactions


def create_compaction_entry(
    active_path, *, id, timestamp, summary, first_kept_entry_id, tokens_before
):
    leaf = active_path[-1]  # an empty path has no leaf (IndexError)
    messages = [entry for entry in active_path if entry.type == "message"]
    heads = [group.entries[0].id for group in group_interactions(messages)]
    if first_kept_entry_id not in heads:
        raise ValueError(f"{first_kept_entry_id!r} is not the first message of an interaction")
    index = [entry.id for entry in active_path].index(first_kept_entry_id)
    before = active_path[index - 1] if index > 0 else None
    if before is not None and before.type == "message" and before.message.role == "system":
        raise ValueError(f"{first_kept_entry_id!r} does not follow the end of an interaction")
    where = f"compaction {id}"
    if not isinstance(id, str):
        raise ValueError(f"{where}: id must be a string")
    if isinstance(timestamp, bool) or not isinstance(timestamp, (int, float)):
        raise ValueError(f"{where}: timestamp must be a number")
    if (
        isinstance(tokens_before, bool)
        or not isinstance(tokens_before, (int, float))
        or (isinstance(tokens_before, float) and not math.isfinite(tokens_before))
        or tokens_before < 0
    ):
        raise ValueError(f"{where}: tokensBefore must be a finite number >= 0")
    if not isinstance(summary, CompactionSummary):
        raise ValueError(f"{where}: summary must be a CompactionSummary")
    if not isinstance(summary.goal, str) or summary.goal == "":
        raise ValueError(f"{where}: summary.goal must not be empty")
    return CompactionSessionEntry(
        id=id,
        parent_id=leaf.id,
        timestamp=timestamp,
        summary=summary,
        first_kept_entry_id=first_kept_entry_id,
        tokens_before=tokens_before,
    )


def WITNESS():
    from ctxlab import fixtures

    head = fixtures.system_patch_path()[:6]  # sys, u1, a1, patch-1, u2, a2
    return (head,), {
        "id": "compact-1",
        "timestamp": 100,
        "summary": fixtures.compact1_summary(),
        "first_kept_entry_id": "u2",
        "tokens_before": 20,
    }
