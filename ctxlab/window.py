"""An incremental context projection for a live agent (Labs 11.3 and 11.5 at agent scale).

:func:`~ctxlab.context.build_context` reads a whole active path on every call. An agent
calls the model after every turn, so it would walk its whole history again each time.
:class:`ContextWindow` is fed the entries as they are appended and keeps, up to date:

* the replayed system message (chapter 03's fold, one patch at a time) and its price;
* the latest compaction, the interaction its ``firstKeptEntryId`` starts, and the
  price of its summary message;
* the interaction groups, cut as user messages arrive, with a running check of the four
  call/result relations of each group, and each group's cost.

Every message is priced at most once, ever, and only when a build needs it: a build
walks the groups from the newest backwards and stops at the first that does not fit,
exactly like ``build_context``. So a build costs about as much as the context it
returns, however long the history is.

``window.build(...)`` returns a result EQUAL to ``build_context(path, ...)`` on the same
path with the same estimator, and raises the same error class when ``build_context``
would (an interaction still waiting for a tool result is such a case). Both share the
steps in :mod:`ctxlab.context`, so the checks come in the same order and the arithmetic
is the same. An error is rare; to name it exactly, the window asks the same function the
batch path uses (``group_interactions`` on the offending group, or the compaction check
on the whole path).

Appending checks the entry with :func:`~ctxlab.entries.parse_session_entry` and checks
the path: the first entry is a root (``parentId`` null), every later entry's
``parentId`` is the id of the entry before it, and an id is never used twice.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable
from typing import NoReturn

from ctxlab.compaction import SummaryLanguage
from ctxlab.context import (
    Budget,
    ContextResult,
    TokenEstimator,
    assemble_result,
    check_language,
    check_options,
    group_budget_of,
    price_entry,
    price_summary,
    price_system,
    resume_candidates,
    select_newest_suffix,
    summary_message,
)
from ctxlab.entries import (
    CompactionSessionEntry,
    MessageSessionEntry,
    SessionEntry,
    parse_session_entry,
)
from ctxlab.errors import ContextOptionError, CtxlabError, SessionTreeError, shown
from ctxlab.interactions import group_interactions
from ctxlab.json_values import FrozenDict
from ctxlab.messages import (
    AssistantMessage,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
)

__all__ = ["ContextWindow"]


class _SystemReplay:
    """Chapter 03's replay rule, folded one system message at a time.

    Non-empty contents are joined by a blank line, ``sections`` set a section and
    ``None`` deletes it, the timestamp is the first system message's. The replayed
    message and its price are cached until the next patch.
    """

    def __init__(self) -> None:
        self.first: SystemMessage | None = None
        self.content = ""
        self.sections: dict[str, str] = {}
        self.message: SystemMessage | None = None
        self.cost: int | float | None = None

    def add(self, message: SystemMessage) -> None:
        if self.first is None:
            self.first = message
        if message.content:
            self.content = (
                f"{self.content}\n\n{message.content}" if self.content else message.content
            )
        for name, text in (message.sections or {}).items():
            if text is None:
                self.sections.pop(name, None)
            else:
                self.sections[name] = text
        self.message = None  # replayed again, and priced again, on the next build
        self.cost = None

    def replayed(self) -> SystemMessage | None:
        if self.first is not None and self.message is None:
            self.message = SystemMessage(
                content=self.content,
                timestamp=self.first.timestamp,
                sections=FrozenDict[str | None](self.sections) if self.sections else None,
            )
        return self.message


class _Group:
    """One interaction as it grows: its entries, their prices so far, and a running
    check of the four call/result relations of ``group_interactions``."""

    __slots__ = ("broken", "calls", "costs", "entries", "orphans", "pending", "total")

    def __init__(self, head: MessageSessionEntry) -> None:
        self.entries: list[MessageSessionEntry] = [head]
        self.costs = 0  # how many entries (from the first) are priced
        self.total: int | float = 0  # their summed price, added in path order
        self.broken = False  # a call declared twice, or a call answered twice
        self.calls: set[str] = set()  # declared call ids
        self.pending: set[str] = set()  # declared calls without a result yet
        self.orphans: set[str] = set()  # results whose call is not declared (yet)

    def add(self, entry: MessageSessionEntry) -> None:
        self.entries.append(entry)
        message = entry.message
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                if call.id in self.calls:
                    self.broken = True
                self.calls.add(call.id)
                if call.id in self.orphans:
                    self.orphans.discard(call.id)
                else:
                    self.pending.add(call.id)
        elif isinstance(message, ToolResultMessage):
            call_id = message.tool_call_id
            if call_id in self.pending:
                self.pending.discard(call_id)
            elif call_id in self.calls or call_id in self.orphans:
                self.broken = True  # a second result for the same call
            else:
                self.orphans.add(call_id)

    def valid(self) -> bool:
        return not (self.broken or self.pending or self.orphans)

    def close(self) -> bool:
        """Freeze the check once the next user message arrives; return its verdict."""
        verdict = self.valid()
        self.calls, self.pending, self.orphans = set(), set(), set()
        return verdict

    def cost(self, estimate_tokens: TokenEstimator) -> int | float:
        """The group's cost; prices only entries not priced before (at most once each)."""
        while self.costs < len(self.entries):
            self.total += price_entry(estimate_tokens, self.entries[self.costs])
            self.costs += 1
        return self.total


class ContextWindow:
    """The context projection of a growing active path, kept up to date as it grows.

    ``estimate_tokens`` is fixed for the window's life (prices are cached). Feed entries
    with :meth:`append` in path order, or start from a path with :meth:`from_entries`;
    call :meth:`build` before each model call.
    """

    def __init__(self, *, estimate_tokens: TokenEstimator) -> None:
        if not callable(estimate_tokens):
            raise ContextOptionError(
                "estimate_tokens",
                f"ContextWindow: estimate_tokens must be callable, got {shown(estimate_tokens)}",
            )
        self._estimate = estimate_tokens
        self._path: list[SessionEntry] = []
        self._position: dict[str, int] = {}  # entry id -> index on the path
        self._system = _SystemReplay()
        self._preamble: MessageSessionEntry | None = None  # first non-user before any user
        self._groups: list[_Group] = []
        self._head_group: dict[str, int] = {}  # id of a group's user message -> group index
        self._broken_groups: list[int] = []  # closed groups that fail the check (ascending)
        self._compaction: CompactionSessionEntry | None = None
        self._first_kept_group: int | None = None  # None: the compaction's check fails
        self._summaries: dict[str, tuple[UserMessage, int | float]] = {}  # by language

    @classmethod
    def from_entries(
        cls, entries: Iterable[object], *, estimate_tokens: TokenEstimator
    ) -> ContextWindow:
        """A window over an existing active path (root first), e.g. ``path_to(...)``."""
        window = cls(estimate_tokens=estimate_tokens)
        for entry in entries:
            window.append(entry)
        return window

    def __len__(self) -> int:
        return len(self._path)

    def entries(self) -> list[SessionEntry]:
        """The active path so far (a new list; the entries are frozen)."""
        return list(self._path)

    # -- appending ------------------------------------------------------------------------

    def append(self, entry: object) -> SessionEntry:
        """Check ``entry`` and its place on the path, then add it; return the snapshot.

        Raises :class:`~ctxlab.errors.EntryParseError` for an invalid entry and
        :class:`~ctxlab.errors.SessionTreeError` when it does not continue the path. A
        refused entry leaves the window unchanged.
        """
        snapshot = parse_session_entry(entry)
        self._check_link(snapshot)
        self._position[snapshot.id] = len(self._path)
        self._path.append(snapshot)
        if isinstance(snapshot, CompactionSessionEntry):
            self._compacted(snapshot)
        elif isinstance(snapshot, MessageSessionEntry):
            self._message(snapshot)
        return snapshot

    def _check_link(self, entry: SessionEntry) -> None:
        if entry.id in self._position:
            raise SessionTreeError(
                f"entry {entry.id}: id {entry.id!r} is already on the path", entry_id=entry.id
            )
        if not self._path:
            if entry.parent_id is not None:
                raise SessionTreeError(
                    f"entry {entry.id}: the first entry of a path must be a root (parentId"
                    f" null), got parentId {entry.parent_id!r}",
                    entry_id=entry.id,
                )
            return
        leaf = self._path[-1].id
        if entry.parent_id != leaf:
            raise SessionTreeError(
                f"entry {entry.id}: parentId {entry.parent_id!r} is not the current leaf"
                f" {leaf!r}; a window follows one path, each entry after the one before",
                entry_id=entry.id,
            )

    def _message(self, entry: MessageSessionEntry) -> None:
        message = entry.message
        if isinstance(message, SystemMessage):
            self._system.add(message)  # system messages belong to no group
        elif isinstance(message, UserMessage):
            if self._groups:
                closing = len(self._groups) - 1
                if not self._groups[closing].close():
                    self._broken_groups.append(closing)
            self._head_group[entry.id] = len(self._groups)
            self._groups.append(_Group(entry))
        elif self._groups:
            self._groups[-1].add(entry)
        elif self._preamble is None:
            self._preamble = entry

    def _compacted(self, compaction: CompactionSessionEntry) -> None:
        self._compaction = compaction
        self._summaries = {}
        # build_context's rule: firstKeptEntryId stands earlier on the path and is the
        # user message that starts a group. Otherwise the build raises (see build).
        self._first_kept_group = self._head_group.get(compaction.first_kept_entry_id)

    # -- building ---------------------------------------------------------------------------

    def build(
        self,
        *,
        max_tokens: int | float,
        reserved_output: int | float,
        safety_margin: int | float,
        summary_language: SummaryLanguage = "zh",
    ) -> ContextResult:
        """The context projection now: equal to ``build_context(path, ...)``.

        Same options, same result, same error classes; the estimator is the window's.
        ``summary_language`` defaults to ``"zh"`` (the course's rendering), as in
        ``build_context``; ``"en"`` is the English one.
        """
        budget: Budget = check_options(max_tokens, reserved_output, safety_margin)
        check_language(summary_language)

        system = self._system.replayed()
        if system is not None and self._system.cost is None:
            self._system.cost = price_system(self._estimate, system)
        system_cost = self._system.cost if system is not None else 0
        assert system_cost is not None

        start = 0
        summary: UserMessage | None = None
        summary_cost: int | float = 0
        if self._compaction is not None:
            if self._first_kept_group is None:
                _raise_from(lambda: resume_candidates(self._path))
            start = self._first_kept_group
            summary, summary_cost = self._summary(self._compaction, summary_language)

        self._check_groups(start)
        groups = self._groups
        count = len(groups) - start
        kept_count, kept_cost, reason = select_newest_suffix(
            count,
            lambda index: groups[start + index].cost(self._estimate),
            group_budget_of(budget, system_cost, summary_cost),
        )
        kept_entries = [
            entry for group in groups[len(groups) - kept_count :] for entry in group.entries
        ]
        return assemble_result(
            budget, system, system_cost, summary, summary_cost, kept_entries, kept_cost, reason
        )

    def _summary(
        self, compaction: CompactionSessionEntry, language: SummaryLanguage
    ) -> tuple[UserMessage, int | float]:
        """The summary message in ``language`` and its price (priced once per language)."""
        cached = self._summaries.get(language)
        if cached is None:
            message = summary_message(compaction, language)
            cached = (message, price_summary(self._estimate, message, compaction))
            self._summaries[language] = cached
        return cached

    def _check_groups(self, start: int) -> None:
        """Raise what ``group_interactions`` raises on the candidates, if anything.

        The candidates are the groups from ``start`` on (and, without a compaction, any
        message before the first user message). The first failing one in path order is
        re-checked by ``group_interactions`` itself, so the error is the batch error.
        """
        preamble = self._preamble
        if self._compaction is None and preamble is not None:
            _raise_from(lambda: group_interactions([preamble]))
        broken = bisect_left(self._broken_groups, start)
        if broken < len(self._broken_groups):
            group = self._groups[self._broken_groups[broken]]
            _raise_from(lambda: group_interactions(group.entries))
        if self._groups and not self._groups[-1].valid():
            last = self._groups[-1]
            _raise_from(lambda: group_interactions(last.entries))


def _raise_from(check: Callable[[], object]) -> NoReturn:
    """Run a check of ctxlab.context that is known to fail here, so its error (class and
    message) is exactly the one ``build_context`` raises. Walking a whole path is
    acceptable on this rare path."""
    check()
    raise CtxlabError(  # pragma: no cover - the check above always raises
        "ContextWindow: internal error: a check that must fail passed"
    )
