"""Every instructor edition under notebooks/ is committed executed, in order, without errors.

nbval (in ``make test``) re-runs the instructor editions and compares outputs; these checks
catch what nbval does not: a notebook saved half-run or out of order, an error output, a
wrong kernel, a widget cell whose output nbval would compare, an exercise, build-it or check
cell missing, or a ✘ in the instructor's check table. The student editions are committed
without outputs (issue 27): ``tests/test_student_edition.py`` checks that, and
``tests/test_student_run.py`` runs each one and checks what a student first sees.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.teaching

NOTEBOOK_DIR = Path(__file__).resolve().parent.parent / "notebooks"
# Every edition: notebooks/<language>/<student|instructor>/<lab>.ipynb
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*/*/*.ipynb"))
INSTRUCTOR_EDITIONS = [path for path in NOTEBOOKS if path.parent.name == "instructor"]
LAB_NOTEBOOKS = {
    "11.1-summary-is-a-fact.ipynb": "11.1",
    "11.2-interaction-groups.ipynb": "11.2",
    "11.3-budgeted-context.ipynb": "11.3",
    "11.4-create-compaction.ipynb": "11.4",
    "11.5-resume-from-summary.ipynb": "11.5",
}
#: The course-start notebook (issue 32, item 5): no lab, so no exercise, build-it or check.
COURSE_START = "00-course-start.ipynb"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
#: Words every lab notebook's prose and stored reports hold, per edition language (issue 12).
WORDS = {
    "en": {
        "goals": "Learning goals",
        "predict": "Predict, then run",
        "not written": "not written yet",
        "not answered": "not answered yet",
        "correct": "✔ Correct",
    },
    "zh": {
        "goals": "学习目标",
        "predict": "先预测，再运行",
        "not written": "还没有写",
        "not answered": "还没有作答",
        "correct": "✔ 正确",
    },
}
IGNORE = "nbval-ignore-output"


def _words(path: Path) -> dict[str, str]:
    """:data:`WORDS` of the edition's language (``notebooks/<language>/<role>/<lab>``)."""
    return WORDS[path.parts[-3]]


def _load(path: Path) -> dict[str, Any]:
    with path.open(encoding="utf-8") as handle:
        notebook: dict[str, Any] = json.load(handle)
    return notebook


def _source(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _code_cells(notebook: dict[str, Any]) -> list[dict[str, Any]]:
    return [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]


def _tags(cell: dict[str, Any]) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def test_the_lab_notebooks_exist() -> None:
    names = {path.name for path in NOTEBOOKS if path.parent.name == "student"}
    mine = {"11.1-summary-is-a-fact.ipynb", "11.2-interaction-groups.ipynb",
            "11.3-budgeted-context.ipynb"}  # fmt: skip
    assert mine <= names


@pytest.mark.parametrize("path", INSTRUCTOR_EDITIONS, ids=lambda p: "/".join(p.parts[-3:]))
def test_notebook_is_executed_in_order_without_errors(path: Path) -> None:
    notebook = _load(path)
    counts = [cell.get("execution_count") for cell in _code_cells(notebook)]
    assert counts == list(range(1, len(counts) + 1)), f"{path.name}: run it top to bottom"
    for index, cell in enumerate(_code_cells(notebook), 1):
        for output in cell.get("outputs", []):
            assert output["output_type"] != "error", f"{path.name} cell {index}: error output"
            if output["output_type"] == "stream":
                assert output["name"] != "stderr", f"{path.name} cell {index}: stderr output"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: "/".join(p.parts[-3:]))
def test_notebook_uses_the_python3_kernelspec(path: Path) -> None:
    kernelspec = _load(path)["metadata"].get("kernelspec", {})
    assert kernelspec.get("name") == "python3"
    assert kernelspec.get("language") == "python"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: "/".join(p.parts[-3:]))
def test_widget_cells_are_ignored_by_nbval_and_preceded_by_a_checked_cell(path: Path) -> None:
    cells = _code_cells(_load(path))
    for index, cell in enumerate(cells):
        shows_widget = any(WIDGET_MIME in out.get("data", {}) for out in cell.get("outputs", []))
        if not shows_widget:
            continue
        assert IGNORE in _tags(cell), f"{path.name} code cell {index + 1}: tag {IGNORE}"
        assert index > 0 and IGNORE not in _tags(cells[index - 1]), (
            f"{path.name} code cell {index + 1}: a checked cell must come before the widget"
        )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: "/".join(p.parts[-3:]))
def test_outputs_hold_no_addresses_or_temp_paths(path: Path) -> None:
    for cell in _code_cells(_load(path)):
        if IGNORE in _tags(cell):
            continue
        for output in cell.get("outputs", []):
            texts = [output.get("text", "")]
            texts += [v for k, v in output.get("data", {}).items() if k.startswith("text/")]
            for text in texts:
                joined = "".join(text) if isinstance(text, list) else str(text)
                assert " at 0x" not in joined, path.name
                assert "/tmp/" not in joined and "np.int64(" not in joined, path.name


LAB_FUNCTIONS = {
    "11.1": "parse_compaction_entry",
    "11.2": "group_interactions",
    "11.3": "build_context",
    "11.4": "create_compaction_entry",
    "11.5": "build_context",
}
LAB_EDITIONS = [p for p in NOTEBOOKS if p.name in LAB_NOTEBOOKS]
INSTRUCTOR_LAB_EDITIONS = [p for p in LAB_EDITIONS if p.parent.name == "instructor"]


def _role(path: Path) -> str:
    return path.parent.name  # notebooks/<language>/<student|instructor>/<lab>.ipynb


def _output_text(cell: dict[str, Any]) -> str:
    texts = []
    for output in cell.get("outputs", []):
        texts.append("".join(output.get("text", "")))
        for kind, value in output.get("data", {}).items():
            if kind.startswith("text/"):
                texts.append("".join(value) if isinstance(value, list) else str(value))
    return "\n".join(texts)


def _build_it_cell(notebook: dict[str, Any], function: str) -> dict[str, Any]:
    cells = [c for c in _code_cells(notebook) if f"def {function}(" in _source(c)]
    assert len(cells) == 1, f"exactly one build-it cell defines {function}"
    return cells[0]


@pytest.mark.parametrize("path", LAB_EDITIONS, ids=lambda p: "/".join(p.parts[-3:]))
def test_lab_notebook_has_a_build_it_cell_then_its_check(path: Path) -> None:
    """Issue 10: the student writes the lab's function (a stub in the student edition, a
    solution written from the chapter in the instructor's), then check_implementation."""
    notebook = _load(path)
    lab = LAB_NOTEBOOKS[path.name]
    function = LAB_FUNCTIONS[lab]
    build = _source(_build_it_cell(notebook, function))
    if _role(path) == "student":
        stub = "在这里写" if path.parts[-3] == "zh" else "write"  # the edition's language
        assert f'raise NotImplementedError("{stub} {function}' in build, path.name
    else:
        assert "NotImplementedError" not in build, path.name
        assert "return " in build, path.name
        # not a call of ctxlab's own function for this lab
        assert f"ctxlab.{function}" not in build and f"import {function}" not in build
        assert f"    {function},\n" not in build, f"{path.name}: imports the reference"
    cells = _code_cells(notebook)
    check = f'check_implementation("{lab}", {function}={function})'
    checks = [i for i, c in enumerate(cells) if _source(c).rstrip().endswith(check)]
    assert len(checks) == 1, f"{path.name}: one check cell"
    # after the check only the classroom kit's cells (issue 27): common mistakes, exit quiz
    after = cells[checks[0] + 1 :]
    assert all("classroom." in _source(c) for c in after), f"{path.name}: the check comes last"
    index = next(i for i, c in enumerate(cells) if f"def {function}(" in _source(c))
    assert index < checks[0]
    assert all("nbval-skip" not in _tags(cell) for cell in cells), path.name
    assert not any("run_lab_tests" in _source(cell) for cell in notebook["cells"]), path.name


@pytest.mark.parametrize("path", INSTRUCTOR_LAB_EDITIONS, ids=lambda p: "/".join(p.parts[-3:]))
def test_stored_check_output_fits_the_edition(path: Path) -> None:
    """The answer key shows every check ✔ (the student edition's check, run, shows the
    unwritten stub: tests/test_student_run.py)."""
    lab = LAB_NOTEBOOKS[path.name]
    check = f'check_implementation("{lab}", {LAB_FUNCTIONS[lab]}='
    report = _output_text(next(c for c in _code_cells(_load(path)) if check in _source(c)))
    heading = "实验" if path.parts[-3] == "zh" else "Lab"
    assert f"{heading} {lab} · {LAB_FUNCTIONS[lab]}" in report, path.name
    assert "✔" in report and "✘" not in report, f"{path.name}: {report[:300]}"


@pytest.mark.parametrize(
    "path", [p for p in NOTEBOOKS if p.name != COURSE_START], ids=lambda p: "/".join(p.parts[-3:])
)
def test_exercises_hold_placeholders_for_students_and_answers_for_instructors(
    path: Path,
) -> None:
    exercises = [
        c
        for c in _code_cells(_load(path))
        if ".check_" in _source(c) and "check_implementation" not in _source(c)
    ]
    assert exercises, path.name
    for cell in exercises:
        text = _output_text(cell)
        if _role(path) == "student":  # run, it says "not answered yet": test_student_run.py
            assert "..." in _source(cell), f"{path.name}: {_source(cell)[:80]}"
        else:
            assert _words(path)["correct"] in text, (
                f"{path.name}: {_source(cell)[:80]} -> {text[:200]}"
            )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: "/".join(p.parts[-3:]))
def test_no_cell_needs_the_test_extra(path: Path) -> None:
    """`make lab` installs only the lab extra: no cell may import pytest, Hypothesis or nbval."""
    for cell in _code_cells(_load(path)):
        for module in ("pytest", "hypothesis", "nbval"):
            assert f"import {module}" not in _source(cell), path.name
            assert f"from {module}" not in _source(cell), path.name


@pytest.mark.parametrize(
    "path", [p for p in NOTEBOOKS if p.name in LAB_NOTEBOOKS], ids=lambda p: "/".join(p.parts[-3:])
)
def test_lab_notebook_has_goals_predictions_two_exercises_and_slides(path: Path) -> None:
    notebook = _load(path)
    markdown = "\n".join(_source(c) for c in notebook["cells"] if c["cell_type"] == "markdown")
    assert _words(path)["goals"] in markdown
    assert _words(path)["predict"] in markdown
    checks = [c for c in _code_cells(notebook) if ".check_" in _source(c)]
    assert len(checks) >= 2, f"{path.name}: at least two self-checked exercises"
    for cell in notebook["cells"]:
        assert "slideshow" in cell.get("metadata", {}), f"{path.name}: slide metadata"
