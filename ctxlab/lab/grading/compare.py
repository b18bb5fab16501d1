"""How a check names what it compares: id lists, path names, and the first difference.

A failed row shows the first failing example named with the chapter's entry ids (issue 10):
:func:`diff` says where the student's value first differs from the expected one
(``messages[2] (u3).content[0].text: differs at character 3 ...``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence

from ctxlab.entries import SessionEntry
from ctxlab.errors import shown
from ctxlab.lab.grading.text import kind
from ctxlab.lab.language import tr

__all__ = ["canonical", "diff", "ids", "path_name"]


def ids(values: Sequence[object]) -> str:
    """``u2,a2`` (or ``(none)``, 「（无）」)."""
    return ",".join(str(i) for i in values) if values else tr("(none)", "（无）")


_OPENING_IDS = ("sys", "u1", "a1", "u2", "a2", "u3", "calls", "r-test", "r-read", "a3")


def path_name(path: Sequence[SessionEntry]) -> str:
    """A short name of a path: ``sys..a3`` for the opening path, its ids for a short one."""
    entry_ids = tuple(entry.id for entry in path)
    if not entry_ids:
        return "[]"
    if entry_ids == _OPENING_IDS:
        return "sys..a3"
    if len(entry_ids) > 12:
        return f"{entry_ids[0]}..{entry_ids[-1]}"
    return ",".join(entry_ids)


def canonical(value: object) -> str:
    """Canonical JSON of a wire value (``?`` when it is not JSON)."""
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=True)
    except (TypeError, ValueError):
        return "?"


def _expected(where: str, expected: str, got: str) -> str:
    return tr(f"{where}: expected {expected}, got {got}", f"{where}：应为 {expected}，实际是 {got}")


def _the_value(where: str) -> str:
    return where or tr("the value", "返回值")


def diff(expected: object, got: object, where: str) -> str | None:
    """The first place where ``got`` differs from ``expected`` (JSON-shaped or dataclass),
    in the language of the report."""
    if dataclasses.is_dataclass(expected) and not isinstance(expected, type):
        if type(got) is not type(expected):
            return _expected(_the_value(where), type(expected).__name__, kind(got))
        for field in dataclasses.fields(expected):
            name = field.name
            found = diff(getattr(expected, name), getattr(got, name), _join(where, name))
            if found:
                return found
        return None
    if isinstance(expected, Mapping):
        if not isinstance(got, Mapping):
            return _expected(_the_value(where), tr("an object", "对象"), kind(got))
        for key in expected:
            if key not in got:
                return tr(f"{_join(where, str(key))}: missing", f"{_join(where, str(key))}：缺失")
            found = diff(expected[key], got[key], _join(where, str(key)))
            if found:
                return found
        for key in got:
            if key not in expected:
                place = _join(where, str(key))
                return tr(
                    f"{place}: not expected, got {shown(got[key])}",
                    f"{place}：不应出现，实际是 {shown(got[key])}",
                )
        return None
    if isinstance(expected, (list, tuple)):
        if type(got) is not type(expected) and not (
            isinstance(got, (list, tuple)) and isinstance(expected, list)
        ):
            return _expected(
                where, tr(f"a {type(expected).__name__}", type(expected).__name__), kind(got)
            )
        assert isinstance(got, (list, tuple))
        if len(got) != len(expected):
            return _expected(where, shown(expected), shown(got))
        for index, (e, g) in enumerate(zip(expected, got, strict=True)):
            found = diff(e, g, f"{where}[{index}]")
            if found:
                return found
        return None
    if isinstance(expected, str) and isinstance(got, str) and expected != got:
        at = next(
            (i for i, (e, g) in enumerate(zip(expected, got, strict=False)) if e != g),
            min(len(expected), len(got)),
        )
        start = max(0, at - 20)
        place = where or tr("the text", "文本")
        wanted, found_text = shown(expected[start : at + 30]), shown(got[start : at + 30])
        return tr(
            f"{place}: differs at character {at}: expected {wanted}, got {found_text}",
            f"{place}：第 {at} 个字符起不同：应为 {wanted}，实际是 {found_text}",
        )
    alike = type(expected) is type(got) or (
        isinstance(expected, (int, float))
        and isinstance(got, (int, float))
        and not isinstance(expected, bool)
        and not isinstance(got, bool)
    )
    if alike and expected == got:
        return None
    return _expected(_the_value(where), shown(expected), shown(got))


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name
