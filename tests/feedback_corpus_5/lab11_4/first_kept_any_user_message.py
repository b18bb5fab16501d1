"""Takes any user message as first kept, never grouping the path: an unpaired result passes.

How a student gets here: the rule reads 「只能指向一组的首条 user message」, and since every
group starts at a user message the student shortens it to "first_kept_entry_id must be a
user message" and checks the role, never calling group_interactions. On a sound path the
two agree; but the path's interactions are no longer checked, so a compaction is created on
a path where r-test answers a call (unknown-1) that no one made.

The chapter (§ compact-1 记录摘要与保留起点): 「函数复用 groupInteractions() 找到这些组首，再把
候选对象交给 parseSessionEntry() 做最后一次运行时校验和复制。」 and (§ 损坏记录在进入预算前就会
被拒绝): 「把 r-test.toolCallId 从 test-1 改成 unknown-1 … groupInteractions() 找不到 unknown-1
对应的 call」.
"""

import copy

from ctxlab import (
    CompactionError,
    CompactionSummary,
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
    heads = {e.id for e in path if e.type == "message" and e.message.role == "user"}
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

    # The chapter's corrupted path: r-test answers unknown-1.
    return (fixtures.unknown_call_path(),), {
        "id": "compact-1",
        "timestamp": 100,
        "summary": fixtures.compact1_summary(),
        "first_kept_entry_id": "u2",
        "tokens_before": 29,
    }
