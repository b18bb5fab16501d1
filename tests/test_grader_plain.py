"""The grader judges plain data, never the student's objects (issue 17, item 7).

Hostile functions: values that claim equality with everything, ``str`` subclasses, results
too large to serialise, exceptions whose ``__str__`` raises, output that would bury the
report, and functions that are or call ctxlab's reference of the lab. After each, a right
answer still gets every row ✔ in the same process.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import pytest

import ctxlab
from ctxlab import ContextResult, fixtures
from ctxlab.lab import check_implementation
from ctxlab.lab.grading import reference_functions, set_time_limit
from ctxlab.lab.grading.labs import load
from ctxlab.lab.grading.perform import OUTPUT_LIMIT, perform
from ctxlab.lab.grading.plain import TooLarge, decode, encode

pytestmark = pytest.mark.teaching


def _failed(report: Any) -> set[str]:
    return {result.key for result in report.results if not result.passed}


def _right_answer_still_passes(lab: str) -> None:
    report = check_implementation(lab, **reference_functions(lab))
    assert report.passed, str(report)


class _EqualsAll:
    def __eq__(self, other: object) -> bool:
        return True

    def __ne__(self, other: object) -> bool:
        return False

    __hash__ = object.__hash__


class _EqualStr(str):
    def __eq__(self, other: object) -> bool:
        return True

    def __ne__(self, other: object) -> bool:
        return False

    __hash__ = str.__hash__


def _reference_result(*args: Any, **kwargs: Any) -> ContextResult:
    return ctxlab.build_context(*args, **kwargs)


def test_a_result_whose_fields_equal_everything_fails_11_3() -> None:
    def build_context(active_path: Any, **options: Any) -> Any:
        real = _reference_result(active_path, **options)
        fake: Any = _EqualsAll()
        return dataclasses.replace(real, kept_entry_ids=fake, reason=fake, tokens=fake)

    report = check_implementation("11.3", build_context=build_context)
    assert not report.passed
    assert "worked_example_31" in _failed(report)
    _right_answer_still_passes("11.3")


def test_a_str_subclass_that_equals_everything_fails_11_2() -> None:
    def group_interactions(entries: Any) -> Any:
        groups = ctxlab.group_interactions(entries)
        # Every entry renamed to an id that "equals" any id.
        return [
            dataclasses.replace(
                group,
                entries=tuple(
                    dataclasses.replace(entry, id=_EqualStr("fake")) for entry in group.entries
                ),
            )
            for group in groups
        ]

    report = check_implementation("11.2", group_interactions=group_interactions)
    assert "three_groups" in _failed(report)
    _right_answer_still_passes("11.2")


def test_encoding_reads_builtin_values_through_their_own_types() -> None:
    data = encode(("a", _EqualStr("b"), [1, 2.5, float("nan")], {"k": None}))
    back = decode(data)
    assert type(back) is tuple
    assert type(back[1]) is str and back[1] == "b" and back[1] != "c"
    assert back[2][:2] == [1, 2.5] and back[2][2] != back[2][2]
    assert back[3] == {"k": None}
    entry = fixtures.compact1()
    again = decode(encode(entry))
    assert type(again) is type(entry) and again == entry


def test_a_huge_result_is_refused_before_it_is_serialised() -> None:
    big = "x" * 10_000_000

    def build_context(active_path: Any, **options: Any) -> Any:
        real = _reference_result(active_path, **options)
        message = real.messages[0]
        return dataclasses.replace(
            real, messages=(dataclasses.replace(message, content=big),) * 300
        )

    start = time.perf_counter()
    report = check_implementation("11.3", build_context=build_context)
    elapsed = time.perf_counter() - start
    assert not report.passed
    assert "too large" in report.results[0].detail_en
    assert elapsed < 10, elapsed
    with pytest.raises(TooLarge):
        encode([big])
    deep: list[Any] = []
    for _ in range(1000):
        deep = [deep]
    with pytest.raises(TooLarge):
        encode(deep)
    _right_answer_still_passes("11.3")


class _Unprintable(ctxlab.CtxlabError):
    def __str__(self) -> str:
        raise KeyboardInterrupt


def test_an_exception_whose_str_raises_a_base_exception_is_a_failed_row() -> None:
    def group_interactions(entries: Any) -> Any:
        raise _Unprintable("boom")

    report = check_implementation("11.2", group_interactions=group_interactions)
    assert not report.passed
    details = " ".join(result.detail_en for result in report.results)
    assert "not run" not in details and "did not return" not in details
    assert "could not be shown" in details
    _right_answer_still_passes("11.2")


def test_printed_output_is_captured_bounded_and_counted() -> None:
    def noisy(entries: Any) -> Any:
        for index in range(10_000):
            print("line", index)
        return ctxlab.group_interactions(entries)

    record = perform(noisy, (fixtures.opening_path()[1:],), {})
    assert len(record["output"]) == OUTPUT_LIMIT
    assert record["output"].startswith("line 0\nline 1\n")
    total = sum(len(f"line {i}\n") for i in range(10_000))
    assert record["output_cut"] == total - OUTPUT_LIMIT
    assert "returned" in record


def test_calling_this_labs_reference_is_seen_and_earlier_labs_are_allowed() -> None:
    options = {
        "max_tokens": 31,
        "reserved_output": 4,
        "safety_margin": 2,
        "estimate_tokens": fixtures.opening_estimator,
    }
    codes = load("11.3").solution_code

    def wraps(active_path: Any, **kw: Any) -> Any:
        return ctxlab.build_context(active_path, **kw)

    def groups_only(active_path: Any, **kw: Any) -> Any:
        ctxlab.group_interactions(e for e in active_path if e.message.role != "system")
        return ctxlab.current_system_message([e.message for e in active_path])

    assert perform(wraps, (fixtures.opening_path(),), options, references=codes)["reference"]
    assert perform(ctxlab.build_context, (fixtures.opening_path(),), options, references=codes)[
        "reference"
    ]
    assert not perform(groups_only, (fixtures.opening_path(),), options, references=codes)[
        "reference"
    ]


def test_a_lookalike_class_is_named_not_trusted() -> None:
    @dataclasses.dataclass(frozen=True)
    class MyResult(ContextResult):
        def to_json(self) -> dict[str, Any]:
            return {"keptEntryIds": ["u2"]}

    def build_context(active_path: Any, **options: Any) -> Any:
        real = _reference_result(active_path, **options)
        return MyResult(real.messages, real.kept_entry_ids, real.reason, real.tokens)

    previous = set_time_limit(5)
    try:
        report = check_implementation("11.3", build_context=build_context)
    finally:
        set_time_limit(previous)
    assert not report.passed
    assert "MyResult" in report.results[0].detail_en
    _right_answer_still_passes("11.3")
