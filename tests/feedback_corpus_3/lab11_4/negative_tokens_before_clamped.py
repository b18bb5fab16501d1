"""Clamps a negative tokens_before to 0 instead of refusing it.

The student read 「tokensBefore 是非负有限数」 as something the function should make true
rather than a condition the record must meet, and "repaired" a negative estimate before
building the candidate: tokens_before=-1 gives a compaction recording tokensBefore 0, where
the parser's check would refuse the -1. The caller's mistake is hidden instead of reported.

The chapter, § 摘要先成为 session 中的一条普通事实: 「tokensBefore 由调用者写入，用来记录压缩前
的估算规模；parser 只检查它是非负有限数，不会重新估算并核对该值。」; § compact-1 记录摘要与保留
起点: 「再把候选对象交给 parseSessionEntry() 做最后一次运行时校验和复制」 — a negative value is
refused by that check, not rewritten.
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
    if isinstance(tokens_before, (int, float)) and tokens_before < 0:
        tokens_before = 0
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
            first_kept_entry_id="u2",
            tokens_before=-1,
        ),
    )
