"""A tiny notebook writer for the lab generators (plain nbformat, no jupytext).

Each generator (``lab_11_1.py`` ...) lists its cells with :func:`md`, :func:`code`,
:func:`notes` and :func:`widget`, then calls :func:`write`. The written notebook has no
outputs: execute it afterwards (``make notebooks``) and commit the executed file.

Run from the repository root:  .venv/bin/python notebooks/_build/lab_11_1.py
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

NOTEBOOKS = Path(__file__).resolve().parent.parent

Cell = Any


def _slide(cell: Cell, slide_type: str, tags: tuple[str, ...] = ()) -> Cell:
    cell.metadata["slideshow"] = {"slide_type": slide_type}
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


def md(text: str, slide: str = "-") -> Cell:
    """A markdown cell. ``slide``: "slide", "subslide", "fragment", "-" or "notes"."""
    return _slide(new_markdown_cell(text.strip("\n")), slide)


def notes(text: str) -> Cell:
    """Speaker notes (shown in the presenter view only)."""
    return md(text, "notes")


def code(source: str, slide: str = "-") -> Cell:
    return _slide(new_code_cell(source.strip("\n")), slide)


def widget(source: str, slide: str = "-") -> Cell:
    """A widget cell: nbval ignores its output (the view state is not comparable)."""
    return _slide(new_code_cell(source.strip("\n")), slide, ("nbval-ignore-output",))


def lab_tests(source: str, slide: str = "-") -> Cell:
    """The last cell: run the lab's tests. Tagged ``nbval-skip``: under ``make test`` pytest
    runs every lab test itself in the same session, so re-running them from inside each
    notebook would only repeat that work (it took most of the nbval time)."""
    return _slide(new_code_cell(source.strip("\n")), slide, ("nbval-skip",))


def write(name: str, cells: list[Cell]) -> Path:
    notebook = new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
        "name": "python3",
    }
    notebook.metadata["language_info"] = {"name": "python"}
    notebook.metadata["rise"] = {"scroll": True, "enable_chalkboard": False}
    # Stable cell ids: nbformat would otherwise draw random ones on every build.
    for index, cell in enumerate(notebook.cells):
        cell["id"] = f"{name.split('-')[0].replace('.', '-')}-{index:02d}"
    nbformat.validate(notebook)
    path = NOTEBOOKS / f"{name}.ipynb"
    nbformat.write(notebook, path)
    return path
