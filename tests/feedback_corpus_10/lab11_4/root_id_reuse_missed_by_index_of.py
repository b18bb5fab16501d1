"""Tests "id already on the path" as indexOf(id) > 0, so reusing the root's id (sys) passes.

The student ported `ids.indexOf(id) > 0` from JavaScript, writing indexOf as a `next(...)`
that gives -1 when the id is absent. `> 0` was meant as "found", but a match at index 0 is
found too: an id equal to the first entry's id (the root, sys) passes as new, and the
compaction is created with an id the path already uses.

The chapter's rule it breaks (§ 摘要先成为 session 中的一条普通事实):
「摘要不是 对原记录的覆盖；它是一条追加到当前 leaf 后面的 CompactionSessionEntry」 -- a new
record, not one that takes an existing entry's id.
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
    ids = [entry.id for entry in path]
    if next((i for i, x in enumerate(ids) if x == id), -1) > 0:
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


# --- the input on which this function and ctxlab's reference differ ---


def WITNESS():
    """A compaction given the id "sys" of the opening path's root."""
    from ctxlab import fixtures

    options = dict(
        id="sys",
        timestamp=100,
        summary=fixtures.compact1_summary(),
        first_kept_entry_id="u2",
        tokens_before=29,
    )
    return (fixtures.opening_path(),), options
