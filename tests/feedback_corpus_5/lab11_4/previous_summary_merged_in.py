"""Prepends the previous compaction's summary items to the caller's lists instead of keeping them.

How a student gets here: the resume section says the newest summary 「负责接续此前事实」, and
the student concludes that creating a second compaction must carry compact-1's facts
forward itself: it looks back for the newest compaction already on the path and puts its
list items in front of the new ones. compact-2 then records compact-1's items twice and,
worse, keeps compact-1's stale "next" step beside the new one.

The chapter (§ 15 项测试固定到哪里): 「createCompactionEntry() 校验七字段 summary 的形状；
summary 正文与 tokensBefore 由调用者提供，函数不重新判断业务事实是否完整」; (§ 恢复时把最新摘要
接在保留后缀前面): 「把所有摘要同时放入模型窗口会重复内容，也可能让旧决策和新决策互相冲突。」
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
    previous = [e for e in path if e.type == "compaction"]
    if previous:  # carry the earlier facts forward
        old = previous[-1].summary.to_json()
        for key, items in old.items():
            if key != "goal" and isinstance(wire_summary.get(key), list):
                wire_summary[key] = items + wire_summary[key]
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

    # The chapter's second compaction: compact-2 on the resumed path, keeping u3.
    return (fixtures.resumed_path(),), {
        "id": "compact-2",
        "timestamp": 200,
        "summary": fixtures.compact2_summary(),
        "first_kept_entry_id": "u3",
        "tokens_before": 33,
    }
