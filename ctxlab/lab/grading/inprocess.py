"""The in-process caller: the student's function run in this process.

Each row runs under the clock of :mod:`.runner`. Only here does the student's code share the
grader's process, so only here are these repairs, made before each check:
rebound names (``ctxlab.context.build_context``, ``time.monotonic``) are put back, and the
notebook's own come back after the run; what ``object.__setattr__`` changed in ctxlab's
objects is put back by identity, and the report names it; the switch interval is the
grader's (a student's ``sys.setswitchinterval(1000)`` would starve the waiting thread).
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import sys
import time
from collections.abc import Callable, Iterator
from types import CodeType, FunctionType, MappingProxyType, ModuleType
from typing import Any, Final

from ctxlab import errors, fixtures
from ctxlab.lab.grading import misconceptions, report
from ctxlab.lab.grading.declare import Row
from ctxlab.lab.grading.runner import Outcome, run_check

_MISSING: Final[Any] = object()
_TABLES: Final = (dict, list, set)
_ATOMS: Final = (ModuleType, str, bytes, int, float, complex, range, slice)  # not walked
_MOST: Final = 50_000  # at most this many objects are kept (ctxlab holds a few thousand)
#: Attributes of a class that CPython itself changes, or that describe the class only.
_CLASS_SKIP: Final = frozenset({"__dict__", "__weakref__", "__doc__", "_abc_impl"})


def _ours(cls: type) -> bool:
    module = vars(cls).get("__module__", "")
    return isinstance(module, str) and (module == "ctxlab" or module.startswith("ctxlab."))


def _attributes(value: Any) -> dict[str, Any]:
    """An instance's slots (:data:`_MISSING` when empty) and ``__dict__``, read raw."""
    attrs: dict[str, Any] = {}
    for klass in type(value).__mro__:
        slots = vars(klass).get("__slots__", ())
        for name in [slots] if isinstance(slots, str) else slots:
            if name not in ("__dict__", "__weakref__"):
                try:
                    attrs[name] = object.__getattribute__(value, name)
                except AttributeError:
                    attrs[name] = _MISSING
    attrs.update(_instance_dict(value) or {})
    return attrs


def _instance_dict(value: Any) -> dict[str, Any] | None:
    try:
        found = object.__getattribute__(value, "__dict__")
    except AttributeError:
        return None
    return found if type(found) is dict else None


def _function_held(function: Any) -> tuple[Any, ...]:
    return (function.__code__, function.__defaults__, function.__kwdefaults__, function.__dict__)


# Each kind of kept object's put-back: restore what it held; did anything differ?


def _put_back_table(table: Any, held: Any) -> bool:
    """By identity (a set's items by hash)."""
    if isinstance(held, dict):
        same = all(dict.get(table, k, _MISSING) is v for k, v in held.items())
    elif isinstance(held, list):
        same = all(a is b for a, b in zip(list.__iter__(table), held, strict=False))
    else:
        same = all(item in held for item in set.__iter__(table))
    if same and len(table) == len(held):
        return False
    if isinstance(held, list):
        list.__setitem__(table, slice(None), held)
    else:  # a dict or a set
        type(held).clear(table)
        type(held).update(table, held)
    return True


def _put_back_function(function: Any, held: tuple[Any, ...]) -> bool:
    if all(a is b for a, b in zip(_function_held(function), held, strict=True)):
        return False
    function.__code__, function.__defaults__, function.__kwdefaults__, function.__dict__ = held
    return True


def _put_back_class(cls: type, held: dict[str, Any]) -> bool:
    """Names Python itself adds to a class later (``__slotnames__``) are let be."""
    now = vars(cls)
    added = [k for k in now if k not in held and k not in _CLASS_SKIP and not _dunder(k)]
    changed = [k for k, v in held.items() if now.get(k, _MISSING) is not v]
    for name in added:
        type.__delattr__(cls, name)
    for name in changed:
        type.__setattr__(cls, name, held[name])
    return bool(added or changed)


def _put_back_object(value: Any, held: dict[str, Any]) -> bool:
    now = _attributes(value)
    if now.keys() == held.keys() and all(now[k] is v for k, v in held.items()):
        return False
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
    return True


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


# What grading found: kept modules' names (with their dicts', lists' and sets' contents, when
# asked) and what every ctxlab object reachable from them held (where, object, kind, contents).
_NAMES: list[tuple[ModuleType, dict[str, object]]] = []
_TABLES_HELD: list[tuple[Any, Any]] = []
_CELLS: list[tuple[str, Any, Callable[[Any, Any], bool], Any]] = []
_SEEN: dict[int, object] = {}  # by id; every one stays alive, so ids stay unique


def keep(*modules: ModuleType, tables: bool = False, objects: bool = True) -> None:
    """Keep ``modules`` (a lab's file, what it checks with) as they are now: their names but
    dunders (once), (``tables``) their tables' contents, (``objects``) every object reachable."""
    for module in modules:
        names = {k: v for k, v in vars(module).items() if not k.startswith("__")}
        if not any(kept is module for kept, _ in _NAMES):
            _NAMES.append((module, names))
            if tables:
                _TABLES_HELD.extend((v, type(v)(v)) for v in names.values() if type(v) in _TABLES)
        stack = [(f"{module.__name__}.{k}", v) for k, v in reversed(names.items())]
        while objects and stack and len(_SEEN) < _MOST:
            where, value = stack.pop()
            if id(value) in _SEEN or value is None or isinstance(value, _ATOMS):
                continue
            _SEEN[id(value)] = value
            stack.extend(_cell(where, value))


def _restore() -> list[tuple[ModuleType, str, object]]:
    """Put every kept name back; (module, name, what was there) for each one changed."""
    replaced: list[tuple[ModuleType, str, object]] = []
    for module, names in _NAMES:
        now = vars(module)
        for name, value in names.items():
            current = now.get(name, _MISSING)
            if current is not value:
                replaced.append((module, name, current))
                now[name] = value
    for table, contents in _TABLES_HELD:
        _put_back_table(table, contents)
    return replaced


def _cell(where: str, value: Any) -> list[tuple[str, object]]:
    """Remember what ``value`` holds; the objects it holds, to walk next."""
    cls = type(value)
    if cls in _TABLES:
        contents = cls(value)
        _CELLS.append((where, value, _put_back_table, contents))
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
        _CELLS.append((where, value, _put_back_function, _function_held(value)))
        closure = [c.cell_contents for c in value.__closure__ or () if _full(c)]
        return [(f"{where}.__defaults__", value.__defaults__)] + [
            (f"{where}.<closure>", c) for c in closure
        ]
    if isinstance(value, type):
        if not _ours(value):
            return []
        attrs = {k: v for k, v in vars(value).items() if k not in _CLASS_SKIP}
        _CELLS.append((where, value, _put_back_class, attrs))
        return [(f"{where}.{k}", v) for k, v in attrs.items()]
    if not _ours(cls):
        return []
    attrs = _attributes(value)
    if not attrs and not dataclasses.is_dataclass(value):
        return []
    _CELLS.append((where, value, _put_back_object, attrs))
    return [(f"{where}.{k}", v) for k, v in attrs.items() if v is not _MISSING]


def repair() -> list[str]:
    """Put back every kept object's contents that changed; where each change was."""
    return [where for where, value, put_back, held in _CELLS if put_back(value, held)]


def _full(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


# The switch interval: the grader's before each check, ``sys.setswitchinterval`` capped.
_set_switch_interval: Final = sys.setswitchinterval
_get_switch_interval: Final = sys.getswitchinterval
SWITCH_INTERVAL: Final = min(sys.getswitchinterval(), 0.005)


def _capped_switch_interval(interval: float) -> None:
    _set_switch_interval(min(interval, SWITCH_INTERVAL))


#: Loaded now, with the ctxlab modules they load, so that all are kept as grading found them.
_LOADED = (errors, fixtures, misconceptions, report)
_CORE = [
    module
    for name, module in sorted(sys.modules.items())
    if name == "ctxlab" or (name.startswith("ctxlab.") and not name.startswith("ctxlab.lab"))
]
keep(*_CORE, tables=True)  # their private tables too (no caches there)
keep(time, objects=False)  # a student's ``time.monotonic = ...`` lasts one run


@contextlib.contextmanager
def as_found() -> Iterator[None]:
    """ctxlab's modules as grading found them, while a lab's file loads or a run runs; the
    notebook's own bindings come back after it."""
    replaced = _restore()
    try:
        yield
    finally:
        for module, name, value in replaced:
            if value is _MISSING:
                vars(module).pop(name, None)
            else:
                vars(module)[name] = value


@dataclasses.dataclass
class InProcess:
    """Runs each row here, inside :func:`as_found`, with ctxlab as grading found it;
    ``repaired`` collects where ctxlab's objects were put back."""

    function: Callable[..., Any]
    arg_names: tuple[str, ...]
    references: frozenset[CodeType]
    repaired: list[str]
    _interval: float = SWITCH_INTERVAL
    _setter: object = _MISSING

    def __enter__(self) -> InProcess:
        self._interval = _get_switch_interval()
        self._setter = vars(sys).get("setswitchinterval", _set_switch_interval)
        return self

    def __exit__(self, *exc: object) -> None:
        vars(sys)["setswitchinterval"] = self._setter
        _set_switch_interval(self._interval)
        _restore()
        self._note(repair())

    def _note(self, where: list[str]) -> None:
        self.repaired.extend(w for w in where if w not in self.repaired)

    def run(self, row: Row, limit: float) -> Outcome:
        """One row within ``limit`` seconds, after putting back what an earlier row changed."""
        _restore()
        self._note(repair())
        _set_switch_interval(SWITCH_INTERVAL)
        sys.setswitchinterval = _capped_switch_interval
        return run_check(row, self.function, self.arg_names, limit, self.references)
