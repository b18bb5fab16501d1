"""Views and self-checks for the optional migration exercise ("可选迁移练习").

* :func:`draft_table` -- each of the chapter's draft records: what the strict parser says,
  and what the reference migration (:mod:`ctxlab.migration`) does with it;
* :func:`check_summary_renames` -- the student's summary-only migration;
* :func:`check_migration` -- the student's whole-record migration, run on every draft
  record and compared with the reference.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pandas as pd

from ctxlab import fixtures
from ctxlab.entries import parse_session_entry
from ctxlab.errors import CtxlabError
from ctxlab.fixtures import NOT_MIGRATABLE, draft_records
from ctxlab.lab.checks import Verdict, friendly, not_answered
from ctxlab.migration import MigrationError, MigrationResult, migrate_draft_entry

__all__ = ["check_migration", "check_summary_renames", "draft_table"]


def draft_table() -> pd.DataFrame:
    """One row per draft record: the parser's verdict, then the migration's."""
    rows = []
    for name, wire in draft_records().items():
        try:
            parse_session_entry(wire)
            parser = "accepted"
        except CtxlabError as error:
            parser = f"refused: {error}"
        try:
            result = migrate_draft_entry(wire, earlier=fixtures.opening_path())
            migration = "✔ " + ("; ".join(str(c) for c in result.changes) or "nothing to change")
        except MigrationError as error:
            migration = f"✘ {error}"
        rows.append({"draft record": name, "strict parser": parser, "migration": migration})
    return pd.DataFrame(rows, columns=["draft record", "strict parser", "migration"])


def _fields(changes: object) -> list[str]:
    """The field paths named by a student's change notes (strings or objects with .field)."""
    if isinstance(changes, (str, bytes)) or not isinstance(changes, Iterable):
        raise TypeError(
            f"the change notes must be a list (of field paths like 'summary.files'), got"
            f" {type(changes).__name__}"
        )
    fields = []
    for change in changes:
        field = getattr(change, "field", change)
        if not isinstance(field, str):
            raise TypeError(f"a change note must name a field path, got {change!r}")
        fields.append(field.split(":")[0].split(" ")[0])
    return fields


def _unpack(returned: object) -> tuple[Mapping[str, Any], list[str]]:
    if isinstance(returned, MigrationResult):
        return returned.entry_wire, [c.field for c in returned.changes]
    if not isinstance(returned, tuple) or len(returned) != 2:
        raise TypeError(
            "your function must return a pair (migrated_wire_dict, change_notes), got"
            f" {type(returned).__name__}"
        )
    wire, changes = returned
    if not isinstance(wire, Mapping):
        raise TypeError(f"the migrated record must be a dict, got {type(wire).__name__}")
    return wire, _fields(changes)


@friendly
def check_summary_renames(student: object) -> Verdict:
    """Exercise 1: ``student(summary_dict) -> dict`` renames files/nextSteps/invariants."""
    if not callable(student):
        raise TypeError(f"expected your function, got {type(student).__name__}")
    function: Callable[[dict[str, Any]], object] = student
    for name, wire in draft_records().items():
        if name in NOT_MIGRATABLE or "compactedEntryIds" in wire:
            continue
        summary = wire["summary"]
        untouched = copy.deepcopy(summary)
        got = function(summary)
        if got is None:
            return not_answered("summary renames (your function still returns None)")
        if summary != untouched:
            return Verdict(False, f"your function changed its input ({name})", "",
                           "Copy first: new = dict(summary); never edit the old one.")  # fmt: skip
        want = fixtures.compact1().to_json()["summary"]
        if got != want:
            if not isinstance(got, Mapping):
                raise TypeError(f"expected a dict back, got {type(got).__name__}")
            extra = sorted(set(got) - set(want))
            missing = sorted(set(want) - set(got))
            detail = f"Draft record: {name}."
            if extra:
                detail += f" Still there: {', '.join(extra)}."
            if missing:
                detail += f" Missing: {', '.join(missing)}."
            return Verdict(False, "the migrated summary is not the current shape", detail,
                           "files → changedFiles, nextSteps → next, invariants → constraints;"
                           " keep the values as they are.")  # fmt: skip
    return Verdict(True, "every draft summary now has the seven current fields",
                   "And the strict parser was not loosened to get there.")  # fmt: skip


@friendly
def check_migration(student: object) -> Verdict:
    """Exercise 2: ``student(wire, earlier) -> (migrated_wire, change_notes)`` on every draft
    record; unmigratable records must raise a CtxlabError (e.g. MigrationError)."""
    if not callable(student):
        raise TypeError(f"expected your function, got {type(student).__name__}")
    function: Callable[[dict[str, Any], list[Any]], object] = student
    for name, wire in draft_records().items():
        untouched = copy.deepcopy(wire)
        try:
            returned = function(wire, fixtures.opening_path())
        except CtxlabError as error:
            if name in NOT_MIGRATABLE:
                continue
            return Verdict(False, f"“{name}” can be migrated, but your function refused it",
                           f"{type(error).__name__}: {error}", "")  # fmt: skip
        except Exception as error:
            kind = type(error).__name__
            if name in NOT_MIGRATABLE:
                return Verdict(False, f"right to refuse “{name}”, but with a bare {kind}",
                               f"{kind}: {error}",
                               "Raise MigrationError(message, entry_id=..., field=...) so the"
                               " reader learns which entry and field.")  # fmt: skip
            return Verdict(False, f"your function crashed on “{name}”", f"{kind}: {error}", "")
        if returned is None:
            return not_answered("migration (your function still returns None)")
        if wire != untouched:
            return Verdict(False, f"your function changed its input (“{name}”)", "",
                           "Build a new record: a migration never edits the old one.")  # fmt: skip
        if name in NOT_MIGRATABLE:
            return Verdict(False, f"“{name}” must not be migrated",
                           "Your function returned a record for it.",
                           "When the draft gives two different answers, or the result would"
                           " still fail the parser, raise a MigrationError.")  # fmt: skip
        got, fields = _unpack(returned)
        reference = migrate_draft_entry(wire, earlier=fixtures.opening_path())
        try:
            parse_session_entry(got)
        except CtxlabError as error:
            return Verdict(False, f"the strict parser refuses your result for “{name}”",
                           str(error), "The parser is never loosened: fix the record.")  # fmt: skip
        if dict(got) != reference.entry_wire:
            return Verdict(False, f"your result for “{name}” differs from the reference",
                           "", "Compare it with ctxlab.fixtures.compact1().to_json().")  # fmt: skip
        want = [c.field for c in reference.changes]
        if sorted(fields) != sorted(want):
            return Verdict(False, f"the change notes for “{name}” are not complete",
                           f"Expected notes for: {', '.join(want) or '(nothing)'}; got:"
                           f" {', '.join(fields) or '(nothing)'}.",
                           "Record one note per draft field you renamed or dropped.")  # fmt: skip
    return Verdict(True, "your migration matches the reference on every draft record",
                   "It renames, derives firstKeptEntryId, notes every change, refuses what"
                   " it cannot migrate, and never edits its input.")  # fmt: skip
