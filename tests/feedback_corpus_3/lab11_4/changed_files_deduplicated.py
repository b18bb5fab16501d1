"""Drops repeated items from summary.changedFiles instead of keeping the caller's summary as given.

The student thought a file changed twice should be listed once and "tidied" the summary
before handing it to the parser, keeping the first occurrence of each file. The function
checks the summary's shape only: its content, repeats included, is the caller's, and the
parser keeps every item of every list (each only has to be a string).

The chapter, § 15 项测试固定到哪里: 「createCompactionEntry() 校验七字段 summary 的形状；summary
正文与 tokensBefore 由调用者提供，函数不重新判断业务事实是否完整，也不重算压缩前规模。」; § 摘要
先成为 session 中的一条普通事实: 「数组中的每一项都是字符串」.
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
    if isinstance(wire_summary, dict) and isinstance(wire_summary.get("changedFiles"), list):
        wire_summary["changedFiles"] = list(dict.fromkeys(wire_summary["changedFiles"]))
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
    import dataclasses

    from ctxlab import fixtures

    summary = dataclasses.replace(
        fixtures.compact1_summary(),
        changed_files=("context.ts", "context.test.ts", "context.ts"),
    )
    return (
        [fixtures.opening_path()],
        dict(
            id="compact-1",
            timestamp=100,
            summary=summary,
            first_kept_entry_id="u2",
            tokens_before=29,
        ),
    )
