"""Accepts a system message as the first kept entry, since it stands between groups.

The student read that a system message belongs to no group and concluded it is a safe
place to cut.

The chapter's rule it breaks (§ system 状态跨过 compaction 边界):
「system message 也不能成为切点，createCompactionEntry() 遇到 firstKeptEntryId:
"patch-2" 会报告它不是完整 interaction 的首条 message。」
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
    # a system message is in no group: it stands between two of them
    heads |= {e.id for e in path if e.type == "message" and e.message.role == "system"}
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
    """The chapter's system-patch path, first_kept_entry_id = patch-2."""
    from ctxlab import fixtures

    path = fixtures.system_patch_path()
    options = dict(
        id="compact-2",
        timestamp=200,
        summary=fixtures.compact1_summary(),
        first_kept_entry_id="patch-2",
        tokens_before=20,
    )
    return (path,), options
