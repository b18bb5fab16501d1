"""The session tree (chapter 10): from a leaf back to the root.

Entries form a tree through ``parentId``; the *active path* is root..leaf. Chapter 11's
functions all take such a path, never the whole tree: "调用者先用第 10 章的 pathTo()
得到活动路径".
"""

from __future__ import annotations

from collections.abc import Iterable

from ctxlab.entries import ENTRY_CLASSES, SessionEntry, not_an_entry, reading_entries
from ctxlab.errors import SessionTreeError

__all__ = ["path_to"]


def path_to(entries: Iterable[SessionEntry], leaf_id: str) -> list[SessionEntry]:
    """Return the entries from the root down to ``leaf_id``, following ``parentId``.

    Entries on other branches are ignored. Errors (naming the id involved): a duplicate id
    anywhere, an unknown leaf, a parent that is not among ``entries``, a cycle.
    """
    if not isinstance(leaf_id, str):
        raise SessionTreeError(f"leaf id must be a string, got {type(leaf_id).__name__}")
    if not isinstance(entries, Iterable):
        raise SessionTreeError(f"entries must be a list of entries, got {type(entries).__name__}")
    entries = list(entries)  # read again if one of them turns out malformed
    with reading_entries(entries):  # an entry built by hand with a wrong id or parentId
        return _path_to(entries, leaf_id)


def _path_to(entries: list[SessionEntry], leaf_id: str) -> list[SessionEntry]:
    """:func:`path_to` once its arguments are known to be a list and a string."""
    by_id: dict[str, SessionEntry] = {}
    for index, entry in enumerate(entries):
        if not isinstance(entry, ENTRY_CLASSES):
            raise SessionTreeError(not_an_entry("entries", index, entry))
        if entry.id in by_id:
            raise SessionTreeError(f"duplicate entry id {entry.id!r}", entry_id=entry.id)
        by_id[entry.id] = entry
    if leaf_id not in by_id:
        raise SessionTreeError(f"leaf {leaf_id!r} is not in the session", entry_id=leaf_id)
    path: list[SessionEntry] = []
    seen: set[str] = set()
    current: str | None = leaf_id
    while current is not None:
        if current in seen:
            raise SessionTreeError(
                f"cycle: entry {current!r} is its own ancestor", entry_id=current
            )
        seen.add(current)
        found = by_id.get(current)
        if found is None:
            child = path[-1].id
            raise SessionTreeError(
                f"entry {child!r} names parent {current!r}, which is not in the session",
                entry_id=child,
            )
        path.append(found)
        current = found.parent_id
    path.reverse()
    return path
