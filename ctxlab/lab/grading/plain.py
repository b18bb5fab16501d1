"""What a student's function returned or raised, as plain data the grader can trust.

A check compares what the student's function gave back with the reference's result. If it
compared the student's objects themselves, a value could lie: a ``str`` subclass whose
``__eq__`` is always true, a list whose ``__iter__`` hides items, an exception whose
``__str__`` never returns. So every result is first *encoded*, in plain Python that reads
each object through the builtin types' own methods (never the value's), into JSON-shaped
data with a few tags (:func:`encode`, :func:`encode_error`); a check then works on the
*decoded* copy (:func:`decode`, :func:`decode_error`): the same ctxlab classes, holding only
exact builtin values, so comparing it means what it says.

The encoding is bounded: a result with more than :data:`MAX_NODES` values, more than
:data:`MAX_CHARS` characters of text or nested deeper than :data:`MAX_DEPTH` is refused
with :class:`TooLarge` before anything is serialised -- in plain Python, so the check's time
limit still holds while it runs.

The same encoded data is what crosses from the process that ran a student's file to the one
that judges it on the terminal route (``pytest --ctxlab-impl``): it is plain JSON.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Final

from ctxlab import errors
from ctxlab.context import ContextResult, ContextTokens
from ctxlab.entries import (
    CompactionSessionEntry,
    CompactionSummary,
    MessageSessionEntry,
    MetadataSessionEntry,
)
from ctxlab.interactions import InteractionGroup
from ctxlab.json_values import FrozenDict
from ctxlab.messages import (
    ABSENT,
    AssistantMessage,
    SystemMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

__all__ = [
    "MAX_CHARS",
    "MAX_DEPTH",
    "MAX_NODES",
    "Opaque",
    "TooLarge",
    "decode",
    "decode_error",
    "encode",
    "encode_error",
    "type_name",
]

MAX_NODES: Final = 200_000
MAX_CHARS: Final = 5_000_000
MAX_DEPTH: Final = 100

#: The ctxlab classes a result may be built from, by name: decoded as themselves.
_CLASSES: Final[dict[str, type]] = {
    cls.__name__: cls
    for cls in (
        TextContent,
        ToolCall,
        Usage,
        SystemMessage,
        UserMessage,
        AssistantMessage,
        ToolResultMessage,
        CompactionSummary,
        MessageSessionEntry,
        MetadataSessionEntry,
        CompactionSessionEntry,
        InteractionGroup,
        ContextTokens,
        ContextResult,
    )
}
_FIELDS: Final = {
    name: tuple(f.name for f in dataclasses.fields(cls)) for name, cls in _CLASSES.items()
}

#: ctxlab's error classes, by name (a student's subclass is decoded as its nearest one).
_ERRORS: Final[dict[str, type[errors.CtxlabError]]] = {
    cls.__name__: cls
    for cls in (
        errors.CtxlabError,
        errors.EntryParseError,
        errors.SessionStoreError,
        errors.SessionTreeError,
        errors.InteractionError,
        errors.ContextOptionError,
        errors.EstimatorError,
        errors.CompactionError,
    )
}
_ERROR_ATTRIBUTES: Final = (
    "problem",
    "where",
    "entry_id",
    "field",
    "line",
    "call_id",
    "option",
    "path",
    "subject",
)
_TAG: Final = "$"


class TooLarge(Exception):
    """A result too large (or too deep) to judge; ``str()`` says which limit it broke."""


def type_name(value: object) -> str:
    """The name of ``value``'s class, read without asking the class (a metaclass may lie)."""
    name = type.__dict__["__name__"].__get__(type(value))
    return name if type(name) is str else "object"


class _Budget:
    __slots__ = ("chars", "nodes")

    def __init__(self) -> None:
        self.nodes = 0
        self.chars = 0

    def count(self, chars: int = 0) -> None:
        self.nodes += 1
        self.chars += chars
        if self.nodes > MAX_NODES:
            raise TooLarge(f"more than {MAX_NODES:,} values")
        if self.chars > MAX_CHARS:
            raise TooLarge(f"more than {MAX_CHARS:,} characters of text")


def encode(value: object) -> Any:
    """``value`` as JSON-shaped data (tags for tuples, dicts, ctxlab objects, others).

    Raises :class:`TooLarge` when the value breaks a size limit.
    """
    return _encode(value, _Budget(), 0)


def _encode(value: object, budget: _Budget, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise TooLarge(f"nested deeper than {MAX_DEPTH} levels")
    cls = type(value)
    if value is None or cls is bool:
        budget.count()
        return value
    if isinstance(value, str):
        text = str.__str__(value)  # an exact copy, whatever the subclass says
        budget.count(len(text))
        return text
    if isinstance(value, int):
        number = int.__index__(value)
        budget.count(number.bit_length() // 3)
        return number
    if isinstance(value, float):
        budget.count()
        real = float.__float__(value)
        return real if math.isfinite(real) else {_TAG: "float", "v": repr(real)}
    below = depth + 1
    if isinstance(value, list):
        budget.count()
        items = [list.__getitem__(value, i) for i in range(list.__len__(value))]
        return [_encode(item, budget, below) for item in items]
    if isinstance(value, tuple):
        budget.count()
        items = [tuple.__getitem__(value, i) for i in range(tuple.__len__(value))]
        return {_TAG: "tuple", "v": [_encode(item, budget, below) for item in items]}
    if isinstance(value, dict):
        budget.count()
        pairs = list(dict.items(value))
        return {
            _TAG: "dict",
            "v": [[_encode(k, budget, below), _encode(v, budget, below)] for k, v in pairs],
        }
    if cls is FrozenDict:
        budget.count()
        inner = object.__getattribute__(value, "_items")
        pairs = list(dict.items(inner)) if isinstance(inner, dict) else []
        return {
            _TAG: "frozendict",
            "v": [[_encode(k, budget, below), _encode(v, budget, below)] for k, v in pairs],
        }
    if value is ABSENT:
        budget.count()
        return {_TAG: "absent"}
    name = type_name(value)
    if _CLASSES.get(name) is cls:
        budget.count()
        fields: dict[str, Any] = {}
        for field in _FIELDS[name]:
            try:
                item = object.__getattribute__(value, field)
            except AttributeError:
                continue
            fields[field] = _encode(item, budget, below)
        return {_TAG: "object", "t": name, "f": fields}
    budget.count()
    return {_TAG: "opaque", "t": name}


class Opaque:
    """A value of a class the grader does not read (decoded as an empty stand-in whose
    class has the original name, so a detail still says ``returned a MyResult``)."""


_OPAQUE_CLASSES: dict[str, type[Opaque]] = {}


def _opaque(name: str) -> Opaque:
    if name not in _OPAQUE_CLASSES:
        _OPAQUE_CLASSES[name] = type(name, (Opaque,), {"__repr__": lambda self: f"<{name}>"})
    return _OPAQUE_CLASSES[name]()


def decode(data: Any) -> Any:
    """The value :func:`encode` described, rebuilt from exact builtin values."""
    if isinstance(data, list):
        return [decode(item) for item in data]
    if not isinstance(data, dict):
        return data
    tag = data.get(_TAG)
    if tag == "tuple":
        return tuple(decode(item) for item in data["v"])
    if tag == "dict":
        return {_key(decode(k)): decode(v) for k, v in data["v"]}
    if tag == "frozendict":
        frozen = object.__new__(FrozenDict)
        object.__setattr__(frozen, "_items", {_key(decode(k)): decode(v) for k, v in data["v"]})
        return frozen
    if tag == "float":
        return float(data["v"])
    if tag == "absent":
        return ABSENT
    if tag == "object" and data.get("t") in _CLASSES:
        cls = _CLASSES[data["t"]]
        rebuilt: Any = object.__new__(cls)
        for field, item in data["f"].items():
            if field in _FIELDS[data["t"]]:
                object.__setattr__(rebuilt, field, decode(item))
        return rebuilt
    return _opaque(str(data.get("t", "object")))


def _key(value: Any) -> Any:
    """A dict key as decoded (an unhashable one is shown, not used)."""
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def encode_error(error: BaseException, message: str) -> dict[str, Any]:
    """An exception the student's code raised, as plain data (``message`` already read
    safely by the caller): its class name, the nearest ctxlab error class (or builtin
    exception class) above it, and ctxlab's error attributes."""
    name = type_name(error)
    mro = type.__dict__["__mro__"].__get__(type(error))
    nearest = next(
        (
            type_name_of(cls)
            for cls in mro
            if _ERRORS.get(type_name_of(cls)) is cls
            or (cls.__module__ == "builtins" and issubclass(cls, BaseException))
        ),
        "Exception",
    )
    attributes: dict[str, Any] = {}
    if issubclass(type(error), errors.CtxlabError):
        try:
            own = object.__getattribute__(error, "__dict__")
        except AttributeError:
            own = {}
        for attribute in _ERROR_ATTRIBUTES:
            item = dict.get(own, attribute) if isinstance(own, dict) else None
            try:
                attributes[attribute] = encode(item)
            except TooLarge:
                attributes[attribute] = None
    return {"type": name, "base": nearest, "message": message, "attributes": attributes}


def type_name_of(cls: type) -> str:
    name = type.__dict__["__name__"].__get__(cls)
    return name if type(name) is str else "object"


_ERROR_CLASSES: dict[tuple[str, str], type[BaseException]] = {}


def decode_error(data: dict[str, Any]) -> BaseException:
    """An exception of the same name, under the same ctxlab (or builtin) class, holding the
    message and attributes :func:`encode_error` read -- never the student's object."""
    name, base_name = str(data["type"]), str(data["base"])
    base: type[BaseException] = _ERRORS.get(base_name) or _builtin_exception(base_name)
    key = (name, base_name)
    if key not in _ERROR_CLASSES:
        _ERROR_CLASSES[key] = base if base.__name__ == name else type(name, (base,), {})
    cls = _ERROR_CLASSES[key]
    error = cls.__new__(cls)
    BaseException.__init__(error, data["message"])
    for attribute, item in data.get("attributes", {}).items():
        object.__setattr__(error, attribute, decode(item))
    if issubclass(cls, errors.CtxlabError):
        for attribute in _ERROR_ATTRIBUTES:
            if attribute not in data.get("attributes", {}):
                object.__setattr__(error, attribute, None)
    return error


def _builtin_exception(name: str) -> type[BaseException]:
    import builtins

    found = getattr(builtins, name, None)
    if isinstance(found, type) and issubclass(found, Exception):
        return found
    return Exception
