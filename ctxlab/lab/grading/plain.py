"""What a student's function returned or raised, as plain data the grader can trust.

A student's value could lie (a ``str`` subclass whose ``__eq__`` is always true), so a check
never compares it: :func:`encode` and :func:`encode_error` read it through the builtin types'
own methods into bounded JSON-shaped data (:class:`TooLarge` past the limits), and
:func:`decode` and :func:`decode_error` rebuild ctxlab's classes from exact builtin values.
The same JSON crosses from a sandboxed child.
"""

from __future__ import annotations

import builtins
import dataclasses
import functools
import inspect
import math
from typing import Any, Final

from ctxlab import context, entries, errors, interactions, messages
from ctxlab.json_values import FrozenDict
from ctxlab.messages import ABSENT

MAX_NODES: Final = 200_000
MAX_CHARS: Final = 5_000_000
MAX_DEPTH: Final = 100

#: The ctxlab classes a result may be built from, by name: the chapter's public dataclasses.
_CLASSES: Final[dict[str, type]] = {
    name: cls
    for module in (messages, entries, interactions, context)
    for name, cls in vars(module).items()
    if isinstance(cls, type)
    and dataclasses.is_dataclass(cls)
    and cls.__module__ == module.__name__
    and not name.startswith("_")
}
_FIELDS: Final = {
    name: tuple(f.name for f in dataclasses.fields(cls)) for name, cls in _CLASSES.items()
}

#: ctxlab's error classes, by name: a student's subclass is decoded as its nearest one.
_ERRORS: Final[dict[str, type[errors.CtxlabError]]] = {
    name: cls
    for name, cls in vars(errors).items()
    if isinstance(cls, type) and issubclass(cls, errors.CtxlabError)
}
#: What a CtxlabError keeps as attributes: its keywords (``problem``, ``where``, ...).
_ERROR_ATTRIBUTES: Final = tuple(inspect.signature(errors.CtxlabError).parameters)
_TAG: Final = "$"


class TooLarge(Exception):
    """A result too large (or too deep) to judge; ``str()`` says which limit it broke."""


def type_name(value: object) -> str:
    """The name of ``value``'s class, read without asking the class (a metaclass may lie)."""
    return _class_name(type(value))


def _class_name(cls: type) -> str:
    name = type.__dict__["__name__"].__get__(cls)
    return name if type(name) is str else "object"


def encode(value: object) -> Any:
    """``value`` as JSON-shaped data (tags for tuples, dicts, ctxlab objects, others);
    :class:`TooLarge` when it breaks a size limit."""
    counted = [0, 0]  # values, characters of text

    def count(chars: int = 0) -> None:
        counted[0] += 1
        counted[1] += chars
        if counted[0] > MAX_NODES:
            raise TooLarge(f"more than {MAX_NODES:,} values")
        if counted[1] > MAX_CHARS:
            raise TooLarge(f"more than {MAX_CHARS:,} characters of text")

    def walk(value: object, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise TooLarge(f"nested deeper than {MAX_DEPTH} levels")
        cls = type(value)
        if value is None or cls is bool:
            count()
            return value
        if isinstance(value, str):
            text = str.__str__(value)  # an exact copy, whatever the subclass says
            count(len(text))
            return text
        if isinstance(value, int):
            number = int.__index__(value)
            count(number.bit_length() // 3)
            return number
        count()
        if isinstance(value, float):
            real = float.__float__(value)
            return real if math.isfinite(real) else {_TAG: "float", "v": repr(real)}
        below = depth + 1
        if isinstance(value, (list, tuple)):
            base: Any = list if isinstance(value, list) else tuple
            encoded = [walk(base.__getitem__(value, i), below) for i in range(base.__len__(value))]
            return encoded if base is list else {_TAG: "tuple", "v": encoded}
        if isinstance(value, dict) or cls is FrozenDict:
            inner = value if isinstance(value, dict) else object.__getattribute__(value, "_items")
            pairs = list(dict.items(inner)) if isinstance(inner, dict) else []
            tag = "dict" if isinstance(value, dict) else "frozendict"
            return {_TAG: tag, "v": [[walk(k, below), walk(v, below)] for k, v in pairs]}
        if value is ABSENT:
            return {_TAG: "absent"}
        name = type_name(value)
        if _CLASSES.get(name) is not cls:
            return {_TAG: "opaque", "t": name}
        fields: dict[str, Any] = {}
        for field in _FIELDS[name]:
            try:
                item = object.__getattribute__(value, field)
            except AttributeError:
                continue
            fields[field] = walk(item, below)
        return {_TAG: "object", "t": name, "f": fields}

    return walk(value, 0)


@functools.cache
def _opaque(name: str) -> type:
    """A value of a class the grader does not read: an empty stand-in of the same name."""
    return type(name, (), {"__repr__": lambda self: f"<{name}>"})


def decode(data: Any) -> Any:
    """The value :func:`encode` described, rebuilt from exact builtin values."""
    if isinstance(data, list):
        return [decode(item) for item in data]
    if not isinstance(data, dict):
        return data
    tag = data.get(_TAG)
    if tag == "tuple":
        return tuple(decode(item) for item in data["v"])
    if tag in ("dict", "frozendict"):
        items = {_key(decode(k)): decode(v) for k, v in data["v"]}
        if tag == "dict":
            return items
        frozen = object.__new__(FrozenDict)
        object.__setattr__(frozen, "_items", items)
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
    return _opaque(str(data.get("t", "object")))()


def _key(value: Any) -> Any:
    """A dict key as decoded (an unhashable one is shown, not used)."""
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def encode_error(error: BaseException, message: str) -> dict[str, Any]:
    """An exception the student's code raised, as plain data: its class name, the nearest
    ctxlab (or builtin) class above it, ``message`` (read safely), ctxlab's attributes."""
    name = type_name(error)
    mro = type.__dict__["__mro__"].__get__(type(error))
    nearest = next(
        (
            _class_name(cls)
            for cls in mro
            if _ERRORS.get(_class_name(cls)) is cls
            or (cls.__module__ == "builtins" and issubclass(cls, BaseException))
        ),
        "Exception",
    )
    attributes: dict[str, Any] = {}
    if issubclass(type(error), errors.CtxlabError):
        own = BaseException.__dict__["__dict__"].__get__(error)  # a dict, whatever the class says
        for attribute in _ERROR_ATTRIBUTES:
            item = dict.get(own, attribute)
            try:
                attributes[attribute] = encode(item)
            except TooLarge:
                attributes[attribute] = None
    return {"type": name, "base": nearest, "message": message, "attributes": attributes}


@functools.cache
def _error_class(name: str, base_name: str) -> type[BaseException]:
    """The class ``name`` below ctxlab's (or the builtin) ``base_name``, made once."""
    builtin = getattr(builtins, base_name, None)
    if not (isinstance(builtin, type) and issubclass(builtin, Exception)):
        builtin = Exception
    base: type[BaseException] = _ERRORS.get(base_name) or builtin
    return base if base.__name__ == name else type(name, (base,), {})


def decode_error(data: dict[str, Any]) -> BaseException:
    """An exception like the one :func:`encode_error` read -- never the student's object."""
    cls = _error_class(str(data["type"]), str(data["base"]))
    error = cls.__new__(cls)
    BaseException.__init__(error, data["message"])
    attributes = data.get("attributes", {})
    ctxlabs = _ERROR_ATTRIBUTES if issubclass(cls, errors.CtxlabError) else ()
    for attribute in (*ctxlabs, *attributes):  # a CtxlabError's attribute not sent: None
        object.__setattr__(error, attribute, decode(attributes.get(attribute)))
    return error
