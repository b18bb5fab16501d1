"""Takes the leaf with path.pop(), so the leaf is left out of the grouping of the path.

How a student gets here: the chapter takes the parent from `activePath.at(-1)`, and
`path.pop()` is the Python way to "get the last item" — on a copy, so the caller's list is
safe. But pop also removes the leaf from that copy, and the copy is what gets grouped. On
a path whose leaf is a tool result (the compaction is made before the final answer: …
u3 → calls → r-test → r-read), the third group loses r-read, call read-1 has no result,
and grouping refuses a path that is whole.

The chapter (§compact-1 记录摘要与保留起点): 「函数从 activePath.at(-1) 得到 parentId: "a3"。」 and
「函数复用 groupInteractions() 找到这些组首」; (§两个 tool result 仍属于 u3 开始的同一组):
「result 的数组位置、toolName 与终态 assistant 不参与这次配对」 — the leaf r-read belongs to the
path that is grouped, and a group needs no final answer.
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
    leaf = path.pop()
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
        "parentId": leaf.id,
        "timestamp": timestamp,
        "summary": wire_summary,
        "firstKeptEntryId": first_kept_entry_id,
        "tokensBefore": tokens_before,
    }
    return parse_session_entry(candidate)


def WITNESS():
    from ctxlab import fixtures

    # The opening path up to r-read (a3 not yet written): compact-1 keeps from u2.
    path = [entry for entry in fixtures.opening_path() if entry.id != "a3"]
    return (path,), {
        "id": "compact-1",
        "timestamp": 100,
        "summary": fixtures.compact1_summary(),
        "first_kept_entry_id": "u2",
        "tokens_before": 26,
    }
