"""Truncates the caller's timestamp with int(), so a timestamp of 100.5 is recorded as 100.

A student who thinks of timestamps as whole milliseconds "cleans" the value before building
the record, the way Date.now() values look, instead of recording the number the caller gave.

The chapter's rule (§ 摘要先成为 session 中的一条普通事实 and § compact-1 记录摘要与保留起点):
the record's field is 「timestamp: number」 and it is the caller's, passed in the call
「createCompactionEntry(activePath, { id: "compact-1", timestamp: 100, ... })」; the function
only derives parentId from the path.
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
        timestamp=int(timestamp),
        summary=summary,
        first_kept_entry_id=first_kept_entry_id,
        tokens_before=tokens_before,
    )


def WITNESS():
    from ctxlab import fixtures

    return (fixtures.opening_path(),), {
        "id": "compact-1",
        "timestamp": 100.5,
        "summary": fixtures.compact1_summary(),
        "first_kept_entry_id": "u2",
        "tokens_before": 29,
    }
