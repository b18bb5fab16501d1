"""Copies only the seven known fields of a dict summary, so an extra key (files) is not refused.

A student who wanted "a clean copy" of the wire-form summary picked its seven fields by name;
the parser then never sees the extra key and the record is accepted.

The chapter, §损坏记录在进入预算前就会被拒绝: 「缺少当前字段或加入旧别名时，错误停在 compact-1，
不会延后成预算差异。」 and §compact-1 记录摘要与保留起点: 「再把候选对象交给
parseSessionEntry() 做最后一次运行时校验和复制。」
"""

import copy

from ctxlab import (
    CompactionError,
    CompactionSummary,
    group_interactions,  # Lab 11.2's reference
    parse_session_entry,  # Lab 11.1's reference: the strict parser
)

_SUMMARY_KEYS = (
    "goal",
    "constraints",
    "completed",
    "decisions",
    "changedFiles",
    "unresolved",
    "next",
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
        wire_summary = {key: copy.deepcopy(summary[key]) for key in _SUMMARY_KEYS}
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

    summary = {**fixtures.compact1_summary().to_json(), "files": ["context.ts"]}
    kwargs = dict(
        id="compact-1",
        timestamp=100,
        summary=summary,
        first_kept_entry_id="u2",
        tokens_before=29,
    )
    return (fixtures.opening_path(),), kwargs
