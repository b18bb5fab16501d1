"""Lab 11.x "可选迁移练习" (the optional migration exercise): the teaching layer of notebook
``11.x-migration.ipynb``.

The core of this lab is :mod:`ctxlab.migration` (``migrate_draft_entry``, the reference
migration of the chapter's draft records); the strict parser is never loosened.

* :func:`draft_table` -- each old record (the chapter's early-draft ``files`` case, and
  ctxlab's own examples ``nextSteps``, ``invariants`` and ``compactedEntryIds``, which the
  chapter does not name): what the strict parser says, and what the reference migration
  (:mod:`ctxlab.migration`) does with it;
* :func:`check_summary_renames` -- the student's summary-only migration;
* :func:`check_migration` -- the student's whole-record migration, run on every draft
  record and compared with the reference.

Both checks refuse a function that calls the reference migration itself (the exercise is to
write it): :func:`reference_calls` looks through the function's code, its globals and
closures (recursively), and while the student's function runs, the reference functions are
replaced by stand-ins that raise "use your own code".

Show a table with :func:`ctxlab.lab.display.show`.
"""

from __future__ import annotations

import copy
import sys
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import pandas as pd

from ctxlab import fixtures
from ctxlab import migration as _migration
from ctxlab.entries import parse_session_entry
from ctxlab.errors import CtxlabError
from ctxlab.fixtures import NOT_MIGRATABLE, draft_records
from ctxlab.lab.checks import Verdict, friendly, not_answered
from ctxlab.migration import MigrationError, MigrationResult, migrate_draft_entry

__all__ = ["check_migration", "check_summary_renames", "draft_table", "reference_calls"]


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


# -- "use your own code": the exercises may not call the reference migration ---------------------

#: The functions of :mod:`ctxlab.migration` that do the exercise's work.
_REFERENCE_NAMES = (
    "migrate_draft_entry",
    "migrate_jsonl",
    "_rename_summary_fields",
    "_derive_first_kept",
)


def _references() -> dict[int, str]:
    return {id(getattr(_migration, name)): f"migration.{name}" for name in _REFERENCE_NAMES}


def _is_ctxlab_module(value: object) -> bool:
    return isinstance(value, types.ModuleType) and value.__name__ in ("ctxlab", "ctxlab.migration")


def _code_objects(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


def reference_calls(function: object) -> list[str]:
    """The reference migration functions ``function`` refers to (directly, through a helper
    of the student's, a closure, or an attribute of ``ctxlab``/``ctxlab.migration``)."""
    references = _references()
    found: dict[str, None] = {}
    stack: list[object] = [function]
    seen: set[int] = set()
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if id(current) in references:
            found[references[id(current)]] = None
            continue
        current = getattr(current, "__func__", current)  # a bound method
        code = getattr(current, "__code__", None)
        if not isinstance(code, types.CodeType):
            continue
        scope: Mapping[str, object] = getattr(current, "__globals__", {})
        values = [cell.cell_contents for cell in getattr(current, "__closure__", None) or ()
                  if cell.cell_contents is not None]  # fmt: skip
        for part in _code_objects(code):
            names = set(part.co_names) | set(part.co_freevars)
            via_module = any(_is_ctxlab_module(scope.get(name)) for name in names) or any(
                _is_ctxlab_module(value) for value in values
            )
            for name in _REFERENCE_NAMES:
                if name in names and via_module:
                    found[f"migration.{name}"] = None
            values.extend(scope[name] for name in names if name in scope)
        for value in values:
            module = getattr(value, "__module__", None) or ""
            if id(value) in references:
                found[references[id(value)]] = None
            elif callable(value) and not module.startswith("ctxlab"):
                stack.append(value)  # a helper the student wrote: look inside it too
    return list(found)


class _ReferenceUsed(Exception):
    """Raised by a stand-in of a reference function while the student's function runs."""

    def __init__(self, name: str) -> None:
        super().__init__(f"{name} is the reference migration: use your own code")
        self.name = name


def _stand_in(name: str) -> Callable[..., Any]:
    def refuse(*_args: object, **_kwargs: object) -> Any:
        raise _ReferenceUsed(name)

    return refuse


@contextmanager
def _without_reference(function: Callable[..., Any]) -> Iterator[None]:
    """Replace the reference functions in ctxlab.migration and in the student's globals."""
    originals = {name: getattr(_migration, name) for name in _REFERENCE_NAMES}
    by_id = {id(value): name for name, value in originals.items()}
    scope = getattr(function, "__globals__", None)
    if not isinstance(scope, dict):
        scope = {}
    rebound = {key: value for key, value in scope.items() if id(value) in by_id}
    package = sys.modules.get("ctxlab")
    exported = {
        name: getattr(package, name)
        for name in _REFERENCE_NAMES
        if package is not None and id(getattr(package, name, None)) in by_id
    }
    try:
        for name in _REFERENCE_NAMES:
            setattr(_migration, name, _stand_in(f"migration.{name}"))
        for key, value in rebound.items():
            scope[key] = _stand_in(f"migration.{by_id[id(value)]}")
        for name in exported:
            setattr(package, name, _stand_in(f"migration.{name}"))
        yield
    finally:
        for name, value in originals.items():
            setattr(_migration, name, value)
        scope.update(rebound)
        for name, value in exported.items():
            setattr(package, name, value)


def _uses_reference(names: Iterable[str]) -> Verdict:
    listed = ", ".join(names)
    return Verdict(
        False,
        f"your function calls ctxlab's reference migration ({listed})",
        "This exercise is to write the migration yourself: a check of the reference would "
        "only test ctxlab.",
        "Use your own code: build a new dict, rename the fields, derive firstKeptEntryId"
        " and raise migration.MigrationError yourself.",
    )


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
    used = reference_calls(function)
    if used:
        return _uses_reference(used)
    for name, wire in draft_records().items():
        if name in NOT_MIGRATABLE or "compactedEntryIds" in wire:
            continue
        summary = wire["summary"]
        untouched = copy.deepcopy(summary)
        try:
            with _without_reference(function):
                got = function(summary)
        except _ReferenceUsed as error:
            return _uses_reference([error.name])
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
    used = reference_calls(function)
    if used:
        return _uses_reference(used)
    for name, wire in draft_records().items():
        untouched = copy.deepcopy(wire)
        try:
            with _without_reference(function):
                returned = function(wire, fixtures.opening_path())
        except _ReferenceUsed as error:
            return _uses_reference([error.name])
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
