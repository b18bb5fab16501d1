"""Hostile functions under check (issue 17, items 3, 5 and 7).

Whatever the student's code does short of killing the process -- raising, hanging, catching
every exception, blocking in C, printing, monkeypatching ``ctxlab`` or the time limit --
is a ✘ row with a plain reason, and the next check in the same process gives all ✔ for a
right answer (:func:`reference_functions`). Each test below runs one such function, then
the right answer.
"""

from __future__ import annotations

import _thread
import functools
import runpy
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import ctxlab
import ctxlab.context
from ctxlab import fixtures as fx
from ctxlab.lab import check_implementation, set_language
from ctxlab.lab import grading as g
from ctxlab.lab.grading import runner
from ctxlab.lab.grading.calls import Trial
from ctxlab.lab.grading.report import CheckResult, LabReport
from ctxlab.lab.grading.text import bounded_output, exception_text, raised

pytestmark = pytest.mark.teaching

LIMIT = 0.5


@pytest.fixture(autouse=True)
def _short_limit() -> Iterator[None]:
    previous = g.set_time_limit(LIMIT)
    # The machinery of the notebook's own process (threads, stops, Pristine) is what these
    # tests are about: not the grading child of ctxlab.lab.grading.isolation.
    isolation = g.set_isolation("in-process")
    try:
        yield
    finally:
        g.set_time_limit(previous)
        g.set_isolation(isolation)
        set_language("en")


def _check_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("ctxlab-check-") and t.is_alive()]


def _right_answer_passes(*labs: str) -> None:
    """The next check in the same process: the reference gets every row ✔, no notice (its
    random rows draw for half the limit: 10 s leaves room for a loaded machine)."""
    previous = g.set_time_limit(10)
    try:
        reports = [
            check_implementation(lab, **g.reference_functions(lab)) for lab in labs or g.LABS
        ]
    finally:
        g.set_time_limit(previous)
    for report in reports:
        assert report.passed, str(report)
        assert all(r.passed for r in report.results)
        assert not report.notices and not report.used_reference and not report.stuck_threads


def _end(threads: list[threading.Thread]) -> None:
    for thread in threads:
        thread.join(5)
    assert not [t for t in threads if t.is_alive()]
    assert runner.stuck_threads() == 0


# ----------------------------------------------------------------------------------------
# Threads that outlive their check


def test_a_loop_that_catches_base_exception_is_kept_track_of_and_named() -> None:
    release = threading.Event()

    def spin() -> None:
        while not release.is_set():
            pass

    def group_interactions(entries: object) -> object:
        # The hostile part: it catches the stop request too. The loop spins in a function of
        # its own: a stop raised at its backward jump lands in the protected call (on 3.13 a
        # loop's backward jump lies outside the try around it). The nested handler catches a
        # stop that lands while the inner one is handling the last (a busy machine delays
        # the loop between the retried stops), so the thread really never ends on its own.
        while not release.is_set():
            try:
                try:  # noqa: SIM105 - contextlib.suppress's __exit__ could be stopped itself
                    spin()
                except BaseException:
                    pass
            except BaseException:
                pass
        raise RuntimeError("released")

    started = time.perf_counter()
    report = check_implementation("11.2", group_interactions=group_interactions)
    elapsed = time.perf_counter() - started
    threads = _check_threads()
    try:
        assert elapsed < LIMIT + runner.STOP_SECONDS + 1.5
        first, *rest = report.results
        assert "did not return within 0.5 s" in first.detail_en
        assert all(r.detail_en.startswith("not run") for r in rest)
        assert report.stuck_threads == 1 and runner.stuck_threads() == 1
        text = str(report)
        assert text.startswith("⚠ 1 check thread from an earlier check could not be stopped")
        assert "Restart the kernel" in text
        later = check_implementation("11.2", **g.reference_functions("11.2"))
        assert all(r.passed for r in later.results) and later.passed
        assert later.notices and "still running" in later.notices[0]
        set_language("zh")
        assert str(later).startswith("⚠ 前面的检查中有 1 个检查线程无法停止")
        assert "重启 kernel" in later._repr_html_()
        set_language("en")
    finally:
        release.set()
    _end(threads)
    _right_answer_passes("11.2", "11.3")


def test_a_loop_that_catches_base_exception_a_few_times_still_dies() -> None:
    caught = []

    def group_interactions(entries: object) -> object:
        while True:
            try:
                while True:
                    pass
            except BaseException as error:
                caught.append(error)
                if len(caught) >= 5:
                    raise

    report = check_implementation("11.2", group_interactions=group_interactions)
    assert "did not return within 0.5 s" in report.results[0].detail_en
    assert report.stuck_threads == 0 and not report.notices
    time.sleep(0.05)
    assert not _check_threads()
    _right_answer_passes("11.2")


def test_a_function_blocked_in_c_is_named_until_it_ends() -> None:
    block = threading.Event()

    def group_interactions(entries: object) -> object:
        block.wait()  # blocked in C: no async exception lands while it waits
        return []

    report = check_implementation("11.2", group_interactions=group_interactions)
    threads = _check_threads()
    try:
        assert "did not return within 0.5 s" in report.results[0].detail_en
        assert report.stuck_threads == 1
        assert report._repr_html_().index("could not be stopped") < report._repr_html_().index(
            "Lab 11.2"
        )
    finally:
        block.set()
    _end(threads)  # the pending stop request lands as soon as it wakes
    _right_answer_passes("11.2")


def test_a_kernel_interrupt_while_waiting_stops_the_check_thread() -> None:
    def group_interactions(entries: object) -> object:
        while True:
            pass

    g.set_time_limit(10)
    timer = threading.Timer(0.2, _thread.interrupt_main)
    started = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            check_implementation("11.2", group_interactions=group_interactions)
    finally:
        timer.cancel()
    assert time.perf_counter() - started < 3
    time.sleep(0.05)
    assert not _check_threads() and runner.stuck_threads() == 0
    g.set_time_limit(LIMIT)
    _right_answer_passes("11.2")


def test_the_time_limit_is_read_once_per_run() -> None:
    def group_interactions(entries: object) -> object:
        g.set_time_limit(1e9)
        while True:
            pass

    started = time.perf_counter()
    report = check_implementation("11.2", group_interactions=group_interactions)
    assert time.perf_counter() - started < LIMIT + runner.STOP_SECONDS + 1.5
    assert "did not return within 0.5 s" in report.results[0].detail_en
    assert g.get_time_limit() == LIMIT  # and the student's change does not last
    _right_answer_passes("11.2")


# ----------------------------------------------------------------------------------------
# Exceptions that cannot be shown


@pytest.mark.parametrize("escape", [KeyboardInterrupt, SystemExit, GeneratorExit])
def test_an_exception_whose_str_raises_is_a_failed_row(escape: type[BaseException]) -> None:
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise escape()

    class Nasty(KeyboardInterrupt):  # escapes the check itself, and cannot be shown either
        def __str__(self) -> str:
            raise escape()

    class Result(list[object]):
        def __iter__(self) -> Any:
            raise Nasty()

        def __len__(self) -> int:
            raise Nasty()

    def raising(entries: object) -> object:
        raise Unprintable()

    def returning(entries: object) -> object:
        return Result()

    report = check_implementation("11.2", group_interactions=raising)
    assert all(not r.passed for r in report.results)
    assert all("<the message could not be shown>" in r.detail_en for r in report.results)
    assert not any(
        "did not return" in r.detail_en or "not run" in r.detail_en for r in report.results
    )
    report = check_implementation("11.2", group_interactions=returning)
    assert all(not r.passed for r in report.results)
    assert not any(
        "did not return" in r.detail_en or "not run" in r.detail_en for r in report.results
    )
    _right_answer_passes("11.2")


def test_exception_text_never_raises_but_lets_the_stop_request_through() -> None:
    class Meta(type):
        @property
        def __name__(cls) -> str:  # type: ignore[override]
            raise SystemExit

    class Odd(Exception, metaclass=Meta):
        def __str__(self) -> str:
            raise KeyboardInterrupt

    assert exception_text(Odd()) == "object: <the message could not be shown>"
    assert raised(Odd()).en == "raised object: <the message could not be shown>"

    class Stopped(Exception):
        def __str__(self) -> str:
            raise runner.StopStudent()

    with pytest.raises(runner.StopStudent):
        exception_text(Stopped())


# ----------------------------------------------------------------------------------------
# Shared state: the estimator's table, ctxlab's module attributes


def test_the_estimator_table_cannot_be_changed_by_a_check() -> None:
    attempts: list[str] = []

    def build_context(active_path: object, **options: Any) -> object:
        estimator = fx.opening_estimator
        for attempt in (
            lambda: estimator._costs.__setitem__(next(iter(estimator._costs)), 999),
            lambda: estimator.costs.__setitem__("user: x", 1),  # type: ignore[attr-defined]
            lambda: setattr(estimator, "_costs", {}),
            lambda: delattr(estimator, "name"),
        ):
            try:
                attempt()
            except (TypeError, AttributeError) as error:
                attempts.append(type(error).__name__)
        raise RuntimeError("tried")

    report = check_implementation("11.3", build_context=build_context)
    assert not report.passed and "RuntimeError: tried" in report.results[0].detail_en
    assert attempts and set(attempts) <= {"TypeError", "AttributeError"}
    # every attempt of every call failed (the random row calls more than once: it shrinks)
    assert len(attempts) % 4 == 0 and len(attempts) >= 4 * len(report.results)
    _right_answer_passes("11.3", "11.5")


def test_rebinding_ctxlab_during_a_check_changes_nothing_later() -> None:
    originals = (
        ctxlab.context.build_context,
        ctxlab.build_context,
        fx.opening_path,
        fx.opening_estimator,
    )

    def build_context(active_path: object, **options: Any) -> object:
        broken = lambda *args, **kwargs: None  # noqa: E731
        ctxlab.context.build_context = broken
        ctxlab.build_context = broken
        fx.opening_path = broken
        fx.opening_estimator = broken
        raise RuntimeError("rebound")

    check_implementation("11.5", build_context=build_context)
    assert (
        ctxlab.context.build_context,
        ctxlab.build_context,
        fx.opening_path,
        fx.opening_estimator,
    ) == originals
    _right_answer_passes("11.3", "11.5")


def _rows(report: LabReport) -> list[tuple[str, bool, str]]:
    return [(r.key, r.passed, r.detail_en) for r in report.results]


def test_rebinding_grading_s_shared_modules_during_a_check_changes_nothing_later() -> None:
    """``expect.diff`` calls itself through its module's globals (every nested comparison),
    and the labs check with :mod:`.expect`: a student's function that rebinds them changes
    no later verdict (they are kept like ctxlab's own modules)."""
    import ctxlab.lab.grading.expect as expect

    folder = Path(__file__).resolve().parent / "misconceptions"
    # wrong functions whose mistakes show in a nested comparison (a field, the ledger)
    entry = runpy.run_path(str(folder / "lab11_1" / "tokens-rounded.py"))
    build = runpy.run_path(str(folder / "lab11_3" / "total-without-fixed.py"))

    def verdicts() -> list[list[tuple[str, bool, str]]]:
        return [
            _rows(
                check_implementation(
                    "11.1", seed=1, parse_compaction_entry=entry["parse_compaction_entry"]
                )
            ),
            _rows(check_implementation("11.3", seed=1, build_context=build["build_context"])),
        ]

    before = verdicts()
    assert all(not all(passed for _, passed, _ in rows) for rows in before)
    originals = (expect.diff, expect.compare_context)

    def parse_compaction_entry(value: object) -> object:
        expect.diff = lambda *args, **kwargs: None
        expect.compare_context = lambda *args, **kwargs: {}
        raise RuntimeError("rebound")

    try:
        report = check_implementation("11.1", parse_compaction_entry=parse_compaction_entry)
        assert not report.passed
        assert (expect.diff, expect.compare_context) == originals
        assert verdicts() == before
    finally:
        expect.diff, expect.compare_context = originals
    _right_answer_passes("11.1", "11.3")


def test_changing_ctxlabs_private_tables_during_a_check_changes_nothing_later() -> None:
    import ctxlab.compaction
    import ctxlab.entries

    labels = dict(ctxlab.compaction._LABELS)

    def build_context(active_path: object, **options: Any) -> object:
        ctxlab.compaction._LABELS.clear()
        ctxlab.entries._ENTRY_KEYS["compaction"] = ()
        raise RuntimeError("emptied")

    check_implementation("11.5", build_context=build_context)
    assert labels == ctxlab.compaction._LABELS
    _right_answer_passes("11.1", "11.4", "11.5")


def test_a_notebook_binding_is_kept_but_the_checks_see_ctxlab_as_it_was() -> None:
    original = ctxlab.context.build_context
    mine = lambda *args, **kwargs: None  # noqa: E731
    ctxlab.context.build_context = mine
    try:
        _right_answer_passes("11.3", "11.5")
        assert ctxlab.context.build_context is mine
    finally:
        ctxlab.context.build_context = original


def test_rebinding_before_a_lab_loads_does_not_change_its_reference() -> None:
    code = textwrap.dedent(
        """
        import ctxlab.context
        from ctxlab.lab.grading import check_implementation, reference_functions
        def group_interactions(entries):
            ctxlab.context.build_context = lambda *a, **k: None
            raise RuntimeError("rebound")
        check_implementation("11.2", group_interactions=group_interactions)
        ctxlab.context.build_context = lambda *a, **k: None  # and in the notebook
        for lab in ("11.3", "11.5"):
            report = check_implementation(lab, **reference_functions(lab))
            assert report.passed, str(report)
        print("ok")
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr


# ----------------------------------------------------------------------------------------
# The reference used; printed output


@pytest.mark.parametrize(
    "wrap",
    [
        lambda f: f,
        lambda f: functools.partial(f),
        lambda f: functools.wraps(f)(lambda *a, **k: f(*a, **k)),
    ],
    ids=["is", "partial", "wraps"],
)
def test_the_reference_itself_is_named_first_and_not_passed(
    wrap: Callable[[Callable[..., Any]], Callable[..., Any]],
) -> None:
    report = check_implementation("11.3", build_context=wrap(ctxlab.build_context))
    assert report.used_reference and not report.passed
    assert all(r.passed for r in report.results)  # the rows are kept
    lines = str(report).splitlines()
    assert lines[0].startswith("⚠ Your build_context is, or calls, ctxlab.build_context")
    assert "not passed" in lines[0] and lines[1].endswith("checks pass ✘")
    set_language("zh")
    assert str(report).startswith("⚠ 你的 build_context 就是（或调用了）ctxlab.build_context")
    page = report._repr_html_()
    rows = len(report.chapter_results)
    assert page.index("ctxlab-lab-report-notice") < page.index(f"通过 {rows}/{rows}")
    _right_answer_passes("11.3")


def test_the_core_parser_counts_as_lab_11_1s_reference() -> None:
    report = check_implementation("11.1", parse_compaction_entry=ctxlab.parse_session_entry)
    assert report.used_reference and not report.passed
    assert str(report).startswith("⚠ Your parse_compaction_entry is, or calls, ctxlab's")


def test_an_earlier_labs_reference_stays_allowed() -> None:
    report = check_implementation("11.2", **g.reference_functions("11.2"))
    assert report.passed
    report = check_implementation("11.4", create_compaction_entry=ctxlab.create_compaction_entry)
    assert report.used_reference  # 11.4's own reference is not
    assert check_implementation("11.4", **g.reference_functions("11.4")).passed


class _Talkative(Trial):
    """A Trial as the lead's output capture leaves it: printed text, a cut, a reference call."""

    def returns(self, label: Any, *args: Any, **kwargs: Any) -> Any:
        self.output, self.output_cut = "hello <b>\nsecond line", 7
        self.used_reference = True
        return super().returns(label, *args, **kwargs)


def test_the_runner_hands_on_output_and_reference_use(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "Trial", _Talkative)
    report = check_implementation("11.2", group_interactions=lambda entries: [])
    monkeypatch.undo()
    assert report.used_reference and not report.passed
    first = report.results[0]
    assert (first.output, first.output_cut) == ("hello <b>\nsecond line", 7)
    text = str(report)
    assert "    printed by your function:\n      hello <b>\n      second line\n" in text
    assert "    … 7 more characters cut" in text
    page = report._repr_html_()
    assert "hello &lt;b&gt;\nsecond line</pre>" in page and "printed by your function" in page
    set_language("zh")
    assert "你的函数打印的内容：" in str(report) and "… 另有 7 个字符被截去" in str(report)
    _right_answer_passes("11.2")


def test_printed_output_is_bounded() -> None:
    kept, cut = bounded_output("x" * 5000, 10)
    assert len(kept) == 2000 and cut == 3010
    kept, cut = bounded_output("line\n" * 100)
    assert kept.count("\n") == 39 and cut == 500 - len(kept)
    assert bounded_output("done\n") == ("done", 0)


def test_a_report_without_notices_or_output_reads_as_before() -> None:
    row = CheckResult("k", True, "a behaviour", "一个行为")
    report = LabReport("11.2", "group_interactions", (row,))
    assert str(report) == (
        "Lab 11.2 · group_interactions (the chapter's checks): 1/1 checks pass ✔\n✔ a behaviour"
    )
    assert "notice" not in report._repr_html_() and "<pre" not in report._repr_html_()


def _right_answer_passes_in_every_isolation(lab: str) -> None:
    """The right answer gets every row ✔ in this process and in a forked child (where the
    platform has one), while a thread of an earlier call is still blocked."""
    previous = g.set_time_limit(10)
    isolations = ("in-process", "process") if runner.process_available() else ("in-process",)
    try:
        for isolation in isolations:
            g.set_isolation(isolation)
            report = check_implementation(lab, **g.reference_functions(lab))
            assert report.passed and all(r.passed for r in report.results), (isolation, report)
    finally:
        g.set_time_limit(previous)
        g.set_isolation("in-process")


def test_a_check_left_blocked_in_c_leaves_the_next_checks_healthy() -> None:
    # CPython 3.11 kept the stop sent to a thread blocked in C pending for the whole process:
    # every later call under the watch spun on it, and a forked child (where that thread is
    # gone) for ever. The next right answer timed out on every row.
    released = threading.Event()

    def blocks(active_path: Any, **options: Any) -> Any:
        released.wait()

    try:
        report = check_implementation("11.4", create_compaction_entry=blocks)
        assert "did not return within" in report.results[0].detail_en
        _right_answer_passes_in_every_isolation("11.4")
    finally:
        released.set()
    _end(_check_threads())


def test_a_direct_call_left_blocked_leaves_the_next_checks_healthy() -> None:
    from ctxlab.lab.display import call_safely

    released = threading.Event()
    try:
        late = call_safely(lambda path: released.wait(), [], seconds=0.2)
        assert late.error == "did not return within 0.2 s (an endless loop?)"
        _right_answer_passes_in_every_isolation("11.2")
    finally:
        released.set()
    _end([t for t in threading.enumerate() if t.name == "ctxlab-student-call"])
