"""Looks the new id up with `id in path` (a str among entries), so a duplicate is never found.

On the opening path, a compaction with the id a3 (the leaf's) is not refused.

The student wrote the duplicate check as a membership test on the path, as if the path were a
list of ids; a str never equals an entry, so the check never fires.

The rule it breaks (§ compact-1 记录摘要与保留起点; spec § 7, "An `id` already on the path is an
error"): the compaction is appended after 「activePath.at(-1)」 on the same path, where the id
must be new.
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
    if id in path:
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
    return parse_session_entry(candidate)


def WITNESS():
    """compact-1 created on the opening path with the id of its leaf, a3."""
    from ctxlab import fixtures

    return (fixtures.opening_path(),), dict(
        id="a3",
        timestamp=100,
        summary=fixtures.compact1_summary(),
        first_kept_entry_id="u2",
        tokens_before=29,
    )
