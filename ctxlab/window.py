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
path with the same estimator, and raises the same error when ``build_context`` would (an
interaction still waiting for a tool result is such a case). The two cannot drift apart:
they fold the system messages with the same :class:`~ctxlab.messages.SystemReplay`, cut
the groups with the same :class:`~ctxlab.interactions.GroupBuilder` (whose errors they
raise), and share the steps of :mod:`ctxlab.context`, so the checks come in the same
order and the arithmetic is the same.

Appending checks the entry with :func:`~ctxlab.entries.parse_session_entry` and checks
the path: the first entry is a root (``parentId`` null), every later entry's
``parentId`` is the id of the entry before it, and an id is never used twice.
"""

from __future__ import annotations

from collections.abc import Iterable

from ctxlab.compaction import SummaryLanguage
from ctxlab.context import (
    ContextResult,
    TokenEstimator,
    assemble_result,
    check_language,
    check_options,
    group_budget,
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
from ctxlab.errors import ContextOptionError, SessionTreeError, shown
from ctxlab.interactions import GroupBuilder
from ctxlab.messages import SystemMessage, SystemReplay, UserMessage

__all__ = ["ContextWindow"]


class ContextWindow:
    """The context projection of a growing active path, kept up to date as it grows.

    ``estimate_tokens`` is fixed for the window's life (prices are cached). Feed entries
    with :meth:`append` in path order, or start from a path with :meth:`from_entries`;
    call :meth:`build` before each model call.
    """

    def __init__(self, *, estimate_tokens: TokenEstimator) -> None:
        if not callable(estimate_tokens):
            raise ContextOptionError(
                f"estimate_tokens must be callable, got {shown(estimate_tokens)}",
                where="ContextWindow",
                option="estimate_tokens",
            )
        self._estimate = estimate_tokens
        self._path: list[SessionEntry] = []
        self._position: dict[str, int] = {}  # entry id -> index on the path
        self._system = SystemReplay()
        self._system_cost: tuple[SystemMessage, int | float] | None = None  # priced replay
        self._groups = GroupBuilder()
        self._priced: list[int] = []  # per group: how many entries (from the first) are priced
        self._costs: list[int | float] = []  # per group: their summed price, in path order
        self._compaction: CompactionSessionEntry | None = None
        self._groups_before_compaction = 0
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
        for _, other in self._groups.feed((snapshot,)):  # what belongs to no group
            if isinstance(other, MessageSessionEntry):
                assert isinstance(other.message, SystemMessage)
                self._system.add(other.message)
            elif isinstance(other, CompactionSessionEntry):
                self._compaction = other
                self._groups_before_compaction = len(self._groups.groups)
                self._summaries = {}
        while len(self._priced) < len(self._groups.groups):  # a group opened
            self._priced.append(0)
            self._costs.append(0)
        return snapshot

    def _check_link(self, entry: SessionEntry) -> None:
        where = f"entry {entry.id}"
        if entry.id in self._position:
            raise SessionTreeError(
                f"id {entry.id!r} is already on the path", where=where, entry_id=entry.id
            )
        if not self._path:
            if entry.parent_id is not None:
                raise SessionTreeError(
                    "the first entry of a path must be a root (parentId null), got parentId"
                    f" {entry.parent_id!r}",
                    where=where,
                    entry_id=entry.id,
                )
            return
        leaf = self._path[-1].id
        if entry.parent_id != leaf:
            raise SessionTreeError(
                f"parentId {entry.parent_id!r} is not the current leaf {leaf!r}; a window"
                " follows one path, each entry after the one before",
                where=where,
                entry_id=entry.id,
            )

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

        Same options, same result, same errors; the estimator is the window's. The steps
        are those of ``build_context`` after its pass over the path, which the window
        has already made, one append at a time. ``summary_language`` defaults to ``"zh"``
        (the course's rendering), as in ``build_context``; ``"en"`` is the English one.
        """
        budget = check_options(max_tokens, reserved_output, safety_margin)
        check_language(summary_language)

        system = self._system.result()
        system_cost: int | float = 0
        if system is not None:
            if self._system_cost is None or self._system_cost[0] is not system:
                self._system_cost = (system, price_system(self._estimate, system))
            system_cost = self._system_cost[1]

        start = 0
        summary: UserMessage | None = None
        summary_cost: int | float = 0
        compaction = self._compaction
        if compaction is not None:
            before = self._groups_before_compaction
            start = self._groups.heads.get(compaction.first_kept_entry_id, before)
            if start >= before:
                resume_candidates(self._path)  # raises the error naming what is wrong
            summary, summary_cost = self._summary(compaction, summary_language)

        problem = self._groups.problem(start, preamble=compaction is None)
        if problem is not None:
            raise problem.with_traceback(None)

        groups = self._groups.groups
        kept_count, kept_cost, reason = select_newest_suffix(
            len(groups) - start,
            lambda index: self._group_cost(start + index),
            group_budget(budget, system_cost, summary_cost),
        )
        kept_entries = [entry for group in groups[len(groups) - kept_count :] for entry in group]
        return assemble_result(
            budget, system, system_cost, summary, summary_cost, kept_entries, kept_cost, reason
        )

    def _group_cost(self, index: int) -> int | float:
        """Group ``index``'s cost; prices only entries not priced before (once each, ever)."""
        entries = self._groups.groups[index]
        while self._priced[index] < len(entries):
            self._costs[index] += price_entry(self._estimate, entries[self._priced[index]])
            self._priced[index] += 1
        return self._costs[index]

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
