"""Every student edition, run top to bottom the way a student first runs it (issue 27).

The student editions are committed without outputs (``nbsource.py build`` writes them so; see
``tests/test_student_edition.py``), so nbval has nothing to compare there and
``notebooks/conftest.py`` leaves them out of its collection. Instead each committed student
edition is executed here, in a fresh copy, with nbclient in the ``python3`` kernel of this
environment, and the run must show

* no error output (a cell tagged ``raises-exception`` may raise: its error is the lesson) and
  nothing on stderr (a warning);
* the build-it check in its "not written yet" state: the report of ``check_implementation``
  is the lab's, passes 0 checks, and every row says "not written yet" (「还没有写」);
* every exercise check in its "not answered yet" state (「还没有作答」), never "✔ Correct".
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from test_notebooks_meta import (
    LAB_FUNCTIONS,
    LAB_NOTEBOOKS,
    _output_text,
    _source,
    _tags,
    _words,
)

pytestmark = pytest.mark.teaching

ROOT = Path(__file__).resolve().parent.parent
STUDENT_EDITIONS = sorted(ROOT.glob("notebooks/*/student/*.ipynb"))
TIMEOUT = 600


@cache
def executed(path: Path) -> Any:
    """The student edition at ``path``, executed top to bottom in a fresh kernel (the file
    itself is not written)."""
    import nbformat
    from nbclient import NotebookClient

    # The python3 kernel of this environment (the venv's ipykernel), as `make notebooks` and
    # nbval use it; the inline plotting backend, as in JupyterLab.
    os.environ["JUPYTER_PREFER_ENV_PATH"] = "1"
    os.environ.pop("MPLBACKEND", None)
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(
        notebook,
        timeout=TIMEOUT,
        kernel_name="python3",
        allow_errors=False,  # a cell tagged raises-exception may still raise
        record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    return notebook


def problems_of_run(notebook: Any) -> list[str]:
    """Error outputs (outside ``raises-exception`` cells) and stderr outputs of a run."""
    found = []
    for index, cell in enumerate(notebook["cells"]):
        for output in cell.get("outputs", []):
            if output["output_type"] == "error" and "raises-exception" not in _tags(cell):
                found.append(f"cell {index}: {output['ename']}: {output['evalue']}")
            if output["output_type"] == "stream" and output["name"] == "stderr":
                found.append(f"cell {index}: stderr: {''.join(output['text'])[:300]}")
    return found


def unanswered_states(path: Path, notebook: Any) -> list[str]:
    """What in a run of a student edition is not in its "not answered yet" state."""
    words = _words(path)
    code = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    found = []
    for cell in code:
        text = _source(cell)
        if ".check_" in text and "check_implementation" not in text:
            shown = _output_text(cell)
            if words["not answered"] not in shown or words["correct"] in shown:
                found.append(f"exercise {cell.get('id')}: {shown[:200]!r}")
    lab = LAB_NOTEBOOKS.get(path.name)
    if lab is not None:
        check = f'check_implementation("{lab}", '
        report = _output_text(next(cell for cell in code if check in _source(cell)))
        heading = "实验" if path.parts[-3] == "zh" else "Lab"
        if f"{heading} {lab} · {LAB_FUNCTIONS[lab]}" not in report:
            found.append(f"build-it check: not the report of lab {lab}: {report[:200]!r}")
        elif not (" 0/" in report and "✘" in report and "✔" not in report):
            found.append(f"build-it check: not 0 passed, all ✘: {report[:300]!r}")
        elif words["not written"] not in report:
            found.append(f"build-it check: no {words['not written']!r}: {report[:300]!r}")
    return found


@pytest.mark.parametrize("path", STUDENT_EDITIONS, ids=lambda p: "/".join(p.parts[-3:]))
def test_the_student_edition_runs_top_to_bottom_unanswered(path: Path) -> None:
    notebook = executed(path)
    problems = problems_of_run(notebook) + unanswered_states(path, notebook)
    assert not problems, f"{path.name}:\n" + "\n".join(problems)


def test_every_language_and_lab_has_a_student_edition() -> None:
    labs = [path for path in STUDENT_EDITIONS if path.name != "00-course-start.ipynb"]
    assert len(labs) == 12 and len(STUDENT_EDITIONS) == 14  # and the course-start notebook
    assert {p.parts[-3] for p in STUDENT_EDITIONS} == {"en", "zh"}


def test_the_run_check_sees_an_answer_and_an_error() -> None:
    """The checks above can fail: an answered exercise, a passed build-it row, an error."""
    path = ROOT / "notebooks" / "en" / "student" / "11.2-interaction-groups.ipynb"

    def cell(source: str, text: str, tags: tuple[str, ...] = ()) -> dict[str, Any]:
        return {
            "cell_type": "code",
            "id": "x",
            "source": source,
            "metadata": {"tags": list(tags)},
            "outputs": [{"output_type": "stream", "name": "stdout", "text": text}],
        }

    answered = cell("lab11_2.check_legal_cuts(cuts)", "✔ Correct — legal cuts")
    report = cell(
        'lab.check_implementation("11.2", group_interactions=group_interactions)',
        "Lab 11.2 · group_interactions\n3/12 checks pass ✘\n✔ the opening path",
    )
    found = unanswered_states(path, {"cells": [answered, report]})
    assert len(found) == 2 and "exercise" in found[0] and "build-it" in found[1], found
    error = {"output_type": "error", "ename": "NameError", "evalue": "x", "traceback": []}
    raising = dict(cell("x", ""), outputs=[error])
    assert problems_of_run({"cells": [raising]}) == ["cell 0: NameError: x"]
    allowed = dict(cell("x", "", ("raises-exception",)), outputs=[error])
    assert problems_of_run({"cells": [allowed]}) == []
