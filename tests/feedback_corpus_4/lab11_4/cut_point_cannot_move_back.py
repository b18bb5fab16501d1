"""After a compaction, refuses a group head before its firstKeptEntryId (u1 after compact-1).

A student who saw compact-1 keep from u2 and compact-2 keep from u3 concluded that each new
compaction must keep from the previous cut or later, so u1 (summarised by compact-1) is refused
on the resumed path.

The chapter, §compact-1 记录摘要与保留起点 and §恢复时把最新摘要接在保留后缀前面:
「它是恢复上下文时保留原消息的起点，只能指向 一组的首条 user message。」「第二次 compaction
使用同一个创建函数。」 — the only condition is that the id starts a group (the notebook: "even
one before its first kept entry").
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
    ids = [e.id for e in path]
    for e in path:
        if e.type == "compaction":
            heads = {h for h in heads if ids.index(h) >= ids.index(e.first_kept_entry_id)}
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
    return parse_session_entry(candidate)


def WITNESS():
    from ctxlab import fixtures

    kwargs = dict(
        id="compact-2",
        timestamp=200,
        summary=fixtures.compact2_summary(),
        first_kept_entry_id="u1",
        tokens_before=33,
    )
    return (fixtures.resumed_path(),), kwargs
