"""Lab 11.1, wrong: math.isfinite() on any number: 10**400 raises a bare OverflowError.

fails: huge_numbers_kept_or_refused (ctxlab)
"""

import math
from collections.abc import Mapping

from ctxlab import CompactionSessionEntry, CompactionSummary, EntryParseError

ENTRY_FIELDS = {"type", "id", "parentId", "timestamp", "summary", "firstKeptEntryId", "tokensBefore"}
LIST_FIELDS = ("constraints", "completed", "decisions", "changedFiles", "unresolved", "next")
SUMMARY_FIELDS = {"goal", *LIST_FIELDS}


def parse_compaction_entry(value):
    """Read one compaction entry, strictly (§ 摘要先成为 session 中的一条普通事实)."""
    if isinstance(value, CompactionSessionEntry):
        value = value.to_json()  # an entry object is read through its wire form
    if not isinstance(value, Mapping):
        raise EntryParseError(f"session entry: must be an object, got {type(value).__name__}")
    entry_id = value.get("id")
    if not isinstance(entry_id, str) or not entry_id.strip():
        raise EntryParseError("session entry: id must be a non-blank string", field="id")

    def fail(field, problem):
        raise EntryParseError(
            f"session entry {entry_id}: {field} {problem}", entry_id=entry_id, field=field
        )

    def text(field, raw):
        if not isinstance(raw, str) or not raw.strip():
            fail(field, f"must be a non-blank string, got {raw!r}")
        return raw

    def number(field, raw):
        # an int is always finite (math.isfinite(10**400) would raise OverflowError)
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw):
            fail(field, f"must be a finite number, got {raw!r}")
        return raw

    def exact_fields(prefix, mapping, expected):
        for key in mapping:  # unknown names first: an early-draft name is named as such
            if key not in expected:
                fail(prefix + str(key), "is not a field of a compaction entry")
        for key in sorted(expected):
            if key not in mapping:
                fail(prefix + key, "is missing")

    # 1. Only compaction entries: a message or metadata entry is not this function's business.
    if value.get("type") != "compaction":
        fail("type", f"must be 'compaction', got {value.get('type')!r}")
    # 2. Exactly the current fields: no draft names, nothing missing.
    exact_fields("", value, ENTRY_FIELDS)
    parent_id = text("parentId", value["parentId"])  # a compaction always has a parent
    timestamp = number("timestamp", value["timestamp"])
    first_kept = text("firstKeptEntryId", value["firstKeptEntryId"])
    # 3. tokensBefore is the caller's estimate: checked, never recomputed.
    tokens_before = number("tokensBefore", value["tokensBefore"])
    if tokens_before < 0:
        fail("tokensBefore", f"must be >= 0, got {tokens_before!r}")
    # 4. The seven-field summary.
    summary = value["summary"]
    if not isinstance(summary, Mapping):
        fail("summary", f"must be an object, got {type(summary).__name__}")
    exact_fields("summary.", summary, SUMMARY_FIELDS)
    goal = text("summary.goal", summary["goal"])
    lists = {}
    for name in LIST_FIELDS:
        items = summary[name]
        if not isinstance(items, list):
            fail(f"summary.{name}", f"must be an array of strings, got {type(items).__name__}")
        for index, item in enumerate(items):
            if not isinstance(item, str):
                fail(f"summary.{name}[{index}]", f"must be a string, got {item!r}")
        lists[name] = tuple(items)  # a new tuple: shares nothing with the caller's list
    # 5. A new, frozen entry.
    return CompactionSessionEntry(
        id=entry_id,
        parent_id=parent_id,
        timestamp=timestamp,
        summary=CompactionSummary(
            goal=goal,
            constraints=lists["constraints"],
            completed=lists["completed"],
            decisions=lists["decisions"],
            changed_files=lists["changedFiles"],
            unresolved=lists["unresolved"],
            next=lists["next"],
        ),
        first_kept_entry_id=first_kept,
        tokens_before=tokens_before,
    )