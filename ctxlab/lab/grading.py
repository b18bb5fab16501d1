"""Judging a student's own code: ``check_implementation(lab, **functions)`` (spec §10).

In each lab of chapter 11 the student writes the chapter's function and the lab's checks
judge what the student wrote (the course's ``node --test --test-name-pattern="Lab 11.N"``):

=======  ==========================  ===================================================
lab      keyword                     the student's function
=======  ==========================  ===================================================
11.1     ``parse_compaction_entry``  ``(value)``: the compaction branch of the strict
                                     parser ("摘要先成为 session 中的一条普通事实")
11.2     ``group_interactions``      ``(entries)`` ("两个 tool result 仍属于 u3 开始的同一组")
11.3     ``build_context``           ``(active_path, *, max_tokens, reserved_output,
                                     safety_margin, estimate_tokens)`` without compaction
                                     ("31 个 token 怎样留下第二、三组")
11.4     ``create_compaction_entry`` ``(active_path, *, id, timestamp, summary,
                                     first_kept_entry_id, tokens_before)``
                                     ("compact-1 记录摘要与保留起点")
11.5     ``build_context``           as 11.3, with resume from the newest compaction and
                                     system replay across the boundary
                                     ("恢复时把最新摘要接在保留后缀前面",
                                     "system 状态跨过 compaction 边界")
=======  ==========================  ===================================================

Each lab has a list of *behaviours* (the chapter's rules, in its own words, in English and
Chinese). A behaviour is checked on the chapter's worked examples -- their numbers are
written here literally, they are the chapter's facts -- and on small crafted cases whose
expected result is the reference implementation's result for the same input, called with
the same arguments the student's function got.

A student's function may raise anything, return the wrong type, change its input or never
return. Each of these is a failed row with a plain message, never an exception of the
checker: every check runs in a daemon thread with a time limit (:func:`set_time_limit`,
10 s by default), which works the same on Windows (no processes: a function defined in a
notebook cannot be pickled there). On CPython a check that overran is also asked to stop
(``PyThreadState_SetAsyncExc``), so that a spinning loop dies; the remaining checks of that
run are then reported as not run rather than waited for.

The 11.1 function only reads compaction entries. Decision (spec §2 describes the whole
parser; the lab builds its compaction branch): a value whose ``type`` is another entry type
(``message``, ``metadata``) is refused with a ``CtxlabError`` naming the entry id and the
field ``type`` -- it is not this function's business to read it, and returning something
else would let a caller mistake a message for a compaction.
"""

from __future__ import annotations

import dataclasses
import html
import json
import math
import re
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, NoReturn

from ctxlab import fixtures as fx
from ctxlab.compaction import create_compaction_entry
from ctxlab.context import ContextResult, build_context
from ctxlab.entries import (
    CompactionSessionEntry,
    CompactionSummary,
    MessageSessionEntry,
    MetadataSessionEntry,
    SessionEntry,
    parse_session_entry,
)
from ctxlab.errors import CtxlabError, EntryParseError, shown
from ctxlab.interactions import group_interactions
from ctxlab.json_values import FrozenDict
from ctxlab.lab.language import get_language
from ctxlab.messages import (
    AgentMessage,
    AssistantMessage,
    SystemMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    text_of,
)

__all__ = [
    "LABS",
    "CheckResult",
    "GradingUsageError",
    "LabReport",
    "behaviour_keys",
    "check_behaviour",
    "check_implementation",
    "get_time_limit",
    "lab_keyword",
    "parse_compaction_entry",
    "reference_functions",
    "set_time_limit",
]

#: The labs that have a build-it function, in order.
LABS: Final[tuple[str, ...]] = ("11.1", "11.2", "11.3", "11.4", "11.5")

_DEFAULT_TIME_LIMIT: Final = 10.0
_time_limit: list[float] = [_DEFAULT_TIME_LIMIT]


class GradingUsageError(CtxlabError):
    """``check_implementation`` was called wrongly (a usage error, not a failed check).

    ``option`` names what was wrong: ``lab``, a keyword such as ``build_context``, or
    ``seconds``.
    """

    def __init__(self, option: str, message: str) -> None:
        self.option = option
        super().__init__(message)


def set_time_limit(seconds: float) -> float:
    """Give every check at most ``seconds`` (default 10); returns the previous limit."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise GradingUsageError(
            "seconds", f"set_time_limit: seconds must be a number > 0, got {shown(seconds)}"
        )
    if not math.isfinite(seconds) or seconds <= 0:
        raise GradingUsageError(
            "seconds", f"set_time_limit: seconds must be finite and > 0, got {shown(seconds)}"
        )
    previous = _time_limit[0]
    _time_limit[0] = float(seconds)
    return previous


def get_time_limit() -> float:
    """The time limit of one check, in seconds."""
    return _time_limit[0]


# ----------------------------------------------------------------------------------------
# Bilingual text and the report


@dataclass(frozen=True)
class _T:
    """One text in English and Chinese."""

    en: str
    zh: str

    def __add__(self, other: _T) -> _T:
        return _T(self.en + other.en, self.zh + other.zh)

    def pick(self) -> str:
        return self.zh if get_language() == "zh" else self.en


def _same(text: str) -> _T:
    return _T(text, text)


_ADDRESS = re.compile(r" at 0x[0-9A-Fa-f]+")


def _clean(text: str) -> str:
    """Deterministic text: no memory addresses, bounded length."""
    text = _ADDRESS.sub("", text)
    return text if len(text) <= 600 else text[:597] + "..."


@dataclass(frozen=True)
class CheckResult:
    """One behaviour of a lab, checked: ✔ or ✘, and for ✘ the first failing example.

    ``behaviour`` and ``detail`` are in the language of :func:`ctxlab.lab.set_language`;
    both languages are kept (``behaviour_en``/``behaviour_zh``, ``detail_en``/``detail_zh``).
    """

    key: str
    passed: bool
    behaviour_en: str
    behaviour_zh: str
    detail_en: str = ""
    detail_zh: str = ""

    @property
    def behaviour(self) -> str:
        """The behaviour, in the chapter's words."""
        return self.behaviour_zh if get_language() == "zh" else self.behaviour_en

    @property
    def detail(self) -> str:
        """For ✘: the first failing example, expected vs got (empty for ✔)."""
        return self.detail_zh if get_language() == "zh" else self.detail_en

    @property
    def mark(self) -> str:
        return "✔" if self.passed else "✘"


_LEGEND = _T(
    "A budget a/b/c means max_tokens=a, reserved_output=b, safety_margin=c.",
    "预算 a/b/c 表示 max_tokens=a、reserved_output=b、safety_margin=c。",
)


@dataclass(frozen=True, repr=False)
class LabReport:
    """The result of :func:`check_implementation`: one :class:`CheckResult` per behaviour.

    In a notebook it shows as a table (``_repr_html_``); ``str()`` gives the same as text.
    """

    lab: str
    function: str
    results: tuple[CheckResult, ...]

    @property
    def passed(self) -> bool:
        """True when every check passed."""
        return bool(self.results) and all(result.passed for result in self.results)

    @property
    def failed(self) -> tuple[CheckResult, ...]:
        return tuple(result for result in self.results if not result.passed)

    def headline(self) -> str:
        done = sum(result.passed for result in self.results)
        total = len(self.results)
        mark = "✔" if self.passed else "✘"
        if get_language() == "zh":
            return f"Lab {self.lab} · {self.function}：通过 {done}/{total} 项检查 {mark}"
        return f"Lab {self.lab} · {self.function}: {done}/{total} checks pass {mark}"

    def _legend(self) -> str:
        return _LEGEND.pick() if self.lab in ("11.3", "11.5") else ""

    def __str__(self) -> str:
        lines = [self.headline()]
        for result in self.results:
            lines.append(f"{result.mark} {result.behaviour}")
            if result.detail:
                lines.extend(f"    {line}" for line in result.detail.splitlines())
        if self._legend() and not self.passed:
            lines.append(self._legend())
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        zh = get_language() == "zh"
        heads = ("行为", "结果", "说明") if zh else ("behaviour", "result", "detail")
        colour = "#009E73" if self.passed else "#D55E00"
        rows = []
        for result in self.results:
            mark_colour = "#009E73" if result.passed else "#D55E00"
            detail = html.escape(result.detail)
            rows.append(
                "<tr>"
                f'<td style="text-align:left">{html.escape(result.behaviour)}</td>'
                f'<td style="text-align:center;color:{mark_colour};font-weight:bold">'
                f"{result.mark}</td>"
                f'<td style="text-align:left;white-space:pre-wrap;font-family:monospace">'
                f"{detail}</td>"
                "</tr>"
            )
        legend = ""
        if self._legend() and not self.passed:
            legend = f'<p style="font-size:0.9em">{html.escape(self._legend())}</p>'
        return (
            '<div class="ctxlab-lab-report">'
            f'<p style="border-left:6px solid {colour};padding:0.2em 0.6em;font-size:1.1em">'
            f"<strong>{html.escape(self.headline())}</strong></p>"
            '<table class="ctxlab-lab-report-table">'
            f'<thead><tr><th style="text-align:left">{heads[0]}</th><th>{heads[1]}</th>'
            f'<th style="text-align:left">{heads[2]}</th></tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>{legend}</div>"
        )


# ----------------------------------------------------------------------------------------
# Running a student's function


class _Fail(Exception):
    """A check failed; ``text`` says how (expected vs got)."""

    def __init__(self, text: _T) -> None:
        super().__init__(text.en)
        self.text = text


class _StopStudent(BaseException):
    """Sent into a check thread that overran its time limit (CPython only)."""


def _fail(text: _T) -> NoReturn:
    raise _Fail(text)


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


def _exception_text(error: BaseException) -> str:
    try:
        message = str(error)
    except Exception:
        message = "<the message could not be shown>"
    return _clean(f"{type(error).__name__}: {message}" if message else type(error).__name__)


def _raised(error: BaseException) -> _T:
    if isinstance(error, NotImplementedError):
        return _T(
            "not written yet: the stub still raises NotImplementedError",
            "还没有写：stub 仍然抛出 NotImplementedError",
        )
    text = _exception_text(error)
    return _T(f"raised {text}", f"抛出了 {text}")


def _kind(value: object) -> str:
    """A short, deterministic description of a returned value's type."""
    if value is None:
        return "None"
    return type(value).__name__


class _Trial:
    """The student's function, called under watch: input snapshots and the case label.

    ``current`` is the label of the latest call (what a timeout or an unreadable result
    is reported against).
    """

    def __init__(self, function: Callable[..., Any], arg_names: tuple[str, ...]) -> None:
        self.function = function
        self.arg_names = arg_names
        self.current: _T | None = None

    def _invoke(
        self, label: _T, args: tuple[Any, ...], kwargs: Mapping[str, Any]
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
            _fail(
                label
                + _T(
                    f": changed its input {names} during the call; a lab function must leave"
                    " what it is given untouched",
                    f"：调用期间改动了输入 {names}；实验函数不能修改传入的数据",
                )
            )
        return outcome

    def returns(self, label: _T, *args: Any, **kwargs: Any) -> Any:
        ok, value = self._invoke(label, args, kwargs)
        if not ok:
            _fail(label + _same(": ") + _raised(value))
        return value

    def rejects(self, label: _T, names: Sequence[Sequence[str]], *args: Any, **kwargs: Any) -> None:
        """The call must raise a CtxlabError whose message names each group of ``names``
        (one of the alternatives of each group)."""
        wanted_en = " and ".join(" or ".join(group) for group in names)
        wanted_zh = "、".join(" 或 ".join(group) for group in names)
        naming = _T(f" naming {wanted_en}", f"，并指出 {wanted_zh}") if names else _same("")
        ok, value = self._invoke(label, args, kwargs)
        if ok:
            _fail(
                label
                + _T(
                    f": expected a CtxlabError{naming.en}, but it returned {_kind(value)}",
                    f"：期望抛出 CtxlabError{naming.zh}，实际返回了 {_kind(value)}",
                )
            )
        if isinstance(value, NotImplementedError):
            _fail(label + _same(": ") + _raised(value))
        if not isinstance(value, CtxlabError):
            text = _exception_text(value)
            _fail(
                label
                + _T(
                    f": raised {text}; expected a CtxlabError{naming.en}"
                    " (from ctxlab import CtxlabError)",
                    f"：抛出了 {text}；期望 CtxlabError{naming.zh}"
                    "（from ctxlab import CtxlabError）",
                )
            )
        message = _exception_text(value)
        for group in names:
            if not any(name in message for name in group):
                _fail(
                    label
                    + _T(
                        f": the error should name {' or '.join(group)}; got {message}",
                        f"：错误信息应当指出 {' 或 '.join(group)}；实际是 {message}",
                    )
                )


@dataclass(frozen=True)
class _Check:
    key: str
    en: str
    zh: str
    run: Callable[[_Trial], None]


@dataclass(frozen=True)
class _Lab:
    lab: str
    keyword: str
    arg_names: tuple[str, ...]
    checks: tuple[_Check, ...]


_REGISTRY: dict[str, list[_Check]] = {lab: [] for lab in LABS}


def _check(
    lab: str, key: str, en: str, zh: str
) -> Callable[[Callable[[_Trial], None]], Callable[[_Trial], None]]:
    def register(run: Callable[[_Trial], None]) -> Callable[[_Trial], None]:
        _REGISTRY[lab].append(_Check(key, en, zh, run))
        return run

    return register


def _run_one(
    check: _Check, function: Callable[..., Any], arg_names: tuple[str, ...]
) -> tuple[str, _T | None]:
    """Run one check in a daemon thread: ("pass"|"fail"|"hung", detail)."""
    trial = _Trial(function, arg_names)
    box: list[tuple[str, _T | None]] = []

    def target() -> None:
        try:
            check.run(trial)
            box.append(("pass", None))
        except _Fail as failure:
            box.append(("fail", failure.text))
        except _StopStudent:
            box.append(("hung", None))
        except BaseException as error:  # the result could not even be read
            text = _exception_text(error)
            where = trial.current
            prefix = where + _same(": ") if where is not None else _same("")
            box.append(
                (
                    "fail",
                    prefix
                    + _T(
                        f"the result could not be checked ({text}); is it the type the"
                        " reference returns?",
                        f"无法检查返回结果（{text}）；返回值的类型和参考实现一致吗？",
                    ),
                )
            )

    limit = get_time_limit()
    thread = threading.Thread(target=target, name=f"ctxlab-check-{check.key}", daemon=True)
    thread.start()
    thread.join(limit)
    if thread.is_alive() or not box:
        _stop_thread(thread)
        seconds = f"{limit:g} s"
        where = trial.current
        prefix = where + _same(": ") if where is not None else _same("")
        return "hung", prefix + _T(
            f"did not return within {seconds} (an endless loop? a blocking call?)",
            f"{seconds} 内没有返回（死循环？阻塞调用？）",
        )
    return box[0]


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


_NOT_RUN = _T(
    "not run: an earlier call of this lab did not return in time",
    "未运行：本实验前面的一次调用没有按时返回",
)


def _lab(lab: object) -> _Lab:
    if not isinstance(lab, str) or lab not in _REGISTRY:
        raise GradingUsageError(
            "lab", f"lab must be one of {', '.join(repr(x) for x in LABS)}; got {shown(lab)}"
        )
    keyword, names = _KEYWORDS[lab]
    return _Lab(lab, keyword, names, tuple(_REGISTRY[lab]))


def _function(spec: _Lab, functions: Mapping[str, object]) -> Callable[..., Any]:
    extra = sorted(set(functions) - {spec.keyword})
    if extra:
        raise GradingUsageError(
            extra[0],
            f"check_implementation: lab {spec.lab} takes {spec.keyword}=..., not {extra[0]}=",
        )
    if spec.keyword not in functions:
        raise GradingUsageError(
            spec.keyword,
            f"check_implementation: lab {spec.lab} needs your function: "
            f"check_implementation({spec.lab!r}, {spec.keyword}={spec.keyword})",
        )
    function = functions[spec.keyword]
    if not callable(function):
        raise GradingUsageError(
            spec.keyword,
            f"check_implementation: {spec.keyword} must be a function, got {_kind(function)}",
        )
    return function


def lab_keyword(lab: str) -> str:
    """The keyword (and function name) a lab checks: ``"11.2"`` -> ``"group_interactions"``."""
    return _lab(lab).keyword


def behaviour_keys(lab: str) -> tuple[str, ...]:
    """The keys of a lab's behaviours, in report order."""
    return tuple(check.key for check in _lab(lab).checks)


def _result(check: _Check, passed: bool, detail: _T | None) -> CheckResult:
    return CheckResult(
        check.key,
        passed,
        check.en,
        check.zh,
        _clean(detail.en) if detail else "",
        _clean(detail.zh) if detail else "",
    )


def check_implementation(lab: str, **functions: Callable[..., Any]) -> LabReport:
    """Run lab ``lab``'s chapter checks against the student's function.

    ``check_implementation("11.2", group_interactions=group_interactions)``. Never raises
    for a wrong, crashing, hanging or unwritten function: each is a ✘ row. A wrong lab
    name or a missing, extra or non-callable keyword is a :class:`GradingUsageError`.
    """
    spec = _lab(lab)
    function = _function(spec, functions)
    results: list[CheckResult] = []
    hung = False
    for check in spec.checks:
        if hung:
            results.append(_result(check, False, _NOT_RUN))
            continue
        status, detail = _run_one(check, function, spec.arg_names)
        hung = status == "hung"
        results.append(_result(check, status == "pass", detail))
    return LabReport(spec.lab, spec.keyword, tuple(results))


def check_behaviour(lab: str, key: str, **functions: Callable[..., Any]) -> CheckResult:
    """Run one behaviour of a lab (what ``pytest -m lab11_N`` runs, one test per key)."""
    spec = _lab(lab)
    function = _function(spec, functions)
    for check in spec.checks:
        if check.key == key:
            status, detail = _run_one(check, function, spec.arg_names)
            return _result(check, status == "pass", detail)
    raise GradingUsageError(
        "key", f"lab {lab} has no behaviour {key!r}; it has {', '.join(behaviour_keys(lab))}"
    )


# ----------------------------------------------------------------------------------------
# The reference functions


def parse_compaction_entry(value: object) -> CompactionSessionEntry:
    """The reference of Lab 11.1: the compaction branch of the strict parser.

    Reads a compaction entry's wire form (or a :class:`CompactionSessionEntry`) through
    :func:`~ctxlab.entries.parse_session_entry`. Another entry type is refused, naming the
    entry id and the field ``type``.
    """
    entry_type: object = None
    entry_id: object = None
    if isinstance(value, Mapping):
        entry_type, entry_id = value.get("type"), value.get("id")
    elif isinstance(value, (MessageSessionEntry, MetadataSessionEntry, CompactionSessionEntry)):
        entry_type, entry_id = value.type, value.id
    if entry_type in ("message", "metadata"):
        readable = entry_id if isinstance(entry_id, str) and entry_id.strip() else None
        raise EntryParseError(
            readable,
            "type",
            f"must be 'compaction', got {entry_type!r}: parse_compaction_entry reads"
            " compaction entries only",
        )
    entry = parse_session_entry(value)
    if not isinstance(entry, CompactionSessionEntry):  # pragma: no cover - refused above
        raise EntryParseError(entry.id, "type", f"must be 'compaction', got {entry.type!r}")
    return entry


_KEYWORDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "11.1": ("parse_compaction_entry", ("value",)),
    "11.2": ("group_interactions", ("entries",)),
    "11.3": ("build_context", ("active_path",)),
    "11.4": ("create_compaction_entry", ("active_path",)),
    "11.5": ("build_context", ("active_path",)),
}

_REFERENCES: dict[str, Callable[..., Any]] = {
    "parse_compaction_entry": parse_compaction_entry,
    "group_interactions": group_interactions,
    "build_context": build_context,
    "create_compaction_entry": create_compaction_entry,
}


def reference_functions(lab: str) -> dict[str, Callable[..., Any]]:
    """ctxlab's own function for a lab, as the keyword :func:`check_implementation` takes."""
    keyword = lab_keyword(lab)
    return {keyword: _REFERENCES[keyword]}


# ----------------------------------------------------------------------------------------
# Paths, estimators and descriptions shared by the checks


def _rechain(entries: Sequence[SessionEntry]) -> list[SessionEntry]:
    """The same entries, each one's parent the entry before (the first one a root)."""
    chained: list[SessionEntry] = []
    parent: str | None = None
    for entry in entries:
        changed: Any = entry  # a compaction is never first: its parent is always a str
        chained.append(dataclasses.replace(changed, parent_id=parent))
        parent = entry.id
    return chained


def _messages(path: Sequence[SessionEntry]) -> list[SessionEntry]:
    return [entry for entry in path if isinstance(entry, MessageSessionEntry)]


def _by_id(path: Sequence[SessionEntry]) -> dict[str, SessionEntry]:
    return {entry.id: entry for entry in path}


_TAG = re.compile(r"\[(\d+)\]")


def _tag_estimator(message: object) -> int:
    """Prices a crafted message by the ``[n]`` tags in its text (a string too)."""
    if isinstance(message, str):
        text = message
    elif isinstance(message, (SystemMessage, UserMessage, AssistantMessage, ToolResultMessage)):
        text = text_of(message)
    else:
        raise TypeError(f"cannot price {type(message).__name__}")
    return sum(int(n) for n in _TAG.findall(text))


def _user(entry_id: str, cost: int) -> tuple[str, AgentMessage]:
    return entry_id, UserMessage((TextContent(f"{entry_id} [{cost}]"),), 0)


def _assistant(entry_id: str, cost: int, *calls: str) -> tuple[str, AgentMessage]:
    tool_calls = tuple(ToolCall(call, "read", FrozenDict({"path": call})) for call in calls)
    return entry_id, AssistantMessage(
        (TextContent(f"{entry_id} [{cost}]"), *tool_calls),
        "course",
        "course-model-1",
        Usage(1, 1, 2),
        "toolUse" if calls else "stop",
        0,
    )


def _result_msg(
    entry_id: str, call: str, cost: int, tool: str = "read"
) -> tuple[str, AgentMessage]:
    return entry_id, ToolResultMessage(call, tool, (TextContent(f"{entry_id} [{cost}]"),), False, 0)


def _system(
    entry_id: str, content: str, sections: Mapping[str, str | None] | None = None
) -> tuple[str, AgentMessage]:
    frozen = None if sections is None else FrozenDict[str | None](dict(sections))
    return entry_id, SystemMessage(content, 0, frozen)


def _crafted(*pairs: tuple[str, AgentMessage]) -> list[SessionEntry]:
    """Message entries chained in order; timestamps 1, 2, 3, ... (message and entry)."""
    path: list[SessionEntry] = []
    parent: str | None = None
    for index, (entry_id, message) in enumerate(pairs, start=1):
        stamped = dataclasses.replace(message, timestamp=index)
        path.append(MessageSessionEntry(entry_id, parent, index, stamped))
        parent = entry_id
    return path


def _ids(ids: Sequence[object]) -> str:
    return ",".join(str(i) for i in ids) if ids else "(none)"


_OPENING_IDS = ("sys", "u1", "a1", "u2", "a2", "u3", "calls", "r-test", "r-read", "a3")


def _path_name(path: Sequence[SessionEntry]) -> str:
    ids = tuple(entry.id for entry in path)
    if not ids:
        return "[]"
    if ids == _OPENING_IDS:
        return "sys..a3"
    if len(ids) > 12:
        return f"{ids[0]}..{ids[-1]}"
    return ",".join(ids)


def _budget_label(name: str, max_tokens: object, reserved: object, margin: object) -> _T:
    budget = f"{shown(max_tokens)}/{shown(reserved)}/{shown(margin)}"
    return _T(f"path {name}, budget {budget}", f"路径 {name}，预算 {budget}")


def _canonical(value: object) -> str:
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=True)
    except (TypeError, ValueError):
        return "?"


def _diff(expected: object, got: object, where: str) -> str | None:
    """The first place where ``got`` differs from ``expected`` (JSON-shaped or dataclass)."""
    if dataclasses.is_dataclass(expected) and not isinstance(expected, type):
        if type(got) is not type(expected):
            return f"{where or 'the value'}: expected {type(expected).__name__}, got {_kind(got)}"
        for field in dataclasses.fields(expected):
            found = _diff(
                getattr(expected, field.name), getattr(got, field.name), _join(where, field.name)
            )
            if found:
                return found
        return None
    if isinstance(expected, Mapping):
        if not isinstance(got, Mapping):
            return f"{where or 'the value'}: expected an object, got {_kind(got)}"
        for key in expected:
            if key not in got:
                return f"{_join(where, str(key))}: missing"
            found = _diff(expected[key], got[key], _join(where, str(key)))
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
            return f"{where}: expected a {type(expected).__name__}, got {_kind(got)}"
        assert isinstance(got, (list, tuple))
        if len(got) != len(expected):
            return f"{where}: expected {shown(expected)}, got {shown(got)}"
        for index, (e, g) in enumerate(zip(expected, got, strict=True)):
            found = _diff(e, g, f"{where}[{index}]")
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
    same = type(expected) is type(got) or (
        isinstance(expected, (int, float))
        and isinstance(got, (int, float))
        and not isinstance(expected, bool)
        and not isinstance(got, bool)
    )
    if same and expected == got:
        return None
    return f"{where or 'the value'}: expected {shown(expected)}, got {shown(got)}"


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


# ----------------------------------------------------------------------------------------
# Lab 11.1 -- parse_compaction_entry(value)


def _c1() -> dict[str, Any]:
    """compact-1's wire form (the chapter: parentId a3, firstKept u2, tokensBefore 29)."""
    return fx.compact1().to_json()


def _entry_result(label: _T, got: object, expected: CompactionSessionEntry) -> None:
    if not isinstance(got, CompactionSessionEntry):
        _fail(
            label
            + _T(
                f": returned {_kind(got)}; expected a CompactionSessionEntry"
                " (from ctxlab import CompactionSessionEntry)",
                f"：返回了 {_kind(got)}；期望 CompactionSessionEntry"
                "（from ctxlab import CompactionSessionEntry）",
            )
        )
    found = _diff(expected.to_json(), got.to_json(), "")
    if found:
        _fail(label + _T(f": {found}", f"：{found}"))
    found = _diff(expected, got, "")
    if found:
        _fail(
            label
            + _T(
                f": not the canonical entry: {found} (use tuples, as CompactionSummary does)",
                f"：不是规范对象：{found}（像 CompactionSummary 那样使用 tuple）",
            )
        )


def _wire_label(name: str) -> _T:
    return _T(f"compact-1 with {name}", f"compact-1（{name}）")


@_check(
    "11.1",
    "accepts_compact_1",
    "compact-1's wire form is read into an equal, canonical CompactionSessionEntry",
    "compact-1 的线上形式被读成一条相等的 CompactionSessionEntry（parentId a3，"
    "firstKeptEntryId u2，tokensBefore 29）",
)
def _c1_accepts(t: _Trial) -> None:
    label = _T("compact-1 (the chapter's entry)", "compact-1（本章的记录）")
    got = t.returns(label, _c1())
    if isinstance(got, CompactionSessionEntry):
        facts = (got.id, got.parent_id, got.first_kept_entry_id, got.tokens_before, got.timestamp)
        if facts != ("compact-1", "a3", "u2", 29, 100):
            _fail(
                label
                + _T(
                    f": expected id/parentId/firstKeptEntryId/tokensBefore/timestamp ="
                    f" compact-1/a3/u2/29/100, got {'/'.join(shown(f) for f in facts)}",
                    f"：期望 id/parentId/firstKeptEntryId/tokensBefore/timestamp ="
                    f" compact-1/a3/u2/29/100，实际 {'/'.join(shown(f) for f in facts)}",
                )
            )
    _entry_result(label, got, parse_compaction_entry(_c1()))


@_check(
    "11.1",
    "no_shared_state",
    "the parser returns a new object: changing the input afterwards changes nothing",
    "解析器返回新对象，因此调用者之后修改 summary 数组也不会改动 Store 中的记录",
)
def _c1_isolated(t: _Trial) -> None:
    label = _T("compact-1, input changed after the call", "compact-1，调用后修改输入")
    wire = _c1()
    got = t.returns(label, wire)
    expected = parse_compaction_entry(_c1())
    _entry_result(label, got, expected)
    wire["summary"]["changedFiles"].append("evil.ts")
    wire["summary"]["constraints"].clear()
    wire["summary"]["goal"] = "changed"
    wire["firstKeptEntryId"] = "u3"
    wire["tokensBefore"] = 0
    found = _diff(expected.to_json(), got.to_json(), "")
    if found:
        _fail(
            label
            + _T(
                f": the returned entry changed with its input ({found})",
                f"：返回的 entry 随输入一起变了（{found}）",
            )
        )


_DRAFTS: tuple[tuple[str, str, str], ...] = (
    # name (the chapter's first), key to remove, key to add -> the field the error names
    ("files instead of changedFiles", "summary.changedFiles", "summary.files"),
    ("nextSteps instead of next", "summary.next", "summary.nextSteps"),
    ("invariants beside constraints", "", "summary.invariants"),
    ("compactedEntryIds on the entry", "", "compactedEntryIds"),
)


def _edit(wire: dict[str, Any], dotted: str, value: object = None, *, delete: bool = False) -> None:
    *parents, key = dotted.split(".")
    target = wire
    for name in parents:
        target = target[name]
    if delete:
        del target[key]
    else:
        target[key] = value


@_check(
    "11.1",
    "rejects_draft_names",
    "early-draft names (files, nextSteps, invariants, compactedEntryIds) are refused, "
    "naming compact-1 and the field",
    "早期草案中的名字（files、nextSteps、invariants、compactedEntryIds）被拒绝，"
    "错误停在 compact-1 并指出字段",
)
def _c1_drafts(t: _Trial) -> None:
    for name, remove, add in _DRAFTS:
        wire = _c1()
        if remove:
            _edit(wire, remove, delete=True)
        _edit(wire, add, ["context.ts"])
        t.rejects(_wire_label(name), [["compact-1"], [add]], wire)


@_check(
    "11.1",
    "rejects_unknown_keys",
    "any other unknown key is refused too (on the entry and in the summary)",
    "任何未知字段都被拒绝（entry 上和 summary 里都一样）",
)
def _c1_unknown(t: _Trial) -> None:
    for dotted in ("summary.notes", "notes", "summary.goals"):
        wire = _c1()
        _edit(wire, dotted, [])
        t.rejects(_wire_label(f"an extra key {dotted}"), [["compact-1"], [dotted]], wire)


@_check(
    "11.1",
    "rejects_missing_fields",
    "a missing field (summary.changedFiles, goal, firstKeptEntryId, tokensBefore, ...) is "
    "refused, naming compact-1 and the field",
    "缺少当前字段（summary.changedFiles、goal、firstKeptEntryId、tokensBefore 等）时，"
    "错误停在 compact-1 并指出字段",
)
def _c1_missing(t: _Trial) -> None:
    for dotted in (
        "summary.changedFiles",
        "summary.goal",
        "summary.unresolved",
        "firstKeptEntryId",
        "tokensBefore",
        "parentId",
        "timestamp",
        "summary",
    ):
        wire = _c1()
        _edit(wire, dotted, delete=True)
        t.rejects(_wire_label(f"{dotted} missing"), [["compact-1"], [dotted]], wire)


@_check(
    "11.1",
    "rejects_blank_ids",
    "goal, parentId and firstKeptEntryId must not be blank, and parentId is not null",
    "goal、parentId 和 firstKeptEntryId 不能为空；compaction 的 parentId 不能是 null",
)
def _c1_blank(t: _Trial) -> None:
    cases: tuple[tuple[str, object], ...] = (
        ("parentId", None),
        ("parentId", "  "),
        ("firstKeptEntryId", ""),
        ("firstKeptEntryId", " \t"),
        ("summary.goal", "   "),
    )
    for dotted, value in cases:
        wire = _c1()
        _edit(wire, dotted, value)
        t.rejects(_wire_label(f"{dotted} = {shown(value)}"), [["compact-1"], [dotted]], wire)


@_check(
    "11.1",
    "rejects_non_string_items",
    "each of the six lists is an array and every item in it is a string",
    "六个数组字段都是数组，数组中的每一项都是字符串",
)
def _c1_items(t: _Trial) -> None:
    cases: tuple[tuple[str, object], ...] = (
        ("summary.decisions", [42]),
        ("summary.changedFiles", ["context.ts", None]),
        ("summary.next", "Read context.ts."),
        ("summary.completed", [["nested"]]),
        ("summary.constraints", {"0": "append-only"}),
    )
    for dotted, value in cases:
        wire = _c1()
        _edit(wire, dotted, value)
        t.rejects(_wire_label(f"{dotted} = {shown(value)}"), [["compact-1"], [dotted]], wire)


@_check(
    "11.1",
    "rejects_bad_tokens_before",
    "tokensBefore is a finite number >= 0: NaN, infinity, a negative number, a bool or a "
    "string is refused",
    "tokensBefore 是非负有限数：NaN、无穷大、负数、布尔值或字符串都被拒绝",
)
def _c1_tokens(t: _Trial) -> None:
    for value in (-1, float("nan"), float("inf"), -0.5, True, False, "29", None):
        wire = _c1()
        wire["tokensBefore"] = value
        t.rejects(
            _wire_label(f"tokensBefore = {shown(value)}"), [["compact-1"], ["tokensBefore"]], wire
        )


@_check(
    "11.1",
    "rejects_wrong_types",
    "a field of the wrong type, or a value that is not an object, is refused",
    "字段类型不对（或整个值不是对象）时被拒绝",
)
def _c1_types(t: _Trial) -> None:
    cases: tuple[tuple[str, object], ...] = (
        ("summary", "Keep the context small."),
        ("summary.goal", 7),
        ("timestamp", "100"),
        ("timestamp", True),
        ("firstKeptEntryId", 2),
        ("parentId", 3),
    )
    for dotted, value in cases:
        wire = _c1()
        _edit(wire, dotted, value)
        t.rejects(_wire_label(f"{dotted} = {shown(value)}"), [["compact-1"], [dotted]], wire)
    wire = _c1()
    wire["id"] = 5
    t.rejects(_wire_label("id = 5"), [["id"]], wire)
    for value in (["compact-1"], "compact-1", None, 42):
        t.rejects(_T(f"the value {shown(value)}", f"值 {shown(value)}"), [], value)


@_check(
    "11.1",
    "tokens_before_not_recomputed",
    "tokensBefore is the caller's estimate: it is kept as given, never recomputed",
    "tokensBefore 由调用者写入；parser 只检查它是非负有限数，不会重新估算并核对该值",
)
def _c1_recompute(t: _Trial) -> None:
    for value in (0, 1, 2.5, 29, 1_000_000):
        wire = _c1()
        wire["tokensBefore"] = value
        label = _wire_label(f"tokensBefore = {shown(value)}")
        got = t.returns(label, wire)
        expected = _c1()
        expected["tokensBefore"] = value
        _entry_result(label, got, parse_compaction_entry(expected))


@_check(
    "11.1",
    "other_types_refused",
    "only compaction entries are read: a message or metadata entry is refused, naming its "
    "id and the field type",
    "只读 compaction entry：message 或 metadata entry 被拒绝，错误指出它的 id 和 type 字段",
)
def _c1_other(t: _Trial) -> None:
    u2 = _by_id(fx.opening_path())["u2"].to_json()
    t.rejects(_T("the message entry u2", "message entry u2"), [["u2"], ["type"]], u2)
    note = MetadataSessionEntry("note-1", "a3", 50, "model", "course-model-1").to_json()
    t.rejects(
        _T("the metadata entry note-1", "metadata entry note-1"), [["note-1"], ["type"]], note
    )
    for value in ("compactio", None):
        wire = _c1()
        wire["type"] = value
        t.rejects(_wire_label(f"type = {shown(value)}"), [["compact-1"], ["type"]], wire)
    wire = _c1()
    del wire["type"]
    t.rejects(_wire_label("type missing"), [["compact-1"], ["type"]], wire)


@_check(
    "11.1",
    "accepts_entry_object",
    "an existing CompactionSessionEntry, and its to_json(), read back equal (a new object)",
    "已有的 CompactionSessionEntry 对象及其 to_json() 读回后相等（且是新对象）",
)
def _c1_object(t: _Trial) -> None:
    entry = fx.compact1()
    label = _T("the CompactionSessionEntry compact-1", "CompactionSessionEntry 对象 compact-1")
    got = t.returns(label, entry)
    _entry_result(label, got, entry)
    second = _T("compact-1 read twice (parse(parse(wire).to_json()))", "compact-1 读两遍")
    first = t.returns(second, _c1())
    if isinstance(first, CompactionSessionEntry):
        again = t.returns(second, first.to_json())
        _entry_result(second, again, fx.compact1())


@_check(
    "11.1",
    "accepts_valid_variants",
    "other valid compactions (empty lists, decimal numbers, Chinese text) are accepted as they are",
    "其他合法的 compaction（空数组、小数、中文文本）原样接受",
)
def _c1_variants(t: _Trial) -> None:
    variants: tuple[tuple[str, Callable[[dict[str, Any]], None]], ...] = (
        ("all six lists empty", _empty_lists),
        ("timestamp 100.5 and tokensBefore 0.25", _decimals),
        ("Chinese text", _chinese),
    )
    for name, change in variants:
        wire = _c1()
        change(wire)
        label = _T(f"compact-1 with {name}", f"compact-1（{name}）")
        got = t.returns(label, wire)
        expected = _c1()
        change(expected)
        _entry_result(label, got, parse_compaction_entry(expected))


def _empty_lists(wire: dict[str, Any]) -> None:
    for key in ("constraints", "completed", "decisions", "changedFiles", "unresolved", "next"):
        wire["summary"][key] = []


def _decimals(wire: dict[str, Any]) -> None:
    wire["timestamp"] = 100.5
    wire["tokensBefore"] = 0.25


def _chinese(wire: dict[str, Any]) -> None:
    wire["summary"]["goal"] = "让上下文保持在预算内"
    wire["summary"]["constraints"] = ["历史只追加", "不删除旧记录"]
    wire["id"] = "压缩-1"


# ----------------------------------------------------------------------------------------
# Lab 11.2 -- group_interactions(entries)


def _groups_text(groups: Sequence[Sequence[str]]) -> str:
    return " ".join(f"[{_ids(group)}]" for group in groups) if groups else "[] (no groups)"


def _student_groups(label: _T, got: object) -> list[list[str]]:
    if not isinstance(got, (list, tuple)):
        _fail(
            label
            + _T(
                f": returned {_kind(got)}; expected a list of InteractionGroup",
                f"：返回了 {_kind(got)}；期望 InteractionGroup 列表",
            )
        )
    groups: list[list[str]] = []
    for index, group in enumerate(got):
        entries = getattr(group, "entries", None)
        if not isinstance(entries, (list, tuple)) or not all(
            isinstance(getattr(entry, "id", None), str) for entry in entries
        ):
            _fail(
                label
                + _T(
                    f": item {index} of the result is {_kind(group)}; expected an"
                    " InteractionGroup whose .entries holds the group's entries",
                    f"：结果的第 {index} 项是 {_kind(group)}；期望 InteractionGroup，"
                    ".entries 保存这一组的 entries",
                )
            )
        groups.append([entry.id for entry in entries])
    return groups


def _expect_groups(
    t: _Trial, label: _T, entries: list[SessionEntry], expected: list[list[str]] | None
) -> None:
    """The student's groups must be the reference's (or the literal ``expected`` ids)."""
    result = t.returns(label, entries)
    got = _student_groups(label, result)
    reference = group_interactions(list(entries))
    want = [list(g.entry_ids) for g in reference] if expected is None else expected
    if got != want:
        _fail(
            label
            + _T(
                f": expected {_groups_text(want)}, got {_groups_text(got)}",
                f"：期望 {_groups_text(want)}，实际 {_groups_text(got)}",
            )
        )
    by_id = _by_id(entries)
    for group in result:
        for entry in group.entries:
            if entry != by_id.get(entry.id):
                _fail(
                    label
                    + _T(
                        f": entry {entry.id} in the result is not the path's entry {entry.id}",
                        f"：结果中的 entry {entry.id} 与路径上的 {entry.id} 不相等",
                    )
                )


def _group_label(path: Sequence[SessionEntry]) -> _T:
    name = _path_name(path)
    return _T(f"path {name}", f"路径 {name}")


_THREE_GROUPS = [["u1", "a1"], ["u2", "a2"], ["u3", "calls", "r-test", "r-read", "a3"]]


@_check(
    "11.2",
    "three_groups",
    "the opening path gives the chapter's three groups: [u1,a1] [u2,a2] "
    "[u3,calls,r-test,r-read,a3]",
    "groupInteractions() 跳过 sys，以 user 消息为起点，把其余九条记录分成三组",
)
def _g_three(t: _Trial) -> None:
    path = _messages(fx.opening_path())
    _expect_groups(t, _group_label(path), path, _THREE_GROUPS)


@_check(
    "11.2",
    "system_skipped",
    "system messages belong to no group: skipped at the start, between groups and inside one",
    "system message 不属于任何一组：出现在两组之间时也一样跳过，不会切开或混入哪一组",
)
def _g_system(t: _Trial) -> None:
    opening = fx.opening_path()
    by_id = _by_id(opening)
    patch = _crafted(_system("patch", "between"))[0]
    order: list[SessionEntry] = [*opening[:3], patch, *opening[3:]]
    path = _rechain(order)
    _expect_groups(t, _group_label(path), _messages(path), _THREE_GROUPS)
    inside = _crafted(_system("patch", "", {"rules": "v2"}))[0]
    order = [*opening[:7], inside, *opening[7:]]
    path = _rechain(order)
    _expect_groups(t, _group_label(path), _messages(path), _THREE_GROUPS)
    only = [by_id["sys"]]
    _expect_groups(t, _group_label(only), only, [])
    _expect_groups(t, _T("no entries at all", "没有任何 entry"), [], [])


@_check(
    "11.2",
    "results_any_order",
    "tool results may come in any order, even before their call; groups keep path order",
    "result 的出现顺序不影响配对；返回的 entries 保持原路径顺序",
)
def _g_order(t: _Trial) -> None:
    path = _messages(fx.results_before_call_path())
    _expect_groups(
        t,
        _group_label(path),
        path,
        [["u1", "a1"], ["u2", "a2"], ["u3", "r-test", "calls", "r-read", "a3"]],
    )
    crafted = _crafted(
        _user("u1", 1),
        _result_msg("r-b", "call-b", 1),
        _assistant("calls", 1, "call-a", "call-b", "call-c"),
        _result_msg("r-c", "call-c", 1),
        _result_msg("r-a", "call-a", 1),
        _assistant("a1", 1),
    )
    _expect_groups(t, _group_label(crafted), crafted, None)


@_check(
    "11.2",
    "pairing_by_id_only",
    "only ids pair a result with its call: toolName and the final assistant message take no part",
    "result 的数组位置、toolName 与终态 assistant 不参与配对",
)
def _g_ids_only(t: _Trial) -> None:
    # Results named after another tool; calls split over two assistant messages; no final
    # assistant; an interaction that ends with results.
    crafted = _crafted(
        _user("u1", 1),
        _assistant("call-read", 1, "read-1"),
        _assistant("call-test", 1, "test-1"),
        _result_msg("r-test", "test-1", 1, tool="read"),
        _result_msg("r-read", "read-1", 1, tool="bash"),
        _user("u2", 1),
        _assistant("calls-2", 1, "x-1", "x-2"),
        _result_msg("r-x2", "x-2", 1),
        _assistant("between", 1),
        _result_msg("r-x1", "x-1", 1),
    )
    _expect_groups(
        t,
        _group_label(crafted),
        crafted,
        [
            ["u1", "call-read", "call-test", "r-test", "r-read"],
            ["u2", "calls-2", "r-x2", "between", "r-x1"],
        ],
    )


def _broken(t: _Trial, path: list[SessionEntry], names: list[list[str]]) -> None:
    t.rejects(_group_label(path), names, _messages(path))


@_check(
    "11.2",
    "unknown_call_rejected",
    "a result whose toolCallId names no call of its group is refused (the chapter's "
    "r-test -> unknown-1), naming the id",
    "把 r-test.toolCallId 改成 unknown-1：groupInteractions() 找不到 unknown-1 对应的 call，"
    "错误信息携带 entry id 或 call id",
)
def _g_unknown(t: _Trial) -> None:
    path = fx.unknown_call_path()
    t.rejects(
        _T("the chapter's path with r-test(unknown-1)", "本章的路径，r-test(unknown-1)"),
        [["unknown-1", "r-test"]],
        _messages(path),
    )
    crafted = _crafted(
        _user("u1", 1),
        _assistant("calls", 1, "read-1"),
        _result_msg("r-read", "read-1", 1),
        _result_msg("r-extra", "ghost-1", 1),
        _assistant("a1", 1),
    )
    _broken(t, crafted, [["ghost-1", "r-extra"]])


@_check(
    "11.2",
    "missing_result_rejected",
    "every call has a result when its group ends; a call without one is refused, naming it",
    "group 结束时，所有 call 都已经配齐 result；缺少 result 的 call 被拒绝并指出",
)
def _g_missing(t: _Trial) -> None:
    _broken(t, fx.missing_result_path(), [["read-1", "calls"]])
    crafted = _crafted(
        _user("u1", 1),
        _assistant("calls", 1, "read-1", "test-1"),
        _result_msg("r-test", "test-1", 1),
        _assistant("a1", 1),
        _user("u2", 1),
        _assistant("a2", 1),
    )
    _broken(t, crafted, [["read-1", "calls"]])


@_check(
    "11.2",
    "duplicate_result_rejected",
    "a call has at most one result; a second result is refused, naming it",
    "一个 call 至多对应一条 result；第二条 result 被拒绝并指出",
)
def _g_duplicate_result(t: _Trial) -> None:
    crafted = _crafted(
        _user("u3", 1),
        _assistant("calls", 1, "read-1", "test-1"),
        _result_msg("r-test", "test-1", 1),
        _result_msg("r-read", "read-1", 1),
        _result_msg("r-again", "test-1", 1),
        _assistant("a3", 1),
    )
    _broken(t, crafted, [["test-1", "r-again"]])


@_check(
    "11.2",
    "duplicate_call_rejected",
    "each call id is declared once; a second declaration is refused, naming it",
    "每个 call.id 只声明一次；重复声明被拒绝并指出",
)
def _g_duplicate_call(t: _Trial) -> None:
    crafted = _crafted(
        _user("u3", 1),
        _assistant("calls", 1, "read-1", "test-1", "read-1"),
        _result_msg("r-test", "test-1", 1),
        _result_msg("r-read", "read-1", 1),
        _assistant("a3", 1),
    )
    _broken(t, crafted, [["read-1"]])
    crafted = _crafted(
        _user("u3", 1),
        _assistant("calls", 1, "read-1"),
        _result_msg("r-read", "read-1", 1),
        _assistant("again", 1, "read-1"),
        _assistant("a3", 1),
    )
    _broken(t, crafted, [["read-1"]])


@_check(
    "11.2",
    "pairs_within_group",
    "a call and its result must stand in the same user group",
    "工具事实只在这个 user group 内核对：call 和 result 必须在同一组",
)
def _g_same_group(t: _Trial) -> None:
    late = _crafted(
        _user("u1", 1),
        _assistant("calls", 1, "read-1"),
        _user("u2", 1),
        _result_msg("r-read", "read-1", 1),
        _assistant("a2", 1),
    )
    _broken(t, late, [["read-1", "r-read", "calls"]])
    early = _crafted(
        _user("u1", 1),
        _result_msg("r-read", "read-1", 1),
        _assistant("a1", 1),
        _user("u2", 1),
        _assistant("calls", 1, "read-1"),
        _assistant("a2", 1),
    )
    _broken(t, early, [["read-1", "r-read", "calls"]])


@_check(
    "11.2",
    "message_before_first_user",
    "a message other than system before the first user message is refused, naming that entry",
    "第一条 user 消息之前出现其他消息（system 除外）时被拒绝，并指出这条 entry",
)
def _g_before_user(t: _Trial) -> None:
    first = _crafted(
        _system("sys", "sys [1]"), _assistant("a0", 1), _user("u1", 1), _assistant("a1", 1)
    )
    t.rejects(_group_label(first), [["a0"]], first)
    result = _crafted(_result_msg("r0", "read-1", 1), _user("u1", 1), _assistant("a1", 1))
    t.rejects(_group_label(result), [["r0"]], result)


@_check(
    "11.2",
    "input_untouched",
    "the entries are left as they were, and the same input gives equal groups every time",
    "输入的 entries 保持原样；同样的输入每次得到相等的分组",
)
def _g_pure(t: _Trial) -> None:
    entries = _messages(fx.opening_path())
    label = _group_label(entries)
    first = _student_groups(label, t.returns(label, entries))
    second = _student_groups(label, t.returns(label, entries))
    if first != second:
        _fail(
            label
            + _T(
                f": two calls gave {_groups_text(first)} and then {_groups_text(second)}",
                f"：两次调用先得到 {_groups_text(first)}，再得到 {_groups_text(second)}",
            )
        )


# ----------------------------------------------------------------------------------------
# Labs 11.3 and 11.5 -- build_context(active_path, *, max_tokens, ...)


def _names(path: Sequence[SessionEntry], reference: ContextResult) -> dict[str, str]:
    """Canonical JSON of a message -> how to call it in a detail (entry id, system, ...)."""
    names: dict[str, str] = {}
    for entry in path:
        if isinstance(entry, MessageSessionEntry):
            names.setdefault(_canonical(entry.message.to_json()), entry.id)
    for index, message in enumerate(reference.messages):
        if index == 0 and isinstance(message, SystemMessage):
            names[_canonical(message.to_json())] = "system"
    compactions = [e for e in path if isinstance(e, CompactionSessionEntry)]
    if compactions:
        newest = compactions[-1]
        for message in reference.messages[:2]:
            if isinstance(message, UserMessage) and message.timestamp == newest.timestamp:
                names[_canonical(message.to_json())] = f"summary({newest.id})"
    return names


def _message_name(names: Mapping[str, str], wire: object, index: int) -> str:
    name = names.get(_canonical(wire))
    if name is not None:
        return name
    if isinstance(wire, Mapping) and isinstance(wire.get("role"), str):
        if wire.get("role") == "system":
            return "system"
        return f"{wire['role']}?"
    return f"<item {index}>"


def _role(wire: object) -> object:
    return wire.get("role") if isinstance(wire, Mapping) else None


def _context_wire(label: _T, got: object) -> dict[str, Any]:
    to_json = getattr(got, "to_json", None)
    if not callable(to_json) or isinstance(got, type):
        _fail(
            label
            + _T(
                f": returned {_kind(got)}; expected a ContextResult (from ctxlab import"
                " ContextResult)",
                f"：返回了 {_kind(got)}；期望 ContextResult（from ctxlab import ContextResult）",
            )
        )
    wire = to_json()
    if not isinstance(wire, Mapping):
        _fail(
            label
            + _T(
                f": its to_json() returned {_kind(wire)}, not an object",
                f"：它的 to_json() 返回了 {_kind(wire)}，不是对象",
            )
        )
    return dict(wire)


def _compare_context(
    label: _T,
    got: object,
    reference: ContextResult,
    path: Sequence[SessionEntry],
    *,
    kept: Sequence[str] | None = None,
    reason: str | None = None,
    tokens: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """Compare a student's result with the reference's (and the chapter's literal facts).

    Kept ids first, then the messages (by name, then field by field), the reason and the
    token ledger: the first difference is reported, named with entry ids.
    """
    wire = _context_wire(label, got)
    expected = reference.to_json()
    want_kept = list(kept) if kept is not None else expected["keptEntryIds"]
    got_kept = wire.get("keptEntryIds")
    got_kept_list = list(got_kept) if isinstance(got_kept, (list, tuple)) else got_kept
    if got_kept_list != want_kept:
        shown_kept = _ids(got_kept_list) if isinstance(got_kept_list, list) else shown(got_kept)
        _fail(
            label
            + _T(
                f": expected kept {_ids(want_kept)}, got {shown_kept}",
                f"：期望保留 {_ids(want_kept)}，实际 {shown_kept}",
            )
        )
    names = _names(path, reference)
    want_messages = expected["messages"]
    got_messages = wire.get("messages")
    if not isinstance(got_messages, (list, tuple)):
        _fail(label + _same(f": messages: expected a list, got {_kind(got_messages)}"))
    want_names = [_message_name(names, m, i) for i, m in enumerate(want_messages)]
    got_names = [_message_name(names, m, i) for i, m in enumerate(got_messages)]
    named_alike = len(want_names) == len(got_names) and all(
        w == h or (h.endswith("?") and _role(want) == _role(have))
        for w, h, want, have in zip(want_names, got_names, want_messages, got_messages, strict=True)
    )
    if not named_alike:
        _fail(
            label
            + _T(
                f": expected messages {' → '.join(want_names) or '(none)'},"
                f" got {' → '.join(got_names) or '(none)'}",
                f"：期望 messages {' → '.join(want_names) or '（无）'}，"
                f"实际 {' → '.join(got_names) or '（无）'}",
            )
        )
    for index, (want, have) in enumerate(zip(want_messages, got_messages, strict=True)):
        found = _diff(want, have, f"messages[{index}] ({want_names[index]})")
        if found:
            _fail(label + _same(": ") + _same(found))
    want_reason = reason if reason is not None else expected["reason"]
    if wire.get("reason") != want_reason:
        _fail(
            label
            + _T(
                f": kept the right entries, but expected reason {want_reason},"
                f" got {shown(wire.get('reason'))}",
                f"：保留的 entries 正确，但期望 reason {want_reason}，"
                f"实际 {shown(wire.get('reason'))}",
            )
        )
    want_tokens = dict(tokens) if tokens is not None else expected["tokens"]
    found = _diff(want_tokens, wire.get("tokens"), "tokens")
    if found:
        _fail(label + _same(": ") + _same(found))
    return wire


def _bc(
    max_tokens: object,
    reserved_output: object = 4,
    safety_margin: object = 2,
    estimate_tokens: object = fx.opening_estimator,
) -> dict[str, Any]:
    return {
        "max_tokens": max_tokens,
        "reserved_output": reserved_output,
        "safety_margin": safety_margin,
        "estimate_tokens": estimate_tokens,
    }


def _expect_context(
    t: _Trial,
    name: str,
    make_path: Callable[[], list[SessionEntry]],
    options: Mapping[str, Any],
    **literal: Any,
) -> dict[str, Any]:
    """Call the student's build_context on a fresh path; compare with the reference."""
    label = _budget_label(
        name, options["max_tokens"], options["reserved_output"], options["safety_margin"]
    )
    got = t.returns(label, make_path(), **options)
    reference = build_context(make_path(), **options)
    return _compare_context(label, got, reference, make_path(), **literal)


_KEPT_31 = ("u2", "a2", "u3", "calls", "r-test", "r-read", "a3")
_GROUP_3 = ("u3", "calls", "r-test", "r-read", "a3")
_ALL_GROUPS = ("u1", "a1", "u2", "a2", *_GROUP_3)
_TOKENS_31 = {
    "maxTokens": 31,
    "system": 3,
    "messages": 22,
    "reservedOutput": 4,
    "safetyMargin": 2,
    "availableForMessages": 22,
    "total": 31,
}


def _worked_example(t: _Trial) -> None:
    _expect_context(
        t,
        "sys..a3",
        fx.opening_path,
        _bc(31),
        kept=_KEPT_31,
        reason="trimmed",
        tokens=_TOKENS_31,
    )


def _overflow(t: _Trial) -> None:
    # 19 - system 3 - reserved 4 - margin 2 = 10 tokens for messages; group 3 needs 15.
    _expect_context(
        t, "sys..a3", fx.opening_path, _bc(19), kept=_GROUP_3, reason="single_group_overflow"
    )
    for max_tokens in (0, 9, 23):
        _expect_context(
            t,
            "sys..a3",
            fx.opening_path,
            _bc(max_tokens),
            kept=_GROUP_3,
            reason="single_group_overflow",
        )


def _within(t: _Trial) -> None:
    for max_tokens in (38, 500):
        _expect_context(
            t, "sys..a3", fx.opening_path, _bc(max_tokens), kept=_ALL_GROUPS, reason="within_budget"
        )
    only_system = _crafted(_system("sys", "sys [3]"))
    _expect_context(
        t,
        "sys",
        lambda: list(only_system),
        _bc(10, 1, 1, _tag_estimator),
        kept=(),
        reason="within_budget",
    )
    _expect_context(t, "[]", list, _bc(10, 1, 1, _tag_estimator), kept=(), reason="within_budget")


def _fixed_costs(t: _Trial) -> None:
    # One token more of margin leaves 21: group 2 no longer fits beside group 3.
    _expect_context(t, "sys..a3", fx.opening_path, _bc(31, 4, 3), kept=_GROUP_3, reason="trimmed")
    _expect_context(t, "sys..a3", fx.opening_path, _bc(31, 5, 2), kept=_GROUP_3, reason="trimmed")
    for options in (_bc(5), _bc(31, 40, 2), _bc(31, 4, 100), _bc(2.5, 0.5, 0.25), _bc(37), _bc(24)):
        _expect_context(t, "sys..a3", fx.opening_path, options)


def _contiguous(t: _Trial) -> None:
    # Groups cost 2, 10, 3. With 8 tokens the newest (3) fits and the middle one (10) does
    # not: the choice stops there, although the oldest (2) would still fit.
    path = _crafted(
        _user("u1", 1), _assistant("a1", 1),
        _user("u2", 5), _assistant("a2", 5),
        _user("u3", 2), _assistant("a3", 1),
    )  # fmt: skip
    _expect_context(
        t, _path_name(path), lambda: list(path), _bc(8, 0, 0, _tag_estimator), kept=("u3", "a3")
    )
    # Groups 1, 6, 1, 1: with 4 tokens the two newest fit, then group 2 stops the choice.
    path2 = _crafted(
        _user("u1", 1),
        _user("u2", 3), _assistant("a2", 3),
        _user("u3", 1),
        _user("u4", 1),
    )  # fmt: skip
    _expect_context(
        t, _path_name(path2), lambda: list(path2), _bc(4, 0, 0, _tag_estimator), kept=("u3", "u4")
    )


def _whole_groups(t: _Trial) -> None:
    # The budget would hold a part of group 2 (r-1, a2) beside group 3, but groups are
    # kept or dropped whole: the cut lies only between groups.
    path = _crafted(
        _user("u1", 1), _assistant("a1", 1),
        _user("u2", 1), _assistant("calls", 1, "c-1"),
        _result_msg("r-1", "c-1", 1), _assistant("a2", 1),
        _user("u3", 2), _assistant("a3", 2),
    )  # fmt: skip
    _expect_context(
        t, _path_name(path), lambda: list(path), _bc(6, 0, 0, _tag_estimator), kept=("u3", "a3")
    )
    _expect_context(
        t,
        _path_name(path),
        lambda: list(path),
        _bc(8, 0, 0, _tag_estimator),
        kept=("u2", "calls", "r-1", "a2", "u3", "a3"),
    )


def _replay_path() -> list[SessionEntry]:
    # sys: BASE [2] + rules v1 [3]; patch: rules v2 [1]  -> replayed BASE [2] + RULE v2 [1] = 3
    return _crafted(
        _system("sys", "BASE [2]", {"rules": "RULE v1 [3]"}),
        _user("u1", 2),
        _assistant("a1", 2),
        _system("patch", "", {"rules": "RULE v2 [1]", "gone": None}),
        _user("u2", 2),
        _system("tip", "TIP [1]", {"style": "terse [1]"}),
        _assistant("a2", 2),
    )


def _system_replay(t: _Trial) -> None:
    # Replayed: "BASE [2]\n\nTIP [1]", sections rules "RULE v2 [1]", style "terse [1]" = 5.
    _expect_context(
        t,
        "sys,u1,a1,patch,u2,tip,a2",
        _replay_path,
        _bc(9, 0, 0, _tag_estimator),
        kept=("u2", "a2"),
    )
    _expect_context(
        t,
        "sys,u1,a1,patch,u2,tip,a2",
        _replay_path,
        _bc(100, 0, 0, _tag_estimator),
        kept=("u1", "a1", "u2", "a2"),
    )


def _no_system(t: _Trial) -> None:
    def path() -> list[SessionEntry]:
        return _rechain([e for e in fx.opening_path() if e.id != "sys"])

    _expect_context(t, "u1..a3 (no sys)", path, _bc(31), kept=_KEPT_31)


_BAD_NUMBERS: tuple[object, ...] = (float("nan"), float("inf"), -1, True, "31", None)


def _options(t: _Trial) -> None:
    for option, camel in (
        ("max_tokens", "maxTokens"),
        ("reserved_output", "reservedOutput"),
        ("safety_margin", "safetyMargin"),
    ):
        for bad in _BAD_NUMBERS:
            options = _bc(31)
            options[option] = bad
            label = _T(f"{option}={shown(bad)}", f"{option}={shown(bad)}")
            t.rejects(label, [[option, camel]], fx.opening_path(), **options)
    options = _bc(31)
    options["estimate_tokens"] = None
    t.rejects(
        _same("estimate_tokens=None"),
        [["estimate_tokens", "estimateTokens"]],
        fx.opening_path(),
        **options,
    )


class _BadEstimator:
    """The chapter's estimator, except for one message (by entry id) priced badly."""

    def __init__(self, path: Sequence[SessionEntry], target: str, bad: object) -> None:
        self.bad = bad
        self.target: object
        if target == "system":
            self.target = "system"
        else:
            entry = _by_id(path)[target]
            assert isinstance(entry, MessageSessionEntry)
            self.target = entry.message

    def __call__(self, message: object) -> object:
        hit = (
            isinstance(message, SystemMessage)
            if self.target == "system"
            else message == self.target
        )
        if not hit:
            return fx.opening_estimator(message)
        if isinstance(self.bad, BaseException):
            raise self.bad
        return self.bad


def _estimator_errors(t: _Trial) -> None:
    cases: tuple[tuple[str, object, list[str]], ...] = (
        ("a3", -1, ["a3"]),
        ("system", float("nan"), ["system"]),
        ("r-read", True, ["r-read"]),
        ("calls", "3", ["calls"]),
        ("u3", RuntimeError("tokenizer offline"), ["u3"]),
        ("a3", float("inf"), ["a3"]),
    )
    for target, bad, names in cases:
        path = fx.opening_path()
        estimator = _BadEstimator(path, target, bad)
        shown_bad = (
            f"raises {type(bad).__name__}"
            if isinstance(bad, BaseException)
            else f"returns {shown(bad)}"
        )
        label = _T(
            f"path sys..a3, budget 500/4/2, the estimator {shown_bad} for {target}",
            f"路径 sys..a3，预算 500/4/2，估算器对 {target} {shown_bad}",
        )
        t.rejects(label, [names], path, **_bc(500, estimate_tokens=estimator))


def _broken_groups(t: _Trial) -> None:
    t.rejects(
        _T(
            "path sys..a3 with r-test(unknown-1), budget 31/4/2",
            "路径 sys..a3，r-test(unknown-1)，预算 31/4/2",
        ),
        [["unknown-1", "r-test"]],
        fx.unknown_call_path(),
        **_bc(31),
    )
    _expect_context(
        t,
        "sys..a3 with r-test before calls",
        fx.results_before_call_path,
        _bc(31),
        kept=("u2", "a2", "u3", "r-test", "calls", "r-read", "a3"),
    )


def _deterministic(t: _Trial) -> None:
    path = fx.opening_path()
    label = _budget_label("sys..a3", 31, 4, 2)
    first = _context_wire(label, t.returns(label, path, **_bc(31)))
    second_result = t.returns(label, path, **_bc(31))
    second = _context_wire(label, second_result)
    if _canonical(first) != _canonical(second):
        _fail(label + _T(": two calls gave different results", "：两次调用结果不同"))
    first["keptEntryIds"] = ["changed"]
    if isinstance(first.get("messages"), list) and first["messages"]:
        first["messages"][0] = {"role": "changed"}
    third = _context_wire(label, second_result)
    if _canonical(third) != _canonical(second):
        _fail(
            label
            + _T(
                ": changing one result's to_json() changed the result itself",
                "：修改一次结果的 to_json() 改动了结果本身",
            )
        )
    _compare_context(label, second_result, build_context(fx.opening_path(), **_bc(31)), path)


_CONTEXT_CHECKS: tuple[tuple[str, str, str, Callable[[_Trial], None]], ...] = (
    (
        "worked_example_31",
        "the 31-token example keeps groups 2 and 3: kept u2,a2,u3,calls,r-test,r-read,a3, "
        "reason trimmed, tokens 31/3/22/4/2/22/31",
        "31 个 token 怎样留下第二、三组：reason trimmed，tokens 与本章完全一致",
        _worked_example,
    ),
    (
        "single_group_overflow",
        "with 10 tokens left the newest group (15) is still returned whole: single_group_overflow",
        "消息额度只有 10 而第三组需要 15：函数仍返回完整的第三组，reason 为 single_group_overflow",
        _overflow,
    ),
    (
        "within_budget",
        "when every group fits (or there is none) the reason is within_budget",
        "所有组都放得下（或没有组）时 reason 为 within_budget",
        _within,
    ),
    (
        "fixed_costs_first",
        "fixed costs (system, reserved output, safety margin) are deducted first; the "
        "allowance never goes below 0",
        "先扣除固定成本（system、回答预留、安全余量）；"
        "固定成本超过总窗口时消息额度降到 0，不会变成负数",
        _fixed_costs,
    ),
    (
        "contiguous_newest_suffix",
        "groups are chosen from the newest backwards and the choice stops at the first group "
        "that does not fit",
        "从最新组向前选择，选择停在第一个放不下的组：保留的是连续的最新后缀",
        _contiguous,
    ),
    (
        "whole_groups",
        "a group is kept or dropped whole: the cut lies only between groups",
        "group 是预算可以整体保留或整体丢弃的最小单位：裁剪位置只能落在两组之间",
        _whole_groups,
    ),
    (
        "system_replayed",
        "the system message is replayed from the whole path, placed first and priced once "
        "as one message; it is not in keptEntryIds",
        "system message 从整条路径重放，排在最前面，作为一条消息计价，不进入 keptEntryIds",
        _system_replay,
    ),
    (
        "no_system",
        "without a system message tokens.system is 0 and no system message comes first",
        "路径上没有 system message 时，tokens.system 为 0，结果里也没有开头的 system",
        _no_system,
    ),
    (
        "options_checked",
        "the three budget numbers must be finite and >= 0: anything else is an error naming "
        "the option",
        "三个预算数值都要是非负有限数，否则报错并指出是哪个选项",
        _options,
    ),
    (
        "estimator_checked",
        "every estimate must be a finite number >= 0; a bad or failing estimate is a "
        "CtxlabError naming the message",
        "估算器的每次返回值都要是非负有限数；出错时报 CtxlabError 并指出是哪条消息",
        _estimator_errors,
    ),
    (
        "broken_groups_refused",
        "tool ids that do not pair stop the build (r-test -> unknown-1); results in any "
        "order still pair",
        "tool id 配不上时第三组不进入预算选择（r-test -> unknown-1）；result 反序仍然合法",
        _broken_groups,
    ),
    (
        "deterministic_and_isolated",
        "the same path and options give equal results, each an independent copy; the path "
        "is left untouched",
        "相同 active path 与 options 得到深相等结果；每次结果都是独立副本，不改写 session entries",
        _deterministic,
    ),
)

for _key, _en, _zh, _run in _CONTEXT_CHECKS:
    _check("11.3", _key, _en, _zh)(_run)


# -- Lab 11.5: resume and system replay across the compaction boundary


def _resumed_path() -> list[SessionEntry]:
    return fx.resumed_path()


_RESUMED_ALL = ("u2", "a2", *_GROUP_3, "u4", "a4")


def _resume_summary(t: _Trial) -> None:
    _expect_context(t, "sys..a4 (compact-1 keeps u2)", _resumed_path, _bc(100), kept=_RESUMED_ALL)


def _summary_first(t: _Trial) -> None:
    # 22 for messages; the summary (4) is paid first; 18 left holds [u4,a4]=7, not group 3.
    _expect_context(t, "sys..a4 (compact-1 keeps u2)", _resumed_path, _bc(31), kept=("u4", "a4"))
    # Less than the summary itself is left: the group budget is 0, the newest group overflows.
    _expect_context(
        t,
        "sys..a4 (compact-1 keeps u2)",
        _resumed_path,
        _bc(12),
        kept=("u4", "a4"),
        reason="single_group_overflow",
    )
    _expect_context(t, "sys..a4 (compact-1 keeps u2)", _resumed_path, _bc(38))
    _expect_context(t, "sys..a4 (compact-1 keeps u2)", _resumed_path, _bc(55))


def _newest_only(t: _Trial) -> None:
    _expect_context(
        t,
        "sys..compact-2 (compact-2 keeps u3)",
        fx.recompacted_path,
        _bc(100),
        kept=(*_GROUP_3, "u4", "a4"),
    )
    _expect_context(t, "sys..compact-2 (compact-2 keeps u3)", fx.recompacted_path, _bc(30))


def _from_first_kept(t: _Trial) -> None:
    # A budget that would hold everything still starts at firstKeptEntryId: u1 and a1 are
    # summarised, not kept.
    _expect_context(
        t,
        "sys..a4 (compact-1 keeps u2)",
        _resumed_path,
        _bc(1000),
        kept=_RESUMED_ALL,
        reason="within_budget",
    )

    def crafted() -> list[SessionEntry]:
        head = _crafted(
            _system("sys", "sys [1]"),
            _user("u1", 1), _assistant("a1", 1),
            _user("u2", 1), _assistant("a2", 1),
            _user("u3", 1), _assistant("a3", 1),
        )  # fmt: skip
        compaction = CompactionSessionEntry("c", "a3", 50, CompactionSummary("goal [2]"), "u3", 6)
        tail = _crafted(_user("u4", 1), _assistant("a4", 1))
        return _rechain([*head, compaction, *tail])

    _expect_context(
        t,
        "sys,u1..a3,c(keeps u3),u4,a4",
        crafted,
        _bc(100, 0, 0, _tag_estimator),
        kept=("u3", "a3", "u4", "a4"),
    )


def _metadata_skipped(t: _Trial) -> None:
    def path() -> list[SessionEntry]:
        entries = fx.resumed_path()
        note = MetadataSessionEntry("note-1", None, 60, "model", "course-model-1")
        note2 = MetadataSessionEntry("note-2", None, 100, "reviewed", True)
        ids = [e.id for e in entries]
        entries.insert(ids.index("u3"), note)
        entries.insert(ids.index("u4") + 1, note2)
        return _rechain(entries)

    _expect_context(t, "sys..a4 with note-1 and note-2", path, _bc(100), kept=_RESUMED_ALL)
    _expect_context(t, "sys..a4 with note-1 and note-2", path, _bc(31), kept=("u4", "a4"))


_REPLAYED = {
    "role": "system",
    "content": "BASE\n\nPrefer small diffs.",
    "sections": {"rules": "RULE v2"},
    "timestamp": 1,
}


def _replay_across(t: _Trial) -> None:
    wire = _expect_context(
        t,
        "sys..a3 (system patches, compact-1 keeps u2)",
        fx.system_patch_path,
        _bc(100),
        kept=("u2", "a2", "u3", "a3"),
    )
    messages = wire.get("messages")
    first = messages[0] if isinstance(messages, list) and messages else None
    found = _diff(_REPLAYED, first, "messages[0]")
    if found:
        label = _budget_label("sys..a3 (system patches)", 100, 4, 2)
        _fail(label + _same(f": {found}"))
    _expect_context(
        t, "sys..a3 (system patches, compact-1 keeps u2)", fx.system_patch_path, _bc(17)
    )


def _first_kept_checked(t: _Trial) -> None:
    def with_first_kept(first_kept: str, after: bool = False) -> list[SessionEntry]:
        path = fx.opening_path()
        compaction = CompactionSessionEntry(
            "compact-1", "a3", 100, fx.compact1_summary(), first_kept, 29
        )
        path.append(compaction)
        if after:
            path.extend(_crafted(_user("u4", 1), _assistant("a4", 1)))
        return _rechain(path)

    for first_kept, names in (
        ("a2", ["a2"]),
        ("r-test", ["r-test"]),
        ("nope", ["nope"]),
    ):
        path = with_first_kept(first_kept)
        label = _T(
            f"path sys..compact-1 with firstKeptEntryId {first_kept}, budget 100/4/2",
            f"路径 sys..compact-1，firstKeptEntryId 为 {first_kept}，预算 100/4/2",
        )
        t.rejects(label, [names], path, **_bc(100))
    patched = [
        dataclasses.replace(e, first_kept_entry_id="patch-1")
        if isinstance(e, CompactionSessionEntry)
        else e
        for e in fx.system_patch_path()
    ]
    label = _T(
        "path sys..a3 (system patches) whose compact-1 keeps from patch-1, budget 100/4/2",
        "路径 sys..a3（system patch），compact-1 从 patch-1 开始保留，预算 100/4/2",
    )
    t.rejects(label, [["patch-1"]], patched, **_bc(100))
    noted = fx.opening_path()
    noted.insert(5, MetadataSessionEntry("note", "a2", 5, "model", "course-model-1"))
    noted.append(CompactionSessionEntry("compact-1", "a3", 100, fx.compact1_summary(), "note", 29))
    label = _T(
        "path sys..a3 with a metadata entry note before u3 and compact-1 keeping from note",
        "路径 sys..a3，u3 前有 metadata entry note，compact-1 从 note 开始保留",
    )
    t.rejects(label, [["note"]], _rechain(noted), **_bc(100))
    late = with_first_kept("u4", after=True)
    label = _T(
        "path sys..compact-1,u4,a4 with firstKeptEntryId u4 (after the compaction)",
        "路径 sys..compact-1,u4,a4，firstKeptEntryId 为 compaction 之后的 u4",
    )
    t.rejects(label, [["u4"]], late, **_bc(100, estimate_tokens=_tag_or_opening))


def _tag_or_opening(message: object) -> int:
    try:
        return int(fx.opening_estimator(message))
    except CtxlabError:
        return _tag_estimator(message)


def _recompacted(t: _Trial) -> None:
    def path() -> list[SessionEntry]:
        entries = fx.recompacted_path()
        third = create_compaction_entry(
            entries,
            id="compact-3",
            timestamp=300,
            summary=fx.compact1_summary(),
            first_kept_entry_id="u4",
            tokens_before=11,
        )
        return [*entries, third]

    _expect_context(t, "sys..compact-3 (compact-3 keeps u4)", path, _bc(100), kept=("u4", "a4"))

    def continued() -> list[SessionEntry]:
        entries = fx.recompacted_path()
        entries.extend(_crafted(_user("u5", 2), _assistant("a5", 2)))
        return _rechain(entries)

    _expect_context(
        t,
        "sys..compact-2,u5,a5",
        continued,
        _bc(100, estimate_tokens=_tag_or_opening),
        kept=(*_GROUP_3, "u4", "a4", "u5", "a5"),
    )


def _no_compaction(t: _Trial) -> None:
    _worked_example(t)


def _deterministic_resume(t: _Trial) -> None:
    path = fx.recompacted_path()
    label = _budget_label("sys..compact-2", 100, 4, 2)
    first = _context_wire(label, t.returns(label, path, **_bc(100)))
    second = t.returns(label, path, **_bc(100))
    if _canonical(first) != _canonical(_context_wire(label, second)):
        _fail(label + _T(": two calls gave different results", "：两次调用结果不同"))
    _compare_context(label, second, build_context(fx.recompacted_path(), **_bc(100)), path)


_RESUME_CHECKS: tuple[tuple[str, str, str, Callable[[_Trial], None]], ...] = (
    (
        "no_compaction",
        "without a compaction it is Lab 11.3's build: the 31-token example keeps groups 2 and 3",
        "没有 compaction 时就是 Lab 11.3 的结果：31 个 token 留下第二、三组",
        _no_compaction,
    ),
    (
        "summary_after_system",
        "the newest summary becomes one user message right after the system message; "
        "keptEntryIds lists only original entries",
        "结果的顺序是 [system?, 摘要, ...保留的后缀]；keptEntryIds 不为合成消息制造虚假 id",
        _resume_summary,
    ),
    (
        "summary_priced_first",
        "the summary's cost is taken from the allowance first; the rest goes to whole groups",
        "合成的摘要消息有自己的 token 成本，这个成本先从消息额度中扣除，余量才交给完整 groups",
        _summary_first,
    ),
    (
        "newest_compaction_only",
        "only the newest compaction is read (compact-2): no second summary message",
        "路径中若已经有 compact-2，恢复只读取它，不会再生成第二份摘要消息",
        _newest_only,
    ),
    (
        "candidates_from_first_kept",
        "original messages are collected from firstKeptEntryId on, also those after the "
        "compaction (u4, a4)",
        "从 firstKeptEntryId 收集原消息，并继续收集 compaction 之后的 u4、a4",
        _from_first_kept,
    ),
    (
        "metadata_skipped",
        "metadata and compaction entries are skipped before grouping",
        "跳过 metadata 与 compaction entry，再对消息后缀分组并应用预算",
        _metadata_skipped,
    ),
    (
        "system_replay_across_boundary",
        "the system message is replayed from the whole path, also before the compaction: "
        '"BASE\\n\\nPrefer small diffs.", rules RULE v2, timestamp of sys',
        "replayedSystemMessage() 读取整条 active path，包括 compaction 之前的部分",
        _replay_across,
    ),
    (
        "first_kept_checked",
        "firstKeptEntryId must be an earlier user message that starts a group (a2, r-test, "
        "a system patch, a metadata entry, an unknown or a later id is an error naming it)",
        "firstKeptEntryId 只能指向 compaction 之前一组的首条 user message；a2、r-test、"
        "system patch、metadata entry、未知 id 都报错并指出它",
        _first_kept_checked,
    ),
    (
        "recompaction",
        "a resumed path can be compacted again; the newest compaction and its suffix win",
        "第二次 compaction 使用同一个创建函数；后续 buildContext() 先读取最新的 compaction",
        _recompacted,
    ),
    (
        "deterministic_and_isolated",
        "the same path and options give equal results; the path is left untouched",
        "相同 active path 与 options 应得到深相等结果；不会改写 session entries",
        _deterministic_resume,
    ),
)

for _key, _en, _zh, _run in _RESUME_CHECKS:
    _check("11.5", _key, _en, _zh)(_run)


# ----------------------------------------------------------------------------------------
# Lab 11.4 -- create_compaction_entry(active_path, *, id, timestamp, summary, ...)


def _cc(
    entry_id: str = "compact-1",
    first_kept: str = "u2",
    summary: object = None,
    tokens_before: object = 29,
    timestamp: object = 100,
) -> dict[str, Any]:
    return {
        "id": entry_id,
        "timestamp": timestamp,
        "summary": fx.compact1_summary() if summary is None else summary,
        "first_kept_entry_id": first_kept,
        "tokens_before": tokens_before,
    }


def _create_label(name: str, options: Mapping[str, Any]) -> _T:
    return _T(
        f"path {name}, id {options['id']}, first kept {options['first_kept_entry_id']}",
        f"路径 {name}，id {options['id']}，first kept {options['first_kept_entry_id']}",
    )


def _expect_created(
    t: _Trial,
    name: str,
    make_path: Callable[[], list[SessionEntry]],
    options: Mapping[str, Any],
    parent: str | None = None,
) -> CompactionSessionEntry:
    label = _create_label(name, options)
    got = t.returns(label, make_path(), **options)
    expected = create_compaction_entry(make_path(), **options)
    if not isinstance(got, CompactionSessionEntry):
        _entry_result(label, got, expected)
    if parent is not None and getattr(got, "parent_id", None) != parent:
        _fail(
            label
            + _T(
                f": expected parentId {parent} (the last entry of the path),"
                f" got {shown(getattr(got, 'parent_id', None))}",
                f"：期望 parentId {parent}（路径的最后一条 entry），"
                f"实际 {shown(getattr(got, 'parent_id', None))}",
            )
        )
    _entry_result(label, got, expected)
    assert isinstance(got, CompactionSessionEntry)
    return got


def _cc_compact1(t: _Trial) -> None:
    got = _expect_created(t, "sys..a3", fx.opening_path, _cc(), parent="a3")
    facts = (got.id, got.timestamp, got.first_kept_entry_id, got.tokens_before)
    if facts != ("compact-1", 100, "u2", 29):
        _fail(
            _same(
                f"compact-1: expected compact-1/100/u2/29, got {'/'.join(shown(f) for f in facts)}"
            )
        )


def _cc_pure(t: _Trial) -> None:
    path = fx.opening_path()
    summary = fx.compact1_summary().to_json()
    options = _cc(summary=summary)
    label = _create_label("sys..a3", options)
    got = t.returns(label, path, **options)
    if [entry.id for entry in path] != [entry.id for entry in fx.opening_path()]:
        _fail(label + _same(": the path changed"))
    expected = create_compaction_entry(fx.opening_path(), **_cc())
    _entry_result(label, got, expected)
    summary["changedFiles"].append("evil.ts")
    summary["goal"] = "changed"
    found = _diff(expected.to_json(), got.to_json(), "")
    if found:
        _fail(
            label
            + _T(
                f": the returned entry changed with the summary mapping it was given ({found})",
                f"：返回的 entry 随传入的 summary 一起变了（{found}）",
            )
        )
    again = t.returns(label, fx.opening_path(), **_cc())
    _entry_result(label, again, expected)


def _cc_parent(t: _Trial) -> None:
    def tagged() -> list[SessionEntry]:
        return [
            *fx.opening_path(),
            MetadataSessionEntry("note", "a3", 50, "model", "course-model-1"),
        ]

    _expect_created(t, "sys..a3,note", tagged, _cc("c", "u3", tokens_before=0), parent="note")
    _expect_created(
        t,
        "sys..a4",
        fx.resumed_path,
        _cc("compact-2", "u3", fx.compact2_summary(), 33, 200),
        parent="a4",
    )
    _expect_created(
        t,
        "sys..compact-2",
        fx.recompacted_path,
        _cc("compact-3", "u4", tokens_before=11, timestamp=300),
        parent="compact-2",
    )


def _cc_duplicate(t: _Trial) -> None:
    for entry_id in ("u2", "a3", "sys"):
        options = _cc(entry_id)
        t.rejects(_create_label("sys..a3", options), [[entry_id]], fx.opening_path(), **options)
    options = _cc("compact-1", "u3")
    t.rejects(_create_label("sys..a4", options), [["compact-1"]], fx.resumed_path(), **options)


def _cc_first_kept(t: _Trial) -> None:
    for first_kept in ("u1", "u2", "u3"):
        _expect_created(t, "sys..a3", fx.opening_path, _cc(first_kept=first_kept), parent="a3")
    for first_kept in ("a2", "calls", "r-test", "r-read", "a3", "a1"):
        options = _cc(first_kept=first_kept)
        t.rejects(_create_label("sys..a3", options), [[first_kept]], fx.opening_path(), **options)


def _cc_system(t: _Trial) -> None:
    options = _cc("compact-2", "patch-2", tokens_before=10, timestamp=200)
    t.rejects(
        _create_label("sys..a3 (system patches)", options),
        [["patch-2"]],
        fx.system_patch_path(),
        **options,
    )
    for first_kept in ("sys", "patch-1"):
        options = _cc("compact-2", first_kept, tokens_before=10, timestamp=200)
        t.rejects(
            _create_label("sys..a3 (system patches)", options),
            [[first_kept]],
            fx.system_patch_path(),
            **options,
        )
    _expect_created(
        t,
        "sys..a3 (system patches)",
        fx.system_patch_path,
        _cc("compact-2", "u3", tokens_before=10, timestamp=200),
        parent="a3",
    )


def _cc_unknown(t: _Trial) -> None:
    for first_kept in ("nope", "u9"):
        options = _cc(first_kept=first_kept)
        t.rejects(_create_label("sys..a3", options), [[first_kept]], fx.opening_path(), **options)
    for first_kept in ("compact-1", "note"):
        options = _cc("c-9", first_kept)
        path = [*fx.resumed_path(), MetadataSessionEntry("note", "a4", 103, "k", 1)]
        t.rejects(_create_label("sys..a4,note", options), [[first_kept]], path, **options)


def _cc_empty(t: _Trial) -> None:
    options = _cc()
    t.rejects(_create_label("[] (empty)", options), [], [], **options)


def _cc_parsed(t: _Trial) -> None:
    bad_summary = fx.compact1_summary().to_json()
    del bad_summary["changedFiles"]
    bad_summary["files"] = ["context.ts"]
    cases: tuple[tuple[dict[str, Any], list[list[str]]], ...] = (
        (_cc(summary=bad_summary), [["summary.files", "summary.changedFiles"]]),
        (_cc(tokens_before=-1), [["tokensBefore", "tokens_before"]]),
        (_cc(tokens_before=float("nan")), [["tokensBefore", "tokens_before"]]),
        (_cc(tokens_before=True), [["tokensBefore", "tokens_before"]]),
        (_cc(timestamp="100"), [["timestamp"]]),
        (_cc(summary={**fx.compact1_summary().to_json(), "goal": "  "}), [["goal"]]),
        (_cc("  "), [["id"]]),
    )
    for options, names in cases:
        t.rejects(_create_label("sys..a3", options), names, fx.opening_path(), **options)
    options = _cc()
    label = _create_label("sys..a3", options)
    got = t.returns(label, fx.opening_path(), **options)
    if isinstance(got, CompactionSessionEntry):
        try:
            again = parse_session_entry(got)
        except CtxlabError as error:
            _fail(label + _same(f": the result does not pass parse_session_entry: {error}"))
        assert isinstance(again, CompactionSessionEntry)
        _entry_result(label, got, again)


def _cc_summary_forms(t: _Trial) -> None:
    mapping = fx.compact1_summary().to_json()
    _expect_created(t, "sys..a3", fx.opening_path, _cc(summary=mapping), parent="a3")
    _expect_created(t, "sys..a3", fx.opening_path, _cc(), parent="a3")


_CREATE_CHECKS: tuple[tuple[str, str, str, Callable[[_Trial], None]], ...] = (
    (
        "compact_1",
        "compact-1 (timestamp 100, first kept u2, tokensBefore 29) gets parentId a3",
        '函数从 activePath.at(-1) 得到 parentId: "a3"',
        _cc_compact1,
    ),
    (
        "pure",
        "creating is pure: the path and the summary are left as they were, and the result "
        "shares nothing with them",
        "返回 compact1 以后，active path 仍保持原样；函数也不接收 Store",
        _cc_pure,
    ),
    (
        "parent_is_last_entry",
        "parentId is the id of the path's last entry, whatever its type",
        "parent 不由调用者重复传入：parentId 总是路径最后一条 entry 的 id",
        _cc_parent,
    ),
    (
        "id_already_on_path",
        "an id already on the path is an error naming it",
        "id 已经在路径上时报错并指出它",
        _cc_duplicate,
    ),
    (
        "first_kept_starts_group",
        "firstKeptEntryId must be the user message that starts a group: u2 is valid; a2, "
        "calls, r-test are inside a group",
        "firstKeptEntryId 只能指向一组的首条 user message：u2 合法；"
        "a2、calls、r-test 都位于组内，不能成为切点",
        _cc_first_kept,
    ),
    (
        "first_kept_not_system",
        "a system message (e.g. patch-2) cannot be the first kept entry",
        'system message 也不能成为切点：firstKeptEntryId: "patch-2" 会被报告',
        _cc_system,
    ),
    (
        "first_kept_unknown",
        "an unknown id, a compaction or a metadata entry as first kept entry is an error naming it",
        "未知 id、compaction 或 metadata entry 作为 firstKeptEntryId 时报错并指出它",
        _cc_unknown,
    ),
    (
        "empty_path",
        "an empty path is an error: there is no leaf to append after",
        "空路径报错：没有可以追加在后面的 leaf",
        _cc_empty,
    ),
    (
        "parsed_result",
        "the candidate goes through parseSessionEntry() as its final check and copy",
        "再把候选对象交给 parseSessionEntry() 做最后一次运行时校验和复制",
        _cc_parsed,
    ),
    (
        "summary_forms",
        "the summary may be a CompactionSummary or its wire-form mapping",
        "summary 可以是 CompactionSummary，也可以是它的线上形式（mapping）",
        _cc_summary_forms,
    ),
)

for _key, _en, _zh, _run in _CREATE_CHECKS:
    _check("11.4", _key, _en, _zh)(_run)
