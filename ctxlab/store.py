"""Session stores (chapter 10, used by Lab 11.1).

Both stores share one small interface, :class:`SessionStore`: ``append(entry)`` and
``entries()``. Each takes its snapshot of an entry through
:func:`~ctxlab.entries.parse_session_entry`, so neither needs compaction-specific code:
"JSONL 重新打开时，同一条解析路径会恢复 compact-1".

:class:`JsonlSessionStore` keeps one entry per line. A line counts only once its newline
is written: a last non-empty line without one is an *unterminated tail* (a torn write),
reported as a warning with its line number; the store refuses to append after it until
:meth:`JsonlSessionStore.repair` moves those bytes into a side file. Any committed line
that is not JSON, or not a valid entry, is an error naming its line number.

Appends take a cross-process file lock (``<name>.lock`` beside the session), first read
whatever other processes appended since the last look, then validate and write the new
line with a single ``write`` call, fsynced when ``durable`` (the default). A process killed
at any moment therefore leaves every acknowledged entry on disk and at most one torn,
unterminated last line, which :meth:`JsonlSessionStore.repair` moves aside without
deleting a byte.

:func:`scan_jsonl` reads a session file the same way but never stops at the first
problem: it lists every bad line (for ``ctxlab check``).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Iterator
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from ctxlab.entries import SessionEntry, parse_session_entry
from ctxlab.errors import CtxlabError, SessionStoreError, at_line
from ctxlab.json_values import loads_strict

if TYPE_CHECKING:
    from filelock import FileLock

__all__ = [
    "InMemorySessionStore",
    "JsonlSessionStore",
    "ProblemCode",
    "RepairResult",
    "ScanResult",
    "SessionReadResult",
    "SessionStore",
    "StoreProblem",
    "StoreWarning",
    "encode_entry_line",
    "scan_jsonl",
]


class SessionStore(Protocol):
    """What every store offers: append one entry, list all entries in append order."""

    def append(self, entry: object) -> SessionEntry: ...

    def entries(self) -> list[SessionEntry]: ...


def _check_links(entry: SessionEntry, known_ids: set[str]) -> str | None:
    """Why ``entry`` cannot follow ``known_ids`` (duplicate id, unknown parent), or None."""
    if entry.id in known_ids:
        return f"duplicate id {entry.id!r}: that id is already stored"
    if entry.parent_id is not None and entry.parent_id not in known_ids:
        return (
            f"entry {entry.id}: parentId {entry.parent_id!r} is not stored yet"
            " (append the parent first)"
        )
    return None


class InMemorySessionStore:
    """A list of entries in memory, with the same append rules as the JSONL store."""

    def __init__(self, entries: Iterable[object] = ()) -> None:
        self._lock = threading.Lock()
        self._entries: list[SessionEntry] = []
        self._ids: set[str] = set()
        for entry in entries:
            self.append(entry)

    def append(self, entry: object) -> SessionEntry:
        """Validate ``entry`` and store its snapshot; return the stored snapshot."""
        snapshot = parse_session_entry(entry)
        with self._lock:
            problem = _check_links(snapshot, self._ids)
            if problem:
                raise SessionStoreError(problem, entry_id=snapshot.id)
            self._entries.append(snapshot)
            self._ids.add(snapshot.id)
        return snapshot

    def entries(self) -> list[SessionEntry]:
        """All entries in append order (a new list; the entries themselves are frozen)."""
        with self._lock:
            return list(self._entries)


@dataclass(frozen=True)
class StoreWarning:
    """Something a reader should know that does not stop reading, e.g. a torn last line."""

    code: Literal["unterminated_tail"]
    line: int
    message: str


@dataclass(frozen=True)
class SessionReadResult:
    """What :meth:`JsonlSessionStore.read` found: the entries and any warnings."""

    entries: tuple[SessionEntry, ...]
    warnings: tuple[StoreWarning, ...]


@dataclass(frozen=True)
class RepairResult:
    """What :meth:`JsonlSessionStore.repair` did. ``side_file`` is None when there was
    no unterminated tail (nothing to do)."""

    side_file: Path | None
    line: int | None
    bytes_moved: int


def encode_entry_line(entry: SessionEntry) -> bytes:
    """The JSONL line (UTF-8, ending in ``\\n``) that stores ``entry``."""
    try:
        text = json.dumps(
            entry.to_json(), ensure_ascii=False, separators=(",", ":"), allow_nan=False
        )
    except ValueError as exc:  # e.g. an integer too long to print (Python >= 3.11 limit)
        raise SessionStoreError(
            f"entry {entry.id}: cannot be written as JSON ({exc})", entry_id=entry.id
        ) from None
    try:
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError as exc:
        raise SessionStoreError(
            f"entry {entry.id}: contains text that is not valid Unicode ({exc.reason})",
            entry_id=entry.id,
        ) from None


@dataclass(frozen=True)
class BadLine:
    """Why one committed line is not an entry (see :func:`_read_lines`)."""

    code: Literal["invalid_utf8", "invalid_json", "invalid_entry"]
    problem: str
    entry_id: str | None
    cause: Exception


def json_lines(committed: bytes, first_line: int) -> Iterator[tuple[int, object]]:
    """The one JSONL line reader (the store, :func:`scan_jsonl` and the migration use it).

    ``committed`` holds whole lines, each ending in ``\\n``; the first is line
    ``first_line``. Yields, for every line that is not blank (blank lines are layout), its
    number and either its JSON value or a :class:`BadLine`: not UTF-8, or not strict
    JSON (``NaN``/``Infinity`` literals, duplicate keys, nesting too deep, an integer too
    long).
    """
    for number, raw in enumerate(committed.split(b"\n")[:-1], start=first_line):
        if is_blank(raw):
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield number, BadLine("invalid_utf8", f"is not valid UTF-8 ({exc.reason})", None, exc)
            continue
        try:
            yield number, loads_strict(text)
        except ValueError as exc:
            yield number, BadLine("invalid_json", str(exc), None, exc)


def _read_lines(committed: bytes, first_line: int) -> Iterator[tuple[int, SessionEntry | BadLine]]:
    """:func:`json_lines`, each value read as an entry (or a :class:`BadLine` saying why
    it is not one: :func:`~ctxlab.entries.parse_session_entry`'s error).

    Ids and parent links are the caller's business: the store stops at the first problem,
    :func:`scan_jsonl` lists them all.
    """
    for number, value in json_lines(committed, first_line):
        if isinstance(value, BadLine):
            yield number, value
            continue
        try:
            yield number, parse_session_entry(value)
        except CtxlabError as exc:
            yield number, BadLine("invalid_entry", str(exc), exc.entry_id, exc)


_O_BINARY = getattr(os, "O_BINARY", 0)  # Windows: no newline translation

#: How often a process waiting for the file lock tries again, in seconds. filelock's default
#: (0.05 s) would make every contended append wait tens of milliseconds.
_POLL = 0.001


class JsonlSessionStore:
    """An append-only JSONL session file. Use :meth:`open`; safe across threads and
    processes."""

    def __init__(self, path: Path, *, durable: bool) -> None:
        """Internal: use :meth:`open`, which also reads the file."""
        self.path = path
        self.durable = durable
        self._thread_lock = threading.RLock()
        self._file_lock = _new_lock(path)
        self._entries: list[SessionEntry] = []
        self._ids: set[str] = set()
        self._offset = 0  # bytes of committed lines already read
        self._lines = 0  # committed lines already read
        self._layout_tail = 0  # bytes of white space after the last newline
        self._tail: StoreWarning | None = None
        self._tainted: str | None = None

    # -- opening and reading ------------------------------------------------------------

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, durable: bool = True) -> JsonlSessionStore:
        """Open (creating the file and its folders if missing) and read a session file.

        Raises :class:`~ctxlab.errors.SessionStoreError` naming the line of the first bad
        committed line. An unterminated tail is not an error: see :meth:`read`.
        """
        file = Path(path)
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            if not file.exists():
                file.touch()
                _fsync_directory(file.parent)
        except OSError as exc:
            raise SessionStoreError(f"cannot create {file.name}: {exc}", path=str(file)) from exc
        store = cls(file, durable=durable)
        with store._thread_lock, store._file_lock.acquire(poll_interval=_POLL):
            store._refresh()
        return store

    def entries(self) -> list[SessionEntry]:
        """All entries, including any that other processes appended since the last look."""
        return list(self.read().entries)

    def read(self) -> SessionReadResult:
        """Entries and warnings (an unterminated tail is reported with its line number)."""
        with self._thread_lock, self._file_lock.acquire(poll_interval=_POLL):
            self._refresh()
            warnings = (self._tail,) if self._tail else ()
            return SessionReadResult(tuple(self._entries), warnings)

    def _refresh(self) -> None:
        """Read committed lines appended since the last look. Caller holds both locks."""
        try:
            with open(self.path, "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                if size < self._offset + self._layout_tail:
                    raise SessionStoreError(
                        f"{self.path.name} shrank from {self._offset + self._layout_tail} to"
                        f" {size} bytes while open: committed lines were removed",
                        path=str(self.path),
                    )
                handle.seek(self._offset)
                data = handle.read()
        except OSError as exc:
            raise SessionStoreError(
                f"cannot read {self.path.name}: {exc}", path=str(self.path)
            ) from exc
        cut = data.rfind(b"\n") + 1
        committed, tail = data[:cut], data[cut:]
        new_entries, new_lines = self._parse_committed(committed)
        # Only now, with every new line valid, does the store's view move forward.
        self._entries.extend(new_entries)
        self._ids.update(entry.id for entry in new_entries)
        self._offset += len(committed)
        self._lines += new_lines
        self._layout_tail = len(tail) if is_blank(tail) else 0
        self._tail = None
        if not is_blank(tail):
            line = self._lines + 1
            self._tail = StoreWarning(
                "unterminated_tail",
                line,
                f"{self.path.name} line {line} has no newline: it is an unterminated tail"
                f" ({len(tail)} bytes, probably a torn write); it is not read as an entry."
                " Appends are refused until JsonlSessionStore.repair() moves it aside.",
            )

    def _parse_committed(self, committed: bytes) -> tuple[list[SessionEntry], int]:
        """The entries of newly committed lines; the first bad line is an error."""
        if not committed:  # nothing new (e.g. the refresh inside every append): O(1)
            return [], 0
        known = set(self._ids)
        parsed: list[SessionEntry] = []
        for number, read in _read_lines(committed, self._lines + 1):
            if isinstance(read, BadLine):
                raise self._line_error(number, read.problem) from read.cause
            problem = _check_links(read, known)
            if problem:
                raise self._line_error(number, problem, read.id)
            known.add(read.id)
            parsed.append(read)
        return parsed, committed.count(b"\n")

    def _line_error(
        self, line: int, problem: str, entry_id: str | None = None
    ) -> SessionStoreError:
        return SessionStoreError(
            problem,
            where=at_line(str(self.path), line),
            path=str(self.path),
            line=line,
            entry_id=entry_id,
        )

    # -- appending ------------------------------------------------------------------------

    def append(self, entry: object) -> SessionEntry:
        """Validate ``entry``, then write it as one line with one ``write`` call.

        Returns the stored snapshot once the line (and, when ``durable``, its fsync) is
        done. Refused: a duplicate id, an unknown parent, a file with an unterminated tail,
        and any append after a failed write (the store is then *tainted* until reopened).
        """
        snapshot = parse_session_entry(entry)
        line = encode_entry_line(snapshot)
        with self._thread_lock:
            if self._tainted:
                raise SessionStoreError(self._tainted, path=str(self.path), entry_id=snapshot.id)
            with self._file_lock.acquire(poll_interval=_POLL):
                self._refresh()
                if self._tail is not None:
                    raise SessionStoreError(
                        f"{self.path.name} line {self._tail.line} is an unterminated tail;"
                        f" entry {snapshot.id} was not appended. Run"
                        " JsonlSessionStore.repair(path) first.",
                        path=str(self.path),
                        line=self._tail.line,
                        entry_id=snapshot.id,
                    )
                problem = _check_links(snapshot, self._ids)
                if problem:
                    raise SessionStoreError(
                        problem, where=self.path.name, path=str(self.path), entry_id=snapshot.id
                    )
                self._write(line, snapshot.id)
                self._entries.append(snapshot)
                self._ids.add(snapshot.id)
                self._offset += self._layout_tail + len(line)
                self._layout_tail = 0
                self._lines += 1
        return snapshot

    def _write(self, line: bytes, entry_id: str) -> None:
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | _O_BINARY)
            try:
                written = os.write(fd, line)
                if written != len(line):
                    raise OSError(f"short write: {written} of {len(line)} bytes")
                if self.durable:
                    os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            self._tainted = (
                f"{self.path.name}: an earlier write failed ({exc}); this store refuses"
                " further appends. Reopen it with JsonlSessionStore.open(path), which"
                " reports any torn line."
            )
            raise SessionStoreError(
                f"{self.path.name}: writing entry {entry_id} failed: {exc}",
                path=str(self.path),
                entry_id=entry_id,
            ) from exc

    # -- repair -----------------------------------------------------------------------------

    @classmethod
    def repair(cls, path: str | os.PathLike[str]) -> RepairResult:
        """Move an unterminated tail's bytes into a side file, then cut them off.

        The side file is ``<name>.tail-<n>`` beside the session (the first free ``n``);
        it is written and fsynced before the session is truncated, so no byte is ever
        deleted. Idempotent: with no tail there is nothing to do.
        """
        file = Path(path)
        if not file.is_file():
            raise SessionStoreError(f"cannot repair {file}: no such file", path=str(file))
        with _new_lock(file).acquire(poll_interval=_POLL):
            try:
                data = file.read_bytes()
            except OSError as exc:
                raise SessionStoreError(f"cannot read {file.name}: {exc}", path=str(file)) from exc
            cut = data.rfind(b"\n") + 1
            tail = data[cut:]
            if is_blank(tail):
                return RepairResult(None, None, 0)
            line = data.count(b"\n") + 1
            number = 1
            while (side := file.with_name(f"{file.name}.tail-{number}")).exists():
                number += 1
            try:
                with open(side, "xb") as handle:
                    handle.write(tail)
                    handle.flush()
                    os.fsync(handle.fileno())
                _fsync_directory(file.parent)
                with open(file, "r+b") as handle:
                    handle.truncate(cut)
                    handle.flush()
                    os.fsync(handle.fileno())
            except OSError as exc:
                raise SessionStoreError(
                    f"repairing {file.name} failed: {exc}", path=str(file), line=line
                ) from exc
            return RepairResult(side, line, len(tail))


def _new_lock(path: Path) -> FileLock:
    """The cross-process lock of a session file. filelock is imported on first use: it
    pulls in asyncio, which would double the time of ``import ctxlab``."""
    from filelock import FileLock

    return FileLock(str(path.with_name(path.name + ".lock")))


def is_blank(raw: bytes) -> bool:
    """A blank line is layout: nothing but JSON white space (space, tab, CR).

    ``bytes.strip()`` would also drop vertical tab and form feed, which JSON does not allow;
    the store and ``scan_jsonl`` must agree on what is blank.
    """
    return not raw.strip(b" \t\r\n")


def _fsync_directory(folder: Path) -> None:
    """Make a new file's directory entry durable where the platform allows (POSIX)."""
    if os.name == "posix":
        with suppress(OSError):
            fd = os.open(folder, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


# -- scanning: every problem, not just the first --------------------------------------------

ProblemCode = Literal[
    "invalid_utf8",
    "invalid_json",
    "invalid_entry",
    "duplicate_id",
    "unknown_parent",
    "unterminated_tail",
]


@dataclass(frozen=True)
class StoreProblem:
    """One problem :func:`scan_jsonl` found, at a 1-based ``line`` of the file."""

    line: int
    code: ProblemCode
    message: str
    entry_id: str | None = None


@dataclass(frozen=True)
class ScanResult:
    """Every valid entry of a session file (in file order) and every problem found."""

    entries: tuple[SessionEntry, ...]
    problems: tuple[StoreProblem, ...]


def scan_jsonl(path: str | os.PathLike[str]) -> ScanResult:
    """Read a session file line by line and report ALL its problems with line numbers.

    Unlike :meth:`JsonlSessionStore.open`, which stops at the first bad committed line,
    this keeps going: invalid UTF-8, lines that are not strict JSON, lines that are not
    valid entries, duplicate ids, parents that are not stored earlier in the file, and an
    unterminated tail. A valid entry that repeats an id is not kept. It takes the file lock
    when it can (so it never sees a half-written append) and never creates or changes the
    session file. A missing or unreadable file is a :class:`SessionStoreError`.
    """
    file = Path(path)
    if not file.is_file():
        raise SessionStoreError(f"cannot read {file}: no such file", path=str(file))
    try:
        try:
            with _new_lock(file).acquire(timeout=10, poll_interval=_POLL):
                data = file.read_bytes()
        except (OSError, TimeoutError):  # read-only folder, or a writer holds the lock
            data = file.read_bytes()
    except OSError as exc:
        raise SessionStoreError(f"cannot read {file.name}: {exc}", path=str(file)) from exc
    cut = data.rfind(b"\n") + 1
    committed, tail = data[:cut], data[cut:]  # tail: the bytes after the last newline
    entries: list[SessionEntry] = []
    problems: list[StoreProblem] = []
    first_line: dict[str, int] = {}  # id -> line of its first appearance, valid or not
    missing_parents: list[tuple[int, str, str]] = []  # (line, entry id, parent id)
    for number, entry in _read_lines(committed, 1):
        if isinstance(entry, BadLine):
            problems.append(StoreProblem(number, entry.code, entry.problem, entry.entry_id))
            if entry.entry_id is not None:
                # Its children should not all be reported as orphans too.
                first_line.setdefault(entry.entry_id, number)
            continue
        if entry.id in first_line:
            problems.append(
                StoreProblem(
                    number,
                    "duplicate_id",
                    f"duplicate id {entry.id!r}: line {first_line[entry.id]} already has it",
                    entry.id,
                )
            )
            continue
        first_line[entry.id] = number
        if entry.parent_id is not None and entry.parent_id not in first_line:
            missing_parents.append((number, entry.id, entry.parent_id))
        entries.append(entry)
    for number, entry_id, parent_id in missing_parents:
        later = first_line.get(parent_id)
        where = (
            f"it only appears later, at line {later}"
            if later is not None
            else "no line of this file has that id"
        )
        problems.append(
            StoreProblem(
                number,
                "unknown_parent",
                f"entry {entry_id}: parentId {parent_id!r} is not stored before it ({where})",
                entry_id,
            )
        )
    if not is_blank(tail):
        line = committed.count(b"\n") + 1
        problems.append(
            StoreProblem(
                line,
                "unterminated_tail",
                f"has no newline: an unterminated tail ({len(tail)} bytes, probably a torn"
                " write); JsonlSessionStore.repair() (ctxlab repair) moves it aside",
            )
        )
    problems.sort(key=lambda problem: problem.line)
    return ScanResult(tuple(entries), tuple(problems))
