"""Loops over a summary list as `for i in items` and reads `items[i]`, as if it gave the indexes.

The student ported `for (const i in items) if (typeof items[i] !== "string") ...`: in
JavaScript `for...in` over an array yields its indexes, in Python `for` yields the items, so
`items["context.ts"]` fails with a TypeError and every record with a non-empty list is refused.

The chapter's rule it breaks (§ 摘要先成为 session 中的一条普通事实):
「数组中的每一项都是字符串」「JSONL 重新打开时，同一条解析路径会恢复 compact-1。」
"""

import math
from collections.abc import Mapping

from ctxlab import CompactionSessionEntry, CompactionSummary, EntryParseError

ENTRY_KEYS = ("type", "id", "parentId", "timestamp", "summary", "firstKeptEntryId", "tokensBefore")
SUMMARY_LISTS = ("constraints", "completed", "decisions", "changedFiles", "unresolved", "next")
SUMMARY_KEYS = ("goal", *SUMMARY_LISTS)


def _is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _finite(x):
    return isinstance(x, int) or math.isfinite(x)


def parse_compaction_entry(value):
    if isinstance(value, CompactionSessionEntry):
        value = value.to_json()
    if not isinstance(value, Mapping):
        raise EntryParseError("session entry: not an object", field="")
    raw_id = value.get("id")
    eid = raw_id if isinstance(raw_id, str) else None
    where = f"session entry {eid}" if eid else "session entry"

    def fail(field, problem):
        raise EntryParseError(f"{where}: {field} {problem}", entry_id=eid, field=field)

    if value.get("type") != "compaction":
        fail("type", "must be 'compaction'")
    for key in value:
        if key not in ENTRY_KEYS:
            fail(str(key), "is not a field of a compaction entry")
    for key in ENTRY_KEYS:
        if key not in value:
            fail(key, "is missing")
    if not isinstance(eid, str) or not eid.strip():
        fail("id", "must be a non-empty string")
    for key in ("parentId", "firstKeptEntryId"):
        v = value[key]
        if not isinstance(v, str) or not v.strip():
            fail(key, "must be a non-empty string")
    ts = value["timestamp"]
    if not _is_number(ts) or not _finite(ts):
        fail("timestamp", "must be a finite number")
    tb = value["tokensBefore"]
    if not _is_number(tb) or not _finite(tb) or tb < 0:
        fail("tokensBefore", "must be a finite number >= 0")
    summary = value["summary"]
    if not isinstance(summary, Mapping):
        fail("summary", "must be an object")
    for key in summary:
        if key not in SUMMARY_KEYS:
            fail(f"summary.{key}", "is not a field of the summary")
    for key in SUMMARY_KEYS:
        if key not in summary:
            fail(f"summary.{key}", "is missing")
    goal = summary["goal"]
    if not isinstance(goal, str) or not goal.strip():
        fail("summary.goal", "must be a non-empty string")
    lists = {}
    for key in SUMMARY_LISTS:
        items = summary[key]
        if not isinstance(items, list):
            fail(f"summary.{key}", "must be an array")
        for i in items:  # for (const i in items)
            if not isinstance(items[i], str):
                fail(f"summary.{key}[{i}]", "must be a string")
        lists[key] = tuple(items)
    return CompactionSessionEntry(
        id=eid,
        parent_id=value["parentId"],
        timestamp=ts,
        summary=CompactionSummary(
            goal=goal,
            constraints=lists["constraints"],
            completed=lists["completed"],
            decisions=lists["decisions"],
            changed_files=lists["changedFiles"],
            unresolved=lists["unresolved"],
            next=lists["next"],
        ),
        first_kept_entry_id=value["firstKeptEntryId"],
        tokens_before=tb,
    )


# --- the input on which this function and ctxlab's reference differ ---


def WITNESS():
    """compact-1's wire form, whose lists hold strings only: the parser must accept it."""
    from ctxlab import fixtures

    wire = fixtures.compact1().to_json()
    return (wire,), {}
