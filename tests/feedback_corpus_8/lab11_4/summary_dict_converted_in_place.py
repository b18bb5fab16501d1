"""Turns a dict summary's lists into tuples inside the caller's own dict.

How a student gets there: they see that CompactionSummary holds tuples and want the wire
summary to look the same, so they convert each list field to a tuple. They write the
conversion into `summary` itself (the dict the caller passed) instead of into a copy, so
after the call the caller's summary no longer holds the lists it gave.

The chapter's rule (§ compact-1 记录摘要与保留起点): 「返回 compact1 以后，active path 仍保持原样。
函数也不接收 Store。」 and (§ 15 项测试固定到哪里) 「纯创建」: creating the entry is pure; what
the caller passed, the summary included, is left as it was.
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
        for key in ("constraints", "completed", "decisions", "changedFiles", "unresolved", "next"):
            if isinstance(summary.get(key), list):
                summary[key] = tuple(summary[key])
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
    return (path,), {
        "id": "compact-1",
        "timestamp": 100,
        "summary": fixtures.compact1_summary().to_json(),
        "first_kept_entry_id": "u2",
        "tokens_before": 29,
    }
