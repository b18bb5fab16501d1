"""Takes the message entries with takewhile, so a group head after a compaction is refused.

How a student gets here: "the message entries of the path" reads like a run at the front
of it, since a compaction is appended after the leaf; `takewhile(is a message, path)`
looks like a tidy filter. But takewhile stops for good at the first entry that fails:
on the resumed path (… a3 → compact-1 → u4 → a4) it never reaches u4, so u4 is not among
the group heads and a second compaction that keeps from u4 is refused.

The chapter (§compact-1 记录摘要与保留起点): 「firstKeptEntryId 的含义和 parent 不同。它是恢复
上下文时保留原消息的起点，只能指向一组的首条 user message。」 and 「函数复用 groupInteractions()
找到这些组首」; (§恢复时把最新摘要接在保留后缀前面): 「新的 u4 → a4 可以继续追加在 compact-1
后面。」 and 「第二次 compaction 使用同一个创建函数。」 — u4 starts a group of the active path, so
a second compaction may keep from it.
"""

import copy
from itertools import takewhile

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
    groups = group_interactions(list(takewhile(lambda e: e.type == "message", path)))
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
    return parse_session_entry(candidate)


def WITNESS():
    from ctxlab import fixtures

    # The resumed path (… a3 → compact-1 → u4 → a4); a second compaction keeps from u4.
    return (fixtures.resumed_path(),), {
        "id": "compact-2",
        "timestamp": 200,
        "summary": fixtures.compact2_summary(),
        "first_kept_entry_id": "u4",
        "tokens_before": 33,
    }
