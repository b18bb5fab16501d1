"""Lab 11.x "可选迁移练习" (the optional migration exercise): the teaching layer of notebook
``11.x-migration.ipynb``. A ctxlab extension: the chapter's section has a title and one rule
(旧记录需要先在边界外迁移成当前形状), no text.

:func:`draft_table` shows each draft record with the strict parser's and the reference
migration's (:mod:`ctxlab.migration`) verdicts; :func:`check_summary_renames` and
:func:`check_migration` judge the student's migrations and refuse one that calls the
reference (:func:`reference_calls`; while it runs, the reference is replaced by stand-ins).
"""

from __future__ import annotations

import copy
import json
import sys
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from ctxlab import fixtures
from ctxlab import migration as _migration
from ctxlab.entries import parse_session_entry
from ctxlab.errors import CtxlabError
from ctxlab.fixtures import NOT_MIGRATABLE, draft_records
from ctxlab.lab.checks import Verdict, exercise, not_answered
from ctxlab.lab.display import in_language
from ctxlab.lab.errors_zh import change_text, error_text
from ctxlab.lab.language import Texts, tr
from ctxlab.migration import (
    LineChange,
    MigrationChange,
    MigrationError,
    MigrationResult,
    migrate_draft_entry,
)

say = Texts("lab11_x")

__all__ = [
    "DRAFT_LABELS_ZH",
    "check_migration",
    "check_summary_renames",
    "draft_label",
    "draft_table",
    "note_text",
    "reference_calls",
]

#: Chinese names of the draft records (keys: the fixtures' English names). The first is the
#: chapter's early draft; the others are ctxlab's own examples.
DRAFT_LABELS_ZH: Mapping[str, str] = json.loads(
    Path(__file__).with_name("data").joinpath("draft_labels_zh.json").read_text("utf-8")
)


def draft_label(name: str) -> str:
    """A draft record's name (a key of :func:`ctxlab.fixtures.draft_records`) in the current
    language; the English name is the key."""
    return tr(name, DRAFT_LABELS_ZH.get(name, name))


def note_text(change: MigrationChange | LineChange) -> str:
    """A migration note as a cell prints it, in the current language: one change of
    ``migrate_draft_entry``, or one change on a line of ``migrate_jsonl``'s file."""
    if isinstance(change, LineChange):
        return tr(
            str(change), f"第 {change.line} 行（{change.entry_id}）{change_text(change.change)}"
        )
    return change_text(change)


def draft_table() -> pd.DataFrame:
    """One row per draft record: the parser's verdict, then the migration's."""
    rows = []
    for name, wire in draft_records().items():
        try:
            parse_session_entry(wire)
            parser = tr("accepted", "接受")
        except CtxlabError as error:
            parser = tr(f"refused: {error}", f"拒绝：{error_text(error)}")
        try:
            result = migrate_draft_entry(wire, earlier=fixtures.opening_path())
            changes = tr("; ", "；").join(change_text(c) for c in result.changes)
            migration = "✔ " + (changes or tr("nothing to change", "无需改动"))
        except MigrationError as error:
            migration = f"✘ {error_text(error)}"
        rows.append(
            {"draft record": draft_label(name), "strict parser": parser, "migration": migration}
        )
    columns = {"draft record": "草案记录", "strict parser": "严格 parser", "migration": "迁移"}
    return in_language(pd.DataFrame(rows, columns=list(columns)), columns)


#: The functions of :mod:`ctxlab.migration` that do the exercise's work: the student's code
#: may not call them.
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
        super().__init__(say("is_the_reference_migration_use", name=name))
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


def _function(student: object) -> Callable[..., object]:
    if not callable(student):
        raise TypeError(say("expected_your_function_got", kind=type(student).__name__))
    return student


def _uses_reference(names: Iterable[str]) -> Verdict:
    listed = ", ".join(names)
    return Verdict(
        False,
        say("your_function_calls_ctxlab_s", listed=listed),
        say("this_exercise_is_to_write"),
        say("use_your_own_code_build"),
    )


def _fields(changes: object) -> list[str]:
    """The field paths named by a student's change notes (strings or objects with .field)."""
    if isinstance(changes, (str, bytes)) or not isinstance(changes, Iterable):
        raise TypeError(say("the_change_notes_must_be", kind=type(changes).__name__))
    fields = []
    for change in changes:
        field = getattr(change, "field", change)
        if not isinstance(field, str):
            raise TypeError(say("a_change_note_must_name", change=change))
        fields.append(field.split(":")[0].split(" ")[0])
    return fields


def _unpack(returned: object) -> tuple[Mapping[str, Any], list[str]]:
    if isinstance(returned, MigrationResult):
        return returned.entry_wire, [c.field for c in returned.changes]
    if not isinstance(returned, tuple) or len(returned) != 2:
        raise TypeError(say("your_function_must_return_a", kind=type(returned).__name__))
    wire, changes = returned
    if not isinstance(wire, Mapping):
        raise TypeError(say("the_migrated_record_must_be", kind=type(wire).__name__))
    return wire, _fields(changes)


@exercise("summary renames", "summary 改名函数 my_summary_migration")
def check_summary_renames(student: object) -> Verdict:
    """Exercise 1: ``student(summary_dict) -> dict`` renames files/nextSteps/invariants."""
    function = _function(student)
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
            return not_answered(say("summary_renames_your_function_still"))
        if summary != untouched:
            return Verdict(
                False,
                say("your_function_changed_its_input", name=name, label=draft_label(name)),
                "",
                say("copy_first_new_dict_summary"),
            )
        want = fixtures.compact1().to_json()["summary"]
        if got != want:
            if not isinstance(got, Mapping):
                raise TypeError(say("expected_a_dict_back_got", kind=type(got).__name__))
            extra = sorted(set(got) - set(want))
            missing = sorted(set(want) - set(got))
            detail = tr(f"Draft record: {name}.", f"草案记录：{draft_label(name)}。")
            if extra:
                detail += say("still_there", extra=", ".join(extra))
            if missing:
                detail += tr(f" Missing: {', '.join(missing)}.", f"缺少：{', '.join(missing)}。")
            return Verdict(
                False,
                say("the_migrated_summary_is_not"),
                detail,
                say("files_changedfiles_nextsteps_next_invariants"),
            )
    return Verdict(True, say("every_draft_summary_now_has"), say("and_the_strict_parser_was"))


@exercise("migration", "迁移函数 my_migration")
def check_migration(student: object) -> Verdict:
    """Exercise 2: ``student(wire, earlier) -> (migrated_wire, change_notes)`` on every draft
    record; unmigratable records must raise a CtxlabError (e.g. MigrationError)."""
    function = _function(student)
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
            return Verdict(
                False,
                say("can_be_migrated_but_your", name=name, label=draft_label(name)),
                f"{type(error).__name__}: {error}",
                "",
            )
        except Exception as error:
            kind = type(error).__name__
            if name in NOT_MIGRATABLE:
                return Verdict(
                    False,
                    say("right_to_refuse_but_with", name=name, kind=kind, label=draft_label(name)),
                    f"{kind}: {error}",
                    say("raise_migrationerror_message_entry_id"),
                )
            return Verdict(
                False,
                say("your_function_crashed_on", name=name, label=draft_label(name)),
                f"{kind}: {error}",
                "",
            )
        if returned is None:
            return not_answered(say("migration_your_function_still_returns"))
        if wire != untouched:
            return Verdict(
                False,
                say("your_function_changed_the_record", name=name, label=draft_label(name)),
                "",
                say("build_a_new_record_a"),
            )
        if name in NOT_MIGRATABLE:
            return Verdict(
                False,
                tr(f"“{name}” must not be migrated", f"“{draft_label(name)}” 不能被迁移"),
                tr("Your function returned a record for it.", "你的函数却为它返回了一条记录。"),
                say("when_the_draft_gives_two"),
            )
        got, fields = _unpack(returned)
        reference = migrate_draft_entry(wire, earlier=fixtures.opening_path())
        try:
            parse_session_entry(got)
        except CtxlabError as error:
            return Verdict(
                False,
                say("the_strict_parser_refuses_your", name=name, label=draft_label(name)),
                error_text(error),
                say("the_parser_is_never_loosened"),
            )
        if dict(got) != reference.entry_wire:
            return Verdict(
                False,
                say("your_result_for_differs_from", name=name, label=draft_label(name)),
                "",
                say("compare_it_with_ctxlab_fixtures"),
            )
        want = [c.field for c in reference.changes]
        if sorted(fields) != sorted(want):
            nothing = tr("(nothing)", "（无）")
            return Verdict(
                False,
                say("the_change_notes_for_are", name=name, label=draft_label(name)),
                say(
                    "expected_notes_for_got",
                    want=", ".join(want) or nothing,
                    fields=", ".join(fields) or nothing,
                ),
                say("record_one_note_per_draft"),
            )
    return Verdict(
        True,
        say("your_migration_matches_the_reference"),
        say("it_renames_derives_firstkeptentryid_notes"),
    )
