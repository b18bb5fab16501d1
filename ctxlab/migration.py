"""Migrating old records: a ctxlab extension for the chapter's optional exercise
("可选迁移练习", a section the chapter titles but gives no text).

The parser refuses old records on purpose -- the chapter's rule is "旧记录需要先在边界外迁移成
当前形状": a summary with the chapter's early-draft ``files``, or with ``nextSteps`` or
``invariants``, or an entry with ``compactedEntryIds`` (these three are old names of ctxlab's
own exercise; the chapter names only ``files``), stops at
:func:`~ctxlab.entries.parse_session_entry`. This module is the *outside* of that boundary.
It turns a draft record into the current shape and says what it changed; the result must then
pass the unchanged, strict parser.

========================  ======================  ==========================================
draft field               current field           how
========================  ======================  ==========================================
``summary.files``         ``summary.changedFiles``  renamed
``summary.nextSteps``     ``summary.next``          renamed
``summary.invariants``    ``summary.constraints``   renamed
``compactedEntryIds``     ``firstKeptEntryId``      dropped; the first kept entry is derived
                                                    from it when missing, cross-checked when
                                                    present
========================  ======================  ==========================================

A migration never guesses. When a draft name and its current name are both present with
different values, or ``compactedEntryIds`` does not end right before the start of a whole
interaction, the record is *not migratable*: :class:`MigrationError` names the entry id
and the field, and nothing is written. :func:`migrate_jsonl` writes a NEW file and never
edits the old one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ctxlab.entries import MessageSessionEntry, SessionEntry, parse_session_entry
from ctxlab.errors import CtxlabError, at_entry, at_line
from ctxlab.messages import SystemMessage, UserMessage
from ctxlab.store import BadLine, InMemorySessionStore, encode_entry_line, is_blank, json_lines
from ctxlab.tree import path_to

__all__ = [
    "SUMMARY_RENAMES",
    "LineChange",
    "MigrationChange",
    "MigrationError",
    "MigrationReport",
    "MigrationResult",
    "migrate_draft_entry",
    "migrate_jsonl",
]

#: Draft summary field -> current summary field.
SUMMARY_RENAMES: Mapping[str, str] = {
    "files": "changedFiles",
    "nextSteps": "next",
    "invariants": "constraints",
}


class MigrationError(CtxlabError):
    """A record cannot be migrated. ``entry_id``, ``field`` (dotted path) and ``line``
    (1-based, in a JSONL file) say where, when known."""


@dataclass(frozen=True)
class MigrationChange:
    """One thing a migration did to one record. ``field`` is the draft field's path."""

    field: str
    action: Literal["renamed", "dropped"]
    detail: str

    def __str__(self) -> str:
        return f"{self.field}: {self.action} ({self.detail})"


@dataclass(frozen=True)
class MigrationResult:
    """A migrated record: the parsed entry and what the migration changed (may be empty)."""

    entry: SessionEntry
    changes: tuple[MigrationChange, ...]

    @property
    def entry_wire(self) -> dict[str, Any]:
        """The migrated record in wire form (a fresh dict each time)."""
        return self.entry.to_json()


def _fail(entry_id: str | None, field: str, problem: str) -> MigrationError:
    return MigrationError(
        f"{field} {problem}; not migratable",
        where=at_entry(entry_id),
        entry_id=entry_id,
        field=field,
    )


def _rename_summary_fields(
    summary: Mapping[str, Any], entry_id: str | None
) -> tuple[dict[str, Any], list[MigrationChange]]:
    renamed = dict(summary)
    changes: list[MigrationChange] = []
    for draft, current in SUMMARY_RENAMES.items():
        if draft not in renamed:
            continue
        value = renamed.pop(draft)
        if current in renamed:
            if renamed[current] != value:
                raise _fail(
                    entry_id,
                    f"summary.{draft}",
                    f"and summary.{current} are both present and disagree",
                )
            changes.append(
                MigrationChange(f"summary.{draft}", "dropped", f"same value as summary.{current}")
            )
        else:
            renamed[current] = value
            changes.append(MigrationChange(f"summary.{draft}", "renamed", f"now summary.{current}"))
    return renamed, changes


def _derive_first_kept(
    compacted: object, parent_id: object, earlier: Sequence[SessionEntry], entry_id: str | None
) -> str:
    """The first entry after the last compacted id that starts a whole interaction.

    System messages, metadata and compactions after the compacted ids are skipped: they
    belong to no interaction. The next *message* must be a user message, or the draft
    compaction ended inside an interaction.
    """
    field = "compactedEntryIds"
    if not isinstance(compacted, (list, tuple)) or not compacted:
        raise _fail(entry_id, field, "must be a non-empty array of entry ids")
    for index, item in enumerate(compacted):
        if not isinstance(item, str) or not item.strip():
            raise _fail(entry_id, f"{field}[{index}]", "must be a non-blank entry id")
    if not isinstance(parent_id, str) or not parent_id.strip():
        raise _fail(entry_id, "parentId", "must name the entry the compaction follows")
    try:
        path = path_to(earlier, parent_id)
    except CtxlabError as exc:
        raise _fail(entry_id, "parentId", f"does not lead to a path ({exc})") from exc
    positions = {entry.id: index for index, entry in enumerate(path)}
    for index, item in enumerate(compacted):
        if item not in positions:
            raise _fail(entry_id, f"{field}[{index}]", f"names {item}, which is not on the path")
    last = max(positions[item] for item in compacted)
    for entry in path[last + 1 :]:
        if not isinstance(entry, MessageSessionEntry) or isinstance(entry.message, SystemMessage):
            continue
        if isinstance(entry.message, UserMessage):
            return entry.id
        raise _fail(
            entry_id,
            field,
            f"ends at {path[last].id}, inside an interaction ({entry.id} follows it);"
            " a compaction keeps whole interactions",
        )
    raise _fail(entry_id, field, f"ends at {path[last].id}: no interaction is left to keep")


def migrate_draft_entry(wire: object, *, earlier: Sequence[object] = ()) -> MigrationResult:
    """Migrate one early-draft record to the current wire shape, outside the parser.

    ``wire`` is the record as read from disk (a mapping; it is never modified).
    ``earlier`` holds the entries stored before it (entry objects or wire mappings); they
    are needed only to derive or cross-check ``firstKeptEntryId`` from
    ``compactedEntryIds``. Records that need no migration come back with no changes.

    Raises :class:`MigrationError` naming the entry id and field when the record cannot be
    migrated -- including when the migrated record is still refused by
    :func:`~ctxlab.entries.parse_session_entry`, which is never loosened.
    """
    if not isinstance(wire, Mapping):
        raise MigrationError(
            f"session entry: must be an object, got {type(wire).__name__}; not migratable"
        )
    raw_id = wire.get("id")
    entry_id = raw_id if isinstance(raw_id, str) and raw_id.strip() else None
    record = dict(wire)
    changes: list[MigrationChange] = []
    if record.get("type") == "compaction":
        summary = record.get("summary")
        if isinstance(summary, Mapping):
            record["summary"], renamed = _rename_summary_fields(summary, entry_id)
            changes.extend(renamed)
        if "compactedEntryIds" in record:
            compacted = record.pop("compactedEntryIds")
            known = [parse_session_entry(item) for item in earlier]
            derived = _derive_first_kept(compacted, record.get("parentId"), known, entry_id)
            if "firstKeptEntryId" not in record:
                record["firstKeptEntryId"] = derived
                detail = f"firstKeptEntryId derived from it: {derived}"
            elif record["firstKeptEntryId"] != derived:
                raise _fail(
                    entry_id,
                    "compactedEntryIds",
                    f"points to {derived} as the first kept entry, but firstKeptEntryId"
                    f" is {record['firstKeptEntryId']!r}",
                )
            else:
                detail = f"agrees with firstKeptEntryId {derived}"
            changes.append(MigrationChange("compactedEntryIds", "dropped", detail))
    try:
        entry = parse_session_entry(record)
    except CtxlabError as exc:
        raise MigrationError(
            f"after migration the parser still refuses it: {exc}; not migratable",
            entry_id=entry_id,
            field=exc.field,
        ) from exc
    return MigrationResult(entry, tuple(changes))


# -- whole files ------------------------------------------------------------------------------


@dataclass(frozen=True)
class LineChange:
    """A change made to the record on ``line`` (1-based) of the source file."""

    line: int
    entry_id: str
    change: MigrationChange

    def __str__(self) -> str:
        return f"line {self.line} ({self.entry_id}) {self.change}"


@dataclass(frozen=True)
class MigrationReport:
    """What :func:`migrate_jsonl` did: how many entries it wrote and every change."""

    source: str
    destination: str
    entries: int
    changes: tuple[LineChange, ...]


def _read_lines(src: Path) -> list[tuple[int, object]]:
    """The records of ``src`` by line number (the store's JSONL line reader)."""
    data = src.read_bytes()
    cut = data.rfind(b"\n") + 1
    if not is_blank(data[cut:]):
        line = data.count(b"\n") + 1
        raise MigrationError(
            "the last line has no newline (a torn write); repair the file before migrating it",
            where=at_line(str(src), line),
            line=line,
        )
    records: list[tuple[int, object]] = []
    for number, value in json_lines(data[:cut], 1):
        if isinstance(value, BadLine):
            raise MigrationError(value.problem, where=at_line(str(src), number), line=number)
        records.append((number, value))
    return records


def migrate_jsonl(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> MigrationReport:
    """Migrate every record of the JSONL session ``src`` into the NEW file ``dst``.

    ``src`` is only read. ``dst`` must not exist yet; it is written only once every
    record has migrated and the entries link up (unique ids, parents first), so a
    failure leaves no half-written file. Errors are :class:`MigrationError` with the
    line number, entry id and field.
    """
    source, destination = Path(src), Path(dst)
    if destination.exists():
        raise MigrationError(
            f"{destination.name} already exists; migration writes a new file and never"
            " overwrites one",
            field="dst",
        )
    records = _read_lines(source)
    store = InMemorySessionStore()
    changes: list[LineChange] = []
    for number, record in records:
        try:
            result = migrate_draft_entry(record, earlier=store.entries())
            store.append(result.entry)
        except CtxlabError as exc:
            raise MigrationError(
                str(exc),
                where=at_line(str(source), number),
                entry_id=exc.entry_id,
                field=exc.field,
                line=number,
            ) from exc
        changes.extend(LineChange(number, result.entry.id, change) for change in result.changes)
    lines = b"".join(encode_entry_line(entry) for entry in store.entries())
    destination.parent.mkdir(parents=True, exist_ok=True)
    try:
        with destination.open("xb") as handle:
            handle.write(lines)
    except FileExistsError:
        raise MigrationError(
            f"{destination.name} already exists; migration never overwrites a file",
            field="dst",
        ) from None
    except OSError:
        destination.unlink(missing_ok=True)
        raise
    return MigrationReport(source.name, destination.name, len(store.entries()), tuple(changes))
