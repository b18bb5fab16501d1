"""Refuses u1, the first group's head, as first kept entry: the heads are taken from groups[1:].

The student reasoned that a compaction keeping from the very first interaction would
summarise nothing, so the start "must" be a later group, and left the first group out when
collecting the group heads (an off-by-one in the slice). On the opening path only u2 and u3
are accepted; u1 is refused although it starts a whole interaction just as u2 does. Where
the caller puts the start is not the function's to judge: it only asks that the id starts
a group.

The chapter, § compact-1 记录摘要与保留起点: 「它是恢复上下文时保留原消息的起点，只能指向
一组的首条 user message。」 and 「函数复用 groupInteractions() 找到这些组首」 — the heads of
all the groups, the first one's (u1) included; § 15 项测试固定到哪里: 「summary 正文与
tokensBefore 由调用者提供，函数不重新判断业务事实是否完整」.
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
    heads = {g.entries[0].id for g in groups[1:]}
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
    return (
        [path],
        dict(
            id="compact-1",
            timestamp=100,
            summary=fixtures.compact1_summary(),
            first_kept_entry_id="u1",
            tokens_before=29,
        ),
    )
