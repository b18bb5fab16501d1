"""Calling a student's function safely: input snapshots, failures as text, a time limit.

A student's function may raise anything, return the wrong type, change its input or never
return (issue 10, "Bad input"). Each of these becomes a failed row with a plain message,
never an exception of the checker:

* :class:`Trial` calls the function for a check, labelled with the case it tries (the
  chapter's entry ids, the budget): :meth:`Trial.returns` wants a value,
  :meth:`Trial.rejects` wants a ``CtxlabError`` naming given ids or fields. Both compare a
  snapshot of the arguments before and after the call, so a changed input is named.
* A check says how it failed with :func:`fail` (expected vs got, after the case's label).
* :func:`~ctxlab.lab.grading.runner.run_check` runs one check in a daemon thread with a
  time limit (:mod:`.runner`); a check that overran is stopped by raising
  :class:`_StopStudent` in it, which :class:`Trial` never catches.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn

from ctxlab.errors import CtxlabError, shown
from ctxlab.lab.grading.text import Text, exception_text, kind, raised, same

__all__ = ["Failed", "Trial", "fail"]


class Failed(Exception):
    """A check failed; ``text`` says how (expected vs got)."""

    def __init__(self, text: Text) -> None:
        super().__init__(text.en)
        self.text = text


class _StopStudent(BaseException):
    """Sent into a check thread that overran its time limit (CPython only)."""


def fail(label: Text | None, en: str, zh: str | None = None) -> NoReturn:
    """Fail the running check: the case's ``label``, then what went wrong.

    ``zh`` is the Chinese text; without it the English one serves both languages (a diff
    of values reads the same in both).
    """
    text = Text(en, en if zh is None else zh)
    raise Failed(text if label is None else label + text)


def _fingerprint(value: object, depth: int = 0) -> object:
    """A comparable snapshot of ``value`` (to see whether a call changed its input)."""
    if depth > 60:
        return ("deep", id(value))
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, float):
        return ("float", repr(value))
    if value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, Mapping):
        return (
            "map",
            id(value),
            tuple(
                (_fingerprint(k, depth + 1), _fingerprint(v, depth + 1)) for k, v in value.items()
            ),
        )
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, id(value), tuple(_fingerprint(v, depth + 1) for v in value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (
            type(value).__name__,
            tuple(
                _fingerprint(getattr(value, field.name, None), depth + 1)
                for field in dataclasses.fields(value)
            ),
        )
    return ("object", id(value))


class Trial:
    """The student's function, called under watch: input snapshots and the case label.

    ``current`` is the label of the latest call (what a timeout or an unreadable result
    is reported against).
    """

    def __init__(self, function: Callable[..., Any], arg_names: tuple[str, ...]) -> None:
        self.function = function
        self.arg_names = arg_names
        self.current: Text | None = None
        #: What the student's function printed during this check's calls (bounded), how
        #: many characters of it were cut, and whether a call ran ctxlab's reference.
        self.output = ""
        self.output_cut = 0
        self.used_reference = False

    def _invoke(
        self, label: Text, args: tuple[Any, ...], kwargs: Mapping[str, Any]
    ) -> tuple[bool, Any]:
        self.current = label
        before = [_fingerprint(a) for a in args], {k: _fingerprint(v) for k, v in kwargs.items()}
        try:
            value = self.function(*args, **kwargs)
            outcome: tuple[bool, Any] = (True, value)
        except _StopStudent:
            raise
        except BaseException as error:  # student code may raise anything, SystemExit too
            outcome = (False, error)
        after = [_fingerprint(a) for a in args], {k: _fingerprint(v) for k, v in kwargs.items()}
        if before != after:
            changed = [
                self.arg_names[i] if i < len(self.arg_names) else f"argument {i + 1}"
                for i, (b, a) in enumerate(zip(before[0], after[0], strict=True))
                if b != a
            ] + [name for name in kwargs if before[1][name] != after[1][name]]
            names = ", ".join(changed)
            fail(
                label,
                f": changed its input {names} during the call; a lab function must leave"
                " what it is given untouched",
                f"：调用期间改动了输入 {names}；实验函数不能修改传入的数据",
            )
        return outcome

    def returns(self, label: Text, *args: Any, **kwargs: Any) -> Any:
        """Call the function; it must return (what it returned is for the check to judge)."""
        ok, value = self._invoke(label, args, kwargs)
        if not ok:
            raise Failed(label + same(": ") + raised(value))
        return value

    def rejects(
        self,
        label: Text,
        names: Sequence[Sequence[str]],
        *args: Any,
        error_type: type[CtxlabError] = CtxlabError,
        attrs: Mapping[str, str | tuple[str, ...]] | None = None,
        **kwargs: Any,
    ) -> None:
        """The call must raise ``error_type`` (a CtxlabError) whose message names each group
        of ``names`` (one of the alternatives of each group, as a whole word: ``tokensBefore``
        is not named by ``mutanttokensBefore``), and whose attributes ``attrs`` hold the given
        values (``{"field": "summary.goal"}``; a tuple lists the accepted values)."""
        expected = error_type.__name__
        wanted_en = " and ".join(" or ".join(group) for group in names)
        wanted_zh = "、".join(" 或 ".join(group) for group in names)
        naming = Text(f" naming {wanted_en}", f"，并指出 {wanted_zh}") if names else same("")
        ok, value = self._invoke(label, args, kwargs)
        if ok:
            fail(
                label,
                f": expected {_article(expected)}{naming.en}, but it returned {kind(value)}",
                f"：期望抛出 {expected}{naming.zh}，实际返回了 {kind(value)}",
            )
        if isinstance(value, NotImplementedError):
            raise Failed(label + same(": ") + raised(value))
        if not issubclass(type(value), error_type):
            text = exception_text(value)
            fail(
                label,
                f": raised {text}; expected {_article(expected)}{naming.en}"
                f" (from ctxlab import {expected})",
                f"：抛出了 {text}；期望 {expected}{naming.zh}（from ctxlab import {expected}）",
            )
        message = exception_text(value)
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


def _article(name: str) -> str:
    return f"an {name}" if name[0] in "AEIOU" else f"a {name}"


def _names(message: str, name: str) -> bool:
    """Does ``message`` name ``name`` as a whole word (ids and field paths)?"""
    pattern = rf"(?<![A-Za-z0-9_-]){re.escape(name)}(?![A-Za-z0-9_-])"
    return re.search(pattern, message) is not None
