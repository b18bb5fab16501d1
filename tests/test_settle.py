"""Stored notebook bytes depend only on what the cells did (notebooks/_build/settle.py).

``make notebooks`` settles every executed edition: consecutive stream outputs are joined and
widget model ids are renamed from a fixed walk. These tests show that two runs differing only
in timing (stream chunks) or in ipywidgets' random ids settle to the same bytes, that the
saved widget state stays consistent, and that every committed edition is already settled.
"""

from __future__ import annotations

import copy
import json
import random
import re
import uuid
from pathlib import Path
from typing import Any

import nbformat
import pytest

from nbsource_module import load_build_module

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((REPO / "notebooks").glob("*/*/*.ipynb"))
WIDGET_NOTEBOOK = REPO / "notebooks" / "en" / "instructor" / "11.3-budgeted-context.ipynb"

pytestmark = pytest.mark.teaching


settle = load_build_module("settle")


def _state(notebook: dict[str, Any]) -> dict[str, Any]:
    state: dict[str, Any] = notebook["metadata"]["widgets"][settle.WIDGET_STATE]["state"]
    return state


def _another_run(notebook: dict[str, Any], seed: int) -> dict[str, Any]:
    """The same notebook as a second run would store it: fresh random ids, another order."""
    text = json.dumps(notebook)
    rng = random.Random(seed)
    for old in sorted(_state(notebook)):
        text = text.replace(old, uuid.UUID(int=rng.getrandbits(128)).hex)
    again: dict[str, Any] = json.loads(text)
    items = list(_state(again).items())
    rng.shuffle(items)
    again["metadata"]["widgets"][settle.WIDGET_STATE]["state"] = dict(items)
    return again


def _bytes(notebook: dict[str, Any]) -> str:
    return str(nbformat.writes(nbformat.from_dict(notebook)))


def test_two_runs_with_different_widget_ids_settle_to_the_same_bytes() -> None:
    first = json.loads(WIDGET_NOTEBOOK.read_text(encoding="utf-8"))
    assert _state(first), "the 11.3 instructor edition stores widget state"
    runs = [_another_run(first, seed) for seed in (1, 2)]
    assert _bytes(runs[0]) != _bytes(runs[1])
    for run in runs:
        settle.settle(run, "en/instructor/11.3-budgeted-context.ipynb")
    assert _bytes(runs[0]) == _bytes(runs[1])


def test_settled_widget_state_is_consistent() -> None:
    notebook = _another_run(json.loads(WIDGET_NOTEBOOK.read_text(encoding="utf-8")), 3)
    before = len(_state(notebook))
    settle.settle(notebook, "x")
    state = _state(notebook)
    text = json.dumps(notebook)
    assert len(state) == before
    assert set(re.findall(r"IPY_MODEL_(\w+)", text)) <= set(state)
    views = [
        output["data"][settle.WIDGET_VIEW]["model_id"]
        for cell in notebook["cells"]
        for output in cell.get("outputs", [])
        if settle.WIDGET_VIEW in output.get("data", {})
    ]
    assert views and set(views) <= set(state)
    assert all(re.fullmatch(r"[0-9a-f]{32}", model_id) for model_id in state)


def test_consecutive_prints_are_one_stream_output() -> None:
    cell: dict[str, Any] = {
        "cell_type": "code",
        "outputs": [
            {"output_type": "stream", "name": "stdout", "text": "a\n"},
            {"output_type": "stream", "name": "stdout", "text": ["b\n", "c\n"]},
            {"output_type": "stream", "name": "stderr", "text": "warn\n"},
            {"output_type": "stream", "name": "stdout", "text": "d\n"},
            {"output_type": "display_data", "data": {"text/plain": "x"}, "metadata": {}},
            {"output_type": "stream", "name": "stdout", "text": "e\n"},
        ],
    }
    settle.coalesce_streams(cell)
    assert [(o["output_type"], o.get("text")) for o in cell["outputs"]] == [
        ("stream", "a\nb\nc\n"),
        ("stream", "warn\n"),
        ("stream", "d\n"),
        ("display_data", None),
        ("stream", "e\n"),
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: "/".join(p.parts[-3:]))
def test_committed_editions_are_settled(path: Path) -> None:
    """`make notebooks` settles what it executes: settling a committed edition again
    changes nothing."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    settled = copy.deepcopy(notebook)
    settle.settle(settled, "/".join(path.parts[-3:]))
    assert settled == notebook
