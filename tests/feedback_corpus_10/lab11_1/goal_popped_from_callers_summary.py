"""Pops summary.goal out of the caller's own summary dict, so parsing a record deletes its goal.

The student ported the destructuring `const { goal, ...rest } = summary` as `rest = summary`
and `goal = rest.pop("goal")`, reading the six lists from `rest`. In JavaScript `rest` is a
new object; in Python it is the caller's own dict, so parsing deletes its goal.

The chapter's rule it breaks (§ 摘要先成为 session 中的一条普通事实):
「第 10 章的两个 Store 已经统一通过 parseSessionEntry() 获取写入快照。」
「parseSessionEntry() 逐字段读取外部对象。」(历史不动: reading a record does not edit it.)
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
    rest = summary  # const { goal, ...rest } = summary
    goal = rest.pop("goal")
    if not isinstance(goal, str) or not goal.strip():
        fail("summary.goal", "must be a non-empty string")
    lists = {}
    for key in SUMMARY_LISTS:
        items = rest[key]
        if not isinstance(items, list):
            fail(f"summary.{key}", "must be an array")
        for i, item in enumerate(items):
            if not isinstance(item, str):
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
    """compact-1's wire form: after parsing, the caller's summary must still hold its goal."""
    from ctxlab import fixtures

    wire = fixtures.compact1().to_json()
    return (wire,), {}
