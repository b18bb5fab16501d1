"""Swaps id and parentId: the leaf's id (a3) becomes the id, the caller's compact-1 the parent.

A student who reads 「让它的 parentId 指向当前末尾 a3」 keeps two ids in mind, the caller's
"compact-1" and the leaf's "a3", and fills the two id fields of the record the wrong way
round: the compaction "is" the point after a3, so it gets a3's id and points at the name the
caller gave.

The chapter's rule (§ compact-1 记录摘要与保留起点): 「函数从 activePath.at(-1) 得到
parentId: "a3"」, while id is the caller's: 「createCompactionEntry(activePath, { id:
"compact-1", ... })」.
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
        id=leaf.id,
        parent_id=id,
        timestamp=timestamp,
        summary=summary,
        first_kept_entry_id=first_kept_entry_id,
        tokens_before=tokens_before,
    )


def WITNESS():
    from ctxlab import fixtures

    return (fixtures.opening_path(),), {
        "id": "compact-1",
        "timestamp": 100,
        "summary": fixtures.compact1_summary(),
        "first_kept_entry_id": "u2",
        "tokens_before": 29,
    }
