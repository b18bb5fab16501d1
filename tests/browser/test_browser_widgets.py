"""Widgets answer real input in a real browser, with exactly what ctxlab computes.

11.3: the ``max_tokens`` slider is moved with the keyboard (focus the handle, arrow keys)
from 31 to a budget that keeps all three interaction groups, then to one where the newest
group alone overflows; the displayed reason and kept ids must equal ``build_context``'s.
(11.4's "first kept" dropdown was cut with the lab's rewrite, issue 32: its loop over every
entry is a code cell the student reads.)
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from browser_support import (
    NOTEBOOKS,
    screenshot,
    set_slider,
    slider,
    wait_kernel_idle,
)

import ctxlab
from ctxlab import fixtures

pytestmark = pytest.mark.browser

BUDGET_NOTEBOOK = "11.3-budgeted-context.ipynb"


def expected_display(
    max_tokens: int, reserved_output: int = 4, safety_margin: int = 2
) -> tuple[str, str]:
    """What the 11.3 widget must show for this budget, computed by ctxlab itself."""
    result = ctxlab.build_context(
        fixtures.opening_path(),
        max_tokens=max_tokens,
        reserved_output=reserved_output,
        safety_margin=safety_margin,
        estimate_tokens=fixtures.opening_estimator,
    )
    return f"reason: {result.reason}", "kept: " + ", ".join(result.kept_entry_ids)


def shown_text(page: Any, css_class: str) -> str:
    return " ".join(page.locator(f".ctxlab-widget .{css_class}").first.inner_text().split())


def wait_for_text(page: Any, css_class: str, wanted: str) -> None:
    """Wait until the widget element with css_class shows wanted (whitespace-normalised)."""
    element = page.locator(f".ctxlab-widget .{css_class}").first
    with contextlib.suppress(Exception):  # on a timeout the assertion names both texts
        page.wait_for_function(
            "([node, wanted]) => node.innerText.split(/\\s+/).join(' ').trim() === wanted",
            arg=[element.element_handle(), wanted],
            timeout=20_000,
        )
    assert shown_text(page, css_class) == wanted


def _require(name: str) -> None:
    if not (NOTEBOOKS / name).is_file():
        pytest.fail(f"notebooks/{name} is missing: the browser test needs it")


def test_budget_slider_follows_build_context(notebook_page: Any) -> None:
    _require(BUDGET_NOTEBOOK)
    page = notebook_page(BUDGET_NOTEBOOK)

    control = slider(page, "max_tokens")
    control.scroll_into_view_if_needed()
    handle = control.locator(".noUi-handle").first
    assert handle.get_attribute("aria-valuenow") in {"31", "31.0", "31.00"}
    reason, kept = expected_display(31)
    assert (reason, kept) == ("reason: trimmed", "kept: u2, a2, u3, calls, r-test, r-read, a3")
    wait_for_text(page, "ctxlab-reason", reason)
    wait_for_text(page, "ctxlab-kept", kept)
    page.locator(".ctxlab-widget").first.scroll_into_view_if_needed()
    screenshot(page, "11.3-slider-max_tokens-31")

    for budget, wanted_reason in ((40, "within_budget"), (19, "single_group_overflow")):
        set_slider(page, "max_tokens", budget)
        reason, kept = expected_display(budget)
        assert reason == f"reason: {wanted_reason}", "the chosen budget no longer shows the case"
        wait_kernel_idle(page)  # every queued re-render done: the final state is shown
        wait_for_text(page, "ctxlab-reason", reason)
        wait_for_text(page, "ctxlab-kept", kept)
        screenshot(page, f"11.3-slider-max_tokens-{budget}")

    all_groups = expected_display(40)[1]
    assert all_groups == "kept: u1, a1, u2, a2, u3, calls, r-test, r-read, a3"
