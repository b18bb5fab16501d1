"""Lab 11.1, written from the chapter alone, taking every choice it leaves open the other way
from ctxlab: plain ValueErrors (no EntryParseError, no .field), unknown keys ignored (only
the chapter's early-draft ``files`` is an old alias), a white-space id or goal accepted (the
chapter says "不能为空": not empty), any number as timestamp (NaN too), a tokensBefore too
large for a float a crash (OverflowError), and only the wire form read (no entry objects).
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
    # An int too large for a float raises OverflowError here: the chapter's numbers are
    # JavaScript doubles and never that large (ctxlab's row asks for no crash).
    if not math.isfinite(tokens_before) or tokens_before < 0:
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
        if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
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
