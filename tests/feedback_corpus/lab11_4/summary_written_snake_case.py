"""Writes the summary with dataclasses.asdict, so the parser sees changed_files, not changedFiles.

The student turned the CompactionSummary into a dict the Python way, with its attribute
names, not the wire names.

The chapter's rule it breaks (§ compact-1 记录摘要与保留起点):
「summary 的七个字段分别保存目标、约束、已完成事项、决策、变更文件、
未解决事项和 下一步」（interface CompactionSummary: changedFiles: string[]）
；「函数复用 groupInteractions() 找到这些组首，再把候选对象交给 parseSessionEntry()
做最后一次运行时校验和复制。」
"""

import copy
import dataclasses

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
        wire_summary = dataclasses.asdict(summary)
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
    return parse_session_entry(candidate)


# --- the input on which this function and ctxlab's reference differ ---


def WITNESS():
    """The chapter's compact-1, its summary given as a CompactionSummary."""
    from ctxlab import fixtures

    path = fixtures.opening_path()
    options = dict(
        id="compact-1",
        timestamp=100,
        summary=fixtures.compact1_summary(),
        first_kept_entry_id="u2",
        tokens_before=29,
    )
    return (path,), options
