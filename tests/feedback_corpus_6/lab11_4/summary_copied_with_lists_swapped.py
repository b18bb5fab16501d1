"""Copies the summary field by field with the completed and decisions lists swapped.

The chapter says the candidate is checked and copied (「校验和复制」). A student without the
parser copies the summary themselves, positionally, listing the fields from memory as
"goal, constraints, decisions, completed, ..." and so puts each list in the other's slot:
compact-1 then records its decision as completed work and its completed work as a decision.

The chapter's rule (§ 摘要先成为 session 中的一条普通事实): 「summary 的七个字段分别保存目标、
约束、已完成事项、决策、变更文件、未解决事项和下一步」, in the order of the interface
(goal, constraints, completed, decisions, changedFiles, unresolved, next), and
(§ 15 项测试固定到哪里) 「summary 正文与 tokensBefore 由调用者提供」.
"""

import math

from ctxlab import CompactionSessionEntry, CompactionSummary, group_interactions


def create_compaction_entry(
    active_path, *, id, timestamp, summary, first_kept_entry_id, tokens_before
):
    leaf = active_path[-1]  # an empty path has no leaf (IndexError)
    messages = [entry for entry in active_path if entry.type == "message"]
    heads = [group.entries[0].id for group in group_interactions(messages)]
    if first_kept_entry_id not in heads:
        raise ValueError(f"{first_kept_entry_id!r} is not the first message of an interaction")
    where = f"compaction {id}"
    if not isinstance(id, str):
        raise ValueError(f"{where}: id must be a string")
    if isinstance(timestamp, bool) or not isinstance(timestamp, (int, float)):
        raise ValueError(f"{where}: timestamp must be a number")
    if (
        isinstance(tokens_before, bool)
        or not isinstance(tokens_before, (int, float))
        or (isinstance(tokens_before, float) and not math.isfinite(tokens_before))
        or tokens_before < 0
    ):
        raise ValueError(f"{where}: tokensBefore must be a finite number >= 0")
    if not isinstance(summary, CompactionSummary):
        raise ValueError(f"{where}: summary must be a CompactionSummary")
    if not isinstance(summary.goal, str) or summary.goal == "":
        raise ValueError(f"{where}: summary.goal must not be empty")
    summary = CompactionSummary(
        summary.goal,
        summary.constraints,
        summary.decisions,
        summary.completed,
        summary.changed_files,
        summary.unresolved,
        summary.next,
    )
    return CompactionSessionEntry(
        id=id,
        parent_id=leaf.id,
        timestamp=timestamp,
        summary=summary,
        first_kept_entry_id=first_kept_entry_id,
        tokens_before=tokens_before,
    )


def WITNESS():
    from ctxlab import fixtures

    return (fixtures.opening_path(),), {
        "id": "compact-1",
        "timestamp": 100,
        "summary": fixtures.compact1_summary(),
        "first_kept_entry_id": "u2",
        "tokens_before": 29,
    }
