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

The rule lives in one place, :class:`GroupBuilder`, which takes the entries one at a
time: ``group_interactions`` feeds it a list, ``build_context`` feeds it the path in its
single pass, and ``ContextWindow`` feeds it each entry as it is appended.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from ctxlab.entries import (
    ENTRY_CLASSES,
    MessageSessionEntry,
    SessionEntry,
    not_an_entry,
    raise_malformed,
)
from ctxlab.errors import InteractionError
from ctxlab.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

__all__ = ["GroupBuilder", "InteractionGroup", "group_interactions"]


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


class GroupBuilder:
    """Cuts message entries into interactions as they arrive, checking the four id
    relations of each group.

    :meth:`feed` takes the next entries of the path. A problem does not stop the
    builder: the first problem of each group is kept, and :meth:`problem` returns the
    first one of the groups from a given group on, so a caller can ignore the groups it
    will not use (those before a compaction's first kept entry). Read-only attributes:

    * ``groups`` -- each group's entries, in path order (the last one is still open);
    * ``heads`` -- the id of each group's user message -> the group's index;
    * ``preamble`` -- the error for the first message before the first user message.
    """

    __slots__ = ("_calls", "_problem", "_problems", "_results", "groups", "heads", "preamble")

    def __init__(self) -> None:
        self.groups: list[list[MessageSessionEntry]] = []
        self.heads: dict[str, int] = {}
        self.preamble: InteractionError | None = None
        self._problems: list[tuple[int, InteractionError]] = []  # closed groups, ascending
        # The open group: call id -> id of the entry that declares / answers it, and the
        # first problem its entries have shown so far (a call declared or answered twice).
        self._calls: dict[str, str] = {}
        self._results: dict[str, str] = {}
        self._problem: InteractionError | None = None

    def feed(
        self, entries: Iterable[object], *, start: str | None = None
    ) -> Iterator[tuple[int, object]]:
        """Group the next entries of the path; hand back, with its index in ``entries``,
        every entry that belongs to no group: a system message, a metadata or compaction
        entry, or anything that is not a session entry (the caller decides about those).

        ``start`` (``build_context`` on a path with a compaction; for a builder that has no
        group yet): group only from the user message with that id on -- the compaction's
        first kept entry. Every entry before it is handed back ungrouped and unchecked: the
        interactions there are not candidates of the budget.

        This loop is the hot path of ``build_context`` on a long history, so it keeps its
        state in local variables; a group's checks on closing happen in :meth:`_close`.
        """
        groups, heads = self.groups, self.heads
        calls, results = self._calls, self._results
        current = groups[-1] if groups else None
        entry: object = None  # the entry being read, named if it turns out malformed
        try:
            numbered = enumerate(entries)
            if start is not None and current is None:
                for index, entry in numbered:
                    if (
                        isinstance(entry, MessageSessionEntry)
                        and entry.id == start
                        and isinstance(entry.message, UserMessage)
                    ):
                        current = [entry]
                        heads[entry.id] = 0
                        groups.append(current)
                        break
                    yield index, entry
            for index, entry in numbered:
                if not isinstance(entry, MessageSessionEntry):
                    yield index, entry
                    continue
                message = entry.message
                if isinstance(message, UserMessage):  # closes the open group, opens a new one
                    if calls or results or self._problem is not None:
                        self._close()
                    current = [entry]
                    heads.setdefault(entry.id, len(groups))
                    groups.append(current)
                elif isinstance(message, SystemMessage):
                    yield index, entry
                elif current is None:
                    self._before_first_user(entry)
                elif isinstance(message, ToolResultMessage):
                    current.append(entry)
                    call_id = message.tool_call_id
                    if call_id in results:
                        self._answered_twice(call_id, entry.id)
                    else:
                        results[call_id] = entry.id
                else:  # an assistant message: text blocks and tool calls
                    current.append(entry)
                    for block in message.content:
                        if isinstance(block, ToolCall):
                            if block.id in calls:
                                self._declared_twice(block.id, entry.id)
                            else:
                                calls[block.id] = entry.id
        except (AttributeError, TypeError) as exc:  # an entry object built with a wrong field
            raise_malformed(exc, (entry, *(current or ())))

    def problem(
        self, start: int = 0, *, preamble: bool = True, closing: bool = True
    ) -> InteractionError | None:
        """The first problem, in path order, of the groups from index ``start`` on, or None.

        ``preamble``: also a message before the first user message. ``closing``: check the
        open group's relations as if it closed now (else only what its entries so far
        already break: a call declared twice, a call answered twice).
        """
        if preamble and self.preamble is not None:
            return self.preamble
        closed = bisect_left(self._problems, start, key=lambda found: found[0])
        if closed < len(self._problems):
            return self._problems[closed][1]
        if not self.groups or start >= len(self.groups):
            return None
        if self._problem is None and closing:
            return self._relations_problem()
        return self._problem

    def finish(self) -> list[InteractionGroup]:
        """Close the last group; the groups, or the first problem raised."""
        problem = self.problem()
        if problem is not None:
            raise problem
        return [InteractionGroup(tuple(entries), _tool_pairs(entries)) for entries in self.groups]

    # -- the open group ---------------------------------------------------------------------

    def _close(self) -> None:
        """Check the open group's relations before the next user message opens a new one."""
        problem = self._problem or self._relations_problem()
        if problem is not None:
            self._problems.append((len(self.groups) - 1, problem))
        self._calls.clear()
        self._results.clear()
        self._problem = None

    def _before_first_user(self, entry: MessageSessionEntry) -> None:
        if self.preamble is None:
            self.preamble = InteractionError(
                f"entry {entry.id} ({entry.message.role}) comes before the first user message;"
                " every interaction starts with a user message",
                entry_id=entry.id,
            )

    def _declared_twice(self, call_id: str, entry_id: str) -> None:
        if self._problem is None:
            first = self._calls[call_id]
            where = f"in {entry_id}" if first == entry_id else f"in {first} and {entry_id}"
            self._problem = self._error(
                f"tool call {call_id} is declared twice ({where})", entry_id, call_id
            )

    def _answered_twice(self, call_id: str, entry_id: str) -> None:
        if self._problem is None:
            self._problem = self._error(
                f"tool call {call_id} has two results ({self._results[call_id]} and {entry_id})",
                entry_id,
                call_id,
            )

    def _relations_problem(self) -> InteractionError | None:
        """Every result answers a call of the group, every call has a result."""
        calls, results = self._calls, self._results
        if calls.keys() == results.keys():  # also when the group has no tool calls at all
            return None
        for call_id, result_id in results.items():
            if call_id not in calls:
                return self._error(
                    f"tool result {result_id} answers {call_id}, but no tool call {call_id}"
                    " is declared in this interaction",
                    result_id,
                    call_id,
                )
        for call_id, declared_in in calls.items():
            if call_id not in results:
                return self._error(
                    f"tool call {call_id} (declared in {declared_in}) has no tool result",
                    declared_in,
                    call_id,
                )
        raise AssertionError("unreachable: the key sets differ")  # pragma: no cover

    def _error(self, problem: str, entry_id: str, call_id: str) -> InteractionError:
        head = self.groups[-1][0].id
        return InteractionError(
            problem, where=f"interaction {head}", entry_id=entry_id, call_id=call_id
        )


def _tool_pairs(entries: Sequence[MessageSessionEntry]) -> tuple[tuple[str, str], ...]:
    """Each call id of a whole group and the id of the entry holding its result, in
    declaration order."""
    results = {
        entry.message.tool_call_id: entry.id
        for entry in entries
        if isinstance(entry.message, ToolResultMessage)
    }
    return tuple(
        (call.id, results[call.id])
        for entry in entries
        if isinstance(entry.message, AssistantMessage)
        for call in entry.message.tool_calls
    )


def group_interactions(entries: Iterable[SessionEntry]) -> list[InteractionGroup]:
    """Cut message entries into whole user interactions, checking call/result ids.

    ``entries`` are the active path's message entries, in path order. Raises
    :class:`~ctxlab.errors.InteractionError` naming the entry and/or call id involved.
    """
    if not isinstance(entries, Iterable):
        raise InteractionError(
            f"entries must be a list of message entries, got {type(entries).__name__}"
        )
    builder = GroupBuilder()
    for index, entry in builder.feed(entries):
        if isinstance(entry, MessageSessionEntry):
            continue  # a system message belongs to no group
        problem = builder.problem(closing=False)  # an earlier problem comes first
        if problem is not None:
            raise problem
        if not isinstance(entry, ENTRY_CLASSES):
            raise InteractionError(not_an_entry("entries", index, entry))
        raise InteractionError(
            f"entry {entry.id} is a {entry.type} entry; group_interactions takes"
            " message entries only (skip metadata and compaction entries first)",
            entry_id=entry.id,
        )
    return builder.finish()


def message_entries(path: Sequence[SessionEntry]) -> list[MessageSessionEntry]:
    """The message entries of a path, in order (metadata and compactions skipped)."""
    return [entry for entry in path if isinstance(entry, MessageSessionEntry)]
