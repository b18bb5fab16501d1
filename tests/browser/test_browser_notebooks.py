"""Every notebook, run in JupyterLab in a real browser: no error output, live widgets.

nbval compares stored outputs but cannot see a widget render. Here each notebook is opened
in a real JupyterLab server, run with Run → Run All Cells, and then the page itself is
inspected: no cell shows an error (unless it is tagged ``raises-exception``), and every
widget output is a live view, not the text fallback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from browser_support import (
    cell_outputs,
    cells_allowed_to_raise,
    notebook_paths,
    screenshot,
    stored_widget_cells,
)

pytestmark = pytest.mark.browser

_FALLBACKS = ("Loading widget...", "Error displaying widget", "VBox(children=")


@pytest.mark.parametrize("notebook", notebook_paths(), ids=lambda path: path.stem)
def test_notebook_runs_in_jupyterlab(notebook: Path, notebook_page: Any) -> None:
    page = notebook_page(notebook.name)

    cells = cell_outputs(page)
    allowed = cells_allowed_to_raise(notebook)
    errors = {cell["index"]: cell["errors"] for cell in cells if cell["errors"]}
    unexpected = {index: text for index, text in errors.items() if index not in allowed}
    assert not unexpected, f"{notebook.name}: error output in cells {unexpected}"

    expected_widgets = stored_widget_cells(notebook)
    for index in expected_widgets:
        cell = cells[index]
        assert cell["liveViews"] >= 1, (
            f"{notebook.name}: cell {index} stores a widget but shows no live widget view"
            f" after Run All: {cell['text'][:300]!r}"
        )
    for cell in cells:
        for fallback in _FALLBACKS:
            assert fallback not in cell["text"], (
                f"{notebook.name}: cell {cell['index']} shows {fallback!r} instead of a widget"
            )
    live = page.locator(".jp-OutputArea-output .ctxlab-widget")
    if expected_widgets:
        assert live.count() >= 1, f"{notebook.name}: no .ctxlab-widget view in the page"

    page.locator(".jp-NotebookPanel .jp-WindowedPanel-outer").first.evaluate(
        "node => node.scrollTo(0, 0)"
    )
    screenshot(page, f"{notebook.stem}-top")
    if live.count():
        live.first.scroll_into_view_if_needed()
        screenshot(page, f"{notebook.stem}-widget")
