"""Writes `tokens_before or 0`, so a missing tokensBefore (None) is recorded as 0.

How a student gets there: they think of tokensBefore as a bookkeeping number that may not be
known yet and give it a default with `or 0`, as they would for an optional counter. The
parser then never sees the None the caller passed: a compaction without its pre-compaction
size is written to the session as if it had been 0 tokens.

The chapter's rule (§ 摘要先成为 session 中的一条普通事实): 「tokensBefore 由调用者 写入，
用来记录压缩前的估算规模；parser 只检查它是非负有限数」, and (§ 15 项测试固定到哪里)
「summary 正文与 tokensBefore 由 调用者提供」. None is not a non-negative finite number: the
candidate must be refused.
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
        "timestamp": timestamp,
        "summary": wire_summary,
        "firstKeptEntryId": first_kept_entry_id,
        "tokensBefore": tokens_before or 0,
    }
    return parse_session_entry(candidate)


def WITNESS():
    from ctxlab import fixtures

    path = fixtures.opening_path()
    return (path,), {
        "id": "compact-1",
        "timestamp": 100,
        "summary": fixtures.compact1_summary(),
        "first_kept_entry_id": "u2",
        "tokens_before": None,
    }
