"""Refuses a tokens_before that is not a whole number (an int), such as 29.6.

How a student gets here: the chapter's example records tokensBefore: 29 and tokens are
counted one by one, so the student adds an "it must be an int" check of their own before
the parser. But tokensBefore is the caller's estimate, and an estimate may be fractional:
the rule asks only for a non-negative finite number, and the value is kept as given.

The chapter's rule (§ 摘要先成为 session 中的一条普通事实; § compact-1 记录摘要与保留起点):
「tokensBefore 由调用者写入，用来记录压缩前的估算规模；parser 只检查它是非负有限数，
不会重新估算并核对该值。」
and the interface's 「tokensBefore: number;」.
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
    if not isinstance(tokens_before, int):
        raise CompactionError(
            f"compaction {id}: tokensBefore must be a whole number of tokens, got {tokens_before!r}"
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
        (fixtures.opening_path(),),
        {
            "id": "compact-1",
            "timestamp": 100,
            "summary": fixtures.compact1_summary(),
            "first_kept_entry_id": "u2",
            "tokens_before": 29.6,
        },
    )
