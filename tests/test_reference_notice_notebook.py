"""The student edition names the use of ctxlab's own solution (issue 17, item 3).

A student who writes ``from ctxlab import build_context`` in the build-it cell of Lab 11.3
instead of a function of their own runs the notebook as it is: the lab's check table must
say so first, in the edition's language, and not pass. The student edition is executed
with nbclient, up to the check cell, with only the build-it cell replaced.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.teaching

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
BUILD_IT = "11-3-b02"

NOTICES = {
    "en": "Your build_context is, or calls, ctxlab.build_context",
    "zh": "你的 build_context 就是（或调用了）ctxlab.build_context",
}
HEADLINES = {"en": "checks pass ✘", "zh": "项检查 ✘"}


def _check_cell_index(cells: list[nbformat.NotebookNode]) -> int:
    for index, cell in enumerate(cells):
        if cell.cell_type == "code" and 'check_implementation("11.3"' in cell.source:
            return index
    raise AssertionError("the 11.3 notebook has no check_implementation cell")


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_check_cell_names_ctxlabs_own_build_context(language: str) -> None:
    path = NOTEBOOKS / language / "student" / "11.3-budgeted-context.ipynb"
    notebook = nbformat.read(path, as_version=4)
    cells = notebook.cells
    build_it = next(i for i, cell in enumerate(cells) if cell.get("id") == BUILD_IT)
    check = _check_cell_index(cells)
    assert build_it < check
    trimmed = copy.deepcopy(notebook)
    trimmed.cells = [
        cell
        for cell in trimmed.cells[: check + 1]
        if cell.cell_type != "code" or "nbval-ignore-output" not in cell.metadata.get("tags", [])
    ]
    for cell in trimmed.cells:
        if cell.get("id") == BUILD_IT:
            cell.source = "from ctxlab import build_context"
    NotebookClient(trimmed, timeout=300, kernel_name="python3", resources={}).execute()
    html = "".join(
        output.get("data", {}).get("text/html", "")
        for output in trimmed.cells[-1].outputs
        if output.output_type in ("execute_result", "display_data")
    )
    text = re.sub(r"<[^>]+>", "", html)
    assert NOTICES[language] in text, text[:500]
    assert text.index(NOTICES[language]) < text.index(HEADLINES[language]), text[:500]
