"""How a check names what it compares: id lists, path names, and the first difference.

A failed row shows the first failing example, expected vs got, named with the chapter's
entry ids (issue 10): :func:`path_name` calls the opening path ``sys..a3``, :func:`diff`
walks an expected value (JSON-shaped or a dataclass) and says where the student's value
first differs (``messages[2] (u3).content[0].text: differs at character 3 ...``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence

from ctxlab.entries import SessionEntry
from ctxlab.errors import shown
from ctxlab.lab.grading.text import kind

__all__ = ["canonical", "diff", "ids", "path_name"]


def ids(values: Sequence[object]) -> str:
    """``u2,a2`` (or ``(none)``)."""
    return ",".join(str(i) for i in values) if values else "(none)"


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


def diff(expected: object, got: object, where: str) -> str | None:
    """The first place where ``got`` differs from ``expected`` (JSON-shaped or dataclass)."""
    if dataclasses.is_dataclass(expected) and not isinstance(expected, type):
        if type(got) is not type(expected):
            return f"{where or 'the value'}: expected {type(expected).__name__}, got {kind(got)}"
        for field in dataclasses.fields(expected):
            found = diff(
                getattr(expected, field.name), getattr(got, field.name), _join(where, field.name)
            )
            if found:
                return found
        return None
    if isinstance(expected, Mapping):
        if not isinstance(got, Mapping):
            return f"{where or 'the value'}: expected an object, got {kind(got)}"
        for key in expected:
            if key not in got:
                return f"{_join(where, str(key))}: missing"
            found = diff(expected[key], got[key], _join(where, str(key)))
            if found:
                return found
        for key in got:
            if key not in expected:
                return f"{_join(where, str(key))}: not expected, got {shown(got[key])}"
        return None
    if isinstance(expected, (list, tuple)):
        if type(got) is not type(expected) and not (
            isinstance(got, (list, tuple)) and isinstance(expected, list)
        ):
            return f"{where}: expected a {type(expected).__name__}, got {kind(got)}"
        assert isinstance(got, (list, tuple))
        if len(got) != len(expected):
            return f"{where}: expected {shown(expected)}, got {shown(got)}"
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
        return (
            f"{where or 'the text'}: differs at character {at}:"
            f" expected {shown(expected[start : at + 30])}, got {shown(got[start : at + 30])}"
        )
    alike = type(expected) is type(got) or (
        isinstance(expected, (int, float))
        and isinstance(got, (int, float))
        and not isinstance(expected, bool)
        and not isinstance(got, bool)
    )
    if alike and expected == got:
        return None
    return f"{where or 'the value'}: expected {shown(expected)}, got {shown(got)}"


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name
