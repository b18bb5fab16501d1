"""Lab 11.x "可选迁移练习" (the optional migration exercise): the teaching layer of notebook
``11.x-migration.ipynb``.

The whole lab is a ctxlab extension: the chapter has a section titled 可选迁移练习 with no
text, and one rule it rests on (旧记录需要先在边界外迁移成当前形状). The core is
:mod:`ctxlab.migration`; the strict parser is never loosened. :func:`draft_table` shows each
draft record with the parser's and the reference migration's verdicts;
:func:`check_summary_renames` and :func:`check_migration` judge the student's migrations and
refuse one that calls the reference itself (:func:`reference_calls` looks through the code,
globals and closures; while it runs, the reference functions are replaced by stand-ins).
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
from ctxlab.lab.checks import Verdict, exercise, not_answered
from ctxlab.lab.errors_zh import change_text, error_text
from ctxlab.lab.language import tr
from ctxlab.migration import (
    LineChange,
    MigrationChange,
    MigrationError,
    MigrationResult,
    migrate_draft_entry,
)

__all__ = [
    "DRAFT_LABELS_ZH",
    "check_migration",
    "check_summary_renames",
    "draft_label",
    "draft_table",
    "note_text",
    "reference_calls",
]

#: Chinese names of the draft records (keys stay English: they are the fixtures' names).
#: The first is the chapter's early draft; the others are ctxlab's own examples.
DRAFT_LABELS_ZH: Mapping[str, str] = {
    "files instead of changedFiles": "用 files 代替 changedFiles",
    "nextSteps instead of next": "用 nextSteps 代替 next",
    "invariants instead of constraints": "用 invariants 代替 constraints",
    "compactedEntryIds instead of firstKeptEntryId": "用 compactedEntryIds 代替 firstKeptEntryId",
    "compactedEntryIds beside firstKeptEntryId": "compactedEntryIds 与 firstKeptEntryId 并存",
    "every draft name at once": "所有旧字段名一起出现",
    "already current": "已经是当前形状",
    "files and changedFiles disagree": "files 与 changedFiles 对不上",
    "invariants beside other constraints": "invariants 旁边还有另一份 constraints",
    "compactedEntryIds ends inside an interaction": "compactedEntryIds 停在一组中间",
    "compactedEntryIds names an unknown entry": "compactedEntryIds 写了路径上没有的 id",
    "compactedEntryIds disagrees with firstKeptEntryId": (
        "compactedEntryIds 与 firstKeptEntryId 对不上"
    ),
    "goal missing (the parser still refuses)": "缺少 goal（迁移后 parser 仍然拒绝）",
}


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
    frame = pd.DataFrame(rows, columns=["draft record", "strict parser", "migration"])
    headers = {"draft record": "草案记录", "strict parser": "严格 parser", "migration": "迁移"}
    return frame.rename(columns={name: tr(name, zh) for name, zh in headers.items()})


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
        super().__init__(
            tr(
                f"{name} is the reference migration: use your own code",
                f"{name} 是参考迁移：请用你自己的代码",
            )
        )
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
        raise TypeError(
            tr(
                f"expected your function, got {type(student).__name__}",
                f"这里应该传入你的函数，得到的是 {type(student).__name__}",
            )
        )
    return student


def _uses_reference(names: Iterable[str]) -> Verdict:
    listed = ", ".join(names)
    return Verdict(
        False,
        tr(
            f"your function calls ctxlab's reference migration ({listed})",
            f"你的函数调用了 ctxlab 的参考迁移（{listed}）",
        ),
        tr(
            "This exercise is to write the migration yourself: a check of the reference would "
            "only test ctxlab.",
            "这个练习要你自己写迁移：检查参考实现只是在测试 ctxlab。",
        ),
        tr(
            "Use your own code: build a new dict, rename the fields, derive firstKeptEntryId"
            " and raise migration.MigrationError yourself.",
            "用你自己的代码：新建一个 dict，重命名字段，推导 firstKeptEntryId，"
            "并自己抛出 migration.MigrationError。",
        ),
    )


def _fields(changes: object) -> list[str]:
    """The field paths named by a student's change notes (strings or objects with .field)."""
    if isinstance(changes, (str, bytes)) or not isinstance(changes, Iterable):
        raise TypeError(
            tr(
                f"the change notes must be a list (of field paths like 'summary.files'), got"
                f" {type(changes).__name__}",
                f"change notes 应该是一个列表（元素是 'summary.files' 这样的字段路径），"
                f"得到的是 {type(changes).__name__}",
            )
        )
    fields = []
    for change in changes:
        field = getattr(change, "field", change)
        if not isinstance(field, str):
            raise TypeError(
                tr(
                    f"a change note must name a field path, got {change!r}",
                    f"每条 change note 都应该写出一个字段路径，得到的是 {change!r}",
                )
            )
        fields.append(field.split(":")[0].split(" ")[0])
    return fields


def _unpack(returned: object) -> tuple[Mapping[str, Any], list[str]]:
    if isinstance(returned, MigrationResult):
        return returned.entry_wire, [c.field for c in returned.changes]
    if not isinstance(returned, tuple) or len(returned) != 2:
        raise TypeError(
            tr(
                "your function must return a pair (migrated_wire_dict, change_notes), got"
                f" {type(returned).__name__}",
                "你的函数应该返回一个二元组 (migrated_wire_dict, change_notes)，得到的是"
                f" {type(returned).__name__}",
            )
        )
    wire, changes = returned
    if not isinstance(wire, Mapping):
        raise TypeError(
            tr(
                f"the migrated record must be a dict, got {type(wire).__name__}",
                f"迁移后的记录应该是一个 dict，得到的是 {type(wire).__name__}",
            )
        )
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
            return not_answered(
                tr(
                    "summary renames (your function still returns None)",
                    "summary 字段重命名（你的函数仍然返回 None）",
                )
            )
        if summary != untouched:
            return Verdict(
                False,
                tr(
                    f"your function changed its input ({name})",
                    f"你的函数改动了输入（{draft_label(name)}）",
                ),
                "",
                tr(
                    "Copy first: new = dict(summary); never edit the old one.",
                    "先复制：new = dict(summary)；不要修改旧的 dict。",
                ),
            )
        want = fixtures.compact1().to_json()["summary"]
        if got != want:
            if not isinstance(got, Mapping):
                raise TypeError(
                    tr(
                        f"expected a dict back, got {type(got).__name__}",
                        f"应该返回一个 dict，得到的是 {type(got).__name__}",
                    )
                )
            extra = sorted(set(got) - set(want))
            missing = sorted(set(want) - set(got))
            detail = tr(f"Draft record: {name}.", f"草案记录：{draft_label(name)}。")
            if extra:
                detail += tr(
                    f" Still there: {', '.join(extra)}.", f"仍然存在：{', '.join(extra)}。"
                )
            if missing:
                detail += tr(f" Missing: {', '.join(missing)}.", f"缺少：{', '.join(missing)}。")
            return Verdict(
                False,
                tr(
                    "the migrated summary is not the current shape", "迁移后的 summary 不是当前形状"
                ),
                detail,
                tr(
                    "files → changedFiles, nextSteps → next, invariants → constraints;"
                    " keep the values as they are.",
                    "files → changedFiles，nextSteps → next，invariants → constraints；"
                    "值保持不变。",
                ),
            )
    return Verdict(
        True,
        tr(
            "every draft summary now has the seven current fields",
            "每份草案 summary 现在都有当前的七个字段",
        ),
        tr(
            "And the strict parser was not loosened to get there.",
            "而且这一路没有放宽严格的 parser。",
        ),
    )


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
                tr(
                    f"“{name}” can be migrated, but your function refused it",
                    f"“{draft_label(name)}” 可以迁移，但你的函数拒绝了它",
                ),
                f"{type(error).__name__}: {error}",
                "",
            )
        except Exception as error:
            kind = type(error).__name__
            if name in NOT_MIGRATABLE:
                return Verdict(
                    False,
                    tr(
                        f"right to refuse “{name}”, but with a bare {kind}",
                        f"拒绝“{draft_label(name)}”是对的，但抛出的是裸的 {kind}",
                    ),
                    f"{kind}: {error}",
                    tr(
                        "Raise MigrationError(message, entry_id=..., field=...) so the"
                        " reader learns which entry and field.",
                        "抛出 MigrationError(message, entry_id=..., field=...)，"
                        "让读者知道是哪条 entry、哪个字段。",
                    ),
                )
            return Verdict(
                False,
                tr(
                    f"your function crashed on “{name}”", f"你的函数在“{draft_label(name)}”上崩溃了"
                ),
                f"{kind}: {error}",
                "",
            )
        if returned is None:
            return not_answered(
                tr(
                    "migration (your function still returns None)",
                    "迁移（你的函数仍然返回 None）",
                )
            )
        if wire != untouched:
            return Verdict(
                False,
                tr(
                    f"your function changed its input (“{name}”)",
                    f"你的函数改动了输入（“{draft_label(name)}”）",
                ),
                "",
                tr(
                    "Build a new record: a migration never edits the old one.",
                    "新建一条记录：迁移从不修改旧记录。",
                ),
            )
        if name in NOT_MIGRATABLE:
            return Verdict(
                False,
                tr(f"“{name}” must not be migrated", f"“{draft_label(name)}” 不能被迁移"),
                tr("Your function returned a record for it.", "你的函数却为它返回了一条记录。"),
                tr(
                    "When the draft gives two different answers, or the result would"
                    " still fail the parser, raise a MigrationError.",
                    "当草案给出两个不同的答案，或者结果仍然过不了 parser 时，抛出 MigrationError。",
                ),
            )
        got, fields = _unpack(returned)
        reference = migrate_draft_entry(wire, earlier=fixtures.opening_path())
        try:
            parse_session_entry(got)
        except CtxlabError as error:
            return Verdict(
                False,
                tr(
                    f"the strict parser refuses your result for “{name}”",
                    f"严格的 parser 拒绝了你为“{draft_label(name)}”给出的结果",
                ),
                error_text(error),
                tr(
                    "The parser is never loosened: fix the record.",
                    "parser 永远不会放宽：请修正这条记录。",
                ),
            )
        if dict(got) != reference.entry_wire:
            return Verdict(
                False,
                tr(
                    f"your result for “{name}” differs from the reference",
                    f"你为“{draft_label(name)}”给出的结果与参考实现不同",
                ),
                "",
                tr(
                    "Compare it with ctxlab.fixtures.compact1().to_json().",
                    "把它和 ctxlab.fixtures.compact1().to_json() 比较一下。",
                ),
            )
        want = [c.field for c in reference.changes]
        if sorted(fields) != sorted(want):
            nothing = tr("(nothing)", "（无）")
            return Verdict(
                False,
                tr(
                    f"the change notes for “{name}” are not complete",
                    f"“{draft_label(name)}” 的 change notes 不完整",
                ),
                tr(
                    f"Expected notes for: {', '.join(want) or nothing}; got:"
                    f" {', '.join(fields) or nothing}.",
                    f"应该记录：{', '.join(want) or nothing}；实际记录："
                    f"{', '.join(fields) or nothing}。",
                ),
                tr(
                    "Record one note per draft field you renamed or dropped.",
                    "每个被重命名或删除的草案字段都要记一条 note。",
                ),
            )
    return Verdict(
        True,
        tr(
            "your migration matches the reference on every draft record",
            "你的迁移在每条草案记录上都与参考实现一致",
        ),
        tr(
            "It renames, derives firstKeptEntryId, notes every change, refuses what"
            " it cannot migrate, and never edits its input.",
            "它重命名字段、推导 firstKeptEntryId、记录每处改动、拒绝无法迁移的记录，"
            "而且从不修改输入。",
        ),
    )
