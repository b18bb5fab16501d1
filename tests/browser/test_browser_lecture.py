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
    LECTURE_CSS,
    LECTURE_SETTINGS,
    NOTEBOOKS,
    REPO,
    cell_source,
    drag_slider,
    max_execution_count,
    open_notebook,
    run_all_cells,
    save_notebook,
    screenshot,
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

    # `make lecture` passes the options this server got (LECTURE_SERVER_ARGS).
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert f"LECTURE_CSS := {LECTURE_CSS.relative_to(REPO).as_posix()}" in makefile
    assert "--LabApp.custom_css=True" in makefile
    assert "--ServerApp.tornado_settings=static_custom_path=$(CURDIR)/$(LECTURE_CSS)" in makefile

    # lecture/custom/custom.css widens the prompt column: no "[1]:" is cut to "[1…".
    code_px = float(overrides["code-font-size"].removesuffix("px"))
    prompt_px = page.evaluate(
        "() => parseFloat(getComputedStyle(document.querySelector('.jp-InputPrompt')).width)"
    )
    assert prompt_px >= 4 * code_px, f"prompt column {prompt_px}px at {code_px}px code"
    clipped = page.evaluate(
        """() => [...document.querySelectorAll('.jp-InputPrompt, .jp-OutputPrompt')]
            .filter(p => p.textContent.trim() && p.scrollWidth > p.clientWidth)
            .map(p => p.textContent.trim())"""
    )
    assert clipped == [], f"prompts cut off at the lecture font size: {clipped}"
    screenshot(page, "lecture-11.3-jupyterlab")


def select_on_slide(page: Any, slide: Any, cell: Any) -> None:
    """Select cell on a RISE slide by clicking its prompt, so that it stays selected.

    RISE's auto_select ("code") selects the slide's first code cell auto_select_timeout
    (450 ms) after the slide shows; a click before that is undone. So: wait for that
    first selection, click, and check that the cell is still the selected one a second
    later (click again if it is not).
    """
    slide.locator(".jp-CodeCell.jp-mod-selected").first.wait_for(state="visible", timeout=90_000)
    selected = "node => node.classList.contains('jp-mod-selected')"
    for _ in range(5):
        cell.locator(".jp-InputPrompt").first.click()
        page.wait_for_timeout(1_000)
        if cell.evaluate(selected) and slide.locator(".jp-CodeCell.jp-mod-selected").count() == 1:
            return
    raise AssertionError("the widget cell on the RISE slide could not be selected")


def test_lecture_rise_slide_has_a_live_slider(lecture_server: Any, browser_context: Any) -> None:
    """Open /rise/<11.3> at the widget's slide, run its cell there, and drag the slider.

    The notebook is first run in JupyterLab (Run All) and saved, as a lecturer would before
    presenting; the RISE page shares that kernel. The widget cell is then executed on the
    slide itself (its prompt clicked, then Ctrl+Enter, which stays on the slide); its new
    execution count proves the slider on the slide is the view of that fresh run. The
    slider is dragged with the mouse: on a slide reveal.js takes the arrow keys.
    """
    widget_cell = stored_widget_cells(NOTEBOOKS / BUDGET_NOTEBOOK)[0]
    source = cell_source(NOTEBOOKS / BUDGET_NOTEBOOK, widget_cell).strip().splitlines()[0]
    lab = browser_context.new_page()
    open_notebook(lab, lecture_server, BUDGET_NOTEBOOK, workspace="lecture-rise-11-3")
    run_all_cells(lab)
    save_notebook(lab)
    ran_in_lab = max_execution_count(lab)

    slides = browser_context.new_page()
    slides.goto(
        lecture_server.url(f"rise/{BUDGET_NOTEBOOK}", activeCellIndex=str(widget_cell)),
        wait_until="domcontentloaded",
    )
    current = slides.locator(".reveal .slides section.present")
    # RISE selects the first code cell of the slide (auto_select "code"); the widget cell
    # is found by its source.
    cell = current.locator(".jp-CodeCell", has_text=source).first
    cell.wait_for(state="visible", timeout=90_000)
    # The widget manager of RISE's own JupyterLab loaded: the saved view is already live.
    cell.locator(".ctxlab-widget .widget-slider").first.wait_for(state="visible", timeout=90_000)
    select_on_slide(slides, current, cell)
    slides.keyboard.press("Control+Enter")  # run in place (Shift+Enter would leave the slide)
    prompt = cell.locator(".jp-InputArea-prompt").first
    slides.wait_for_function(
        "([node, after]) => { const m = /^\\[(\\d+)\\]:$/.exec(node.textContent.trim());"
        " return !!m && Number(m[1]) > after; }",
        arg=[prompt.element_handle(), ran_in_lab],
        timeout=90_000,
    )
    cell.locator(".ctxlab-widget .widget-slider").first.wait_for(state="visible", timeout=90_000)
    assert current.locator(".jp-CodeCell", has_text=source).count() == 1, "left the slide"
    wait_for_text(slides, "ctxlab-reason", expected_display(31)[0])
    screenshot(slides, "lecture-11.3-rise-31")

    drag_slider(slides, "max_tokens", 40)
    reason, kept = expected_display(40)
    wait_for_text(slides, "ctxlab-reason", reason)
    wait_for_text(slides, "ctxlab-kept", kept)
    assert current.locator(".jp-CodeCell", has_text=source).count() == 1, "left the slide"
    screenshot(slides, "lecture-11.3-rise-40")
