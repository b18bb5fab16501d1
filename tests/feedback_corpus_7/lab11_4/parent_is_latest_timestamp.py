"""Takes parentId from the entry with the largest timestamp, not the path's last entry.

A leaf whose clock is behind (a4 at 50 after compact-1 at 100) is not made the parent.

The student read "the leaf" as "the newest entry" and found it by timestamp, not by position.

The rule it breaks (§ compact-1 记录摘要与保留起点): 「函数从 activePath.at(-1) 得到 parentId」;
「不会出现“记录追加在 a3 后面，字段却指向另一条 leaf”的两份答案」.
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
        "parentId": max(path, key=lambda e: e.timestamp).id,
        "timestamp": timestamp,
        "summary": wire_summary,
        "firstKeptEntryId": first_kept_entry_id,
        "tokensBefore": tokens_before,
    }
    return parse_session_entry(candidate)


def WITNESS():
    """The resumed path with u4 and a4 at timestamps 40 and 50 (behind compact-1's 100)."""
    from ctxlab import fixtures, parse_session_entry

    path = fixtures.resumed_path()
    path[-2] = parse_session_entry({**path[-2].to_json(), "timestamp": 40})
    path[-1] = parse_session_entry({**path[-1].to_json(), "timestamp": 50})
    return (path,), dict(
        id="compact-2",
        timestamp=200,
        summary=fixtures.compact2_summary(),
        first_kept_entry_id="u3",
        tokens_before=33,
    )
