"""Gives the compaction the leaf's timestamp (a3's 10) instead of the timestamp the caller passed.

Having just learnt that parentId is not passed but read from the path's last entry, the
student took the timestamp from the same place: the compaction "happens right after a3", so
it copies a3's timestamp and the caller's timestamp argument is never used. Only the parent
comes from the path; the timestamp is one of the values the caller writes, like the
summary and tokensBefore.

The chapter, § compact-1 记录摘要与保留起点: the call is 「createCompactionEntry(activePath, {
id: "compact-1", timestamp: 100, summary, firstKeptEntryId: "u2", tokensBefore: 29, })」 and
「函数从 activePath.at(-1) 得到 parentId: "a3"。parent 不由调用者重复传入」 — only the parent is
read from the path; compact-1's timestamp is the caller's 100.
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
        "parentId": path[-1].id,
        "timestamp": path[-1].timestamp,
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
            first_kept_entry_id="u2",
            tokens_before=29,
        ),
    )
