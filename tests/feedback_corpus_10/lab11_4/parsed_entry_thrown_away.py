"""Uses parse_session_entry only as a check and returns the candidate dict, not the parsed entry.

In TypeScript the student's habit is an assertion function, `assertSessionEntry(candidate);
return candidate;`: the check narrows the type and the literal object is the result. Ported
to Python, the parser's return value is dropped, so the caller gets the wire dict (camelCase
keys, lists) instead of the new, frozen CompactionSessionEntry the parser built.

The chapter's rule it breaks (§ compact-1 记录摘要与保留起点):
「再把候选对象交给 parseSessionEntry() 做最后一次运行时校验和复制。」 -- the entry returned is
the parser's copy (§ 摘要先成为 session 中的一条普通事实: 「解析器返回新对象」).
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
    parse_session_entry(candidate)
    return candidate


# --- the input on which this function and ctxlab's reference differ ---


def WITNESS():
    """The chapter's own call: compact-1 on the opening path, keeping from u2."""
    from ctxlab import fixtures

    options = dict(
        id="compact-1",
        timestamp=100,
        summary=fixtures.compact1_summary(),
        first_kept_entry_id="u2",
        tokens_before=29,
    )
    return (fixtures.opening_path(),), options
