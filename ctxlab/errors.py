"""Errors raised by ctxlab.

Every error ctxlab raises on bad data or bad options is a :class:`CtxlabError` (a
``ValueError``). Each subclass carries the coordinates a reader needs to find the first
wrong fact: the entry id, the field path, the tool-call id, the line number or the option.
The chapter ("损坏记录在进入预算前就会被拒绝") asks for exactly this: an error names the
entry or call id, so the reader can locate the first deviation at the history boundary.
"""

from __future__ import annotations

import reprlib

__all__ = [
    "CompactionError",
    "ContextOptionError",
    "CtxlabError",
    "EntryParseError",
    "EstimatorError",
    "InteractionError",
    "SessionStoreError",
    "SessionTreeError",
    "shown",
]

_REPR = reprlib.Repr()
_REPR.maxlevel = 3
_REPR.maxstring = 80
_REPR.maxother = 80


def shown(value: object) -> str:
    """A short repr of ``value`` for an error message that can never fail.

    Bad input may be nested 100,000 levels deep or be an integer too long to print;
    ``repr`` would raise ``RecursionError`` or ``ValueError`` on it, hiding the real error.
    """
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"<integer of {value.bit_length()} bits>"
    return _REPR.repr(value)


class CtxlabError(ValueError):
    """Base class of every error ctxlab raises on bad data or options."""


class EntryParseError(CtxlabError):
    """A session entry (or message) does not match the wire format (Lab 11.1).

    ``entry_id`` is the entry's id when one could be read, ``field`` the dotted path of
    the offending field (``summary.changedFiles``; empty for the entry itself).
    """

    def __init__(self, entry_id: str | None, field: str, problem: str) -> None:
        self.entry_id = entry_id
        self.field = field
        self.problem = problem
        who = f"session entry {entry_id}" if entry_id is not None else "session entry"
        where = f"{field} " if field else ""
        super().__init__(f"{who}: {where}{problem}")


class SessionStoreError(CtxlabError):
    """A store refused an entry, or a session file could not be read (chapter 10).

    ``line`` is the 1-based line number in a JSONL file when the problem has one;
    ``entry_id`` the id of the entry involved, when known.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        entry_id: str | None = None,
    ) -> None:
        self.path = path
        self.line = line
        self.entry_id = entry_id
        super().__init__(message)


class SessionTreeError(CtxlabError):
    """``path_to`` could not follow ``parentId`` links from the leaf to a root."""

    def __init__(self, message: str, *, entry_id: str | None = None) -> None:
        self.entry_id = entry_id
        super().__init__(message)


class InteractionError(CtxlabError):
    """Message entries cannot be cut into whole user interactions (Lab 11.2)."""

    def __init__(
        self, message: str, *, entry_id: str | None = None, call_id: str | None = None
    ) -> None:
        self.entry_id = entry_id
        self.call_id = call_id
        super().__init__(message)


class ContextOptionError(CtxlabError):
    """A budget option of ``build_context`` is not a finite number >= 0 (Lab 11.3)."""

    def __init__(self, option: str, message: str) -> None:
        self.option = option
        super().__init__(message)


class EstimatorError(CtxlabError):
    """The token estimator failed or returned something that is not a finite number >= 0.

    ``subject`` names what was being priced: ``entry u2``, ``the replayed system
    message`` or ``the summary of compaction compact-1``.
    """

    def __init__(self, subject: str, message: str, *, entry_id: str | None = None) -> None:
        self.subject = subject
        self.entry_id = entry_id
        super().__init__(message)


class CompactionError(CtxlabError):
    """A compaction cannot be created, or a path's latest compaction is unusable (11.4/11.5)."""

    def __init__(self, message: str, *, entry_id: str | None = None) -> None:
        self.entry_id = entry_id
        super().__init__(message)
