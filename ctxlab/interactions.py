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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ctxlab.entries import ENTRY_CLASSES, MessageSessionEntry, SessionEntry, not_an_entry
from ctxlab.errors import InteractionError
from ctxlab.messages import AssistantMessage, SystemMessage, ToolCall, UserMessage

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

    :meth:`add` takes the next message entry. A problem does not stop the builder: the
    first problem of each group is kept, and :meth:`problem` returns the first one of
    the groups from a given group on, so a caller can ignore groups it will not use
    (those before a compaction's first kept entry). Attributes, read-only for callers:

    * ``groups`` -- each group's entries, in path order (the last one is still open);
    * ``heads`` -- the id of each group's user message -> the group's index.
    """

    __slots__ = (
        "_calls",
        "_pairs",
        "_problem",
        "_problems",
        "_results",
        "groups",
        "heads",
        "preamble",
    )

    def __init__(self) -> None:
        self.groups: list[list[MessageSessionEntry]] = []
        self.heads: dict[str, int] = {}
        #: The error for a message before the first user message (the first such one).
        self.preamble: InteractionError | None = None
        self._problems: list[tuple[int, InteractionError]] = []  # closed groups, ascending
        self._pairs: list[tuple[tuple[str, str], ...]] = []  # tool pairs of closed groups
        # The open group: call id -> id of the entry that declares / answers it.
        self._calls: dict[str, str] = {}
        self._results: dict[str, str] = {}
        self._problem: InteractionError | None = None  # its first problem so far

    def add(self, entry: MessageSessionEntry) -> None:
        """Take the next message entry of the path (a system message is skipped)."""
        message = entry.message
        if isinstance(message, UserMessage):
            if self.groups:
                self._close()
            self.heads.setdefault(entry.id, len(self.groups))
            self.groups.append([entry])
        elif isinstance(message, SystemMessage):
            return
        elif not self.groups:
            if self.preamble is None:
                self.preamble = InteractionError(
                    f"entry {entry.id} ({message.role}) comes before the first user message;"
                    " every interaction starts with a user message",
                    entry_id=entry.id,
                )
        elif isinstance(message, AssistantMessage):
            self.groups[-1].append(entry)
            for block in message.content:
                if isinstance(block, ToolCall):
                    if block.id in self._calls:
                        self._declared_twice(block.id, entry.id)
                    else:
                        self._calls[block.id] = entry.id
        else:  # a tool result
            self.groups[-1].append(entry)
            call_id = message.tool_call_id
            if call_id in self._results:
                self._answered_twice(call_id, entry.id)
            else:
                self._results[call_id] = entry.id

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
        pairs = [*self._pairs, self._open_pairs()] if self.groups else []
        return [
            InteractionGroup(tuple(entries), tool_pairs)
            for entries, tool_pairs in zip(self.groups, pairs, strict=True)
        ]

    # -- the open group's relations -------------------------------------------------------

    def _close(self) -> None:
        problem = self._problem or self._relations_problem()
        if problem is not None:
            self._problems.append((len(self.groups) - 1, problem))
        self._pairs.append(self._open_pairs())
        if self._calls or self._results:
            self._calls, self._results = {}, {}
        self._problem = None

    def _open_pairs(self) -> tuple[tuple[str, str], ...]:
        results = self._results
        return tuple((call_id, results[call_id]) for call_id in self._calls if call_id in results)

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


def group_interactions(entries: Iterable[SessionEntry]) -> list[InteractionGroup]:
    """Cut message entries into whole user interactions, checking call/result ids.

    ``entries`` are the active path's message entries, in path order. Raises
    :class:`~ctxlab.errors.InteractionError` naming the entry and/or call id involved.
    """
    builder = GroupBuilder()
    for index, entry in enumerate(entries):
        if not isinstance(entry, MessageSessionEntry):
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
        builder.add(entry)
    return builder.finish()


def message_entries(path: Sequence[SessionEntry]) -> list[MessageSessionEntry]:
    """The message entries of a path, in order (metadata and compactions skipped)."""
    return [entry for entry in path if isinstance(entry, MessageSessionEntry)]
