"""Takes parentId from the last message entry instead of the last entry of the path.

The student looked for the last message, thinking a compaction follows the conversation,
and skipped a metadata entry standing at the end.

The chapter's rule it breaks (§ compact-1 记录摘要与保留起点):
「函数从 activePath.at(-1) 得到 parentId: "a3"。parent 不由调用者重复传入，
因而不会 出现“记录追加在 a3 后面，字段却指向另一条 leaf”的两份答案。
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
        "parentId": [e for e in path if e.type == "message"][-1].id,
        "timestamp": timestamp,
        "summary": wire_summary,
        "firstKeptEntryId": first_kept_entry_id,
        "tokensBefore": tokens_before,
    }
    return parse_session_entry(candidate)


# --- the input on which this function and ctxlab's reference differ ---


def WITNESS():
    """The opening path with a metadata entry meta-1 after a3: it is the leaf."""
    from ctxlab import MetadataSessionEntry, fixtures

    path = [*fixtures.opening_path(), MetadataSessionEntry("meta-1", "a3", 11, "model", "m")]
    options = dict(
        id="compact-1",
        timestamp=100,
        summary=fixtures.compact1_summary(),
        first_kept_entry_id="u2",
        tokens_before=29,
    )
    return (path,), options
