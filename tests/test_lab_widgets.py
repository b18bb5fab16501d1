"""Widget wiring without a kernel: set a control, read what the pure view then shows."""

from __future__ import annotations

import base64
import dataclasses
import re
import statistics
import time
from typing import Any

import pytest

pytest.importorskip("ipywidgets")

from ctxlab import CompactionSessionEntry, build_context
from ctxlab.lab import lab11_1, lab11_2, lab11_3, lab11_5

pytestmark = pytest.mark.teaching


def test_parse_widget_shows_the_parsers_verdict_for_the_chosen_case() -> None:
    box = lab11_1.build_parse_widget()
    assert "ctxlab-widget" in box._dom_classes
    verdict = box.outputs["verdict"]
    assert "ctxlab-parse-verdict" in verdict._dom_classes
    assert "accepted ✔" in verdict.value
    box.controls["case"].value = "files instead of changedFiles"
    assert "summary.files" in verdict.value
    assert lab11_1.parse_view("files instead of changedFiles") in verdict.value.replace(
        "&#x27;", "'"
    )
    assert box.controls["case"].options == lab11_1.parse_cases()


def test_grouping_widget_accepts_a_reorder_and_rejects_a_corrupt_id() -> None:
    box = lab11_2.build_grouping_widget()
    verdict = box.outputs["verdict"]
    assert "ctxlab-grouping-verdict" in verdict._dom_classes
    box.controls["order"].value = "r-read, r-test, calls"
    assert "accepted ✔" in verdict.value
    assert "[u3, r-read, r-test, calls, a3]" in verdict.value
    box.controls["r-test answers"].value = "unknown-1"
    assert "rejected ✘" in verdict.value and "unknown-1" in verdict.value
    assert "rejected" in box.outputs["pairing"].value


def test_grouping_variant_rejects_an_order_that_is_not_a_permutation() -> None:
    with pytest.raises(ValueError, match="order must arrange"):
        lab11_2.grouping_variant("calls, calls, r-read", "test-1")
    view = lab11_2.grouping_view("calls, r-test, r-read", "read-1")
    assert "two results" in view.verdict


def _figure_png(box: Any) -> bytes:
    """The PNG the budget widget's figure shows (an ``<img>`` with an inline data URI)."""
    found = re.search(r'src="data:image/png;base64,([^"]+)"', box.outputs["figure"].value)
    assert found, "the figure widget shows no inline PNG"
    return base64.b64decode(found.group(1))


def test_budget_widget_has_the_documented_sliders_and_hooks() -> None:
    box = lab11_3.build_budget_widget()
    sliders = box.controls
    assert [s.description for s in sliders.values()] == [
        "max_tokens",
        "reserved_output",
        "safety_margin",
    ]
    assert (sliders["max_tokens"].min, sliders["max_tokens"].max) == (0, 60)
    assert [s.value for s in sliders.values()] == [31, 4, 2]
    assert "ctxlab-reason" in box.outputs["reason"]._dom_classes
    assert "ctxlab-kept" in box.outputs["kept"]._dom_classes
    assert box.outputs["reason"].value == "reason: trimmed"
    assert box.outputs["kept"].value == "kept: u2, a2, u3, calls, r-test, r-read, a3"
    assert _figure_png(box).startswith(b"\x89PNG")


def test_moving_a_slider_redraws_reason_kept_and_ledger() -> None:
    box = lab11_3.build_budget_widget()
    before = _figure_png(box)
    box.controls["max_tokens"].value = 50
    assert box.outputs["reason"].value == "reason: within_budget"
    assert box.outputs["kept"].value.startswith("kept: u1, a1, u2")
    assert box.outputs["ledger"].value == lab11_3.budget_view(50, 4, 2).ledger_html
    assert _figure_png(box) != before
    box.controls["max_tokens"].value = 19
    assert box.outputs["reason"].value == "reason: single_group_overflow"
    box.controls["reserved_output"].value = 0
    box.controls["safety_margin"].value = 0
    assert box.outputs["reason"].value == "reason: trimmed"  # 19 - 3 = 16 keeps group 3


def test_budget_view_is_the_pure_function_behind_the_sliders() -> None:
    calls: list[tuple[int, int, int]] = []

    def render(m: int, r: int, s: int) -> lab11_3.BudgetView:
        calls.append((m, r, s))
        return lab11_3.budget_view(m, r, s)

    box = lab11_3.build_budget_widget(render)
    box.controls["safety_margin"].value = 5
    assert calls == [(31, 4, 2), (31, 4, 5)]
    view = lab11_3.budget_view(31, 4, 5)
    expected = lab11_3.ledger_styler(
        None, lab11_3.Budget(max_tokens=31, reserved_output=4, safety_margin=5)
    )
    assert view.ledger_html == expected.to_html()


def test_pure_budget_render_is_fast_enough_for_a_slider() -> None:
    """Generous bound (the target is 100 ms median; CI machines are shared)."""
    timings = []
    for budget in range(20, 35):
        start = time.perf_counter()
        lab11_3.budget_view(budget, 4, 2)
        timings.append(time.perf_counter() - start)
    assert statistics.median(timings) < 0.5


# -- the student's build_context beside the reference (issue 10, item 7) ------------------------


def _copy_of_reference(active_path: Any, **options: Any) -> Any:
    return build_context(active_path, **options)


def _always_within_budget(active_path: Any, **options: Any) -> Any:
    return dataclasses.replace(build_context(active_path, **options), reason="within_budget")


def _forgets_the_system_cost(active_path: Any, **options: Any) -> Any:
    result = build_context(active_path, **options)
    tokens = dataclasses.replace(result.tokens, system=0, total=result.tokens.total - 3)
    return dataclasses.replace(result, tokens=tokens)


def _stub(active_path: Any, **options: Any) -> Any:
    raise NotImplementedError("write build_context here")


def _never_returns(active_path: Any, **options: Any) -> Any:
    while True:
        pass


def _marks(frame: Any) -> list[str]:
    return [str(mark) for mark in frame["same?"]]


def test_compare_table_agrees_with_a_correct_build_context() -> None:
    frame = lab11_3.compare_table(None, _copy_of_reference)
    assert _marks(frame) == ["✔"] * len(frame)
    rows = dict(zip(frame[""], frame["yours"], strict=True))
    assert rows["kept ids"] == "u2, a2, u3, calls, r-test, r-read, a3"
    assert rows["reason"] == "trimmed"
    assert rows["messages"] == "system → u2 → a2 → u3 → calls → r-test → r-read → a3"


@pytest.mark.parametrize(
    ("student", "first"),
    [(_always_within_budget, "reason"), (_forgets_the_system_cost, "tokens.system")],
)
def test_compare_table_marks_the_first_difference(student: Any, first: str) -> None:
    frame = lab11_3.compare_table(None, student, lab11_3.Budget(max_tokens=31))
    marks = _marks(frame)
    assert marks.count("✘ first difference") == 1
    assert frame[""][marks.index("✘ first difference")] == first
    assert all(mark == "✔" for mark in marks[: marks.index("✘ first difference")])


@pytest.mark.parametrize(
    ("student", "words"),
    [
        (_stub, "not written yet"),
        (lambda active_path, **options: 42, "returned int, which is not a ContextResult"),
        (lambda active_path, **options: 1 / 0, "raised ZeroDivisionError"),
    ],
)
def test_compare_table_shows_a_broken_student_function_instead_of_raising(
    student: Any, words: str
) -> None:
    frame = lab11_3.compare_table(None, student)
    assert frame[""][0] == "your build_context"
    assert words in frame["yours"][0]
    assert frame["same?"][0] == "✘ first difference"
    assert "u2, a2, u3" in frame["reference"][1]  # the reference is still shown


def test_compare_table_stops_a_student_function_that_never_returns() -> None:
    start = time.perf_counter()
    frame = lab11_3.compare_table(None, _never_returns, seconds=0.5)
    assert time.perf_counter() - start < 5
    assert "did not return within 0.5 s" in frame["yours"][0]


def test_budget_widget_shows_the_students_build_beside_the_reference() -> None:
    box = lab11_3.build_budget_widget(student=_always_within_budget)
    panel = box.outputs["compare"]
    assert "ctxlab-compare" in panel._dom_classes
    assert "first difference" in panel.value  # 31: the reference says trimmed
    box.controls["max_tokens"].value = 40  # everything fits: the mutant is right there
    assert "first difference" not in panel.value
    box.controls["max_tokens"].value = 19
    assert "first difference" in panel.value and "single_group_overflow" in panel.value
    assert "compare" not in lab11_3.build_budget_widget().outputs


def test_budget_widget_survives_a_stub_and_a_crash() -> None:
    box = lab11_3.build_budget_widget(student=_stub)
    assert "not written yet" in box.outputs["compare"].value
    box.controls["max_tokens"].value = 20
    assert "not written yet" in box.outputs["compare"].value
    assert "reason:" in box.outputs["reason"].value  # the reference side still redraws


def test_resume_compare_reads_the_newest_summary() -> None:
    frame = lab11_5.compare_builds(_copy_of_reference, 31).data
    assert _marks(frame) == ["✔"] * len(frame)
    rows = dict(zip(frame[""], frame["reference"], strict=True))
    assert rows["messages"] == "system → summary(compact-1) → u4 → a4"

    def ignores_the_compaction(active_path: Any, **options: Any) -> Any:
        return build_context(
            [e for e in active_path if not isinstance(e, CompactionSessionEntry)], **options
        )

    frame = lab11_5.compare_builds(ignores_the_compaction, 31).data
    first = _marks(frame).index("✘ first difference")
    assert frame[""][first] == "kept ids"


def test_the_resume_widget_draws_the_bars_and_no_second_comparison() -> None:
    """Issue 32: the one 11.5 slider draws what its text describes (the two bars), and the
    second comparison widget (the student's build per budget) is gone."""
    box = lab11_5.build_resume_widget()
    assert set(box.outputs) == {"figure"} and set(box.controls) == {"max_tokens"}
    at31 = box.outputs["figure"].value
    assert at31 == lab11_5.render_resume_figure(31) and at31.startswith("<img alt=")
    box.slider.value = 60
    assert box.outputs["figure"].value == lab11_5.render_resume_figure(60) != at31
