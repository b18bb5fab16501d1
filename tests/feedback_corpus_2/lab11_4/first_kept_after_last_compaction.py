"""Accepts as first kept entry only a group head that stands after the path's newest compaction.

How a student gets here: "the newest compaction already summarised everything before it,
so a new compaction can only keep from the messages appended after it" -- so the groups
are built from the message entries after the last compaction on the path. The chapter's
second compaction, compact-2 keeping u3 on the resumed path (u3 stands before compact-1),
is then refused.

The chapter's rule (§ compact-1 记录摘要与保留起点; § 恢复时把最新摘要接在保留后缀前面):
「它是恢复上下文时保留原消息的起点，只能指向一组的首条 user message。」 and
「第二次 compaction 使用同一个创建函数。假设 compact-2 保留 u3，它会追加在当时的
leaf 后面。」
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
    last_compaction = max((i for i, e in enumerate(path) if e.type == "compaction"), default=-1)
    groups = group_interactions([e for e in path[last_compaction + 1 :] if e.type == "message"])
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

    return (
        (fixtures.resumed_path(),),
        {
            "id": "compact-2",
            "timestamp": 200,
            "summary": fixtures.compact2_summary(),
            "first_kept_entry_id": "u3",
            "tokens_before": 33,
        },
    )
