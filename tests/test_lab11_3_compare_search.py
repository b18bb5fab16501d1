"""Lab 11.3's ``compare_builds`` searches the lab's budgets (issue 33, item 3).

At the chapter's 31/4/2 a ``build_context`` that skips a group that does not fit and goes on
to older ones gives the right answer; only another budget shows it is wrong. The comparison
searches every ``max_tokens`` of the lab's slider on the chapter's paths and shows the first
place where the student's function and the reference differ. Each wrong function here is
written the way a student would write it, from the objects alone (not from the reference).
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from ctxlab import (
    ContextResult,
    ContextTokens,
    build_context,
    current_system_message,
    group_interactions,
)
from ctxlab.lab import lab11_3
from ctxlab.lab.display import call_safely

pytestmark = pytest.mark.teaching


def _student_build(
    active_path: Any,
    *,
    max_tokens: Any,
    reserved_output: Any,
    safety_margin: Any,
    estimate_tokens: Any,
    order: str = "newest",
    stop: bool = True,
) -> ContextResult:
    """A student's build_context; ``order``/``stop`` choose the walk (the chapter's: newest
    first, stop at the first group that does not fit)."""
    entries = [entry for entry in active_path if entry.type == "message"]
    system = current_system_message(entry.message for entry in entries)
    system_cost = 0 if system is None else estimate_tokens(system)
    available = max(0, max_tokens - system_cost - reserved_output - safety_margin)
    groups = group_interactions(entries)
    walk = list(reversed(groups)) if order == "newest" else list(groups)
    kept: list[Any] = []
    used = 0
    overflow = False
    for group in walk:
        cost = sum(estimate_tokens(entry.message) for entry in group.entries)
        if used + cost <= available:
            kept.append(group)
            used += cost
        elif not kept and order == "newest" and stop:
            kept, used, overflow = [group], cost, True
            break
        elif stop:
            break
    if not kept and groups:  # nothing fitted: the newest group whole
        kept, used, overflow = (
            [groups[-1]],
            sum(estimate_tokens(entry.message) for entry in groups[-1].entries),
            True,
        )
    kept.sort(key=groups.index)
    reason: Any
    if overflow:
        reason = "single_group_overflow"
    elif len(kept) == len(groups):
        reason = "within_budget"
    else:
        reason = "trimmed"
    kept_entries = [entry for group in kept for entry in group.entries]
    return ContextResult(
        messages=((system,) if system is not None else ()) + tuple(e.message for e in kept_entries),
        kept_entry_ids=tuple(entry.id for entry in kept_entries),
        reason=reason,
        tokens=ContextTokens(
            max_tokens=max_tokens,
            system=system_cost,
            messages=used,
            reserved_output=reserved_output,
            safety_margin=safety_margin,
            available_for_messages=available,
            total=system_cost + used + reserved_output + safety_margin,
        ),
    )


def chapters_rule(active_path: Any, **options: Any) -> ContextResult:
    return _student_build(active_path, **options)


def skip_and_continue(active_path: Any, **options: Any) -> ContextResult:
    return _student_build(active_path, stop=False, **options)


def oldest_first(active_path: Any, **options: Any) -> ContextResult:
    return _student_build(active_path, order="oldest", **options)


def _marks(frame: Any) -> list[str]:
    return [str(mark) for mark in frame["same?"]]


def test_the_wrong_functions_agree_with_the_reference_somewhere() -> None:
    """Why the search is needed: at 31/4/2 skip-and-continue is every row ✔."""
    at_31 = lab11_3.compare_table(None, skip_and_continue, lab11_3.CHAPTER_BUDGET)
    assert _marks(at_31) == ["✔"] * len(at_31)


def test_a_right_function_shows_no_difference_and_where_the_search_looked() -> None:
    table = lab11_3.compare_builds(None, chapters_rule)
    assert _marks(table.data) == ["✔"] * len(table.data)
    assert "no difference found" in table.caption
    assert "max_tokens 0–60" in table.caption
    assert "the opening path without sys" in table.caption


def test_skip_and_continue_is_found_where_an_older_group_fits_after_a_newer_did_not() -> None:
    difference = lab11_3.find_difference(skip_and_continue)
    assert difference.found
    # 16 − 9 = 7 for messages: group 3 (15) overflows alone in the chapter's rule, while the
    # skipping function drops it and keeps group 2 (7) instead.
    assert difference.budget.max_tokens == 16
    assert difference.path_name == "the opening path"
    rows = dict(zip(difference.frame[""], difference.frame["reference"], strict=True))
    assert rows["reason"] == "single_group_overflow"
    got = dict(zip(difference.frame[""], difference.frame["yours"], strict=True))
    assert got["kept ids"] == "u2, a2"
    marks = _marks(difference.frame)
    assert difference.frame[""][marks.index("✘ first difference")] == "kept ids"
    table = lab11_3.compare_builds(None, skip_and_continue)
    assert table.caption == "first difference: the opening path, budget 16/4/2"


def test_oldest_first_is_found_at_the_chapters_budget() -> None:
    table = lab11_3.compare_builds(None, oldest_first)
    assert table.caption == "first difference: the opening path, budget 31/4/2"
    got = dict(zip(table.data[""], table.data["yours"], strict=True))
    assert got["kept ids"] == "u1, a1, u2, a2"


def test_a_difference_only_on_the_path_without_sys_is_found_there() -> None:
    def forgets_no_system(active_path: Any, **options: Any) -> ContextResult:
        if not any(getattr(e.message, "role", "") == "system" for e in active_path):
            raise ValueError("no system message")
        return build_context(active_path, **options)

    difference = lab11_3.find_difference(forgets_no_system)
    assert difference.found and difference.path_name == "the opening path without sys"
    assert "raised ValueError: no system message" in difference.frame["yours"][0]


def test_a_given_budget_compares_that_budget_only() -> None:
    table = lab11_3.compare_builds(None, skip_and_continue, lab11_3.CHAPTER_BUDGET)
    assert _marks(table.data) == ["✔"] * len(table.data)
    assert table.caption == "your build_context vs the reference, budget 31/4/2"


def test_a_hanging_function_is_a_row_and_the_search_stops() -> None:
    def hangs_at_20(active_path: Any, **options: Any) -> ContextResult:
        while options["max_tokens"] == 20:
            time.sleep(0.01)
        return build_context(active_path, **options)

    start = time.perf_counter()
    difference = lab11_3.find_difference(hangs_at_20, seconds=0.3)
    assert time.perf_counter() - start < 5
    assert difference.found and difference.budget.max_tokens == 20
    assert "did not return within 0.3 s" in difference.frame["yours"][0]


def test_without_threads_each_call_is_direct(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pyodide cannot start a thread: the comparison still runs, one direct call each."""

    def no_threads(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", no_threads)
    assert lab11_3.find_difference(skip_and_continue).budget.max_tokens == 16
    call = call_safely(lambda: 1 / 0)
    assert not call.ok and call.error.startswith("raised ZeroDivisionError")
    assert "not written yet" in call_safely(_raise_not_implemented).error


def _raise_not_implemented() -> None:
    raise NotImplementedError


def test_the_widget_starts_at_the_first_difference() -> None:
    box = lab11_3.build_budget_widget(student=skip_and_continue)
    assert box.controls["max_tokens"].value == 16
    assert "first difference: the opening path, budget 16/4/2" in box.outputs["compare"].value
    right = lab11_3.build_budget_widget(student=chapters_rule)
    assert right.controls["max_tokens"].value == 31
    assert "no difference found" in right.outputs["compare"].value


def test_a_hanging_function_costs_the_widget_one_time_limit() -> None:
    def hangs(active_path: Any, **options: Any) -> ContextResult:
        while True:
            time.sleep(0.01)

    start = time.perf_counter()
    box = lab11_3.build_budget_widget(student=hangs, seconds=0.3)
    assert time.perf_counter() - start < 3
    assert "did not return within 0.3 s" in box.outputs["compare"].value
    assert box.controls["max_tokens"].value == 31  # found at the chapter's budget


def test_without_threads_a_hanging_call_is_still_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pyodide (JupyterLite): no thread, so the grader's trace-hook clock ends the call."""
    from ctxlab.lab.grading import runner

    monkeypatch.setattr(runner, "threads_available", lambda: False)

    def hangs() -> None:
        while True:
            pass

    start = time.perf_counter()
    call = call_safely(hangs, seconds=0.3)
    assert time.perf_counter() - start < 5
    assert not call.ok and "did not return within 0.3 s" in call.error
    assert call_safely(lambda: 7, seconds=0.3).value == 7
