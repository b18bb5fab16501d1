"""Refuses a path whose last entry is not a message (here compact-2) instead of appending after it.

How a student gets here: every example in the lab appends the compaction after a3, an
assistant answer, so the student reads "the parent is the conversation's current leaf" as
"the parent must be a message" and adds a guard that refuses any other leaf. A second
compaction created right after compact-2 (or after a metadata entry) is then refused,
although its parent is simply the path's last entry, whatever its type.

The chapter (§ compact-1 记录摘要与保留起点): 「函数从 activePath.at(-1) 得到 parentId: "a3"。」
and (§ 恢复时把最新摘要接在保留后缀前面): 「第二次 compaction 使用同一个创建函数。假设 compact-2
保留 u3，它会追加在当时的 leaf 后面。」
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
    if path[-1].type != "message":
        raise CompactionError(
            f"compaction {id}: the leaf {path[-1].id} is not a message: nothing to compact after"
        )
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
    from ctxlab import fixtures

    # The recompacted path ends with compact-2; a third compaction keeps u4.
    return (fixtures.recompacted_path(),), {
        "id": "compact-3",
        "timestamp": 300,
        "summary": fixtures.compact2_summary(),
        "first_kept_entry_id": "u4",
        "tokens_before": 20,
    }
