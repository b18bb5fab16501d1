"""Execute every notebook edition in a fresh kernel and fail on errors or warnings.

Used by ``make test-current`` (issue 19: pandas 3 and the current numpy and matplotlib).
Unlike nbval it does not compare outputs with the stored ones (a newer pandas or numpy may
print a dtype or a number differently); it runs each notebook top to bottom, from a
temporary copy (the notebooks themselves are never written), and fails when a cell

* raises (an ``error`` output; no cell of the course is expected to raise), or
* prints to stderr (a ``stream`` output named ``stderr``): e.g. a pandas ``FutureWarning``
  or ``DeprecationWarning`` (the kernel runs with ``PYTHONWARNINGS=default``, so that a
  warning raised inside ctxlab.lab, pandas or matplotlib is printed too, not only one
  raised by the cell's own code).

``--outputs DIR`` also writes each executed notebook's text outputs (one file per
notebook, cell by cell) into DIR, to compare two environments with ``diff -r``.

    python tests/execute_notebooks.py [--outputs DIR] [--timeout S] [NOTEBOOK ...]

Exit status 0 when every notebook ran clean, 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def _text_outputs(cell: Any) -> list[str]:
    """The text of a cell's outputs: streams, text/plain of results, error names."""
    texts = []
    for output in cell.get("outputs", []):
        kind = output["output_type"]
        if kind == "stream":
            texts.append(f"[{output['name']}]\n{output['text']}")
        elif kind in ("execute_result", "display_data"):
            data = output.get("data", {})
            shown = data.get("text/plain", "")
            if "text/html" in data:
                shown += "\n[text/html]\n" + data["text/html"]
            if "image/png" in data:
                shown += f"\n[image/png {len(data['image/png'])} base64 chars]"
            texts.append(_ADDRESS.sub(" at 0x…", shown))
        elif kind == "error":
            texts.append(f"[error] {output['ename']}: {output['evalue']}")
    return texts


def problems_of(notebook: Any) -> list[str]:
    """Every error output and every stderr output of an executed notebook."""
    found = []
    for number, cell in enumerate(notebook.cells, 1):
        for output in cell.get("outputs", []):
            if output["output_type"] == "error":
                found.append(f"cell {number}: {output['ename']}: {output['evalue']}")
            elif output["output_type"] == "stream" and output["name"] == "stderr":
                found.append(f"cell {number}: stderr: {output['text'].strip()[:400]}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--outputs", type=Path, default=None)
    parser.add_argument("--timeout", type=int, default=600)
    parser.add_argument("--kernel", default="python3")
    args = parser.parse_args(argv)

    import nbformat
    from nbclient import NotebookClient

    paths = [p.resolve() for p in args.notebooks] or sorted(ROOT.glob("notebooks/*/*/*.ipynb"))
    if not paths:
        print("error: no notebooks (build them with `make notebooks`)", file=sys.stderr)
        return 1
    # The kernel inherits this environment: print every warning, once per location.
    os.environ["PYTHONWARNINGS"] = "default"
    os.environ.pop("MPLBACKEND", None)  # the inline backend, as in JupyterLab and nbval
    failed = 0
    cells = 0
    started = time.perf_counter()
    for path in paths:
        notebook = nbformat.read(path, as_version=4)
        client = NotebookClient(
            notebook,
            timeout=args.timeout,
            kernel_name=args.kernel,
            allow_errors=True,
            record_timing=False,
            resources={"metadata": {"path": str(path.resolve().parent)}},
        )
        start = time.perf_counter()
        client.execute()
        seconds = time.perf_counter() - start
        code_cells = sum(cell.cell_type == "code" for cell in notebook.cells)
        cells += code_cells
        found = problems_of(notebook)
        status = "ok" if not found else f"FAILED ({len(found)} problems)"
        name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        print(f"{name}: {code_cells} code cells, {seconds:.1f} s: {status}")
        for problem in found:
            print(f"    {problem}")
        failed += bool(found)
        if args.outputs is not None:
            relative = (
                path.relative_to(ROOT / "notebooks") if path.is_relative_to(ROOT) else path.name
            )
            target = args.outputs / Path(relative).with_suffix(".txt")
            target.parent.mkdir(parents=True, exist_ok=True)
            lines = []
            for number, cell in enumerate(notebook.cells, 1):
                if cell.cell_type == "code":
                    lines.append(f"===== cell {number}")
                    lines.extend(_text_outputs(cell))
            target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    total = time.perf_counter() - started
    print(
        f"{len(paths)} notebooks, {cells} code cells, {total:.0f} s: "
        f"{len(paths) - failed} clean, {failed} with errors or warnings"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
