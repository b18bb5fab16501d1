"""Lecture fit (issue 11): a figure slide fits a 16:9 projector at 1280×720 without scrolling.

The 11.3 budget chart was the tallest figure under its code cell. Its slide is opened in RISE
with the lecture settings (the projector's font sizes) in a 1280×720 window, from the stored
outputs of the committed instructor edition (no kernel run needed), and the figure and the
code cell that draws it must both lie inside the window.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from browser_support import NOTEBOOKS, screenshot

pytestmark = pytest.mark.browser

SLIDE_NOTEBOOK = "11.3-budgeted-context.ipynb"
FIGURE_CALL = "lab11_3.budget_figure(path"
PROJECTOR = {"width": 1280, "height": 720}


def figure_cell_index() -> int:
    """The index of the code cell that draws the budget figure (it has a stored PNG)."""
    cells = json.loads((NOTEBOOKS / SLIDE_NOTEBOOK).read_text(encoding="utf-8"))["cells"]
    for index, cell in enumerate(cells):
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        has_png = any("image/png" in out.get("data", {}) for out in cell.get("outputs", []))
        if FIGURE_CALL in source and has_png:
            return index
    raise AssertionError(f"no cell of {SLIDE_NOTEBOOK} draws {FIGURE_CALL}… with a stored PNG")


def test_the_budget_figure_slide_fits_1280x720(chromium: Any, lecture_server: Any) -> None:
    index = figure_cell_index()
    context = chromium.new_context(viewport=PROJECTOR, device_scale_factor=1)
    context.set_default_timeout(90_000)
    try:
        page = context.new_page()
        page.goto(
            lecture_server.url(f"rise/{SLIDE_NOTEBOOK}", activeCellIndex=str(index)),
            wait_until="domcontentloaded",
        )
        current = page.locator(".reveal .slides section.present")
        cell = current.locator(".jp-CodeCell", has_text=FIGURE_CALL).first
        cell.wait_for(state="visible")
        image = cell.locator(".jp-OutputArea-output img").first
        image.wait_for(state="visible")
        page.wait_for_function("img => img.complete && img.naturalHeight > 0",
                               arg=image.element_handle())  # fmt: skip
        page.wait_for_timeout(1_000)  # reveal.js finishes its layout and transition
        box = image.bounding_box()
        code = cell.locator(".jp-InputArea").first.bounding_box()
        screenshot(page, "lecture-11.3-figure-slide-1280x720")
        assert box is not None and code is not None
        assert code["y"] >= 0, f"the code cell starts above the window: {code}"
        assert box["y"] + box["height"] <= PROJECTOR["height"], f"figure overflows: {box}"
        assert box["x"] + box["width"] <= PROJECTOR["width"], f"figure overflows: {box}"
    finally:
        context.close()
