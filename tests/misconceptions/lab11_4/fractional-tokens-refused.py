"""Misconception 11.4/fractional-tokens-refused: tokens_before must be a whole number: a fractional estimate such as 29.5 is refused.

A student-style create_compaction_entry with one mistake (the catalogue's evidence,
ctxlab/lab/grading/catalogue/lab11_4.json).
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
    """A new compaction entry after the path's leaf (§ compact-1 记录摘要与保留起点). Pure."""
    # 1. (ctxlab extensions) There must be a leaf to append after; the new id must be new.
    if not active_path:
        raise CompactionError(f"compaction {id}: the active path is empty, there is no leaf")
    if any(entry.id == id for entry in active_path):
        raise CompactionError(f"compaction {id}: the id {id} is already on the path")

    # 2. firstKeptEntryId must be the user message that starts an interaction group.
    #    System messages belong to no group; compactions and metadata are not messages.
    messages = [entry for entry in active_path if entry.type == "message"]
    group_heads = [group.head.id for group in group_interactions(messages)]
    if first_kept_entry_id not in group_heads:
        raise CompactionError(
            f"compaction {id}: firstKeptEntryId {first_kept_entry_id} is not the user message"
            f" that starts a group (the groups start at {', '.join(group_heads)})"
        )

    if not isinstance(tokens_before, int):  # tokens counted one by one
        raise CompactionError(f"compaction {id}: tokensBefore must be a whole number, got {tokens_before!r}")

    # 3. The parent is always the path's last entry: the caller cannot pass another one.
    if isinstance(summary, CompactionSummary):
        summary = summary.to_json()
    candidate = {
        "type": "compaction",
        "id": id,
        "parentId": active_path[-1].id,
        "timestamp": timestamp,
        "summary": dict(summary),
        "firstKeptEntryId": first_kept_entry_id,
        "tokensBefore": tokens_before,
    }
    # 4. The strict parser is the final check and makes a new, frozen copy.
    return parse_session_entry(candidate)
