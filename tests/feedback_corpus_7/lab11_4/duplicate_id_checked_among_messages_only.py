"""Checks the new id against the message entries only, so a reused compaction id is accepted.

On the resumed path, a second compaction named compact-1 again is not refused.

The student built the list of message entries for grouping first and, tidying up, ran the
duplicate-id check over that same list, forgetting that compaction and metadata entries sit on
the path too and own ids of their own.

The rule it breaks (§ compact-1 记录摘要与保留起点; spec § 7, "An `id` already on the path is an
error"): the new entry is appended after the leaf of the same path,
「函数从 activePath.at(-1) 得到 parentId」, so every id on that path is already taken.
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
    messages = [e for e in path if e.type == "message"]
    if any(entry.id == id for entry in messages):
        raise CompactionError(f"compaction {id}: the id {id} is already on the path")
    groups = group_interactions(messages)
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
    return parse_session_entry(candidate)


def WITNESS():
    """A second compaction on the resumed path that reuses the id compact-1."""
    from ctxlab import fixtures

    return (fixtures.resumed_path(),), dict(
        id="compact-1",
        timestamp=200,
        summary=fixtures.compact2_summary(),
        first_kept_entry_id="u3",
        tokens_before=33,
    )
