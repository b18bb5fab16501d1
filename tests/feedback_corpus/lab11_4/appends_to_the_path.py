"""Appends the new compaction to the caller's active path.

The student thought creating the record also puts it after the leaf.

The chapter's rule it breaks (§ compact-1 记录摘要与保留起点):
「返回 compact1 以后，active path 仍保持原样。函数也不接收 Store。
调用者可以展示 summary、记录审计或请求确认，最后再显式调用 store.append(compact1)。
」
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
        "tokensBefore": tokens_before,
    }
    entry = parse_session_entry(candidate)
    active_path.append(entry)  # the compaction now follows the leaf
    return entry


# --- the input on which this function and ctxlab's reference differ ---


def WITNESS():
    """The chapter's compact-1 on the opening path: the path must stay ten entries long."""
    from ctxlab import fixtures

    path = fixtures.opening_path()
    options = dict(
        id="compact-1",
        timestamp=100,
        summary=fixtures.compact1_summary(),
        first_kept_entry_id="u2",
        tokens_before=29,
    )
    return (path,), options
