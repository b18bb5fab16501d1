"""Sets parentId to the leaf's own parent_id (r-read) instead of the leaf's id (a3).

How a student gets here: the field to fill is called parentId, and the last entry of the
path has an attribute with the same name, so the student copies path[-1].parent_id --
confusing "the parent of the new entry" (the leaf) with "the parent of the leaf". The new
record then hangs beside a3 instead of after it.

The chapter's rule (§ compact-1 记录摘要与保留起点; § 摘要先成为 session 中的一条普通事实):
「函数从 activePath.at(-1) 得到 parentId: "a3"。」 and
「可以创建 compact-1，让它的 parentId 指向当前末尾 a3。」
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
        "parentId": path[-1].parent_id,
        "timestamp": timestamp,
        "summary": wire_summary,
        "firstKeptEntryId": first_kept_entry_id,
        "tokensBefore": tokens_before,
    }
    return parse_session_entry(candidate)


def WITNESS():
    from ctxlab import fixtures

    return (
        (fixtures.opening_path(),),
        {
            "id": "compact-1",
            "timestamp": 100,
            "summary": fixtures.compact1_summary(),
            "first_kept_entry_id": "u2",
            "tokens_before": 29,
        },
    )
