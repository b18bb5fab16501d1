"""Refuses a tokensBefore that is not a whole number, such as 29.5: it tests isinstance(tb, int).

The student took tokensBefore for a token count that must be an integer and ported
`Number.isInteger(tb) && tb >= 0` as `isinstance(tb, int) and tb >= 0`. A caller's estimate of
29.5 is refused (and, since Python's bool is an int, `true` would pass).

The chapter's rule it breaks (§ 摘要先成为 session 中的一条普通事实):
「tokensBefore 由调用者写入，用来记录压缩前的估算规模；parser 只检查它是非负有限数，
不会重新估算并核对该值。」
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
    if not isinstance(tb, int) or tb < 0:  # !Number.isInteger(tb) || tb < 0
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
    """compact-1's wire form with tokensBefore = 29.5, an estimate the parser must accept."""
    from ctxlab import fixtures

    wire = fixtures.compact1().to_json()
    wire["tokensBefore"] = 29.5
    return (wire,), {}
