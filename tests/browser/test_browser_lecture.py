"""Lecture mode: the projector settings apply, and 11.3 runs as RISE slides with a live slider.

The server is started as ``make lecture`` starts it: ``JUPYTERLAB_SETTINGS_DIR`` points at
(a copy of) the repository's ``lecture/settings``. The expected font sizes and theme are
read from those settings files, so changing them there is all a lecturer has to do.
"""

from __future__ import annotations

from typing import Any

import json5
import pytest
from browser_support import (
    LECTURE_SETTINGS,
    NOTEBOOKS,
    open_notebook,
    run_all_cells,
    save_notebook,
    screenshot,
    set_slider,
    stored_widget_cells,
)
from test_browser_widgets import BUDGET_NOTEBOOK, expected_display, wait_for_text

pytestmark = pytest.mark.browser

THEMES = LECTURE_SETTINGS / "@jupyterlab" / "apputils-extension" / "themes.jupyterlab-settings"


def lecture_theme() -> dict[str, Any]:
    settings: dict[str, Any] = json5.loads(THEMES.read_text(encoding="utf-8"))
    return settings


def css_variable(page: Any, name: str) -> str:
    value: str = page.evaluate(
        "name => getComputedStyle(document.documentElement).getPropertyValue(name).trim()", name
    )
    return value


def test_lecture_settings_reach_jupyterlab(lecture_server: Any, browser_context: Any) -> None:
    wanted = lecture_theme()
    overrides = wanted["overrides"]

    # The server reads the shipped folder: the settings API reports the lecture values.
    answer = lecture_server.api("GET", "lab/api/settings/@jupyterlab/apputils-extension:themes")
    assert answer["settings"]["theme"] == wanted["theme"]
    assert answer["settings"]["overrides"]["code-font-size"] == overrides["code-font-size"]

    page = browser_context.new_page()
    open_notebook(page, lecture_server, BUDGET_NOTEBOOK, workspace="lecture-11-3")
    page.wait_for_function(
        "theme => document.body.dataset.jpThemeName === theme", arg=wanted["theme"]
    )
    assert css_variable(page, "--jp-code-font-size") == overrides["code-font-size"]
    assert css_variable(page, "--jp-content-font-size1") == overrides["content-font-size1"]
    assert css_variable(page, "--jp-ui-font-size1") == overrides["ui-font-size1"]
    code_size = page.locator(".jp-CodeCell .cm-content").first.evaluate(
        "node => getComputedStyle(node).fontSize"
    )
    assert code_size == overrides["code-font-size"]
    assert page.evaluate("document.body.dataset.jpThemeLight") == "false"
    screenshot(page, "lecture-11.3-jupyterlab")


def test_lecture_rise_slide_has_a_live_slider(lecture_server: Any, browser_context: Any) -> None:
    """Open /rise/<11.3> at the widget's slide, run its cell there, and drive the slider.

    The notebook is first run in JupyterLab (Run All) and saved, as a lecturer would before
    presenting; the RISE page shares that kernel. Its widget cell is then executed on the
    slide itself (Ctrl+Enter, which stays on the slide), so the slider on the slide is a live view.
    """
    widget_cell = stored_widget_cells(NOTEBOOKS / BUDGET_NOTEBOOK)[0]
    lab = browser_context.new_page()
    open_notebook(lab, lecture_server, BUDGET_NOTEBOOK, workspace="lecture-rise-11-3")
    run_all_cells(lab)
    save_notebook(lab)

    slides = browser_context.new_page()
    slides.goto(
        lecture_server.url(f"rise/{BUDGET_NOTEBOOK}", activeCellIndex=str(widget_cell)),
        wait_until="domcontentloaded",
    )
    current = slides.locator(".reveal .slides section.present")
    cell = current.locator(".jp-CodeCell.jp-mod-selected").first
    cell.wait_for(state="visible", timeout=90_000)
    slides.wait_for_function(
        "() => document.querySelector('.reveal') && !!window.getComputedStyle", timeout=30_000
    )
    cell.locator(".jp-InputPrompt").first.click()
    slides.keyboard.press("Control+Enter")  # run in place (Shift+Enter would leave the slide)
    current.locator(".ctxlab-widget .widget-slider").first.wait_for(state="visible", timeout=90_000)
    wait_for_text(slides, "ctxlab-reason", expected_display(31)[0])
    screenshot(slides, "lecture-11.3-rise-31")

    set_slider(slides, "max_tokens", 40)
    reason, kept = expected_display(40)
    wait_for_text(slides, "ctxlab-reason", reason)
    wait_for_text(slides, "ctxlab-kept", kept)
    screenshot(slides, "lecture-11.3-rise-40")
