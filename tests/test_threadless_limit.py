"""The time limit without threads (issue 19, item 2): ``set_isolation("trace")``.

In JupyterLite (Pyodide) no thread can be started, so ``check_implementation`` runs each
check in the calling thread under a trace hook that reads the clock
(:mod:`ctxlab.lab.grading.runner`). Here the same hook is chosen on CPython, and the hostile
functions of a student are each a ✘ row: an endless loop, a loop that catches
``BaseException`` (the hook raises again on the next turn), deep recursion, a huge print.
A right answer is ✔ afterwards, and nothing of the hook is left behind.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ctxlab.errors import CtxlabError
from ctxlab.lab import check_implementation
from ctxlab.lab import grading as g
from ctxlab.lab.grading import runner

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lite_cases

pytestmark = pytest.mark.teaching


@pytest.fixture
def trace_mode() -> Iterator[None]:
    previous_limit = g.set_time_limit(0.5)
    previous_isolation = g.set_isolation("trace")  # the hook, in this process
    try:
        yield
    finally:
        g.set_time_limit(previous_limit)
        g.set_isolation(previous_isolation)


def _copy_of_reference(entries: Any) -> Any:
    """A right answer written by a student: the instructor solution of Lab 11.2."""
    return _solution("11.2")(entries)


def _solution(lab: str) -> Any:
    if lab not in _SOLUTIONS:
        _SOLUTIONS[lab] = lite_cases.define(lab, lite_cases.right(lab))
    return _SOLUTIONS[lab]


_SOLUTIONS: dict[str, Any] = {}


def _assert_hung_then_not_run(report: g.LabReport, started: float) -> None:
    assert time.perf_counter() - started < 10
    first, *rest = report.results
    assert not first.passed and "did not return within 0.5 s" in first.detail_en, first
    assert "0.5 s 内没有返回" in first.detail_zh
    assert rest and all(not r.passed and r.detail_en.startswith("not run") for r in rest)


def _no_hook_left() -> None:
    assert type(sys.stdout).__name__ != "_Capture" and type(sys.stderr).__name__ != "_Capture"
    assert sys.gettrace() is None
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None:
        assert monitoring.get_tool(3) is None
    assert not [
        t
        for t in threading.enumerate()
        if t.name.startswith("ctxlab-check-") and t.is_alive()  # an ended one may stay listed
    ]


def test_the_mode_is_chosen_by_function_or_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    saved = runner._isolation[0]
    g.set_isolation("in-process")
    try:
        assert runner.threads_available()  # CPython: threads, so in-process uses them
        assert not runner.use_trace()
        g.set_isolation("trace")
        assert runner.use_trace() and g.get_isolation() == "trace"
        with pytest.raises(g.GradingUsageError, match="mode must be one of") as caught:
            g.set_isolation("fast")
        assert caught.value.option == "mode"
        runner._isolation[0] = None  # as if never set: the environment decides
        monkeypatch.setenv("CTXLAB_ISOLATION", "trace")
        assert runner.use_trace()
        monkeypatch.setenv("CTXLAB_ISOLATION", "threads")
        with pytest.raises(CtxlabError, match="CTXLAB_ISOLATION"):
            runner.use_trace()
    finally:
        runner._isolation[0] = saved


def test_without_threads_auto_uses_the_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "_threads", [False])  # as in Pyodide
    previous = g.set_isolation("auto")
    try:
        assert runner.use_trace()
        g.set_isolation("in-process")  # a thread's clock asked for, but there are none
        assert runner.use_trace()
    finally:
        g.set_isolation(previous)


@pytest.mark.usefixtures("trace_mode")
def test_an_endless_loop_is_a_failed_row() -> None:
    def group_interactions(entries: object) -> object:
        while True:
            pass

    started = time.perf_counter()
    report = check_implementation("11.2", group_interactions=group_interactions)
    _assert_hung_then_not_run(report, started)
    assert report.results[0].detail_en.startswith("path sys..a3: ")
    _no_hook_left()


@pytest.mark.usefixtures("trace_mode")
def test_a_loop_that_catches_base_exception_is_stopped_all_the_same() -> None:
    caught: list[str] = []

    def group_interactions(entries: object) -> object:
        while True:
            try:
                while True:
                    pass
            except BaseException as error:  # a student's "never give up"
                caught.append(type(error).__name__)

    started = time.perf_counter()
    report = check_implementation("11.2", group_interactions=group_interactions)
    _assert_hung_then_not_run(report, started)
    # 3.10/3.11 (a trace function): the student's except sees each stop, and the next event
    # stops it again. 3.12+ (sys.monitoring): a stop raised at a jump is not even catchable.
    assert set(caught) <= {"StopStudent"}
    assert caught or sys.version_info >= (3, 12)
    _no_hook_left()


_CALLS_NOTHING = textwrap.dedent(
    """
    from ctxlab.lab import grading as g
    g.set_isolation("trace")
    g.set_time_limit(0.5)

    def group_interactions(entries):
        while True:
            try:
                while True:
                    pass
            except BaseException:  # and calls nothing a profile function would see
                pass

    report = g.check_implementation("11.2", group_interactions=group_interactions)
    print(report.results[0].detail_en)
    print(report.results[1].detail_en)
    """
)


def test_a_loop_that_catches_every_stop_and_calls_nothing_is_stopped_too() -> None:
    # 3.10/3.11: CPython unsets the trace function that raised the stop, and nothing calls
    # the profile function that would arm it again; the caught stop arms it when it is let
    # go. In a Python of its own, with a time limit: without that, it never ends.
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    run = subprocess.run(
        [sys.executable, "-c", _CALLS_NOTHING],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    first, second = run.stdout.splitlines()
    assert first == "path sys..a3: did not return within 0.5 s (an endless loop? a blocking call?)"
    assert second.startswith("not run: ")


@pytest.mark.usefixtures("trace_mode")
def test_deep_recursion_is_a_failed_row() -> None:
    def group_interactions(entries: object) -> object:
        return group_interactions(entries)

    report = check_implementation("11.2", group_interactions=group_interactions)
    assert not report.passed
    assert "raised RecursionError" in report.results[0].detail_en
    assert all("not run" not in r.detail_en for r in report.results)
    _no_hook_left()


@pytest.mark.usefixtures("trace_mode")
def test_a_huge_print_is_cut_and_an_endless_print_stopped() -> None:
    def group_interactions(entries: Any) -> object:
        print("x" * 5_000_000)
        return _copy_of_reference(entries)

    g.set_time_limit(5)  # room for a loaded machine: this one must pass
    report = check_implementation("11.2", group_interactions=group_interactions)
    assert report.passed, str(report)
    assert len(str(report)) < 200_000
    g.set_time_limit(0.5)

    def endless(entries: Any) -> object:
        n = 0
        while True:
            print("line", n)
            n += 1

    started = time.perf_counter()
    report = check_implementation("11.2", group_interactions=endless)
    _assert_hung_then_not_run(report, started)
    _no_hook_left()


@pytest.mark.usefixtures("trace_mode")
def test_a_slow_check_after_passing_ones_is_the_one_reported() -> None:
    def group_interactions(entries: Any) -> object:
        if any(e.id == "r0" for e in entries):  # only the leading-message check hangs
            for _ in range(2000):
                time.sleep(0.01)
        return _copy_of_reference(entries)

    g.set_time_limit(3)  # room for a loaded machine: the checks before must pass
    report = check_implementation("11.2", group_interactions=group_interactions)
    keys = [r.key for r in report.results]
    hung = keys.index("message_before_first_user")
    assert all(r.passed for r in report.results[:hung]), str(report)
    assert "did not return within 3 s" in report.results[hung].detail_en
    assert all(r.detail_en.startswith("not run") for r in report.results[hung + 1 :])


@pytest.mark.usefixtures("trace_mode")
@pytest.mark.parametrize("lab", g.LABS)
def test_a_right_and_a_wrong_answer_give_the_same_rows_as_with_threads(lab: str) -> None:
    g.set_time_limit(10)
    right, wrong = lite_cases.right(lab), lite_cases.wrong(lab)
    traced = [lite_cases.rows(lab, right), lite_cases.rows(lab, wrong)]
    _no_hook_left()
    g.set_isolation("in-process")
    threaded = [lite_cases.rows(lab, right), lite_cases.rows(lab, wrong)]
    assert traced == threaded
    assert all(passed for _, passed in traced[0])
    assert not all(passed for _, passed in traced[1])
