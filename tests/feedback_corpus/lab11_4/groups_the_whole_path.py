"""Groups the whole path, compaction entries included, instead of its message entries only.

The student passed the active path straight to group_interactions; on a path that already
holds a compaction the grouping refuses it.

The chapter's rule it breaks (§ 恢复时把最新摘要接在保留后缀前面):
「第二次 compaction 使用同一个创建函数。假设 compact-2 保留 u3，
它会追加在当时的 leaf 后面。」；「groupInteractions() 接收活动路径中的
message entries。」
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
    groups = group_interactions(path)
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


# --- the input on which this function and ctxlab's reference differ ---


def WITNESS():
    """compact-2 keeping u3, on the path that already holds compact-1."""
    from ctxlab import fixtures

    path = fixtures.resumed_path()
    options = dict(
        id="compact-2",
        timestamp=200,
        summary=fixtures.compact2_summary(),
        first_kept_entry_id="u3",
        tokens_before=33,
    )
    return (path,), options
