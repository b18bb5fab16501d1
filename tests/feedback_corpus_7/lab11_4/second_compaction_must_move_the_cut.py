"""Refuses a second compaction that keeps from the previous compaction's firstKeptEntryId.

compact-2 keeping from u2, as compact-1 does, is refused, as if the cut had to move forward.

The student thought a new compaction that keeps from the same place as the last one summarises
nothing new, and refused it (the boundary case: the same group head, not an earlier one).

The rule it breaks (§ compact-1 记录摘要与保留起点 / § 恢复时把最新摘要接在保留后缀前面):
the only condition on the cut is that it 「只能指向一组的首条 user message」, and 「第二次
compaction 使用同一个创建函数」; u2 still starts a whole interaction of the resumed path.
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
    for entry in reversed(path):
        if entry.type == "compaction":
            heads.discard(entry.first_kept_entry_id)
            break
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
    """compact-2 on the resumed path, keeping from u2 like compact-1."""
    from ctxlab import fixtures

    return (fixtures.resumed_path(),), dict(
        id="compact-2",
        timestamp=200,
        summary=fixtures.compact2_summary(),
        first_kept_entry_id="u2",
        tokens_before=33,
    )
