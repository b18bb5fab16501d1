"""Builds the entry directly instead of passing the candidate through parse_session_entry.

The student trusted the caller's values (the function builds the object itself, so why
parse it?) and a negative tokens_before gets through.

The chapter's rule it breaks (§ compact-1 记录摘要与保留起点):
「函数复用 groupInteractions() 找到这些组首，再把候选对象交给 parseSessionEntry()
做最后一次运行时校验和复制。」
"""

from ctxlab import (
    CompactionError,
    CompactionSessionEntry,
    CompactionSummary,
    group_interactions,  # Lab 11.2's reference
    parse_session_entry,  # noqa: F401 (from the notebook's template)
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
    if not isinstance(summary, CompactionSummary):
        summary = CompactionSummary(
            goal=summary["goal"],
            constraints=tuple(summary["constraints"]),
            completed=tuple(summary["completed"]),
            decisions=tuple(summary["decisions"]),
            changed_files=tuple(summary["changedFiles"]),
            unresolved=tuple(summary["unresolved"]),
            next=tuple(summary["next"]),
        )
    return CompactionSessionEntry(
        id=id,
        parent_id=path[-1].id,
        timestamp=timestamp,
        summary=summary,
        first_kept_entry_id=first_kept_entry_id,
        tokens_before=tokens_before,
    )


# --- the input on which this function and ctxlab's reference differ ---


def WITNESS():
    """compact-1 with tokens_before = -1, which the parser refuses."""
    from ctxlab import fixtures

    path = fixtures.opening_path()
    options = dict(
        id="compact-1",
        timestamp=100,
        summary=fixtures.compact1_summary(),
        first_kept_entry_id="u2",
        tokens_before=-1,
    )
    return (path,), options
