"""Creating a compaction and rendering its summary (Lab 11.4, "compact-1 记录摘要与保留起点").

:func:`create_compaction_entry` is pure: it reads the active path, derives ``parentId``
from the last entry (the caller cannot pass a second, contradicting answer), checks that
``first_kept_entry_id`` starts a whole interaction, and returns a new entry. It does not
touch a store: the caller shows the summary, asks for confirmation, and then calls
``store.append(entry)`` explicitly.

:func:`render_summary` turns the seven-field summary into the text of the synthetic user
message that resumes a session (Lab 11.5). The Chinese rendering (``"zh"``, the default
everywhere a summary is rendered) is the course code's, byte for byte, so a projection made
with ctxlab's defaults is the one the course's TypeScript code makes; the English one
(``"en"``, an explicit choice) has the same shape.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, TypeAlias

from ctxlab.entries import (
    ENTRY_CLASSES,
    CompactionSessionEntry,
    CompactionSummary,
    MessageSessionEntry,
    SessionEntry,
    not_an_entry,
    parse_session_entry,
)
from ctxlab.errors import CompactionError, malformed, shown
from ctxlab.interactions import group_interactions, message_entries
from ctxlab.messages import SystemMessage

__all__ = ["SummaryLanguage", "create_compaction_entry", "render_summary"]

SummaryLanguage: TypeAlias = Literal["en", "zh"]

_LABELS: dict[str, tuple[str, str, tuple[str, ...], str]] = {
    # heading, goal prefix, the six list headings in fixed order, empty-list placeholder
    "zh": (
        "【会话压缩摘要】",
        "目标：",
        ("约束：", "已完成：", "决策：", "变更文件：", "未解决：", "下一步："),
        "- （无）",
    ),
    "en": (
        "[Conversation summary]",
        "Goal: ",
        ("Constraints:", "Completed:", "Decisions:", "Changed files:", "Unresolved:", "Next:"),
        "- (none)",
    ),
}


def render_summary(summary: CompactionSummary, language: SummaryLanguage = "zh") -> str:
    """The text of the synthetic summary message: a heading, the goal, then the six lists
    (constraints, completed, decisions, changed files, unresolved, next), one ``- item``
    per line and a single placeholder line for an empty list, joined by ``\\n``.

    ``language`` is ``"zh"`` (the default: the course's rendering, ``【会话压缩摘要】``) or
    ``"en"`` (``[Conversation summary]``); anything else is a
    :class:`~ctxlab.errors.CompactionError`.
    """
    if language not in _LABELS:
        raise CompactionError(f"summary language must be 'en' or 'zh', got {shown(language)}")
    if not isinstance(summary, CompactionSummary):
        raise CompactionError(
            f"summary must be a CompactionSummary, got {type(summary).__name__}",
            where="render_summary",
        )
    heading, goal_prefix, list_headings, empty = _LABELS[language]
    lists = (
        summary.constraints,
        summary.completed,
        summary.decisions,
        summary.changed_files,
        summary.unresolved,
        summary.next,
    )
    lines = [heading, f"{goal_prefix}{summary.goal}"]
    try:
        for title, items in zip(list_headings, lists, strict=True):
            lines.append(title)
            lines.extend([f"- {item}" for item in items] or [empty])
    except TypeError as exc:  # a summary built by hand with a list that is not one
        raise malformed(summary, exc, where="render_summary") from exc
    return "\n".join(lines)


def compaction_error(compaction_id: str, problem: str) -> CompactionError:
    """The error about compaction ``compaction_id`` (one being created, or a path's latest)."""
    return CompactionError(problem, where=f"compaction {compaction_id}", entry_id=compaction_id)


def first_kept_problem(path: Sequence[SessionEntry], entry_id: str) -> str | None:
    """Why ``entry_id`` cannot be the first kept entry of ``path``, or None if it can.

    Valid first kept entries are exactly the user messages that start an interaction of
    the path's message entries ("只能指向一组的首条 user message").
    """
    groups = group_interactions(message_entries(path))
    for group in groups:
        if group.head.id == entry_id:
            return None
        if entry_id in group.entry_ids:
            return (
                f"{entry_id} is inside the interaction that {group.head.id} starts; only the"
                " user message that starts an interaction can be the first kept entry"
            )
    for entry in path:
        if entry.id != entry_id:
            continue
        if isinstance(entry, MessageSessionEntry) and isinstance(entry.message, SystemMessage):
            return (
                f"{entry_id} is a system message, which belongs to no interaction (system"
                " state is replayed from the whole path); it cannot be the first kept entry"
            )
        return (
            f"{entry_id} is a {entry.type} entry, not the user message that starts an interaction"
        )
    return f"{entry_id} is not on the active path"


def create_compaction_entry(
    active_path: Sequence[SessionEntry],
    *,
    id: str,
    timestamp: int | float,
    summary: CompactionSummary | Mapping[str, object],
    first_kept_entry_id: str,
    tokens_before: int | float,
) -> CompactionSessionEntry:
    """Build (but do not store) the compaction entry that follows ``active_path``.

    ``parentId`` is the last entry's id. Errors: an empty path; an ``id`` already on the
    path; a ``first_kept_entry_id`` that is not the user message starting an interaction;
    and anything :func:`~ctxlab.entries.parse_session_entry` refuses (its final check and
    copy of the candidate).
    """
    if not active_path:
        raise compaction_error(id, "the active path is empty; there is no leaf to append after")
    for index, entry in enumerate(active_path):
        if not isinstance(entry, ENTRY_CLASSES):
            raise compaction_error(id, not_an_entry("active_path", index, entry))
    if any(entry.id == id for entry in active_path):
        raise compaction_error(id, f"id {id!r} is already on the path")
    problem = first_kept_problem(active_path, first_kept_entry_id)
    if problem:
        raise compaction_error(id, f"firstKeptEntryId {problem}")
    wire_summary = summary.to_json() if isinstance(summary, CompactionSummary) else summary
    entry = parse_session_entry(
        {
            "type": "compaction",
            "id": id,
            "parentId": active_path[-1].id,
            "timestamp": timestamp,
            "summary": wire_summary,
            "firstKeptEntryId": first_kept_entry_id,
            "tokensBefore": tokens_before,
        }
    )
    assert isinstance(entry, CompactionSessionEntry)
    return entry
