"""Immutable JSON values and a strict JSON reader.

Tool-call arguments, tool-result ``details`` and metadata values are "any JSON value".
ctxlab keeps them frozen -- objects become :class:`FrozenDict`, arrays become
tuples -- so an entry can never share mutable state with the dict it was parsed from.

:func:`loads_strict` is the reader a session file needs: unlike :func:`json.loads` it
refuses ``NaN``/``Infinity`` literals and duplicate keys, and it turns over-deep nesting
into an ordinary error instead of ``RecursionError``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from typing import Any, NoReturn, TypeAlias, TypeVar, Union

from ctxlab.errors import entry_error, shown

__all__ = [
    "MAX_JSON_DEPTH",
    "FrozenDict",
    "JsonValue",
    "freeze_json",
    "loads_strict",
    "thaw_json",
]

#: Deepest nesting accepted inside a JSON value (arguments, details, metadata values).
#: Deeper values are rejected with a clear error rather than exhausting the Python stack.
MAX_JSON_DEPTH = 200

V = TypeVar("V")

JsonValue: TypeAlias = Union[
    bool, int, float, str, tuple["JsonValue", ...], "FrozenDict[JsonValue]", None
]


class FrozenDict(Mapping[str, V]):
    """A read-only, hashable mapping with ``str`` keys (JSON objects, system sections)."""

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[str, V] | None = None) -> None:
        self._items: dict[str, V] = dict(items or {})

    def __getitem__(self, key: str) -> V:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(frozenset(self._items.items()))

    def __repr__(self) -> str:
        return repr(self._items)


def freeze_json(value: object, *, entry_id: str | None, path: str) -> JsonValue:
    """Check that ``value`` is real JSON and return a frozen copy of it.

    Real JSON means: ``None``, ``bool``, ``str``, finite ``int``/``float``, lists or tuples
    of JSON, and mappings with ``str`` keys -- no cycles, no deeper than
    :data:`MAX_JSON_DEPTH`. Errors name ``entry_id`` and the field path.
    """
    return _freeze(value, entry_id, path, 0, set())


def _freeze(
    value: object, entry_id: str | None, path: str, depth: int, active: set[int]
) -> JsonValue:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise entry_error(entry_id, path, f"must be a finite number, got {shown(value)}")
        return float(value)
    if not isinstance(value, (list, tuple, Mapping)):
        raise entry_error(entry_id, path, f"is not a JSON value (got {type(value).__name__})")
    if depth >= MAX_JSON_DEPTH:
        raise entry_error(entry_id, path, f"is nested more than {MAX_JSON_DEPTH} levels deep")
    marker = id(value)
    if marker in active:
        raise entry_error(entry_id, path, "contains a cycle (a value that contains itself)")
    active.add(marker)
    try:
        if isinstance(value, Mapping):
            frozen: dict[str, JsonValue] = {}
            for key, item in value.items():
                if not isinstance(key, str):
                    raise entry_error(entry_id, path, f"has a non-string key {shown(key)}")
                frozen[key] = _freeze(item, entry_id, f"{path}.{key}", depth + 1, active)
            return FrozenDict(frozen)
        return tuple(
            _freeze(item, entry_id, f"{path}[{index}]", depth + 1, active)
            for index, item in enumerate(value)
        )
    finally:
        active.discard(marker)


def thaw_json(value: JsonValue) -> Any:
    """Turn a frozen JSON value back into plain ``dict``/``list`` values (a fresh copy)."""
    if isinstance(value, FrozenDict):
        return {key: thaw_json(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [thaw_json(item) for item in value]
    return value


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not valid JSON")


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {shown(key)} in one object")
        result[key] = value
    return result


def loads_strict(text: str) -> Any:
    """Parse one JSON document strictly; raise ``ValueError`` with a readable reason.

    Refused: ``NaN``, ``Infinity`` and ``-Infinity``; duplicate keys in one object;
    nesting too deep for the parser.
    """
    try:
        return json.loads(
            text, parse_constant=_reject_constant, object_pairs_hook=_no_duplicate_keys
        )
    except RecursionError:
        raise ValueError("JSON is nested too deeply to read") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
