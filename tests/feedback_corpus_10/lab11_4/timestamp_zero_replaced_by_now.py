"""Writes `timestamp or <now>`, so a caller's timestamp of 0 is replaced by the clock.

The student ported the TypeScript habit `timestamp: timestamp || Date.now()` (a default for
"no timestamp given") as `timestamp or int(time.time() * 1000)`. In Python, as in JS, 0 is
falsy, so a compaction the caller stamps at 0 gets the current time in milliseconds instead
of the number the caller passed.

The chapter's rule it breaks (§ 摘要先成为 session 中的一条普通事实,
§ compact-1 记录摘要与保留起点):
the entry's timestamp is a number the caller gives, 「timestamp: number;」, passed in the
call as 「timestamp: 100,」; nothing in the chapter derives it from a clock, and 0 is a
number like any other.
"""

import copy
import time

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
        "timestamp": timestamp or int(time.time() * 1000),
        "summary": wire_summary,
        "firstKeptEntryId": first_kept_entry_id,
        "tokensBefore": tokens_before,
    }
    return parse_session_entry(candidate)


# --- the input on which this function and ctxlab's reference differ ---


def WITNESS():
    """compact-1 on the opening path, stamped by the caller at timestamp 0."""
    from ctxlab import fixtures

    options = dict(
        id="compact-1",
        timestamp=0,
        summary=fixtures.compact1_summary(),
        first_kept_entry_id="u2",
        tokens_before=29,
    )
    return (fixtures.opening_path(),), options
