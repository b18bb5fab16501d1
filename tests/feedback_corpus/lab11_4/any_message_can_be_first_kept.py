"""Accepts any message entry on the path as the first kept entry, not only a group's head.

The student checked that the id names a message of the path and stopped there.

The chapter's rule it breaks (§ compact-1 记录摘要与保留起点):
「它是恢复上下文时保留原消息的起点，只能指向 一组的首条 user message。
u2 合法；a2、calls、r-test 都位于组内，不能成为 切点。」
"""

import copy

from ctxlab import (
    CompactionError,
    CompactionSummary,
    group_interactions,  # noqa: F401 (from the notebook's template)
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
    heads = {e.id for e in path if e.type == "message"}
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


# --- the input on which this function and ctxlab's reference differ ---


def WITNESS():
    """first_kept_entry_id = a2, which lies inside group 2."""
    from ctxlab import fixtures

    path = fixtures.opening_path()
    options = dict(
        id="compact-1",
        timestamp=100,
        summary=fixtures.compact1_summary(),
        first_kept_entry_id="a2",
        tokens_before=29,
    )
    return (path,), options
