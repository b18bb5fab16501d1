"""Calling a student's function for a check: the case's label, failures as text.

A student's function may raise anything, return the wrong type or change its input: each is
a failed row with a plain message, never an exception of the checker. :class:`Trial` calls
it labelled with the case it tries; a check says how it failed with :func:`fail`.
"""

from __future__ import annotations

import pickle
import re
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from types import CodeType
from typing import Any, NoReturn, TypeAlias

from ctxlab.errors import CtxlabError, shown
from ctxlab.lab.grading.perform import CallRecord, keep_output, perform
from ctxlab.lab.grading.plain import decode, decode_error
from ctxlab.lab.grading.text import COLON, Text, exception_text, kind, raised, same

#: What a chapter row asks of a refusal: a ``ValueError`` (every ctxlab error is one); which
#: class, and which attributes (``.field``, ...), are ctxlab's rules, checked by its rows.
CHAPTER_ERROR: type[Exception] = ValueError


class Failed(Exception):
    """A check failed; ``text`` says how (expected vs got)."""

    def __init__(self, text: Text) -> None:
        super().__init__(text.en)
        self.text = text


#: Calls the student's function once, here or in a child process: a plain ``CallRecord``.
Caller: TypeAlias = Callable[[tuple[Any, ...], Mapping[str, Any]], CallRecord]


def fail(label: Text | None, en: str, zh: str | None = None) -> NoReturn:
    """Fail the running check: the case's ``label``, then what went wrong (``zh``: the
    Chinese text; without it the English one serves both)."""
    text = Text(en, en if zh is None else zh)
    raise Failed(text if label is None else label + text)


class Trial:
    """The student's function, called under watch; ``current`` is the label of the latest
    call (what a timeout or an unreadable result is reported against)."""

    def __init__(
        self,
        function: Callable[..., Any],
        arg_names: tuple[str, ...],
        *,
        references: frozenset[CodeType] = frozenset(),
        caller: Caller | None = None,
    ) -> None:
        self.current: Text | None = None
        #: What the calls printed (bounded), how much was cut, whether one ran the reference.
        self.output = ""
        self.output_cut = 0
        self.used_reference = False
        here = partial(perform, function, arg_names=arg_names, references=references)
        self._caller = caller or (lambda args, kwargs: here(*_as_sent(args, kwargs)))

    def outcome(self, label: Text, *args: Any, **kwargs: Any) -> tuple[bool, Any]:
        """Call the function: (True, what it returned) or (False, what it raised), as
        :mod:`.plain` rebuilt them (never the student's own objects)."""
        record = self.record(label, args, kwargs)
        if changed := record.get("changed"):
            names = ", ".join(str(name) for name in changed)
            fail(
                label,
                f": changed its input {names} during the call; a lab function must leave"
                " what it is given untouched",
                f"：调用期间改动了输入 {names}；实验函数不能修改传入的数据",
            )
        if "too_large" in record:
            why = str(record["too_large"])
            fail(
                label,
                f": returned a result too large to check ({why})",
                f"：返回的结果太大，无法检查（{why}）",
            )
        if "raised" in record:
            return False, decode_error(record["raised"])
        return True, decode(record.get("returned"))

    def record(self, label: Text, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> CallRecord:
        """One call, as the plain record it left (what misconception evidence compares)."""
        self.current = label
        record = self._caller(args, kwargs)
        text, cut = str(record.get("output", "")), int(record.get("output_cut", 0))
        self.output, more = keep_output(self.output, text)
        self.output_cut += cut + more
        self.used_reference = self.used_reference or bool(record.get("reference"))
        return record

    def returns(self, label: Text, *args: Any, **kwargs: Any) -> Any:
        """Call the function; it must return (what it returned is for the check to judge)."""
        ok, value = self.outcome(label, *args, **kwargs)
        if not ok:
            why = raised(value)  # the stub's says "not written yet"
            if not isinstance(value, NotImplementedError):
                why = Text("expected a result, but it ", "应当返回结果，却") + why
            raise Failed(label + COLON + why)
        return value

    def rejects(
        self,
        label: Text,
        names: Sequence[Sequence[str]],
        *args: Any,
        error_type: type[Exception] = CtxlabError,
        attrs: Mapping[str, str | tuple[str, ...]] | None = None,
        **kwargs: Any,
    ) -> None:
        """The call must raise ``error_type`` whose message names, as a whole word, one name of
        each group of ``names``, and whose attributes ``attrs`` hold the given values
        (``{"field": "summary.goal"}``; a tuple lists the accepted values)."""
        expected = error_type.__name__
        hint = (
            Text(f" (from ctxlab import {expected})", f"（from ctxlab import {expected}）")
            if error_type.__module__.startswith("ctxlab")
            else Text(" (ctxlab's errors are ValueErrors)", "（ctxlab 的错误都是 ValueError）")
        )
        wanted_en = " and ".join(" or ".join(group) for group in names)
        wanted_zh = "、".join(" 或 ".join(group) for group in names)
        naming = Text(f" naming {wanted_en}", f"，并指出 {wanted_zh}") if names else same("")
        ok, value = self.outcome(label, *args, **kwargs)
        if ok:
            fail(
                label,
                f": expected {_article(expected)}{naming.en}, but it returned {kind(value)}",
                f"：期望抛出 {expected}{naming.zh}，实际返回了 {kind(value)}",
            )
        if isinstance(value, NotImplementedError):
            raise Failed(label + COLON + raised(value))
        message = exception_text(value)
        if not issubclass(type(value), error_type):
            fail(
                label,
                f": raised {message}; expected {_article(expected)}{naming.en}{hint.en}",
                f"：抛出了 {message}；期望 {expected}{naming.zh}{hint.zh}",
            )
        for group in names:
            if not any(_names(message, name) for name in group):
                fail(
                    label,
                    f": the error should name {' or '.join(group)}; got {message}",
                    f"：错误信息应当指出 {' 或 '.join(group)}；实际是 {message}",
                )
        for attribute, want in (attrs or {}).items():
            accepted = want if isinstance(want, tuple) else (want,)
            got = getattr(value, attribute, None)
            if type(got) is not str or got not in accepted:
                wanted = " or ".join(repr(a) for a in accepted)
                fail(
                    label,
                    f": the error's .{attribute} should be {wanted}; got {shown(got)}"
                    f" (raise {expected}(message, {attribute}=...))",
                    f"：错误的 .{attribute} 应当是 {wanted}，实际是 {shown(got)}"
                    f"（raise {expected}(message, {attribute}=...)）",
                )


def _as_sent(args: Sequence[Any], kwargs: Mapping[str, Any]) -> tuple[Any, Any]:
    """The arguments as a child process receives them (pickled): fresh copies, so a call in
    this process sees what a call in a child sees (a string read from JSON, say, is not the
    interned literal that a student's ``is`` compares with)."""
    sent: tuple[Any, Any] = pickle.loads(pickle.dumps((tuple(args), dict(kwargs))))
    return sent


def _article(name: str) -> str:
    return f"an {name}" if name[0] in "AEIOU" else f"a {name}"


def _names(message: str, name: str) -> bool:
    """Does ``message`` name ``name`` as a whole word (ids and field paths)?"""
    pattern = rf"(?<![A-Za-z0-9_-]){re.escape(name)}(?![A-Za-z0-9_-])"
    return re.search(pattern, message) is not None
