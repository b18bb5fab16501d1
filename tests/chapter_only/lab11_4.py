"""Lab 11.4, written from the chapter alone, taking every choice it leaves open the other way
from ctxlab: plain ValueErrors naming only the first kept entry (no CompactionError, no
EntryParseError), an id already on the path accepted, the summary taken only as a
CompactionSummary, its own final check instead of ctxlab's parser (a white-space id and a
NaN timestamp pass: the chapter asks neither), and no word for an empty path.
"""

import math

from ctxlab import CompactionSessionEntry, CompactionSummary, group_interactions


def create_compaction_entry(
    active_path, *, id, timestamp, summary, first_kept_entry_id, tokens_before
):
    leaf = active_path[-1]  # an empty path has no leaf (IndexError)
    messages = [entry for entry in active_path if entry.type == "message"]
    heads = [group.entries[0].id for group in group_interactions(messages)]
    if first_kept_entry_id not in heads:
        raise ValueError(f"{first_kept_entry_id!r} is not the first message of an interaction")
    where = f"compaction {id}"
    if not isinstance(id, str):
        raise ValueError(f"{where}: id must be a string")
    if isinstance(timestamp, bool) or not isinstance(timestamp, (int, float)):
        raise ValueError(f"{where}: timestamp must be a number")
    if (
        isinstance(tokens_before, bool)
        or not isinstance(tokens_before, (int, float))
        or (isinstance(tokens_before, float) and not math.isfinite(tokens_before))
        or tokens_before < 0
    ):
        raise ValueError(f"{where}: tokensBefore must be a finite number >= 0")
    if not isinstance(summary, CompactionSummary):
        raise ValueError(f"{where}: summary must be a CompactionSummary")
    if not isinstance(summary.goal, str) or summary.goal == "":
        raise ValueError(f"{where}: summary.goal must not be empty")
    for name in ("constraints", "completed", "decisions", "changed_files", "unresolved", "next"):
        if not all(isinstance(item, str) for item in getattr(summary, name)):
            raise ValueError(f"{where}: every item of summary.{name} must be a string")
    return CompactionSessionEntry(
        id=id,
        parent_id=leaf.id,
        timestamp=timestamp,
        summary=summary,
        first_kept_entry_id=first_kept_entry_id,
        tokens_before=tokens_before,
    )
