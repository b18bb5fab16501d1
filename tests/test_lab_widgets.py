"""Widget wiring without a kernel: set a control, read what the pure view then shows."""

from __future__ import annotations

import statistics
import time

import pytest

pytest.importorskip("ipywidgets")

from ctxlab.lab import lab11_1, lab11_2, lab11_3

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
    assert bytes(box.outputs["figure"].value).startswith(b"\x89PNG")


def test_moving_a_slider_redraws_reason_kept_and_ledger() -> None:
    box = lab11_3.build_budget_widget()
    before = bytes(box.outputs["figure"].value)
    box.controls["max_tokens"].value = 50
    assert box.outputs["reason"].value == "reason: within_budget"
    assert box.outputs["kept"].value.startswith("kept: u1, a1, u2")
    assert box.outputs["ledger"].value == lab11_3.budget_view(50, 4, 2).ledger_html
    assert bytes(box.outputs["figure"].value) != before
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
    expected = lab11_3.ledger_styler(max_tokens=31, reserved_output=4, safety_margin=5)
    assert view.ledger_html == expected.to_html()


def test_pure_budget_render_is_fast_enough_for_a_slider() -> None:
    """Generous bound (the target is 100 ms median; CI machines are shared)."""
    timings = []
    for budget in range(20, 35):
        start = time.perf_counter()
        lab11_3.budget_view(budget, 4, 2)
        timings.append(time.perf_counter() - start)
    assert statistics.median(timings) < 0.5
