"""The clock of a check run in this process: a thread, or a trace hook.

:func:`run_check` runs a check in a daemon thread while the caller waits in slices (a kernel
interrupt lands at once); an overrunning check gets :class:`StopStudent` raised in it for
:data:`STOP_SECONDS`, then counts as stuck (:func:`stuck_threads`). Without threads
(Pyodide, or ``set_isolation("trace")``) a trace hook reads the clock (:func:`run_traced`).
The clock is the grader's own: ``time.monotonic = ...`` moves no deadline.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import CodeType, FrameType
from typing import Any, Final, Literal, TypeAlias, get_args

from ctxlab.errors import CtxlabError, shown
from ctxlab.lab.grading.calls import Failed, Trial
from ctxlab.lab.grading.declare import Row
from ctxlab.lab.grading.perform import claim_tool
from ctxlab.lab.grading.text import COLON, StopStudent, Text, exception_text, same
from ctxlab.lab.grading.usage import GradingUsageError

#: How long a thread is asked to stop before it counts as stuck (and the backstop's grace).
STOP_SECONDS: Final = 0.5
_WAIT_SLICE: Final = 0.1  # how often the waiting thread wakes (a kernel interrupt lands)
_STOP_SLICE: Final = 0.005  # the pause between two stop requests
_STARVED: Final = 1.0  # a wait slice this much late: the check held the GIL in C code

#: The grader's clock and ``threading``'s methods, bound when grading loaded (a student's
#: ``threading.Thread.is_alive = lambda self: True`` changes none of the grader's waits).
clock: Final = time.monotonic
_start, _join, _alive = threading.Thread.start, threading.Thread.join, threading.Thread.is_alive

#: The stop is raised only in code outside this folder: the grader's own code runs to its end.
_GRADER: Final = os.path.dirname(os.path.abspath(__file__)) + os.sep

Isolation: TypeAlias = Literal["auto", "process", "in-process", "trace"]
ISOLATIONS: Final[tuple[Isolation, ...]] = get_args(Isolation)
ENV_VAR: Final = "CTXLAB_ISOLATION"
_isolation: list[Isolation | None] = [None]  # None: the environment variable, else "auto"
_threads: list[bool | None] = [None]  # can this Python start a thread? (checked once)


@dataclass(frozen=True)
class Outcome:
    """How one check failed (None: it passed), what the function printed, whether a call
    ran ctxlab's reference; ``stop``, when set, is the detail of every later row."""

    detail: Text | None
    output: str = ""
    output_cut: int = 0
    used_reference: bool = False
    stop: Text | None = None


#: The detail of every check after one that did not return in time.
NOT_RUN = Text(
    "not run: an earlier call of this lab did not return in time",
    "未运行：本实验前面的一次调用没有按时返回",
)


def at(trial: Trial) -> Text:
    """The label of the latest call, as a prefix of a detail (empty before any call)."""
    return trial.current + COLON if trial.current is not None else same("")


def hung(trial: Trial, limit: float, starved: float = 0.0) -> Text:
    """The detail of a check that did not return within ``limit`` s; ``starved``: how long
    the grader's thread could not run (the check held the GIL in C code)."""
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


def attempt(row: Row, trial: Trial, through: tuple[type[BaseException], ...]) -> Text | None:
    """Run ``row``'s check: None when it passed, else how it failed (``through`` pass)."""
    try:
        row.run(trial)
    except Failed as failure:
        return failure.text
    except through:
        raise
    except BaseException as error:  # the result could not even be read
        text = exception_text(error)  # never raises; lets StopStudent through
        return at(trial) + Text(
            f"the result could not be checked ({text}); is it the type the reference returns?",
            f"无法检查返回结果（{text}）；返回值的类型和参考实现一致吗？",
        )
    return None


def outcome(trial: Trial, detail: Text | None, output: str, stop: Text | None = None) -> Outcome:
    """How a check on ``trial`` ended: ``detail`` (None: passed), what it printed."""
    return Outcome(detail, output, trial.output_cut, trial.used_reference, stop)


def run_check(
    row: Row,
    function: Callable[..., Any],
    arg_names: tuple[str, ...],
    limit: float,
    references: frozenset[CodeType] = frozenset(),
) -> Outcome:
    """Run ``row``'s check on ``function`` for ``limit`` s, in a daemon thread (or under the
    trace hook). A kernel interrupt stops the check thread and is raised again."""
    trial = Trial(function, arg_names, references=references)
    box: list[Text | None] = []  # empty: it did not end in time
    stop = _Stop()

    def target() -> None:
        try:
            box.append(attempt(row, trial, (StopStudent,)))
        except StopStudent:
            pass
        finally:
            stop.close()

    starved = 0.0
    if use_trace():  # no threads (Pyodide), or set_isolation("trace")
        overran = not run_traced(target, limit)
    else:
        thread = threading.Thread(target=target, name=f"ctxlab-check-{row.key}", daemon=True)
        begun = clock()
        try:  # an interrupt may land while the thread starts: it is stopped all the same
            _start(thread)
            starved = _wait(thread, limit, begun)
        except BaseException:  # a kernel interrupt: the check must not outlive it
            _stop_thread(thread, stop)
            raise
        overran = _alive(thread) or not box
        if overran:
            _stop_thread(thread, stop)
        overran = overran or starved > max(_STARVED, limit)  # it held the GIL past the limit
    if overran or not box:
        return outcome(trial, hung(trial, limit, starved), trial.output, NOT_RUN)
    return outcome(trial, box[0], trial.output)


def _wait(thread: threading.Thread, limit: float, begun: float) -> float:
    """Wait for ``thread`` at most ``limit`` s from ``begun``; how long this thread was
    starved of the GIL."""
    deadline = begun + limit
    starved = clock() - begun
    while _alive(thread):
        now = clock()
        left = deadline - now
        if left <= 0:
            break
        asked = min(left, _WAIT_SLICE)
        _join(thread, asked)
        starved = max(starved, clock() - now - asked)
    return starved


_STUCK: list[threading.Thread] = []


def stuck_threads() -> int:
    """How many check threads that could not be stopped are still running."""
    _STUCK[:] = [thread for thread in _STUCK if _alive(thread)]
    return len(_STUCK)


class _Stop:
    """Stops sent into one thread until it calls :meth:`close`; none after, so a stop never
    lands in ``threading``'s clean-up (the ended thread would stay listed for ever)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.done = False
        self.sent = False
        self.ended = threading.Lock()  # released by close: a C call, unseen by the hook
        self.ended.acquire()

    def close(self) -> None:
        """Called by the stopped thread last, again while a stop lands: a stop sent before
        lands on ``_land`` (``PyThreadState_SetAsyncExc(id, NULL)`` cannot take it back on
        3.11), before or after ``done`` is set."""
        while True:
            try:
                _land()
                with self.lock:
                    if self.done:
                        return
                    self.done = True
                self.ended.release()
                _land()
                _land()
                return
            except StopStudent:
                continue

    def keep_sending(self, ident: int | None, seconds: float) -> None:
        """Send the stop every :data:`_STOP_SLICE` until it finishes or ``seconds`` pass."""
        deadline = clock() + seconds
        while not self.done:
            with self.lock:
                if not self.done and ident is not None:
                    self.sent = True
                    _raise_in(ident)
            if self.ended.acquire(timeout=_STOP_SLICE) or clock() >= deadline:
                return


def _land() -> None:
    """Nothing: entering a Python function is where a pending stop is raised."""


def _raise_in(ident: int) -> None:
    """Raise :class:`StopStudent` in thread ``ident`` (CPython; elsewhere nothing)."""
    try:
        import ctypes

        set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
    except Exception:  # pragma: no cover - no ctypes, or not CPython's
        return
    set_async_exc(ctypes.c_ulong(ident), ctypes.py_object(StopStudent))


class _TakenBack(Exception):
    """Sent to the grader's own thread, and caught there, by :func:`clear_stray_stop`."""


def clear_stray_stop() -> None:
    """Clear the note of a stop that no thread is taking (CPython; needed on 3.11).

    A stop sent to a thread blocked in C (``time.sleep``, a lock) keeps 3.11's "stop pending"
    flag set, and every call under a trace or profile function (the watch of :mod:`.perform`,
    a debugger) spins on it until that thread wakes: in a forked child, where the thread is
    gone, for ever. A stop sent to this thread and caught here clears the flag; the blocked
    thread is still stopped, when it next takes the interpreter lock (which sets it again)."""
    if sys.implementation.name != "cpython":
        return
    import ctypes

    try:  # the stop may land as soon as the call returns: inside the try
        ctypes.pythonapi.PyThreadState_SetAsyncExc(
            ctypes.c_ulong(threading.get_ident()), ctypes.py_object(_TakenBack)
        )
        _land()
    except _TakenBack:
        pass


def _stop_thread(thread: threading.Thread, stop: _Stop) -> None:
    """Stop a check thread for :data:`STOP_SECONDS`; one still alive is kept as stuck."""
    deadline = clock() + STOP_SECONDS
    while thread.ident is None and clock() < deadline:  # started, not yet running: its id
        time.sleep(_STOP_SLICE)
    try:
        stop.keep_sending(thread.ident, STOP_SECONDS)
        if stop.done:  # its last lines are the grader's
            _join(thread, STOP_SECONDS)
    finally:
        if _alive(thread):
            clear_stray_stop()
            if thread not in _STUCK:
                _STUCK.append(thread)


# ----------------------------------------------------------------------------------------
# The one switch


def set_isolation(mode: str) -> str:
    """Where ``check_implementation`` runs the student's function; returns the previous mode.

    ``"auto"``: a forked child on Linux (:mod:`.child`), else this process (macOS's ``fork``
    is unsafe, Windows and Pyodide have none). ``"process"``: a forked child wherever
    ``fork`` exists. ``"in-process"``: this process. ``"trace"``: this process under the
    trace hook, as in JupyterLite.
    """
    checked = _mode(mode, "set_isolation: mode", GradingUsageError)
    previous = get_isolation()
    _isolation[0] = checked
    return previous


def get_isolation() -> Isolation:
    """The mode set by :func:`set_isolation`, else ``CTXLAB_ISOLATION``, else ``"auto"``."""
    if _isolation[0] is not None:
        return _isolation[0]
    return _mode(os.environ.get(ENV_VAR, "").strip().lower() or "auto", ENV_VAR, CtxlabError)


def _mode(value: str, name: str, error: type[CtxlabError]) -> Isolation:
    if value not in ISOLATIONS:
        raise error(
            f"{name} must be one of {', '.join(ISOLATIONS)}; got {shown(value)}", option="mode"
        )
    return value


def process_available() -> bool:
    """Can a run be made in a forked child here? (POSIX with ``os.fork``, not Pyodide.)"""
    return hasattr(os, "fork") and sys.platform not in ("emscripten", "wasi", "win32")


def use_process() -> bool:
    """Should this notebook run call the student's function in a forked child?"""
    mode = get_isolation()
    linux = sys.platform.startswith("linux")
    return process_available() and (mode == "process" or (mode == "auto" and linux))


def threads_available() -> bool:
    """Can this Python start a thread? (Pyodide: no.) Checked once."""
    if _threads[0] is None:
        if sys.platform in ("emscripten", "wasi"):
            _threads[0] = False
        else:
            try:
                probe = threading.Thread(target=lambda: None, name="ctxlab-thread-probe")
                probe.start()
                probe.join()
                _threads[0] = True
            except RuntimeError:  # "can't start new thread"
                _threads[0] = False
    return bool(_threads[0])


def use_trace() -> bool:
    """Should the checks run under the trace hook rather than in a thread?"""
    return get_isolation() == "trace" or not threads_available()


# ----------------------------------------------------------------------------------------
# The trace hook


class _Deadline:
    """Raises :class:`StopStudent` once ``limit`` s have passed, on every later event outside
    the grader's code: sys.monitoring (3.12+), or a trace function. CPython unsets a trace
    function that raises; a profile function arms it again at the next call, and a caught
    stop when it is let go (a loop that catches it and calls nothing)."""

    _TOOL: Final = 3  # a sys.monitoring tool id of its own (perform's watch uses 4)

    def __init__(self, limit: float) -> None:
        self.deadline = clock() + limit
        self.expired = False
        self.thread = threading.get_ident()
        self._monitoring: Any = getattr(sys, "monitoring", None)
        self._previous_trace: Any = None

    def _overdue(self, code: CodeType) -> bool:
        if code.co_filename.startswith(_GRADER):  # the grader's own code runs to its end
            return False
        self.expired = self.expired or clock() > self.deadline
        return self.expired

    def _event(self, code: CodeType, *offsets: int) -> Any:
        if self._overdue(code) and threading.get_ident() == self.thread:
            raise StopStudent
        return None  # never DISABLE: every later event must still be seen

    def _trace(self, frame: FrameType, event: str, arg: Any) -> Any:
        if self._overdue(frame.f_code):
            raise StopStudent  # CPython then unsets the trace function
        return self._trace

    def _profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if sys.gettrace() is None:  # a stop, or the student's sys.settrace(None), took it
            sys.settrace(self._trace)
            frame.f_trace = self._trace

    def arm(self, frame: FrameType | None) -> None:
        """The trace function again on this thread, on ``frame`` and the student's frames
        that called it (a raising trace function is taken from its frame too)."""
        if threading.get_ident() != self.thread:
            return
        sys.settrace(self._trace)
        while frame is not None and not frame.f_code.co_filename.startswith(_GRADER):
            frame.f_trace = self._trace
            frame = frame.f_back

    def _watch(self, callback: Any) -> None:  # None: unset
        events = self._monitoring.events
        watched = (events.PY_START, events.PY_RESUME, events.JUMP)
        for event in watched:
            self._monitoring.register_callback(self._TOOL, event, callback)
        self._monitoring.set_events(self._TOOL, sum(watched) if callback else 0)

    def start(self) -> None:
        monitoring = self._monitoring
        if monitoring is not None and claim_tool(monitoring, self._TOOL, "ctxlab-time-limit"):
            self._watch(self._event)
            return
        self._monitoring = None  # 3.10/3.11, or the tool id taken: the trace function
        self._previous_trace = sys.gettrace(), sys.getprofile()
        StopStudent.released = self.arm
        sys.settrace(self._trace)
        sys.setprofile(self._profile)

    def stop(self) -> None:
        if self._monitoring is not None:
            try:  # noqa: SIM105 - contextlib is not the grader's code: the deadline stops it
                self._watch(None)
            except ValueError:  # the student's code may have freed the tool id already
                pass
            self._monitoring.free_tool_id(self._TOOL)
        else:
            StopStudent.released = None
            sys.setprofile(self._previous_trace[1])
            sys.settrace(self._previous_trace[0])


def _backstop(limit: float) -> _Stop:
    """A thread that stops this one once ``limit`` + :data:`STOP_SECONDS` have passed (a
    check that switched the hook off), until it finishes."""
    stop, ident = _Stop(), threading.get_ident()

    def watch() -> None:
        if not stop.ended.acquire(timeout=limit + STOP_SECONDS):
            stop.keep_sending(ident, float("inf"))

    threading.Thread(target=watch, name="ctxlab-backstop", daemon=True).start()
    return stop


def run_traced(target: Callable[[], None], limit: float) -> bool:
    """Run ``target()`` here for at most ``limit`` s (as far as Python events show, and a
    backstop thread on CPython); True when it finished in time."""
    deadline = _Deadline(limit)
    cpython = sys.implementation.name == "cpython"
    backstop = _backstop(limit) if cpython and threads_available() else None
    deadline.start()
    try:
        target()
    except StopStudent:
        deadline.expired = True
    finally:
        if backstop is not None:
            backstop.close()
        deadline.stop()
    return not deadline.expired and not (backstop is not None and backstop.sent)
