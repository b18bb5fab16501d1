"""The 11.3 budget widget's picture carries alt text in a real browser (issue 18, item 5).

The figure is an ``<img alt="…">`` inside the widget (ipywidgets' Image has no alt text);
its alt is the figure's own (``budget_alt_text``), and moving the ``max_tokens`` slider
with the keyboard from 31 to 40 changes it to exactly what ctxlab says for 40.
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from browser_support import NOTEBOOKS, set_slider, wait_kernel_idle

from ctxlab.lab import lab11_3

pytestmark = pytest.mark.browser

NOTEBOOK = "11.3-budgeted-context.ipynb"


def expected_alt(max_tokens: int) -> str:
    return lab11_3.budget_alt_text(
        lab11_3.budget_ledger(None, lab11_3.Budget(max_tokens=max_tokens))
    )


def wait_for_alt(page: Any, wanted: str) -> str:
    image = page.locator(".ctxlab-widget .ctxlab-figure img").first
    with contextlib.suppress(Exception):  # on a timeout the assertion shows both texts
        page.wait_for_function(
            "([node, wanted]) => node.getAttribute('alt') === wanted",
            arg=[image.element_handle(), wanted],
            timeout=20_000,
        )
    return str(image.get_attribute("alt"))


def test_budget_widget_image_has_alt_text_that_follows_the_slider(notebook_page: Any) -> None:
    if not (NOTEBOOKS / NOTEBOOK).is_file():
        pytest.fail(f"notebooks/{NOTEBOOK} is missing: the browser test needs it")
    page = notebook_page(NOTEBOOK)
    first = expected_alt(31)
    assert first.startswith("Budget of max_tokens 31:")
    assert wait_for_alt(page, first) == first
    image = page.locator(".ctxlab-widget .ctxlab-figure img").first
    assert image.evaluate("node => node.naturalWidth > 0")  # the PNG itself loaded
    try:
        set_slider(page, "max_tokens", 40)
        wait_kernel_idle(page)
        later = expected_alt(40)
        assert later != first and "reason within_budget" in later
        assert wait_for_alt(page, later) == later
    finally:  # the page is shared with the other browser tests: leave the widget as found
        set_slider(page, "max_tokens", 31)
        wait_kernel_idle(page)
