"""Settle an executed notebook so its bytes depend only on what the cells did.

``make notebooks`` executes every edition in place. Two things in what nbconvert stores
would change from run to run although no cell did anything different:

* **Stream chunks.** A cell's prints reach the notebook in as many ``stream`` outputs as the
  kernel's flushes made, and that depends on timing (a busy machine splits one print run in
  two). Consecutive outputs of the same stream are joined, as nbconvert's
  ``CoalesceStreamsPreprocessor`` does.
* **Widget model ids.** ipywidgets names every model with a random ``uuid4().hex``; the ids
  appear in the widget views of the outputs and in the saved widget state (its keys, and
  ``"IPY_MODEL_<id>"`` references inside it). Each id is replaced by one derived from the
  notebook's name and the model's place in a fixed walk: the views in cell order, then each
  model's references depth-first, then any model nothing refers to in order of its
  content. The saved state still renders (slides, JupyterLab): only the names change.

Usage: ``python notebooks/_build/settle.py NOTEBOOK.ipynb ...`` (rewrites each in place).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import nbformat

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
REFERENCE = "IPY_MODEL_"
_MASK = re.compile(r"IPY_MODEL_\w+")


def coalesce_streams(cell: dict[str, Any]) -> None:
    """Join consecutive outputs of the same stream (stdout or stderr) of a code cell."""
    settled: list[dict[str, Any]] = []
    for output in cell.get("outputs", []):
        last = settled[-1] if settled else None
        if (
            last is not None
            and output.get("output_type") == "stream"
            and last.get("output_type") == "stream"
            and last.get("name") == output.get("name")
        ):
            last["text"] = _text(last["text"]) + _text(output["text"])
        else:
            settled.append(output)
    if "outputs" in cell:
        cell["outputs"] = settled


def _text(text: str | list[str]) -> str:
    return text if isinstance(text, str) else "".join(text)


def _references(value: Any) -> Iterator[str]:
    """The model ids a widget's state refers to, in a fixed order (keys sorted)."""
    if isinstance(value, str):
        if value.startswith(REFERENCE):
            yield value.removeprefix(REFERENCE)
    elif isinstance(value, dict):
        for key in sorted(value):
            yield from _references(value[key])
    elif isinstance(value, list):
        for item in value:
            yield from _references(item)


def _view_ids(notebook: dict[str, Any]) -> Iterator[str]:
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(WIDGET_VIEW)
            if isinstance(view, dict) and isinstance(view.get("model_id"), str):
                yield view["model_id"]


def _replace(value: Any, rename: Callable[[str], str | None]) -> Any:
    if isinstance(value, str):
        if value.startswith(REFERENCE):
            new = rename(value.removeprefix(REFERENCE))
            return value if new is None else REFERENCE + new
        new = rename(value)
        return value if new is None else new
    if isinstance(value, dict):
        return {
            (rename(key) or key): _replace(item, rename)
            for key, item in value.items()  # keys: the saved state's model ids
        }
    if isinstance(value, list):
        return [_replace(item, rename) for item in value]
    return value


def stable_widget_ids(notebook: dict[str, Any], name: str) -> None:
    """Rename every widget model id of ``notebook`` (see the module docstring)."""
    widgets = notebook.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {})
    state: dict[str, Any] = widgets.get("state", {})
    order: list[str] = []
    seen: set[str] = set()

    def visit(model_id: str) -> None:
        stack = [model_id]
        while stack:  # depth-first, without recursion (a deep widget tree is fine)
            current = stack.pop()
            if current in seen or current not in state:
                continue
            seen.add(current)
            order.append(current)
            stack.extend(reversed(list(_references(state[current]))))

    for model_id in _view_ids(notebook):
        visit(model_id)

    def content(model_id: str) -> str:
        return _MASK.sub(REFERENCE, json.dumps(state[model_id], sort_keys=True))

    for model_id in sorted((m for m in state if m not in seen), key=content):
        visit(model_id)

    new_ids = {
        old: hashlib.sha256(f"{name}:{index}".encode()).hexdigest()[:32]
        for index, old in enumerate(order)
    }
    if not new_ids:
        return
    notebook["cells"] = _replace(notebook["cells"], new_ids.get)
    widgets["state"] = _replace(state, new_ids.get)


def settle(notebook: dict[str, Any], name: str) -> None:
    """Coalesce the streams of every cell and give the widget models stable ids."""
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") == "code":
            coalesce_streams(cell)
    stable_widget_ids(notebook, name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    args = parser.parse_args(argv)
    for path in args.notebooks:
        notebook = nbformat.read(path, as_version=4)
        # The id's seed names the edition too (notebooks/<language>/<role>/<lab>.ipynb).
        name = "/".join(path.resolve().parts[-3:])
        settle(notebook, name)
        nbformat.write(nbformat.from_dict(notebook), path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
