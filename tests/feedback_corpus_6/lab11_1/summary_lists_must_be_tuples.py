"""Tests the summary lists with isinstance(items, tuple), so every JSON array is refused.

CompactionSummary declares its lists as tuple[str, ...], and the student checks the wire value
against the dataclass's type instead of the JSON one: json.loads gives a Python list for an array,
never a tuple.

The chapter's rule (§「摘要先成为 session 中的一条普通事实」): `constraints: string[]` and the other
lists are arrays, and 「数组中的每一项都是字符串」 — a record whose lists are arrays of strings is
valid, and the parser turns them into new values itself (「解析器返回新对象」).
"""

import math

from ctxlab import CompactionSessionEntry, CompactionSummary

LISTS = ("constraints", "completed", "decisions", "changedFiles", "unresolved", "next")


def parse_compaction_entry(value):
    if not isinstance(value, dict):
        raise ValueError("a session entry must be an object")
    entry_id = value.get("id")
    if not isinstance(entry_id, str):
        raise ValueError("a session entry needs a string id")
    where = f"compaction {entry_id}"

    def need(mapping, key):
        if key not in mapping:
            raise ValueError(f"{where}: {key} is missing")
        return mapping[key]

    def text(raw, name, *, empty_ok=True):
        if not isinstance(raw, str) or (not empty_ok and raw == ""):
            raise ValueError(f"{where}: {name} must be a non-empty string")
        return raw

    def number(raw, name):
        if isinstance(raw, bool) or not isinstance(raw, (int, float)):
            raise ValueError(f"{where}: {name} must be a number")
        return raw

    if value.get("type") != "compaction":
        raise ValueError(f"{where}: type must be compaction")
    parent_id = text(need(value, "parentId"), "parentId", empty_ok=False)
    timestamp = number(need(value, "timestamp"), "timestamp")
    first_kept = text(need(value, "firstKeptEntryId"), "firstKeptEntryId", empty_ok=False)
    tokens_before = number(need(value, "tokensBefore"), "tokensBefore")
    try:
        finite = math.isfinite(tokens_before)
    except OverflowError:
        finite = False
    if not finite or tokens_before < 0:
        raise ValueError(f"{where}: tokensBefore must be a finite number >= 0")
    summary = need(value, "summary")
    if not isinstance(summary, dict):
        raise ValueError(f"{where}: summary must be an object")
    if "files" in summary:
        raise ValueError(f"{where}: summary.files is an old alias of changedFiles")
    goal = text(need(summary, "goal"), "summary.goal", empty_ok=False)
    lists = {}
    for name in LISTS:
        items = need(summary, name)
        if not isinstance(items, tuple) or not all(isinstance(item, str) for item in items):
            raise ValueError(f"{where}: summary.{name} must be an array of strings")
        lists[name] = tuple(items)
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


def WITNESS():
    from ctxlab import fixtures

    record = fixtures.compact1().to_json()
    # compact-1 as the chapter records it, read from JSON: its lists are arrays
    return (record,), {}
