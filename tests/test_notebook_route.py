"""The notebook route stays healthy (issue 25, item 4).

``check_implementation`` runs the student's function in the notebook's own process. An
audit found functions that hung the kernel (a frozen ``time.monotonic``,
``sys.setswitchinterval(1000)``, a long C call holding the GIL, the trace hooks switched off
in the thread-free mode) or broke the next right answer (a thread that outlives its check
and then rewrites ctxlab's frozen objects with ``object.__setattr__``; a sleep in a loop that
swallows every ``BaseException``). Each test below runs one such function and then the
instructor solution of the lab's build-it cell (``tests/lite_cases.py``) in the same
process: the right answer gets every ✔ at normal speed, or the report says first, in English
and Chinese, that the kernel must be restarted and why.

Each case runs twice: with the student's function in the notebook's own process
(``in-process``: what macOS, Windows and Pyodide get) and in a forked copy of it that answers
the kernel's calls (``process``: the default on Linux, :mod:`ctxlab.lab.grading.child`).
Each runs in a child Python (``python -c``) with a wall-time bound, so a case that hangs
again fails here instead of hanging the test run; the child prints what it saw as JSON.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.teaching

REPO = Path(__file__).resolve().parent.parent
#: The wall-time bound of one case (a hostile run, then right answers): far above what a
#: healthy case takes on a loaded machine (2-5 s), far below the audit's hangs.
BOUND = 90

_PREAMBLE = """
import json, os, sys, threading, time
sys.path.insert(0, {tests!r})
import lite_cases
from ctxlab.lab import check_implementation, set_language
from ctxlab.lab import grading as g
from ctxlab.lab.grading import runner

g.set_time_limit(0.5)
_RIGHT = {{}}

def right(lab):
    if lab not in _RIGHT:
        _RIGHT[lab] = lite_cases.define(lab, lite_cases.right(lab))
    return {{g.lab_keyword(lab): _RIGHT[lab]}}

def seen(report):
    out = {{"passed": report.passed, "stuck": report.stuck_threads,
           "rows": [[r.key, r.passed, r.detail_en, r.detail_zh] for r in report.results]}}
    set_language("en"); out["notices_en"] = list(report.notices)
    set_language("zh"); out["notices_zh"] = list(report.notices)
    set_language("en")
    return out

def timed(lab, **functions):
    started = time.perf_counter()
    report = check_implementation(lab, **functions)
    out = seen(report)
    out["seconds"] = time.perf_counter() - started
    return out

RESULT = {{}}
"""

_EPILOGUE = """
# The right answers run with the default limit: a random row calls the function 100+
# times, which under the trace hook (mode "trace") takes longer than the hostile case's 0.5 s.
g.set_time_limit(10)
RESULT["before"] = timed(LAB, **right(LAB))  # the right answer, warm, before the case
g.set_time_limit(0.5)
RESULT["hostile"] = timed(LAB, **{g.lab_keyword(LAB): hostile})
for _ in range(AFTER_PAUSE_SLICES):
    time.sleep(0.1)
g.set_time_limit(10)
RESULT["after"] = timed(LAB, **right(LAB))
RESULT["switch_interval"] = sys.getswitchinterval()
RESULT["monotonic_is_builtin"] = type(time.monotonic).__name__ == "builtin_function_or_method"
RESULT.update(EXTRA() if "EXTRA" in globals() else {})
print("RESULT=" + json.dumps(RESULT))
sys.stdout.flush()
os._exit(0)  # a thread the case left running must not hold the child up
"""


ISOLATIONS = [
    "in-process",
    pytest.param(
        "process",
        marks=pytest.mark.skipif(
            not sys.platform.startswith("linux"), reason="the grading child: Linux"
        ),
    ),
]


@pytest.fixture(params=ISOLATIONS)
def isolation(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _case(
    body: str,
    isolation: str,
    *,
    lab: str = "11.2",
    pause: float = 0.0,
    mode: str = "auto",
) -> Any:
    """Run ``body`` (it defines ``hostile``) in a child, then the right answer; its JSON.
    ``mode="trace"``: in this process, the trace hook's clock (a forked child has no clock)."""
    switch = "trace" if mode == "trace" and isolation == "in-process" else isolation
    code = (
        _PREAMBLE.format(tests=str(REPO / "tests"))
        + f"LAB = {lab!r}\nAFTER_PAUSE_SLICES = {round(pause * 10)}\n"
        + f"g.set_isolation({switch!r})\n"
        + textwrap.dedent(body)
        + _EPILOGUE
    )
    env = {k: v for k, v in os.environ.items() if k != "CTXLAB_ISOLATION"}
    try:
        run = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=BOUND,
            cwd=REPO,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the case hung the kernel: no answer within {BOUND} s")
    lines = [line for line in run.stdout.splitlines() if line.startswith("RESULT=")]
    assert run.returncode == 0 and lines, run.stderr[-3000:]
    return json.loads(lines[-1][len("RESULT=") :])


def _first_row_hung(result: Any, limit: str = "0.5 s") -> None:
    hostile = result["hostile"]
    first, *rest = hostile["rows"]
    assert not first[1] and f"did not return within {limit}" in first[2], first
    assert all(row[2].startswith("not run") for row in rest)


def _right_answer_healthy(result: Any) -> None:
    """The next right answer: every row ✔, no notice, at normal speed."""
    after, before = result["after"], result["before"]
    assert before["passed"], before
    assert after["passed"] and all(row[1] for row in after["rows"]), after
    assert not after["notices_en"] and not after["stuck"], after["notices_en"]
    assert after["seconds"] < max(2.0, 5 * before["seconds"]), (before, after)


# ----------------------------------------------------------------------------------------
# Hangs of the kernel


@pytest.mark.parametrize("mode", ["thread", "trace"])
def test_a_frozen_clock_stops_no_time_limit(mode: str, isolation: str) -> None:
    result = _case(
        """
        def hostile(entries):
            import time
            time.monotonic = lambda: 0.0  # the grader's deadline would never come
            while True:
                pass
        """,
        isolation,
        mode=mode,
    )
    assert result["hostile"]["seconds"] < 10
    _first_row_hung(result)
    _right_answer_healthy(result)
    assert result["monotonic_is_builtin"]  # the student's clock did not outlast the run


def test_a_huge_switch_interval_does_not_starve_the_grader(isolation: str) -> None:
    result = _case(
        """
        sys.setswitchinterval(0.004)  # the notebook's own value, kept after the run
        def hostile(entries):
            sys.setswitchinterval(1000)  # the waiting thread would wait 1000 s for the GIL
            while True:
                pass
        """,
        isolation,
    )
    assert result["hostile"]["seconds"] < 10
    _first_row_hung(result)
    _right_answer_healthy(result)
    assert result["switch_interval"] == pytest.approx(0.004)


def test_a_long_c_call_holding_the_gil_is_named_once_it_returns(isolation: str) -> None:
    result = _case(
        """
        import ctypes
        hold = ctypes.PyDLL(None).usleep  # a PyDLL call keeps the GIL: like sum(range(10**10))
        def hostile(entries):
            hold(3_000_000)
            return []
        """,
        isolation,
    )
    first = result["hostile"]["rows"][0]
    assert not first[1] and first[2].startswith("path sys..a3: did not return within 0.5 s")
    if isolation == "process":  # the kernel ends the child at 0.5 + 0.5 + 1 s
        assert result["hostile"]["seconds"] < 2.9
        assert "its grading process was ended" in first[2]
        assert "评分进程已被结束" in first[3]
    else:  # nothing in the kernel can stop it: named once it returns
        assert 2.9 < result["hostile"]["seconds"] < 15
        assert "held Python's interpreter lock (the GIL) for 3 s" in first[2], first[2]
        assert "restart it (Kernel → Restart)" in first[2]
        assert "持有 Python 解释器锁（GIL）达 3 s" in first[3] and "重启 kernel" in first[3]
    _right_answer_healthy(result)


def test_a_catastrophic_regular_expression_is_stopped_between_its_calls(isolation: str) -> None:
    result = _case(
        """
        import re
        def hostile(entries):
            # backtracking inside the re module's C code: the GIL is held throughout
            n = 16
            while True:
                started = time.perf_counter()
                re.match(r"(a+)+$", "a" * n + "b")
                if time.perf_counter() - started > 1.5:
                    return []
                n += 1
        """,
        isolation,
    )
    first = result["hostile"]["rows"][0]
    assert not first[1] and "did not return within 0.5 s" in first[2], first
    _right_answer_healthy(result)


@pytest.mark.parametrize(
    "switch_off",
    [
        "sys.settrace(None); sys.setprofile(None)",
        pytest.param(
            # tool 3 is the clock's; a forked child has none (the grader times it from outside)
            "sys.monitoring.get_tool(3) and sys.monitoring.set_events(3, 0);"
            " sys.settrace(None); sys.setprofile(None)",
            marks=pytest.mark.skipif(sys.version_info < (3, 12), reason="sys.monitoring: 3.12+"),
        ),
    ],
    ids=["settrace-setprofile", "monitoring"],
)
def test_the_thread_free_limit_holds_when_its_hooks_are_switched_off(
    switch_off: str, isolation: str
) -> None:
    result = _case(
        f"""
        def hostile(entries):
            {switch_off}
            while True:
                pass
        """,
        isolation,
        mode="trace",
    )
    assert result["hostile"]["seconds"] < 10
    _first_row_hung(result)
    _right_answer_healthy(result)


# ----------------------------------------------------------------------------------------
# Threads that outlive their check


def test_a_thread_that_rewrites_ctxlabs_frozen_objects_later_is_undone_and_named(
    isolation: str,
) -> None:
    result = _case(
        """
        from types import MappingProxyType
        from ctxlab import fixtures as fx

        def hostile(active_path, **options):
            try:
                threading.Event().wait(2.0)  # blocked in C: the stop cannot land
            except BaseException:
                pass
            # long after its check: the chapter's prices, in two read-only objects
            cheap = {key: 1 for key in fx.opening_estimator._costs}
            object.__setattr__(fx.opening_estimator, "_costs", MappingProxyType(cheap))
            object.__setattr__(fx.OPENING_COSTS, "_items", {})

        def EXTRA():
            return {"prices": fx.opening_estimator(fx.opening_path()[2].message)}
        """,
        isolation,
        lab="11.3",
        pause=2.5,
    )
    _first_row_hung(result)
    assert result["prices"] == 4  # a1's price, as the chapter gives it
    if isolation == "process":  # the thread and its writes ended with the grading child
        _right_answer_healthy(result)
        return
    hostile = result["hostile"]  # it could not be stopped, and wrote after its run had ended
    assert hostile["stuck"] == 1 and not any("ctxlab's own" in n for n in hostile["notices_en"])
    after = result["after"]
    assert after["passed"] and all(row[1] for row in after["rows"]), after
    (notice_en,) = after["notices_en"]
    assert "ctxlab.fixtures.opening_estimator" in notice_en, notice_en
    assert "ctxlab.fixtures.OPENING_COSTS" in notice_en
    assert "Restart the kernel" in notice_en and "put back" in notice_en
    (notice_zh,) = after["notices_zh"]
    assert "opening_estimator" in notice_zh and "请重启 kernel" in notice_zh


def test_a_rebound_code_object_of_the_reference_is_put_back(isolation: str) -> None:
    result = _case(
        """
        import ctxlab.context

        def hostile(active_path, **options):
            ctxlab.context.build_context.__code__ = (lambda *a, **k: []).__code__
            ctxlab.window.ContextWindow.build = lambda self, *a, **k: []
            raise RuntimeError("rebound")

        def EXTRA():
            return {"code": ctxlab.context.build_context.__code__.co_name}
        """,
        isolation,
        lab="11.5",
    )
    assert not result["hostile"]["passed"]
    assert result["code"] == "build_context"
    after = result["after"]
    assert after["passed"], after
    if isolation == "process":  # changed in the forked copy only: the kernel's never were
        assert not any("ctxlab's own" in n for n in result["hostile"]["notices_en"])
    else:  # changed during the hostile run and put back before its next check: said so
        assert any("ctxlab.build_context" in n for n in result["hostile"]["notices_en"])
        assert any("ContextWindow" in n for n in result["hostile"]["notices_en"])
    assert not after["notices_en"]


def test_a_sleep_in_a_loop_that_swallows_every_stop_says_restart(isolation: str) -> None:
    result = _case(
        """
        def hostile(entries):
            while True:
                try:
                    time.sleep(0.01)
                except BaseException:
                    pass
        """,
        isolation,
    )
    _first_row_hung(result)
    if isolation == "process":  # the thread ended with the grading child
        _right_answer_healthy(result)
        return
    after = result["after"]
    assert after["passed"] and all(row[1] for row in after["rows"]), after
    assert after["stuck"] == 1
    assert any("Restart the kernel" in n for n in after["notices_en"])
    assert any("请重启 kernel" in n for n in after["notices_zh"])
    assert after["seconds"] < max(2.0, 5 * result["before"]["seconds"])


# ----------------------------------------------------------------------------------------
# The grading child (Linux)


def test_a_function_that_patches_threading_leaves_the_next_right_answer_right(
    isolation: str,
) -> None:
    result = _case(
        """
        def hostile(entries):
            threading.Thread.is_alive = lambda self: True  # every wait on a thread: for ever
            time.monotonic = lambda: 0.0
            sys.setswitchinterval(1000)
            return []
        """,
        isolation,
    )
    assert not result["hostile"]["passed"]
    assert result["hostile"]["seconds"] < 10
    _right_answer_healthy(result)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the grading child: Linux")
def test_a_function_that_ends_the_grading_process_fails_one_row_and_the_rest_run() -> None:
    result = _case(
        """
        def hostile(entries):
            entries = list(entries)  # walked twice below: an iterator too
            if any(e.id == "r0" for e in entries):  # only the leading-message check
                os._exit(3)
            return right(LAB)[g.lab_keyword(LAB)](entries)
        """,
        "process",
    )
    rows = result["hostile"]["rows"]
    ended = [row for row in rows if not row[1]]
    assert len(ended) == 1, rows
    assert "the grading process ended during this call (exit code 3)" in ended[0][2]
    assert "评分进程在这次调用中结束了" in ended[0][3]
    assert rows.index(ended[0]) < len(rows) - 1  # the checks after it ran, and passed
    _right_answer_healthy(result)


def test_the_grading_child_is_the_default_on_linux_and_can_be_chosen() -> None:
    from ctxlab.lab import grading as g
    from ctxlab.lab.grading import runner

    previous = g.set_isolation("auto")
    try:
        assert runner.use_process() == sys.platform.startswith("linux")
        g.set_isolation("in-process")
        assert not runner.use_process()
        with pytest.raises(g.GradingUsageError, match="mode must be one of") as caught:
            g.set_isolation("fork")
        assert caught.value.option == "mode"
    finally:
        g.set_isolation(previous)
    state: list[str] = []

    def group_interactions(entries: Any) -> Any:
        state.append("called")  # in the grading child: the notebook does not see it
        return []

    previous = g.set_isolation("process")
    try:
        g.check_implementation("11.2", group_interactions=group_interactions)
    finally:
        g.set_isolation(previous)
    assert state == [] or not runner.process_available()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the grading child: Linux")
def test_a_kernel_interrupt_ends_the_grading_child() -> None:
    import _thread
    import threading
    import time

    from ctxlab.lab import grading as g

    def group_interactions(entries: Any) -> Any:
        while True:
            pass

    def children() -> set[int]:
        """This process's children now (Linux: what the grading child runs on)."""
        found: set[int] = set()
        for task in Path("/proc/self/task").iterdir():
            with contextlib.suppress(OSError):  # a thread that ended meanwhile
                found.update(int(pid) for pid in (task / "children").read_text().split())
        return found

    before = children()  # other tests may have left children of this process (a subreaper)
    previous = (g.set_isolation("process"), g.set_time_limit(10))
    timer = threading.Timer(0.3, _thread.interrupt_main)
    started = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            g.check_implementation("11.2", group_interactions=group_interactions)
        assert time.perf_counter() - started < 3
        assert children() <= before  # the grading child was ended and reaped
        assert g.check_implementation("11.2", **g.reference_functions("11.2")).passed
    finally:
        timer.cancel()
        g.set_isolation(previous[0])
        g.set_time_limit(previous[1])


@pytest.mark.parametrize("mode", ["in-process", "trace", *ISOLATIONS[1:]])
def test_every_route_sends_the_student_fresh_arguments(mode: str) -> None:
    """In a child the arguments arrive unpickled; in this process they are sent as pickled
    copies too, so ``value.get("type") is not "compaction"`` (a literal the checks' own input
    shares) fails every route, as it fails on a record read from JSON."""
    import runpy

    from ctxlab.lab import grading as g

    path = REPO / "tests" / "feedback_corpus_8" / "lab11_1" / "type_compared_with_is.py"
    with pytest.warns(SyntaxWarning):
        function = runpy.run_path(str(path))["parse_compaction_entry"]
    previous = g.set_isolation(mode)
    try:
        report = g.check_implementation("11.1", parse_compaction_entry=function)
    finally:
        g.set_isolation(previous)
    assert "accepts_compact_1" in {result.key for result in report.failed}, str(report)
