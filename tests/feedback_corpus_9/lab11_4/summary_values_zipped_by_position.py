"""Zips the seven field names with a dict summary's values, so its keys are never read.

How a student gets here: a summary may come as a CompactionSummary or as a dict, and a
dict might be written with snake_case keys (changed_files) or camelCase (changedFiles).
Pairing the seven wire names with `summary.values()` by position handles both at once. But
it trusts the caller's key order and never looks at the keys: the chapter's corrupted
record (changedFiles removed, the early-draft `files` added at the end) is renamed into a
valid summary — its lists shifted one field along — instead of being refused by the parser.

The chapter (§损坏记录在进入预算前就会被拒绝): 「这里的 parser 只生成前文定义的七字段
CompactionSummary。旧记录需要先在边界外迁移成当前形状；缺少当前字段或加入旧别名时，错误停在
compact-1，不会延后成预算差异。」 and (§compact-1 记录摘要与保留起点): 「再把候选对象交给
parseSessionEntry() 做最后一次运行时校验和复制」.
"""

import copy

from ctxlab import (
    CompactionError,
    CompactionSummary,
    group_interactions,  # Lab 11.2's reference
    parse_session_entry,  # Lab 11.1's reference: the strict parser
)

SUMMARY_KEYS = (
    "goal",
    "constraints",
    "completed",
    "decisions",
    "changedFiles",
    "unresolved",
    "next",
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
        wire_summary = dict(zip(SUMMARY_KEYS, copy.deepcopy(list(summary.values())), strict=True))
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

    # The chapter's corruption: summary.changedFiles removed, summary.files = ["context.ts"].
    corrupted = fixtures.compaction_corruptions()["files instead of changedFiles"]
    return (fixtures.opening_path(),), {
        "id": "compact-1",
        "timestamp": 100,
        "summary": corrupted["summary"],
        "first_kept_entry_id": "u2",
        "tokens_before": 29,
    }
