"""Deletes the entries before the first kept one from the caller's path, as if summarised away.

How a student gets here: the opening asks whether old messages can simply be deleted, and
the student, skimming, takes the compaction to be the answer "yes, once they are
summarised": after building the entry it cuts everything before first_kept_entry_id out of
the active path it was given ("the summary stands for them now"). The returned entry is
right, but the caller's history has lost sys, u1 and a1.

The chapter (§ 摘要先成为 session 中的一条普通事实): 「摘要不是对原记录的覆盖；它是一条追加到当
前 leaf 后面的 CompactionSessionEntry」; (§ compact-1 记录摘要与保留起点): 「返回 compact1 以后，
active path 仍保持原样。」; (§ 恢复时把最新摘要接在保留后缀前面): 「compact-1 追加以后，十条原消
息一条也没有删除」.
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
        "parentId": path[-1].id,
        "timestamp": timestamp,
        "summary": wire_summary,
        "firstKeptEntryId": first_kept_entry_id,
        "tokensBefore": tokens_before,
    }
    entry = parse_session_entry(candidate)
    # the summary now stands for everything before the first kept entry
    first_kept_index = next(i for i, e in enumerate(active_path) if e.id == first_kept_entry_id)
    del active_path[:first_kept_index]
    return entry


def WITNESS():
    from ctxlab import fixtures

    return (fixtures.opening_path(),), {
        "id": "compact-1",
        "timestamp": 100,
        "summary": fixtures.compact1_summary(),
        "first_kept_entry_id": "u2",
        "tokens_before": 29,
    }
