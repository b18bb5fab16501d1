"""User interactions: the unit the budget keeps or drops whole (Lab 11.2,
"两个 tool result 仍属于 u3 开始的同一组").

``group_interactions`` walks the active path's message entries once:

* a system message belongs to no group and is skipped wherever it stands;
* a user message closes the current group and opens a new one; any other message before
  the first user message is an error;
* when a group closes, four id relations are checked -- each tool-call id is declared
  once; each result's ``toolCallId`` names a call of the same group; a call has at most
  one result; every call has a result.

Only ids take part in pairing: positions, ``toolName`` and the final assistant message
do not, so results may come in any order (even before their call). A cut between two
groups is the only cut that never separates a tool call from its result.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ctxlab.entries import (
    CompactionSessionEntry,
    MessageSessionEntry,
    MetadataSessionEntry,
    SessionEntry,
)
from ctxlab.errors import InteractionError
from ctxlab.messages import AssistantMessage, SystemMessage, ToolResultMessage, UserMessage

__all__ = ["InteractionGroup", "group_interactions"]


@dataclass(frozen=True)
class InteractionGroup:
    """One user interaction: the user message that opens it and everything up to the next.

    ``entries`` keeps path order. ``tool_pairs`` maps each call id to the id of the entry
    holding its result, in declaration order.
    """

    entries: tuple[MessageSessionEntry, ...]
    tool_pairs: tuple[tuple[str, str], ...] = ()

    @property
    def head(self) -> MessageSessionEntry:
        """The user message entry that starts the group."""
        return self.entries[0]

    @property
    def entry_ids(self) -> tuple[str, ...]:
        return tuple(entry.id for entry in self.entries)


class _OpenGroup:
    """A group being collected; ``close`` checks the four call/result relations."""

    def __init__(self, head: MessageSessionEntry) -> None:
        self.entries: list[MessageSessionEntry] = [head]
        self.calls: dict[str, str] = {}  # call id -> id of the entry that declares it
        self.results: dict[str, str] = {}  # call id -> id of the entry that answers it

    def add(self, entry: MessageSessionEntry) -> None:
        self.entries.append(entry)
        message = entry.message
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                if call.id in self.calls:
                    first = self.calls[call.id]
                    where = f"in {entry.id}" if first == entry.id else f"in {first} and {entry.id}"
                    raise InteractionError(
                        f"interaction {self.entries[0].id}: tool call {call.id} is declared"
                        f" twice ({where})",
                        entry_id=entry.id,
                        call_id=call.id,
                    )
                self.calls[call.id] = entry.id
        elif isinstance(message, ToolResultMessage):
            call_id = message.tool_call_id
            if call_id in self.results:
                raise InteractionError(
                    f"interaction {self.entries[0].id}: tool call {call_id} has two results"
                    f" ({self.results[call_id]} and {entry.id})",
                    entry_id=entry.id,
                    call_id=call_id,
                )
            self.results[call_id] = entry.id

    def close(self) -> InteractionGroup:
        head = self.entries[0].id
        for call_id, result_id in self.results.items():
            if call_id not in self.calls:
                raise InteractionError(
                    f"interaction {head}: tool result {result_id} answers {call_id}, but no"
                    f" tool call {call_id} is declared in this interaction",
                    entry_id=result_id,
                    call_id=call_id,
                )
        for call_id, declared_in in self.calls.items():
            if call_id not in self.results:
                raise InteractionError(
                    f"interaction {head}: tool call {call_id} (declared in {declared_in})"
                    " has no tool result",
                    entry_id=declared_in,
                    call_id=call_id,
                )
        pairs = tuple((call_id, self.results[call_id]) for call_id in self.calls)
        return InteractionGroup(tuple(self.entries), pairs)


def group_interactions(entries: Iterable[SessionEntry]) -> list[InteractionGroup]:
    """Cut message entries into whole user interactions, checking call/result ids.

    ``entries`` are the active path's message entries, in path order. Raises
    :class:`~ctxlab.errors.InteractionError` naming the entry and/or call id involved.
    """
    groups: list[InteractionGroup] = []
    current: _OpenGroup | None = None
    for index, entry in enumerate(entries):
        if not isinstance(entry, MessageSessionEntry):
            if not isinstance(entry, (MetadataSessionEntry, CompactionSessionEntry)):
                raise InteractionError(
                    f"entries[{index}] is not a session entry ({type(entry).__name__});"
                    " parse it with parse_session_entry first"
                )
            raise InteractionError(
                f"entry {entry.id} is a {entry.type} entry; group_interactions takes"
                " message entries only (skip metadata and compaction entries first)",
                entry_id=entry.id,
            )
        message = entry.message
        if isinstance(message, SystemMessage):
            continue
        if isinstance(message, UserMessage):
            if current is not None:
                groups.append(current.close())
            current = _OpenGroup(entry)
        elif current is None:
            raise InteractionError(
                f"entry {entry.id} ({message.role}) comes before the first user message;"
                " every interaction starts with a user message",
                entry_id=entry.id,
            )
        else:
            current.add(entry)
    if current is not None:
        groups.append(current.close())
    return groups


def message_entries(path: Sequence[SessionEntry]) -> list[MessageSessionEntry]:
    """The message entries of a path, in order (metadata and compactions skipped)."""
    return [entry for entry in path if isinstance(entry, MessageSessionEntry)]
