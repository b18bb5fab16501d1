"""The Chinese edition in a real JupyterLab, as ``make lab LANG=zh`` opens it (issue 12).

``notebooks/zh/instructor/11.3-budgeted-context.ipynb`` is opened in JupyterLab with its
interface in Chinese (the zh_CN language pack, set by ``notebooks/_settings/zh``), run with
运行 → 运行所有单元格, and checked:

* the interface is Chinese (the menu bar reads 文件, 编辑, 运行 …);
* no cell shows an error (except the cells tagged ``raises-exception``);
* the rendered notebook is Chinese: the title heading (实验 11.3), a table header in a
  cell's output, a self-check verdict (✔ 正确) and the budget widget's own text;
* the widget is live: moving its ``max_tokens`` slider from 31 to 40 with the keyboard
  changes the kept ids shown to exactly what ``build_context`` keeps at 40.

The screenshot is kept as ``artifacts/browser/zh-11.3.png`` (the top of the notebook) and
``zh-11.3-widget.png``. The offline slide deck of the Chinese edition (``make slides
LANG=zh``, in ``slides/zh/``) is checked like the English one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from browser_support import (
    REPO,
    VIEWPORT,
    ZH_INSTRUCTOR_NOTEBOOKS,
    LabServer,
    cell_outputs,
    cells_allowed_to_raise,
    open_deck_offline,
    open_notebook,
    run_all_cells,
    screenshot,
    wait_kernel_idle,
)

import ctxlab
from ctxlab import fixtures

pytestmark = pytest.mark.browser

NOTEBOOK = "11.3-budgeted-context.ipynb"
DECK = REPO / "slides" / "zh" / "11.3-budgeted-context.slides.html"
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


def kept_ids(max_tokens: int) -> list[str]:
    """The ids build_context keeps for the chapter's path at this budget (4 + 2 reserved)."""
    result = ctxlab.build_context(
        fixtures.opening_path(),
        max_tokens=max_tokens,
        reserved_output=4,
        safety_margin=2,
        estimate_tokens=fixtures.opening_estimator,
    )
    return list(result.kept_entry_ids)


def shown_ids(page: Any) -> list[str]:
    """The entry ids the budget widget's "kept" line shows, in order."""
    text = page.locator(".ctxlab-widget .ctxlab-kept").first.inner_text()
    known = {entry.id for entry in fixtures.opening_path()}
    return [word for word in re.findall(r"[A-Za-z0-9_-]+", text) if word in known]


def _require_notebook() -> None:
    if not (ZH_INSTRUCTOR_NOTEBOOKS / NOTEBOOK).is_file():
        pytest.fail(
            f"notebooks/zh/instructor/{NOTEBOOK} is missing: build the Chinese edition"
            " (python notebooks/_build/nbsource.py build, or make notebooks)"
        )


@pytest.fixture(scope="module")
def zh_page(chromium: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """The Chinese 11.3 notebook, opened in the Chinese JupyterLab (not run yet: the first
    test runs it, the second drives the widget of that same run)."""
    _require_notebook()
    server: LabServer = request.getfixturevalue("zh_lab_server")
    context = chromium.new_context(viewport=VIEWPORT, device_scale_factor=1)
    context.set_default_timeout(60_000)
    try:
        page = context.new_page()
        open_notebook(page, server, NOTEBOOK, workspace="zh-11-3")
        yield page
    finally:
        context.close()


_RAN: set[int] = set()


def _run_once(page: Any) -> None:
    """Run All, once per page (the widget test reuses the run of the first test)."""
    if id(page) not in _RAN:
        run_all_cells(page, language="zh")
        _RAN.add(id(page))


def test_chinese_notebook_runs_in_a_chinese_jupyterlab(zh_page: Any) -> None:
    page = zh_page
    menus = [label.strip() for label in page.locator(".lm-MenuBar-itemLabel").all_inner_texts()]
    assert {"文件", "编辑", "运行"} <= set(menus), f"the interface is not Chinese: {menus}"

    _run_once(page)

    allowed = cells_allowed_to_raise(ZH_INSTRUCTOR_NOTEBOOKS / NOTEBOOK)
    failing = {c["index"]: c["errors"] for c in cell_outputs(page) if c["errors"]}
    failing = {index: errors for index, errors in failing.items() if index not in allowed}
    assert failing == {}, f"cells with an error: {failing}"

    title = page.locator(".jp-MarkdownCell .jp-RenderedMarkdown h1").first
    title.scroll_into_view_if_needed()
    assert "实验 11.3" in title.inner_text()
    screenshot(page, "zh-11.3")

    headers = page.locator(".jp-OutputArea-output th").all_inner_texts()
    chinese_headers = [text for text in headers if HAN.search(text)]
    assert chinese_headers, f"no table header in the outputs is Chinese: {headers[:20]}"

    verdicts = page.locator(".jp-OutputArea-output .ctxlab-verdict").all_inner_texts()
    assert verdicts, "no self-check verdict was rendered"
    assert any(text.startswith("✔ 正确") for text in verdicts), verdicts
    assert not any("Correct" in text or "Not yet" in text for text in verdicts), verdicts


def test_chinese_budget_widget_is_live(zh_page: Any) -> None:
    page = zh_page
    _run_once(page)
    live = [c["index"] for c in cell_outputs(page) if c["liveViews"]]
    assert live, "no widget is live (rendered as a widget view) in the Chinese notebook"

    widget = page.locator(".ctxlab-widget").first
    widget.scroll_into_view_if_needed()
    text = widget.inner_text()
    assert HAN.search(text), f"the budget widget shows no Chinese: {text!r}"

    # The max_tokens slider is the one starting at the chapter's 31 (its label may be
    # translated, so it is found by its value).
    handles = widget.locator(".widget-slider .noUi-handle")
    starting = [handles.nth(i).get_attribute("aria-valuenow") for i in range(handles.count())]
    at_31 = [i for i, value in enumerate(starting) if value is not None and float(value) == 31]
    assert at_31, f"no slider starts at max_tokens=31: {starting}"
    handle = handles.nth(at_31[0])

    assert kept_ids(31) == ["u2", "a2", "u3", "calls", "r-test", "r-read", "a3"]
    assert shown_ids(page) == kept_ids(31)
    handle.focus()
    for _ in range(40 - 31):
        handle.press("ArrowRight")
    page.wait_for_function(
        "([node]) => node.getAttribute('aria-valuenow').startsWith('40')",
        arg=[handle.element_handle()],
        timeout=10_000,
    )
    wait_kernel_idle(page)
    page.wait_for_function(
        "([node]) => /\\bu1\\b/.test(node.innerText)",
        arg=[page.locator(".ctxlab-widget .ctxlab-kept").first.element_handle()],
        timeout=20_000,
    )
    assert kept_ids(40) == ["u1", "a1", "u2", "a2", "u3", "calls", "r-test", "r-read", "a3"]
    assert shown_ids(page) == kept_ids(40)
    widget.scroll_into_view_if_needed()
    screenshot(page, "zh-11.3-widget")


def test_chinese_slides_render_offline(browser_context: Any) -> None:
    if not DECK.is_file():
        pytest.fail(f"{DECK.relative_to(REPO)} is missing: run `make slides LANG=zh` first")
    page, blocked, errors = open_deck_offline(browser_context, DECK)
    title = page.locator(".reveal .slides section.present h1").first
    assert "实验 11.3" in (title.text_content() or "")
    page.locator(".reveal .jupyter-widgets").first.wait_for(state="attached", timeout=30_000)
    screenshot(page, "slides-zh-11.3-offline-first")
    assert blocked == [], f"the deck tried to reach the network: {blocked}"
    assert errors == [], f"JavaScript errors in the deck: {errors}"
