"""Sets parentId to the newest compaction already on the path instead of the path's last entry.

The student pictured compactions as a chain, each new summary hanging from the one before
it (「最新摘要负责接续此前事实」), and mixed up "the summary this one continues" with the
parent. On the opening path there is no earlier compaction and the parent is right (a3); on
the resumed path compact-2 gets parentId compact-1 instead of a4, the leaf it is appended
after, so the record names one place while it is written at another.

The chapter, § compact-1 记录摘要与保留起点: 「函数从 activePath.at(-1) 得到 parentId」 and
「不会出现“记录追加在 a3 后面，字段却指向另一条 leaf”的两份答案」; § 恢复时把最新摘要接在保留
后缀前面: 「第二次 compaction 使用同一个创建函数。假设 compact-2 保留 u3，它会追加在当时的
leaf 后面。」
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
        "parentId": next((e.id for e in reversed(path) if e.type == "compaction"), path[-1].id),
        "timestamp": timestamp,
        "summary": wire_summary,
        "firstKeptEntryId": first_kept_entry_id,
        "tokensBefore": tokens_before,
    }
    return parse_session_entry(candidate)


def WITNESS():
    from ctxlab import fixtures

    return (
        [fixtures.resumed_path()],
        dict(
            id="compact-2",
            timestamp=200,
            summary=fixtures.compact2_summary(),
            first_kept_entry_id="u3",
            tokens_before=33,
        ),
    )
