"""Writes `+tokens_before` (JS's unary plus), so tokens_before=True is recorded as 1.

The student ported `tokensBefore: +tokensBefore` to be sure the ledger holds a number. In
JavaScript `+true` is 1 too, but there the parser's `typeof === "number"` would already have
seen the boolean; in Python `+True` is the int 1, so the parser never sees a bool and the
compaction records 1 instead of refusing a value that is not a number.

The chapter's rule it breaks (§ 摘要先成为 session 中的一条普通事实):
「tokensBefore 由调用者 写入」 and the parser checks that 「tokensBefore 是非负有限数」 -- true is
not a number, and the caller's value is recorded as given, not converted.
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
        "tokensBefore": +tokens_before,
    }
    return parse_session_entry(candidate)


# --- the input on which this function and ctxlab's reference differ ---


def WITNESS():
    """compact-1 on the opening path with tokens_before=True."""
    from ctxlab import fixtures

    options = dict(
        id="compact-1",
        timestamp=100,
        summary=fixtures.compact1_summary(),
        first_kept_entry_id="u2",
        tokens_before=True,
    )
    return (fixtures.opening_path(),), options
