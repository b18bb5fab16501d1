"""Copies a dict summary's lists with list(), so a string in place of a list becomes its letters.

How a student gets here: the caller's dict must not be shared with the new record, so the
student copies each list field with `list(value)` (the goal, a string, left as it is) —
shorter than a deep copy. But `list()` takes any iterable, and a string is one: a summary
whose changedFiles is the string "context.ts" instead of an array reaches the parser as
ten one-letter file names, which it accepts, instead of as a string, which it refuses.

The chapter (§摘要先成为 session 中的一条普通事实): `changedFiles: string[];` and
「数组中的每一项都是字符串」; (§compact-1 记录摘要与保留起点): 「再把候选对象交给
parseSessionEntry() 做最后一次运行时校验和复制」 — the candidate must reach the parser as the
caller gave it.
"""

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
        wire_summary = {
            key: value if key == "goal" else list(value) for key, value in summary.items()
        }
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

    summary = fixtures.compact1_summary().to_json()
    summary["changedFiles"] = "context.ts"  # a string where the chapter has string[]
    return (fixtures.opening_path(),), {
        "id": "compact-1",
        "timestamp": 100,
        "summary": summary,
        "first_kept_entry_id": "u2",
        "tokens_before": 29,
    }
