"""A time limit without threads: the clock is read from a trace hook (issue 19, item 2).

:func:`~ctxlab.lab.grading.calls.run_check` normally runs a check in a daemon thread and
stops it from outside when it overruns. Where a thread cannot be started -- Pyodide, the
Python of JupyterLite, runs in WebAssembly without threads (``RuntimeError: can't start
new thread``) -- the check runs in the calling thread instead, under a hook that Python
calls as the code runs:

* Python 3.12+ (Pyodide 314 is Python 3.14): ``sys.monitoring`` events ``PY_START`` (every
  function entered, so a recursion is seen) and ``JUMP`` (every loop's back edge, so a
  ``while True: pass`` is seen). Each event reads the clock; once the limit has passed,
  every later event outside the grader's own code raises
  :class:`~ctxlab.lab.grading.perform.StopStudent` in the running code, so a student's
  ``except BaseException:`` inside a loop cannot swallow it for good: the next turn of the
  loop raises again.
* Python 3.10 and 3.11: ``sys.settrace`` (``call`` and ``line`` events). A trace function
  that raises is switched off by CPython, so a profile function (``sys.setprofile``: every
  call, of Python or C code) puts it back. There a loop that catches ``BaseException`` and
  calls nothing at all (``except BaseException: pass``) escapes the limit; on 3.12+ and in
  Pyodide it does not.

A student's code can switch the hook off (``sys.settrace(None)`` and ``sys.setprofile(None)``
on 3.10/3.11, ``sys.monitoring.set_events(3, 0)`` on 3.12+). Where a thread can be started
(CPython with ``CTXLAB_TIME_LIMIT_MODE=trace``), a *backstop* thread then stops the check
from outside, as :mod:`.runner` does, once the limit and :data:`BACKSTOP_SECONDS` have
passed; in Pyodide nothing can, and such a function that never returns freezes the page
(reload it). The clock is the grader's own (``time.monotonic`` bound when grading loaded),
so a student's ``time.monotonic = lambda: 0`` changes no deadline.

What the hook cannot stop: one long call into C (``sum(range(10**12))``, ``time.sleep(1e9)``)
runs no Python event until it returns. Deep recursion needs no hook: Python raises
``RecursionError``, which the grader reports as a failed row. A huge print is bounded by
the grader's capture of the output (:data:`~ctxlab.lab.grading.perform.OUTPUT_LIMIT`).

Which limiter is used is the *mode*:

``"auto"`` (default)
    threads where a thread can be started, the hook otherwise (checked once, by starting
    a thread that does nothing);
``"thread"`` / ``"trace"``
    always that one (``"thread"`` where threads do not exist falls back to the hook).

Set it with :func:`set_time_limit_mode` or the environment variable
``CTXLAB_TIME_LIMIT_MODE`` (read when no mode was set by the function), so the CPython
tests run the hook too (``tests/test_threadless_limit.py``).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from types import CodeType, FrameType
from typing import Any, Final, Literal, TypeAlias

from ctxlab.errors import CtxlabError, shown
from ctxlab.lab.grading.perform import StopStudent

__all__ = [
    "MODES",
    "TimeLimitMode",
    "get_time_limit_mode",
    "run_traced",
    "set_time_limit_mode",
    "threads_available",
    "use_trace",
]

TimeLimitMode: TypeAlias = Literal["auto", "thread", "trace"]
MODES: Final[tuple[TimeLimitMode, ...]] = ("auto", "thread", "trace")
ENV_VAR: Final = "CTXLAB_TIME_LIMIT_MODE"

#: The stop is raised only in code outside this folder (the grader's own code, the clean-up
#: of its output capture and reference watch included, always runs to its end): the
#: student's function, and whatever it calls.
_GRADER: Final = os.path.dirname(os.path.abspath(__file__)) + os.sep

#: The grader's clock, bound when grading loaded (a student's ``time.monotonic = ...``
#: changes no deadline).
_clock: Final = time.monotonic
#: How long after the limit the backstop thread stops a check whose hook was switched off.
BACKSTOP_SECONDS: Final = 0.5

_mode: list[TimeLimitMode | None] = [None]  # None: the environment variable, else "auto"
_threads: list[bool | None] = [None]  # can this Python start a thread? (checked once)


def set_time_limit_mode(mode: str) -> str:
    """Choose how a check's time limit is kept: ``"auto"``, ``"thread"`` or ``"trace"``.

    Returns the previous mode. ``"trace"`` runs the checks in the calling thread under a
    trace hook, as they run in JupyterLite (Pyodide has no threads).
    """
    if mode not in MODES:
        from ctxlab.lab.grading.usage import GradingUsageError

        raise GradingUsageError(
            f"set_time_limit_mode: mode must be one of {', '.join(MODES)}; got {shown(mode)}",
            option="mode",
        )
    previous = get_time_limit_mode()
    _mode[0] = mode  # checked against MODES above
    return previous


def get_time_limit_mode() -> TimeLimitMode:
    """The mode in force: the one set by :func:`set_time_limit_mode`, else
    ``CTXLAB_TIME_LIMIT_MODE``, else ``"auto"``."""
    if _mode[0] is not None:
        return _mode[0]
    value = os.environ.get(ENV_VAR, "").strip().lower() or "auto"
    if value not in MODES:
        raise CtxlabError(
            f"{ENV_VAR} must be one of {', '.join(MODES)}; got {shown(value)}", option="mode"
        )
    return value  # checked against MODES above


def threads_available() -> bool:
    """Can this Python start a thread? (Pyodide: no.) Checked once, then remembered."""
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
    mode = get_time_limit_mode()
    return mode == "trace" or not threads_available()


# ----------------------------------------------------------------------------------------
# The hook


class _Deadline:
    """Raises :class:`StopStudent` in the running code once ``limit`` seconds have passed."""

    _TOOL: Final = 3  # a sys.monitoring tool id of its own (perform's watch uses 4)

    def __init__(self, limit: float) -> None:
        self.deadline = _clock() + limit
        self.expired = False
        self.thread = threading.get_ident()
        self._monitoring: Any = getattr(sys, "monitoring", None)
        self._previous_trace: Any = None

    # -- the clock

    def _overdue(self, code: CodeType) -> bool:
        if code.co_filename.startswith(_GRADER):  # the grader's own code runs to its end
            return False
        if self.expired or _clock() > self.deadline:
            self.expired = True
            return True
        return False

    # -- Python 3.12+: sys.monitoring

    def _event(self, code: CodeType, *offsets: int) -> Any:
        if self._overdue(code) and threading.get_ident() == self.thread:
            raise StopStudent
        return None  # never DISABLE: every later event must still be seen

    # -- Python 3.10, 3.11 (and 3.12+ when the tool id is taken): sys.settrace

    def _trace(self, frame: FrameType, event: str, arg: Any) -> Any:
        if self._overdue(frame.f_code):
            raise StopStudent  # CPython then unsets the trace function: _profile re-arms it
        return self._trace

    def _profile(self, frame: FrameType, event: str, arg: Any) -> None:
        """On every call (Python or C): put the trace function back where a stop (or the
        student's ``sys.settrace(None)``) took it."""
        if sys.gettrace() is None:
            sys.settrace(self._trace)
            frame.f_trace = self._trace

    def start(self) -> None:
        monitoring = self._monitoring
        if monitoring is not None:
            try:
                monitoring.use_tool_id(self._TOOL, "ctxlab-time-limit")
            except ValueError:  # taken (a debugger?): the trace function instead
                self._monitoring = None
            else:
                events = monitoring.events
                monitoring.register_callback(self._TOOL, events.PY_START, self._event)
                monitoring.register_callback(self._TOOL, events.PY_RESUME, self._event)
                monitoring.register_callback(self._TOOL, events.JUMP, self._event)
                monitoring.set_events(self._TOOL, events.PY_START | events.PY_RESUME | events.JUMP)
                return
        self._previous_trace = sys.gettrace(), sys.getprofile()
        sys.settrace(self._trace)
        sys.setprofile(self._profile)

    def stop(self) -> None:
        monitoring = self._monitoring
        if monitoring is not None:
            events = monitoring.events
            try:  # the student's code may have freed the tool id already
                monitoring.set_events(self._TOOL, 0)
                for event in (events.PY_START, events.PY_RESUME, events.JUMP):
                    monitoring.register_callback(self._TOOL, event, None)
            except ValueError:
                pass
            monitoring.free_tool_id(self._TOOL)
        else:
            sys.setprofile(self._previous_trace[1])
            sys.settrace(self._previous_trace[0])


class _Backstop:
    """A thread that stops the calling thread from outside (``PyThreadState_SetAsyncExc``,
    again and again) once ``limit`` + :data:`BACKSTOP_SECONDS` have passed: for a check
    whose code switched the hook off. CPython only; never started where threads are not."""

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self.target = threading.get_ident()
        self.lock = threading.Lock()
        self.done = False
        # Held until the check ends: released by ``finish`` (a C call: the hook, still on,
        # sees no Python code of threading.py there).
        self.ended = threading.Lock()
        self.ended.acquire()
        self.fired = False
        self._thread = threading.Thread(target=self._watch, name="ctxlab-backstop", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _watch(self) -> None:
        if self.ended.acquire(timeout=self.limit + BACKSTOP_SECONDS):
            return
        import ctypes

        set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
        while True:
            with self.lock:
                if self.done:
                    return
                self.fired = True
                set_async_exc(ctypes.c_ulong(self.target), ctypes.py_object(StopStudent))
            if self.ended.acquire(timeout=0.005):
                return

    def finish(self) -> None:
        """Called by the checked thread last (again if a stop interrupts it): no stop is
        sent after this, and one sent before lands here, inside the caller's retry."""
        with self.lock:
            if self.done:  # already finished (a stop interrupted the caller after this)
                return
            self.done = True
        self.ended.release()
        _land()
        _land()


def _land() -> None:
    """Nothing: entering a Python function is where a pending stop is raised."""


def run_traced(target: Callable[[], None], limit: float) -> bool:
    """Run ``target()`` in this thread for at most ``limit`` seconds (as far as Python
    events show, and on CPython a backstop thread); True when it finished in time, False
    when it was stopped."""
    deadline = _Deadline(limit)
    backstop = (
        _Backstop(limit) if sys.implementation.name == "cpython" and threads_available() else None
    )
    if backstop is not None:
        backstop.start()
    deadline.start()
    try:
        target()
    except StopStudent:
        deadline.expired = True
    finally:
        while backstop is not None:  # a stop may land on the call itself: then again
            try:
                backstop.finish()
                break
            except StopStudent:
                continue
        deadline.stop()
    return not deadline.expired and not (backstop is not None and backstop.fired)
