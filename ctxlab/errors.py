"""Errors raised by ctxlab.

Every error ctxlab raises on bad data or bad options is a :class:`CtxlabError` (a
``ValueError``). The chapter ("损坏记录在进入预算前就会被拒绝") asks that an error name
what a reader needs to find the first wrong fact, so every error has one shape: the
*problem*, the place it was found (*where*: ``session entry compact-1``,
``session.jsonl line 4``, ``compaction compact-1``, ``build_context``...), and keyword
context kept as attributes -- the entry id, the field path, the line number, the call id,
the option, the file path, the subject that was being priced. The message is always
``"<where>: <problem>"`` (or the problem alone when there is no place to name).

The subclasses only say which kind of error it is; they add nothing to the shape.
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
    "at_entry",
    "at_line",
    "entry_error",
    "malformed",
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
    """Base class of every error ctxlab raises on bad data or options. The message is
    ``"<where>: <problem>"``; every keyword is kept as an attribute of the same name
    (``None`` when not known)."""

    def __init__(
        self,
        problem: str,
        *,
        where: str | None = None,
        entry_id: str | None = None,
        field: str | None = None,
        line: int | None = None,
        call_id: str | None = None,
        option: str | None = None,
        path: str | None = None,
        subject: str | None = None,
    ) -> None:
        self.problem = problem
        self.where = where
        self.entry_id = entry_id
        self.field = field
        self.line = line
        self.call_id = call_id
        self.option = option
        self.path = path
        self.subject = subject
        super().__init__(f"{where}: {problem}" if where else problem)


class EntryParseError(CtxlabError):
    """A session entry (or message) does not match the wire format (Lab 11.1); ``field``
    is the dotted path of the offending field (``summary.changedFiles``)."""


class SessionStoreError(CtxlabError):
    """A store refused an entry, or a session file could not be read (chapter 10)."""


class SessionTreeError(CtxlabError):
    """``path_to`` could not follow ``parentId`` links from the leaf to a root."""


class InteractionError(CtxlabError):
    """Message entries cannot be cut into whole user interactions (Lab 11.2)."""


class ContextOptionError(CtxlabError):
    """A budget option of ``build_context`` is not a finite number >= 0 (Lab 11.3)."""


class EstimatorError(CtxlabError):
    """The token estimator failed or returned something that is not a finite number >= 0;
    ``subject`` names what was being priced (``entry u2``, ``the replayed system
    message``, ``the summary of compaction compact-1``)."""


class CompactionError(CtxlabError):
    """A compaction cannot be created, or a path's latest compaction is unusable (11.4/11.5)."""


def at_entry(entry_id: str | None) -> str:
    """The place of a problem inside one session entry: ``session entry <id>``."""
    return "session entry" if entry_id is None else f"session entry {entry_id}"


def entry_error(
    entry_id: str | None, field: str, problem: str, *, where: str | None = None
) -> EntryParseError:
    """The error for a wrong ``field`` (dotted path; empty for the entry itself) of a
    session entry: ``session entry compact-1: summary.changedFiles is missing`` (``where``
    replaces ``session entry <id>``)."""
    return EntryParseError(
        f"{field} {problem}" if field else problem,
        where=at_entry(entry_id) if where is None else where,
        entry_id=entry_id,
        field=field,
    )


def at_line(path: str, line: int) -> str:
    """The place of a problem on one line of a file: ``<file name> line <n>``."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return f"{name} line {line}"


def malformed(
    value: object,
    exc: BaseException,
    *,
    where: str,
    field: str = "",
    entry_id: str | None = None,
) -> EntryParseError:
    """The error for an object built directly (not parsed) that cannot be read: a message
    whose ``content`` is not a tuple of blocks, say. ``exc`` is what reading it raised.

    The parser checks what it reads; the functions after it trust their input and would
    otherwise let a bare ``AttributeError`` or ``TypeError`` escape on such an object.
    """
    detail = str(exc)
    if len(detail) > 120:
        detail = detail[:117] + "..."
    problem = f"is a malformed {type(value).__name__} object ({type(exc).__name__}: {detail})"
    return entry_error(entry_id, field, problem, where=where)
