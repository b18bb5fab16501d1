"""Refuses as first kept entry the head of a group not yet answered (u4 waiting at the leaf).

A student who read 「不是完整 interaction 的首条 message」 quickly took "完整" to mean an
interaction that has ended with an assistant message, so only heads of answered groups count;
u4 alone at the end of the path is refused.

The chapter, §compact-1 记录摘要与保留起点: 「它是恢复上下文时保留原消息的起点，只能指向
一组的首条 user message。」 — any group's first user message; the group need not be answered.
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
    heads = {g.entries[0].id for g in groups if g.entries[-1].message.role == "assistant"}
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

    path = [e for e in fixtures.resumed_path() if e.id != "a4"]  # ends with u4, unanswered
    kwargs = dict(
        id="compact-2",
        timestamp=200,
        summary=fixtures.compact2_summary(),
        first_kept_entry_id="u4",
        tokens_before=33,
    )
    return (path,), kwargs
