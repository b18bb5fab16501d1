"""Stores the summary's rendered text as the entry's summary instead of the seven-field object.

The parser then refuses a valid compaction (a str where an object is required).

The student mixed up Lab 11.5's summary message with the record: having seen that the summary
is sent to the model as text, they wrote render_summary(summary) into the entry.

The rule it breaks (§ 摘要先成为 session 中的一条普通事实 / § compact-1 记录摘要与保留起点):
the entry records the structured summary, 「summary: CompactionSummary;」, and
「把候选对象交给 parseSessionEntry() 做最后一次运行时校验和复制」; the text is made
only when resuming: 「把七字段 summary 按固定顺序转换成一条 synthetic user message」
(§ 恢复时把最新摘要接在保留后缀前面).
"""

import copy

from ctxlab import (
    CompactionError,
    CompactionSummary,
    group_interactions,  # Lab 11.2's reference
    parse_session_entry,  # Lab 11.1's reference: the strict parser
    render_summary,
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
        wire_summary = render_summary(summary)
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
    """The chapter's compact-1 on the opening path (summary given as a CompactionSummary)."""
    from ctxlab import fixtures

    return (fixtures.opening_path(),), dict(
        id="compact-1",
        timestamp=100,
        summary=fixtures.compact1_summary(),
        first_kept_entry_id="u2",
        tokens_before=29,
    )
