"""ctxlab's own objects as grading found them, checked and put back (issue 25, item 4).

:class:`~.runner.Pristine` puts back the *names* of ctxlab's modules. A student's code can
also change the *objects* behind the names without rebinding any: ``object.__setattr__`` on
a frozen entry or on the read-only :data:`ctxlab.fixtures.opening_estimator`, the dict behind
a ``MappingProxyType`` or a ``FrozenDict``, a function's ``__code__`` or ``__defaults__``, a
class attribute, a list inside a tuple. A thread that outlived its check (blocked in C, or
catching every stop) can do so later, while another student's right answer is checked.

:class:`KeptObjects` walks the module-level values of ctxlab's modules once, when grading
loads, and remembers, for every object it reaches, what it holds: the attributes of an
instance (``__dict__`` and ``__slots__``), the items of a container, the code, defaults and
closure of a function, the attributes of a class defined in ctxlab. :meth:`~KeptObjects.repair`
compares each with what it holds now, by identity (no student code runs: no ``__eq__``),
puts back what changed and names it. The engine repairs before each check, and the report
says, in plain words, what was changed and that the kernel should be restarted when it
happens again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
from types import FunctionType, MappingProxyType, ModuleType
from typing import Any, Final

__all__ = ["KeptObjects"]

#: At most this many objects are kept (ctxlab holds a few thousand).
_MOST: Final = 50_000
_MISSING: Final[Any] = object()
#: Attributes of a class that CPython itself changes, or that describe the class only.
_CLASS_SKIP: Final = frozenset({"__dict__", "__weakref__", "__doc__", "_abc_impl"})


def _slot_names(cls: type) -> list[str]:
    names: list[str] = []
    for klass in cls.__mro__:
        slots = vars(klass).get("__slots__", ())
        names.extend([slots] if isinstance(slots, str) else list(slots))
    return [n for n in names if n not in ("__dict__", "__weakref__")]


def _ours(cls: type) -> bool:
    module = vars(cls).get("__module__", "")
    return isinstance(module, str) and (module == "ctxlab" or module.startswith("ctxlab."))


class KeptObjects:
    """What ctxlab's objects held when kept; :meth:`repair` puts back what changed."""

    def __init__(self) -> None:
        #: (where, object, kind, what it held)
        self._cells: list[tuple[str, Any, str, Any]] = []
        self._seen: set[int] = set()
        self._keep: list[object] = []  # every kept object stays alive: ids stay unique

    def keep(self, module: ModuleType) -> None:
        """Remember every object reachable from ``module``'s names (dunders aside)."""
        for name, value in list(vars(module).items()):
            if not name.startswith("__"):
                self._walk(f"{module.__name__}.{name}", value)

    def __len__(self) -> int:
        return len(self._cells)

    # -- walking

    def _walk(self, where: str, root: object) -> None:
        stack: list[tuple[str, object]] = [(where, root)]
        while stack and len(self._seen) < _MOST:
            where, value = stack.pop()
            if id(value) in self._seen or isinstance(value, (ModuleType, str, bytes, int, float)):
                continue
            if value is None or type(value) in (bool, complex, range, slice):
                continue
            self._seen.add(id(value))
            self._keep.append(value)
            for child_where, child in self._cell(where, value):
                stack.append((child_where, child))

    def _cell(self, where: str, value: Any) -> list[tuple[str, object]]:
        """Remember what ``value`` holds; the objects it holds, to walk next."""
        cls = type(value)
        if cls in (list, set, dict):
            contents = cls(value)
            self._cells.append((where, value, cls.__name__, contents))
            items = contents.items() if isinstance(contents, dict) else enumerate(contents)
            return [(f"{where}[{key!r}]", item) for key, item in items]
        if cls in (tuple, frozenset):
            return [(f"{where}[{i}]", item) for i, item in enumerate(value)]
        if cls is MappingProxyType:
            behind = [r for r in gc.get_referents(value) if type(r) is dict]
            return [(where, behind[0])] if behind else []
        if isinstance(value, FunctionType):
            if not (value.__module__ or "").startswith("ctxlab"):
                return []
            held = (value.__code__, value.__defaults__, value.__kwdefaults__, value.__dict__)
            self._cells.append((where, value, "function", held))
            closure = [c.cell_contents for c in value.__closure__ or () if _full(c)]
            return [(f"{where}.__defaults__", value.__defaults__)] + [
                (f"{where}.<closure>", c) for c in closure
            ]
        if isinstance(value, type):
            if not _ours(value):
                return []
            attrs = {k: v for k, v in vars(value).items() if k not in _CLASS_SKIP}
            self._cells.append((where, value, "class", attrs))
            return [(f"{where}.{k}", v) for k, v in attrs.items()]
        if not _ours(cls):
            return []
        attrs = {}
        for name in _slot_names(cls):
            try:
                attrs[name] = object.__getattribute__(value, name)
            except AttributeError:
                attrs[name] = _MISSING
        instance_dict = _instance_dict(value)
        if instance_dict is not None:
            attrs.update(instance_dict)
        if not attrs and not dataclasses.is_dataclass(value):
            return []
        self._cells.append((where, value, "object", attrs))
        return [(f"{where}.{k}", v) for k, v in attrs.items() if v is not _MISSING]

    # -- checking

    def repair(self) -> list[str]:
        """Put back every kept object's contents that changed; where each change was."""
        changed: list[str] = []
        for where, value, kind, held in self._cells:
            if kind in ("list", "set", "dict"):
                if not _same_contents(value, held):
                    changed.append(where)
                    _refill(value, held)
            elif kind == "function":
                now = (value.__code__, value.__defaults__, value.__kwdefaults__, value.__dict__)
                if any(a is not b for a, b in zip(now, held, strict=True)):
                    changed.append(where)
                    value.__code__, value.__defaults__, value.__kwdefaults__ = held[:3]
                    if value.__dict__ is not held[3]:
                        value.__dict__ = held[3]
            elif kind == "class":
                now = vars(value)
                added = [k for k in now if k not in held and not _cache(k)]
                if added or any(now.get(k, _MISSING) is not v for k, v in held.items()):
                    changed.append(where)
                    for k in added:
                        type.__delattr__(value, k)
                    for k, v in held.items():
                        if now.get(k, _MISSING) is not v:
                            type.__setattr__(value, k, v)
            else:
                if _object_changed(value, held):
                    changed.append(where)
                    _put_back_object(value, held)
        return changed


def _cache(name: str) -> bool:
    """Is ``name`` one that Python itself may add to a class later (``__slotnames__`` by
    ``copy``, ``__non_callable_proto_members__`` by ``isinstance``, ``_abc_impl``)?"""
    return name in _CLASS_SKIP or (name.startswith("__") and name.endswith("__"))


def _full(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


def _same_contents(value: Any, held: Any) -> bool:
    if len(value) != len(held):
        return False
    if isinstance(held, dict):
        return all(dict.get(value, k, _MISSING) is v for k, v in held.items())
    if isinstance(held, list):
        return all(a is b for a, b in zip(list.__iter__(value), held, strict=False))
    return all(item in held for item in set.__iter__(value))


def _refill(value: Any, held: Any) -> None:
    if isinstance(held, dict):
        dict.clear(value)
        dict.update(value, held)
    elif isinstance(held, list):
        list.__setitem__(value, slice(None), held)
    else:
        set.clear(value)
        set.update(value, held)


def _object_changed(value: Any, held: dict[str, Any]) -> bool:
    instance_dict = _instance_dict(value)
    for name, was in held.items():
        try:
            now = object.__getattribute__(value, name)
        except AttributeError:
            now = _MISSING
        if now is not was:
            return True
    return instance_dict is not None and any(k not in held for k in instance_dict)


def _instance_dict(value: Any) -> dict[str, Any] | None:
    try:
        found = object.__getattribute__(value, "__dict__")
    except AttributeError:
        return None
    return found if type(found) is dict else None


def _put_back_object(value: Any, held: dict[str, Any]) -> None:
    instance_dict = _instance_dict(value)
    if instance_dict is not None:
        for extra in [k for k in instance_dict if k not in held]:
            del instance_dict[extra]
    for name, was in held.items():
        if was is _MISSING:
            with contextlib.suppress(AttributeError):
                object.__delattr__(value, name)
        else:
            object.__setattr__(value, name, was)
