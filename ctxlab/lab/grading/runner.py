"""Running one check: a daemon thread with a time limit, stopped when it overruns.

:func:`run_check` runs one check in a daemon thread, which works the same on Windows (no
processes: a function defined in a notebook cannot be pickled there). The main thread waits
in short slices, so a kernel interrupt (KeyboardInterrupt) reaches it at once.

A check thread that overran its time limit, or whose wait was interrupted by any
``BaseException``, is asked to stop: on CPython an exception (``StopStudent``) is raised in
it with ``PyThreadState_SetAsyncExc``, again and again for up to :data:`STOP_SECONDS`, so
that a loop that catches ``BaseException`` still dies if it ever lets one through. A
thread that outlives that (blocked in C, say ``threading.Event().wait()``, or catching every
exception forever) is kept in a list: :func:`stuck_threads` counts those still running, and
every later report says so at its top until they end (issue 17, item 7).

:class:`Pristine` keeps ctxlab's own modules as they were when grading loaded: a student's
function that rebinds ``ctxlab.context.build_context`` or ``ctxlab.fixtures.opening_path``
changes nothing for the checks that follow, nor for the lab modules loaded later.

What the student's code may change in this process is taken out of the grader's hands
(issue 25, item 4): the grader reads its own clock (``time.monotonic`` as it was when grading
loaded, so a student's ``time.monotonic = lambda: 0`` cannot stop the time limit), and
:class:`Sealed` runs every check with the switch interval as grading found it, and with
``sys.setswitchinterval`` capped at that value while a run lasts (a student's
``sys.setswitchinterval(1000)`` would starve the waiting thread of the GIL for 1000 s). A
check thread that holds the GIL in one long C call (``sum(range(10**10))``, a regular
expression that backtracks) cannot be stopped by anything in this process: its row says so,
with how long the grader could not run, once the call returns.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import CodeType, ModuleType
from typing import Any, Final, Literal

import ctxlab.lab.grading.steps as steps
from ctxlab.lab.grading.calls import Failed, Trial
from ctxlab.lab.grading.perform import StopStudent
from ctxlab.lab.grading.text import COLON, Text, exception_text, same

__all__ = [
    "NOT_RUN",
    "STOP_SECONDS",
    "SWITCH_INTERVAL",
    "Outcome",
    "Pristine",
    "Sealed",
    "at",
    "clock",
    "hung",
    "run_check",
    "stuck_threads",
    "unreadable",
]

#: How long a thread that must stop is asked to, again and again, before it counts as stuck.
STOP_SECONDS: Final = 0.5
#: How often the main thread wakes while it waits for a check (a kernel interrupt lands).
_WAIT_SLICE: Final = 0.1
#: The pause between two stop requests.
_STOP_SLICE: Final = 0.005
#: A wait slice that took this much longer than asked: the waiting thread was starved of
#: the GIL (a check thread in one long C call), not merely slow.
_STARVED: Final = 1.0

#: The grader's own clock and switch interval, bound when grading loaded: a student's
#: ``time.monotonic = ...`` or ``sys.setswitchinterval(...)`` changes neither.
clock: Final = time.monotonic
_set_switch_interval: Final = sys.setswitchinterval
_get_switch_interval: Final = sys.getswitchinterval
SWITCH_INTERVAL: Final = min(sys.getswitchinterval(), 0.005)


@dataclass(frozen=True)
class Outcome:
    """How one check ended, and what the student's function did meanwhile.

    ``status`` is ``"pass"``, ``"fail"`` (``detail`` says how) or ``"hung"`` (did not
    return in time); ``output`` is what the function printed (``output_cut`` characters of
    it were cut); ``used_reference`` is true when a call ran ctxlab's reference of the lab;
    ``stop``, when set, ends the run: it is the detail of every row after this one.
    """

    status: Literal["pass", "fail", "hung"]
    detail: Text | None
    output: str = ""
    output_cut: int = 0
    used_reference: bool = False
    stop: Text | None = None


#: Called with the label of each call of the student's function, just before it is made.
CALL_SINKS: list[Callable[[Text | None], None]] = []

#: The detail of every check after one that did not return in time.
NOT_RUN = Text(
    "not run: an earlier call of this lab did not return in time",
    "未运行：本实验前面的一次调用没有按时返回",
)

_UNREADABLE = Text(
    "the result could not be checked; is it the type the reference returns?",
    "无法检查返回结果；返回值的类型和参考实现一致吗？",
)


def at(trial: Trial) -> Text:
    """The label of the latest call, as a prefix of a detail (empty before any call)."""
    return trial.current + COLON if trial.current is not None else same("")


def run_check(
    check: Callable[[Trial], None],
    function: Callable[..., Any],
    arg_names: tuple[str, ...],
    *,
    name: str,
    limit: float,
    references: frozenset[CodeType] = frozenset(),
) -> Outcome:
    """Run one check on ``function`` in a daemon thread called ``name``, for ``limit`` s.

    A ``BaseException`` in the main thread while it waits (a kernel interrupt) stops the
    check thread and is raised again.
    """
    trial = Trial(function, arg_names, references=references)
    if CALL_SINKS:  # told of each call's label first (a grading child tells its kernel)
        call, sinks = trial._caller, tuple(CALL_SINKS)

        def told(args: tuple[Any, ...], kwargs: Any) -> Any:
            for sink in sinks:
                sink(trial.current)
            return call(args, kwargs)

        trial._caller = told
    box: list[tuple[Literal["pass", "fail", "hung"], Text | None]] = []

    traced = steps.use_trace()
    guard = _Guard()

    def target() -> None:
        try:
            check(trial)
            box.append(("pass", None))
        except Failed as failure:
            box.append(("fail", failure.text))
        except StopStudent:
            box.append(("hung", None))
        except BaseException as error:  # the result could not even be read
            box.append(("fail", at(trial) + unreadable(error)))
        finally:
            while not traced:  # a stop may land on the call itself: then mark done again
                try:
                    guard.finish()
                    break
                except StopStudent:
                    continue

    if traced:  # no threads (Pyodide), or CTXLAB_TIME_LIMIT_MODE=trace: see .steps
        if not steps.run_traced(target, limit) or not box or box[0][0] == "hung":
            return _outcome(trial, "hung", hung(trial, limit))
        status, ended = box[0]
        return _outcome(trial, status, ended)
    thread = threading.Thread(target=target, name=name, daemon=True)
    begun = clock()
    thread.start()
    try:
        starved = _wait(thread, limit, begun)
    except BaseException:  # a kernel interrupt: the check must not outlive it
        _stop_thread(thread, guard)
        raise
    if thread.is_alive() or not box:
        _stop_thread(thread, guard)
        return _outcome(trial, "hung", hung(trial, limit, starved))
    if starved > max(_STARVED, limit):  # it ended, but held the GIL past the whole limit
        return _outcome(trial, "hung", hung(trial, limit, starved))
    status, ended = box[0]
    return _outcome(trial, status, ended)


def hung(trial: Trial, limit: float, starved: float = 0.0) -> Text:
    """The detail of a check that did not return within ``limit`` seconds; ``starved``: how
    long the grader's thread could not run at once (the check held the GIL in C code)."""
    seconds = f"{limit:g} s"
    text = at(trial) + Text(
        f"did not return within {seconds} (an endless loop? a blocking call?)",
        f"{seconds} 内没有返回（死循环？阻塞调用？）",
    )
    if starved > _STARVED:
        held = f"{starved:.0f} s"
        text = text + Text(
            f". It held Python's interpreter lock (the GIL) for {held} in one long call into C"
            " code (a sum or range over billions of numbers, a regular expression that"
            " backtracks, an enormous number), and nothing in the kernel can interrupt such a"
            " call: the grader could only stop it once the call returned. A call that never"
            " returns freezes the kernel: restart it (Kernel → Restart).",
            f"。它在一次长时间的 C 代码调用中（对几十亿个数求和或遍历 range、回溯失控的正则表达式、"
            f"极大的整数运算）持有 Python 解释器锁（GIL）达 {held}，kernel 中没有任何东西能打断"
            "这样的调用：评分器只能等它返回后才停止它。永不返回的调用会让 kernel 卡死："
            "请重启 kernel（Kernel → Restart）。",
        )
    return text


def unreadable(error: BaseException) -> Text:
    """The detail of a check that raised something other than ``Failed``."""
    try:
        text = exception_text(error)
    except StopStudent:
        raise
    except BaseException:  # pragma: no cover - exception_text never raises
        return _UNREADABLE
    return Text(
        f"the result could not be checked ({text}); is it the type the reference returns?",
        f"无法检查返回结果（{text}）；返回值的类型和参考实现一致吗？",
    )


def _outcome(trial: Trial, status: Literal["pass", "fail", "hung"], detail: Text | None) -> Outcome:
    output = trial.output if isinstance(trial.output, str) else ""
    cut = trial.output_cut if isinstance(trial.output_cut, int) else 0
    stop = NOT_RUN if status == "hung" else None
    return Outcome(status, detail, output, cut, trial.used_reference is True, stop)


def _wait(thread: threading.Thread, limit: float, begun: float) -> float:
    """Wait for ``thread`` (started at ``begun``) at most ``limit`` s, in slices (an
    interrupt is not held up).

    Returns the longest time this thread was kept from running: before its wait began, or
    a slice's overrun of what it asked for (starved of the GIL by a check thread in one
    long C call)."""
    deadline = begun + limit
    starved = clock() - begun
    while thread.is_alive():
        now = clock()
        left = deadline - now
        if left <= 0:
            break
        asked = min(left, _WAIT_SLICE)
        thread.join(asked)
        starved = max(starved, clock() - now - asked)
    return starved


# ----------------------------------------------------------------------------------------
# The switch interval


def _capped_switch_interval(interval: float) -> None:
    """``sys.setswitchinterval`` while a run lasts: a value above the grader's is capped
    (a check thread that set 1000 s would keep the waiting thread from the GIL that long)."""
    _set_switch_interval(min(interval, SWITCH_INTERVAL))


class Sealed:
    """For one run of checks: the switch interval as grading found it (set again before
    each check by :meth:`reset`), ``sys.setswitchinterval`` capped; both as the notebook
    had them once the run ends."""

    def __init__(self) -> None:
        self._interval = SWITCH_INTERVAL
        self._binding: object = _MISSING

    def __enter__(self) -> Sealed:
        self._interval = _get_switch_interval()
        self._binding = vars(sys).get("setswitchinterval", _MISSING)
        self.reset()
        return self

    def reset(self) -> None:
        """Before each check: the grader's switch interval, the cap in place."""
        _set_switch_interval(SWITCH_INTERVAL)
        sys.setswitchinterval = _capped_switch_interval

    def __exit__(self, *exc: object) -> None:
        if self._binding is _MISSING:  # pragma: no cover - sys always has it
            vars(sys).pop("setswitchinterval", None)
        else:
            vars(sys)["setswitchinterval"] = self._binding
        _set_switch_interval(self._interval)


# ----------------------------------------------------------------------------------------
# Stopping a thread, and the threads that could not be stopped

_STUCK: list[threading.Thread] = []


def stuck_threads() -> int:
    """How many check threads that could not be stopped are still running."""
    _STUCK[:] = [thread for thread in _STUCK if thread.is_alive()]
    return len(_STUCK)


class _Guard:
    """Whether a check thread is past its check: from then on no stop is sent into it, so
    a stop can never land in ``threading``'s own clean-up (which would leave the ended
    thread listed by ``threading.enumerate()`` for ever)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.done = False

    def finish(self) -> None:
        """Called by the check thread last (again if a stop interrupts it): mark it done,
        and let a stop that was sent but has not landed yet land here, inside the caller's
        retry (``PyThreadState_SetAsyncExc(id, NULL)`` cannot take it back: on CPython 3.11
        it leaves the interpreter's eval breaker set for good)."""
        with self.lock:
            self.done = True
        _land()  # a stop sent before ``done`` is raised on this call's entry
        _land()


def _stop_thread(
    thread: threading.Thread, guard: _Guard | None = None, seconds: float = STOP_SECONDS
) -> bool:
    """Stop a check thread: raise ``StopStudent`` in it until it ends, for ``seconds``.

    True when it ended; otherwise it is kept in the list of stuck threads.
    """
    try:
        if _raise_until_dead(thread, guard, seconds):
            return True
    except BaseException:  # interrupted again while stopping: keep track of it, go on
        if thread.is_alive() and thread not in _STUCK:
            _STUCK.append(thread)
        raise
    if thread.is_alive() and thread not in _STUCK:
        _STUCK.append(thread)
    return not thread.is_alive()


def _raise_until_dead(thread: threading.Thread, guard: _Guard | None, seconds: float) -> bool:
    ident = thread.ident
    if ident is None or sys.implementation.name != "cpython":  # pragma: no cover
        thread.join(seconds)
        return not thread.is_alive()
    try:
        import ctypes

        set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
    except Exception:  # pragma: no cover - ctypes unavailable: leave the daemon thread
        thread.join(seconds)
        return not thread.is_alive()
    deadline = clock() + seconds
    while thread.is_alive():
        if guard is not None:
            with guard.lock:
                if not guard.done:
                    _send_stop(set_async_exc, ident)
        else:
            _send_stop(set_async_exc, ident)
        thread.join(_STOP_SLICE)
        if clock() >= deadline:
            break
    return not thread.is_alive()


def _land() -> None:
    """Nothing: entering a Python function is where a pending stop is raised."""


def _send_stop(set_async_exc: Any, ident: int) -> None:
    import ctypes

    changed = set_async_exc(ctypes.c_ulong(ident), ctypes.py_object(StopStudent))
    if changed > 1:  # pragma: no cover - never more than one thread has this id
        set_async_exc(ctypes.c_ulong(ident), None)


# ----------------------------------------------------------------------------------------
# ctxlab's modules as grading found them

_MISSING: Final[Any] = object()


class Pristine:
    """The module-level names of ctxlab's modules, as they were when first kept.

    :meth:`restore` puts back every kept name that was rebound or deleted since and returns
    what it replaced; :meth:`put_back` undoes that (the student's notebook keeps what it
    set, only the checks see ctxlab as it was). For a module kept with ``tables=True`` the
    contents of its module-level dicts, lists and sets (ctxlab's private tables) are put
    back too, each time.
    """

    def __init__(self) -> None:
        self._kept: list[tuple[ModuleType, dict[str, object]]] = []
        self._tables: list[tuple[dict[Any, Any] | list[Any] | set[Any], object]] = []

    def keep(self, module: ModuleType, *, tables: bool = False) -> None:
        """Remember ``module``'s public and private names (not its dunders) as they are now;
        a module already kept stays as it was first kept."""
        if any(kept is module for kept, _ in self._kept):
            return
        names = {k: v for k, v in vars(module).items() if not k.startswith("__")}
        self._kept.append((module, names))
        if tables:
            for value in names.values():
                if type(value) in (dict, list, set):
                    self._tables.append((value, type(value)(value)))

    def restore(self) -> list[tuple[ModuleType, str, object]]:
        """Put every kept name back; (module, name, what was there) for each one changed."""
        replaced: list[tuple[ModuleType, str, object]] = []
        for module, names in self._kept:
            now = vars(module)
            for name, value in names.items():
                current = now.get(name, _MISSING)
                if current is not value:
                    replaced.append((module, name, current))
                    now[name] = value
        for table, contents in self._tables:
            _refill(table, contents)
        return replaced

    def put_back(self, replaced: list[tuple[ModuleType, str, object]]) -> None:
        """Undo :meth:`restore`: set the names it replaced to what they were."""
        for module, name, value in replaced:
            if value is _MISSING:
                vars(module).pop(name, None)
            else:
                vars(module)[name] = value


def _refill(table: dict[Any, Any] | list[Any] | set[Any], contents: Any) -> None:
    """Give ``table`` back ``contents``, comparing nothing (a student's ``__eq__`` may raise)."""
    if isinstance(table, dict):
        if len(table) == len(contents) and all(
            k in table and table[k] is v for k, v in contents.items()
        ):
            return
        table.clear()
        table.update(contents)
    elif isinstance(table, list):
        same_length = len(table) == len(contents)
        if same_length and all(a is b for a, b in zip(table, contents, strict=True)):
            return
        table[:] = contents
    else:
        table.clear()
        table.update(contents)
