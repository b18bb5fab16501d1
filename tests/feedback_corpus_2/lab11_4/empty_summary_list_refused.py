"""Refuses a summary with an empty list (compact-1 has no unresolved items), as if incomplete.

How a student gets here: "the summary's seven fields keep the goal, constraints, completed
work, decisions, changed files, unresolved items and next steps", so a summary that leaves
one of them empty looks unfinished, and the student refuses it before the parser. But the
function checks only the summary's shape; whether its content is complete is the caller's
business -- and the chapter's own compact-1 has no unresolved item.

The chapter's rule (§ 15 项测试固定到哪里):
「createCompactionEntry() 校验七字段 summary 的形状；summary 正文与 tokensBefore 由
调用者提供，函数不重新判断业务事实是否完整，也不重算压缩前规模。」
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
    for field in ("constraints", "completed", "decisions", "changedFiles", "unresolved", "next"):
        if not wire_summary.get(field):
            raise CompactionError(f"compaction {id}: summary.{field} is empty")
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
    from ctxlab import fixtures

    return (
        (fixtures.opening_path(),),
        {
            "id": "compact-1",
            "timestamp": 100,
            "summary": fixtures.compact1_summary(),
            "first_kept_entry_id": "u2",
            "tokens_before": 29,
        },
    )
