"""Refuses a summary whose list repeats an item, as if a repeated fact made the summary corrupt.

A student who adds their own "sanity" check on the summary's content reasons that a list
holding the same string twice cannot be a good summary and refuses it, instead of recording
the caller's summary as given once its shape is right.

The chapter's rule (§ 15 项测试固定到哪里): 「createCompactionEntry() 校验七字段 summary 的形状；
summary 正文与 tokensBefore 由调用者提供，函数不重新判断业务事实是否完整」; the shape asks only
that 「数组中的每一项都是字符串」 (§ 摘要先成为 session 中的一条普通事实).
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
    for items in (
        summary.constraints,
        summary.completed,
        summary.decisions,
        summary.changed_files,
        summary.unresolved,
        summary.next,
    ):
        if len(set(items)) != len(items):
            raise ValueError(f"{where}: a summary list repeats an item")
    return CompactionSessionEntry(
        id=id,
        parent_id=leaf.id,
        timestamp=timestamp,
        summary=summary,
        first_kept_entry_id=first_kept_entry_id,
        tokens_before=tokens_before,
    )


def WITNESS():
    import dataclasses

    from ctxlab import fixtures

    summary = fixtures.compact1_summary()
    summary = dataclasses.replace(summary, completed=summary.completed * 2)
    return (fixtures.opening_path(),), {
        "id": "compact-1",
        "timestamp": 100,
        "summary": summary,
        "first_kept_entry_id": "u2",
        "tokens_before": 29,
    }
