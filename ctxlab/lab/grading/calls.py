"""Calling a student's function safely: input snapshots, failures as text, a time limit.

A student's function may raise anything, return the wrong type, change its input or never
return (issue 10, "Bad input"). Each of these becomes a failed row with a plain message,
never an exception of the checker:

* :class:`Trial` calls the function for a check, labelled with the case it tries (the
  chapter's entry ids, the budget): :meth:`Trial.returns` wants a value,
  :meth:`Trial.rejects` wants a ``CtxlabError`` naming given ids or fields. Both compare a
  snapshot of the arguments before and after the call, so a changed input is named.
* A check says how it failed with :func:`fail` (expected vs got, after the case's label).
* :func:`run_check` runs one check in a daemon thread with a time limit, which works the
  same on Windows (no processes: a function defined in a notebook cannot be pickled there).
  On CPython a check that overran is also asked to stop (``PyThreadState_SetAsyncExc``), so
  that a spinning loop dies.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, NoReturn, TypeAlias

from ctxlab.errors import CtxlabError, shown
from ctxlab.lab.grading import steps
from ctxlab.lab.grading.perform import (
    OUTPUT_LIMIT,
    CallRecord,
    StopStudent,
    perform,
    reference_code,
)
from ctxlab.lab.grading.plain import decode, decode_error
from ctxlab.lab.grading.text import Text, exception_text, kind, raised, same

__all__ = ["NOT_RUN", "Failed", "Outcome", "Trial", "fail", "run_check"]


class Failed(Exception):
    """A check failed; ``text`` says how (expected vs got)."""

    def __init__(self, text: Text) -> None:
        super().__init__(text.en)
        self.text = text


_StopStudent = StopStudent  # the runner's stop signal (raised into an overrunning check)

#: Calls the student's function once: ``(args, kwargs) -> CallRecord`` (plain data). In a
#: notebook it is :func:`~ctxlab.lab.grading.perform.perform` in this process; on the
#: terminal route it asks the child process that imported the student's file.
Caller: TypeAlias = Callable[[tuple[Any, ...], Mapping[str, Any]], CallRecord]


def fail(label: Text | None, en: str, zh: str | None = None) -> NoReturn:
    """Fail the running check: the case's ``label``, then what went wrong.

    ``zh`` is the Chinese text; without it the English one serves both languages (a diff
    of values reads the same in both).
    """
    text = Text(en, en if zh is None else zh)
    raise Failed(text if label is None else label + text)


class Trial:
    """The student's function, called under watch: input snapshots and the case label.

    ``current`` is the label of the latest call (what a timeout or an unreadable result
    is reported against).
    """

    def __init__(
        self,
        function: Callable[..., Any],
        arg_names: tuple[str, ...],
        *,
        lab: str | None = None,
        caller: Caller | None = None,
    ) -> None:
        self.function = function
        self.arg_names = arg_names
        self.current: Text | None = None
        #: What the student's function printed during this check's calls (bounded), how
        #: many characters of it were cut, and whether a call ran ctxlab's reference.
        self.output = ""
        self.output_cut = 0
        self.used_reference = False
        if caller is None:
            references = reference_code(lab) if lab is not None else frozenset()

            def caller(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> CallRecord:
                return perform(function, args, kwargs, arg_names=arg_names, references=references)

        self._caller = caller

    def _invoke(
        self, label: Text, args: tuple[Any, ...], kwargs: Mapping[str, Any]
    ) -> tuple[bool, Any]:
        """One call; (returned?, the decoded value or exception): never the student's
        own objects, only what :mod:`.plain` rebuilt from exact builtin values."""
        self.current = label
        record = self._caller(args, kwargs)
        self._keep_output(str(record.get("output", "")), int(record.get("output_cut", 0)))
        if record.get("reference"):
            self.used_reference = True
        changed = record.get("changed") or []
        if changed:
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

    def _keep_output(self, text: str, cut: int) -> None:
        room = OUTPUT_LIMIT - len(self.output)
        self.output += text[: max(room, 0)]
        self.output_cut += cut + max(0, len(text) - max(room, 0))

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


#: How one check ended: passed, failed (with a detail), or did not return in time.
Outcome: TypeAlias = tuple[Literal["pass", "fail", "hung"], Text | None]

#: The detail of every check after one that did not return in time.
NOT_RUN = Text(
    "not run: an earlier call of this lab did not return in time",
    "未运行：本实验前面的一次调用没有按时返回",
)


def _at(trial: Trial) -> Text:
    """The label of the latest call, as a prefix of a detail (empty before any call)."""
    return trial.current + same(": ") if trial.current is not None else same("")


def run_check(
    check: Callable[[Trial], None],
    function: Callable[..., Any],
    arg_names: tuple[str, ...],
    *,
    name: str,
    limit: float,
    lab: str | None = None,
) -> Outcome:
    """Run one check on ``function`` in a daemon thread called ``name``, for ``limit`` s."""
    trial = Trial(function, arg_names, lab=lab)
    box: list[Outcome] = []

    def target() -> None:
        try:
            check(trial)
            box.append(("pass", None))
        except Failed as failure:
            box.append(("fail", failure.text))
        except _StopStudent:
            box.append(("hung", None))
        except BaseException as error:  # the result could not even be read
            text = exception_text(error)
            detail = Text(
                f"the result could not be checked ({text}); is it the type the reference returns?",
                f"无法检查返回结果（{text}）；返回值的类型和参考实现一致吗？",
            )
            box.append(("fail", _at(trial) + detail))

    # --- issue 19: no threads (Pyodide), or CTXLAB_TIME_LIMIT_MODE=trace: see .steps ---
    if steps.use_trace():
        if not steps.run_traced(target, limit) or not box or box[0][0] == "hung":
            return _hung(trial, limit)
        return box[0]
    # --------------------------------------------------------------------------------------
    thread = threading.Thread(target=target, name=name, daemon=True)
    thread.start()
    thread.join(limit)
    if thread.is_alive() or not box:
        _stop_thread(thread)
        return _hung(trial, limit)
    return box[0]


def _hung(trial: Trial, limit: float) -> Outcome:
    """The row of a check that did not return within ``limit`` seconds."""
    seconds = f"{limit:g} s"
    return "hung", _at(trial) + Text(
        f"did not return within {seconds} (an endless loop? a blocking call?)",
        f"{seconds} 内没有返回（死循环？阻塞调用？）",
    )


def _stop_thread(thread: threading.Thread) -> None:
    """Ask a thread that overran to stop, by raising an exception in it (CPython only)."""
    ident = thread.ident
    if ident is None or sys.implementation.name != "cpython":  # pragma: no cover
        return
    try:
        import ctypes

        set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
        for _ in range(3):
            changed = set_async_exc(ctypes.c_ulong(ident), ctypes.py_object(_StopStudent))
            if changed > 1:  # pragma: no cover - never more than one thread has this id
                set_async_exc(ctypes.c_ulong(ident), None)
            thread.join(0.2)
            if not thread.is_alive():
                return
    except Exception:  # pragma: no cover - ctypes unavailable: leave the daemon thread
        return
