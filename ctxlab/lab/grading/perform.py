"""One call of a student's function, watched, told as plain data.

:func:`perform` is the only place where the grader calls a student's function: it snapshots
the arguments (to name one the call changed), captures what the calling thread prints
(bounded), watches whether ctxlab's solution of the lab runs, and returns a
:data:`CallRecord` of plain JSON data (:mod:`.plain`), the same in this process and in a child.
"""

from __future__ import annotations

import dataclasses
import io
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from types import CodeType
from typing import Any, Final, TypeAlias

from ctxlab.lab.grading.plain import TooLarge, encode, encode_error, type_name
from ctxlab.lab.grading.text import StopStudent, message_of

#: How many characters of a check's printed output are kept (the rest is counted).
OUTPUT_LIMIT: Final = 2000

#: ``{"returned": data} | {"raised": error} | {"too_large": why}``, plus ``changed`` (the
#: names of arguments the call changed), ``output``, ``output_cut``, ``reference``.
CallRecord: TypeAlias = dict[str, Any]


def named(name: str) -> Any:
    """What ``module:qualname`` names in this process (None when nothing)."""
    import importlib

    module_name, _, qualname = name.partition(":")
    value: Any = sys.modules.get(module_name) or importlib.import_module(module_name)
    for part in qualname.split("."):
        value = getattr(value, part, None)
    return value


class _Watch:
    """Is any of ``codes`` entered by the calling thread while the watch is on? (3.12+:
    ``sys.monitoring`` local events on those code objects only; before, a profile function.)"""

    _TOOL: Final = 4  # sys.monitoring tool id (0-5 are free for tools)

    def __init__(self, codes: frozenset[CodeType]) -> None:
        self.codes = codes
        self.hit = False
        self._thread = threading.get_ident()
        self._monitoring = getattr(sys, "monitoring", None)
        self._previous: Any = None

    def __enter__(self) -> _Watch:
        if not self.codes:
            return self
        monitoring = self._monitoring
        if monitoring is not None and claim_tool(monitoring, self._TOOL):
            monitoring.register_callback(self._TOOL, monitoring.events.PY_START, self._started)
            for code in self.codes:
                monitoring.set_local_events(self._TOOL, code, monitoring.events.PY_START)
        else:
            self._monitoring = None
            self._previous = sys.getprofile()
            sys.setprofile(self._profile)
        return self

    def _started(self, code: CodeType, offset: int) -> Any:
        if threading.get_ident() == self._thread:
            self.hit = True
        return None

    def _profile(self, frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code in self.codes:
            self.hit = True
        if self._previous is not None:  # the trace-hook clock's profile function (.runner)
            self._previous(frame, event, arg)

    def __exit__(self, *exc: object) -> None:
        if not self.codes:
            return
        monitoring = self._monitoring
        if monitoring is not None:
            for code in self.codes:
                monitoring.set_local_events(self._TOOL, code, 0)
            monitoring.register_callback(self._TOOL, monitoring.events.PY_START, None)
            monitoring.free_tool_id(self._TOOL)
        else:
            sys.setprofile(self._previous)


def claim_tool(monitoring: Any, tool: int, name: str = "ctxlab-grading") -> bool:
    """Take ``sys.monitoring`` tool id ``tool``; False when it is in use (a debugger, or a
    watch left by a stuck check thread)."""
    try:
        monitoring.use_tool_id(tool, name)
    except ValueError:
        return False
    return True


def keep_output(kept: str, text: str) -> tuple[str, int]:
    """``kept`` and as much of ``text`` as fits in :data:`OUTPUT_LIMIT`; how much was cut."""
    room = max(OUTPUT_LIMIT - len(kept), 0)
    return kept + text[:room], max(0, len(text) - room)


class _Capture(io.TextIOBase):
    """Stands in for ``sys.stdout``/``sys.stderr``: the watched thread's writes are kept
    (bounded) in ``into`` (the stdout one); other threads' go where they went before."""

    def __init__(self, previous: Any, into: _Capture | None = None) -> None:
        self.previous = previous
        self.into = self if into is None else into
        self.text = ""
        self.cut = 0
        self.thread = threading.get_ident()

    def write(self, text: str) -> int:
        into = self.into
        if threading.get_ident() != into.thread:
            return int(self.previous.write(text)) if self.previous is not None else len(text)
        text = str.__str__(text) if isinstance(text, str) else "<not a str>"
        into.text, cut = keep_output(into.text, text)
        into.cut += cut
        return len(text)

    def flush(self) -> None:
        return None

    def writable(self) -> bool:
        return True


def fingerprint(value: object, depth: int = 0) -> object:
    """A comparable snapshot of ``value`` (to see whether a call changed its input)."""
    if depth > 60:
        return ("deep", id(value))
    cls = type(value)
    if value is None or cls is int or cls is str:
        return value
    if cls is bool:
        return ("bool", value)
    if cls is float:
        return ("float", repr(value))
    below = depth + 1
    if isinstance(value, (list, tuple)) and (
        cls is list or cls is tuple or not isinstance(value, Mapping)
    ):
        return (cls.__name__, id(value), tuple(fingerprint(v, below) for v in value))
    if isinstance(value, Mapping):
        items = dict.items(value) if isinstance(value, dict) else value.items()
        pairs = tuple((fingerprint(k, below), fingerprint(v, below)) for k, v in items)
        return ("map", id(value), pairs)
    names = _field_names(cls)
    if names is not None:
        return (cls.__name__, tuple(fingerprint(getattr(value, n, None), below) for n in names))
    return ("object", id(value))


_FIELD_NAMES: dict[type, tuple[str, ...] | None] = {}


def _field_names(cls: type) -> tuple[str, ...] | None:
    """The fields of dataclass ``cls`` (None: not a dataclass), read once per class: a
    call's snapshot reads them for every entry and message of its path."""
    if cls not in _FIELD_NAMES:
        is_dataclass = dataclasses.is_dataclass(cls) and not issubclass(cls, type)
        names = tuple(f.name for f in dataclasses.fields(cls)) if is_dataclass else None
        _FIELD_NAMES[cls] = names
    return _FIELD_NAMES[cls]


def safe_message(error: BaseException) -> str:
    """``str(error)``, at most 2000 characters (a placeholder when ``__str__`` fails)."""
    return message_of(error)[:2000]


def perform(
    function: Callable[..., Any],
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    *,
    arg_names: Sequence[str] = (),
    references: frozenset[CodeType] = frozenset(),
) -> CallRecord:
    """Call ``function(*args, **kwargs)`` once, watched; what happened, as plain data."""
    names = [arg_names[i] if i < len(arg_names) else f"argument {i + 1}" for i in range(len(args))]
    arguments = {**dict(zip(names, args, strict=True)), **kwargs}  # as "changed" names them
    before = {name: fingerprint(value) for name, value in arguments.items()}
    record: CallRecord = {}
    streams = sys.stdout, sys.stderr
    captured = _Capture(sys.stdout)  # what the calling thread prints meanwhile
    sys.stdout, sys.stderr = captured, _Capture(sys.stderr, captured)
    try:
        with _Watch(references) as watch:
            try:
                value = function(*args, **kwargs)
            except StopStudent:
                raise
            except BaseException as error:  # student code may raise anything, SystemExit too
                record["raised"] = encode_error(error, safe_message(error))
            else:
                try:
                    record["returned"] = encode(value)
                except TooLarge as too_large:
                    record["too_large"] = f"{type_name(value)} with {too_large}"
    finally:  # only what we put there: a student's own replacement, standing on ours, goes too
        sys.stdout, sys.stderr = streams
    record["changed"] = [n for n, value in arguments.items() if fingerprint(value) != before[n]]
    record["output"] = captured.text
    record["output_cut"] = captured.cut
    record["reference"] = watch.hit
    return record
