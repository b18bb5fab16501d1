"""Build it in a real browser (issue 10, item 8): the 11.2 student edition in JupyterLab.

A student opens ``notebooks/en/student/11.2-interaction-groups.ipynb``, runs it (the check
table says "not written yet"), pastes a WRONG ``group_interactions`` into the stub cell --
one that cuts at assistant messages -- and runs it and the check cell: the table shows ✘,
and the row of the broken behaviour names it with the chapter's ids. Then a right one:
every row ✔. Screenshots of both tables land in artifacts/browser/.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from typing import Any

import pytest
from browser_support import (
    STUDENT_NOTEBOOKS,
    LabServer,
    open_notebook,
    replace_cell_text,
    run_all_cells,
    run_selected_and_below,
    screenshot,
)

from ctxlab.lab import grading

pytestmark = pytest.mark.browser

NOTEBOOK = "11.2-interaction-groups.ipynb"

WRONG = textwrap.dedent(
    """\
    from ctxlab import InteractionGroup


    def group_interactions(entries):
        groups, current = [], []
        for entry in entries:
            if entry.message.role == "system":
                continue
            current.append(entry)
            if entry.message.role == "assistant":  # wrong: an assistant message ends a group
                groups.append(InteractionGroup(entries=tuple(current)))
                current = []
        if current:
            groups.append(InteractionGroup(entries=tuple(current)))
        return groups
    """
)

RIGHT = textwrap.dedent(
    """\
    from ctxlab import InteractionError, InteractionGroup


    def group_interactions(entries):
        groups, current = [], None
        for entry in entries:
            role = entry.message.role
            if role == "system":
                continue
            if role == "user":
                if current is not None:
                    groups.append(close(current))
                current = [entry]
            elif current is None:
                raise InteractionError(f"{entry.id} comes before the first user message")
            else:
                current.append(entry)
        if current is not None:
            groups.append(close(current))
        return groups


    def close(group):
        calls, results = {}, {}
        for entry in group:
            if entry.message.role == "assistant":
                for call in entry.message.tool_calls:
                    if call.id in calls:
                        raise InteractionError(f"{call.id} is declared twice ({entry.id})")
                    calls[call.id] = entry.id
        for entry in group:
            if entry.message.role == "toolResult":
                call_id = entry.message.tool_call_id
                if call_id not in calls:
                    raise InteractionError(f"{entry.id} answers unknown call {call_id}")
                if call_id in results:
                    raise InteractionError(f"{call_id} has a second result {entry.id}")
                results[call_id] = entry.id
        for call_id, entry_id in calls.items():
            if call_id not in results:
                raise InteractionError(f"{call_id} ({entry_id}) has no result")
        pairs = tuple((call_id, results[call_id]) for call_id in calls)
        return InteractionGroup(entries=tuple(group), tool_pairs=pairs)
    """
)


@pytest.fixture
def student_page(
    chromium: Any, student_lab_server: LabServer, browser_context: Any
) -> Iterator[Any]:
    if not (STUDENT_NOTEBOOKS / NOTEBOOK).is_file():
        pytest.fail(f"notebooks/en/student/{NOTEBOOK} is missing: the browser test needs it")
    page = browser_context.new_page()
    open_notebook(page, student_lab_server, NOTEBOOK, workspace="build-it-11-2")
    run_all_cells(page)
    yield page


def _check_report(page: Any) -> Any:
    """The check_implementation table: the output of the notebook's check cell (the last
    code cell with a report; the classroom kit's quiz comes after it)."""
    return page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .ctxlab-lab-report").last


def _rows(page: Any) -> dict[str, tuple[str, str]]:
    """behaviour -> (mark, detail), read from the rendered table."""
    cells: list[list[str]] = _check_report(page).evaluate(
        "node => [...node.querySelectorAll('tbody tr')]"
        ".map(row => [...row.querySelectorAll(':scope > td')].map(td => td.textContent.trim()))"
    )
    # 3 cells: a row (folded ones too, inside the fold line's <details>); not the extras
    # heading, not the fold line itself
    return {row[0]: (row[1], row[2]) for row in cells if len(row) == 3}


def _show(page: Any, name: str) -> None:
    _check_report(page).scroll_into_view_if_needed()
    screenshot(page, name)


def test_a_wrong_then_a_right_group_interactions_in_the_student_notebook(
    student_page: Any,
) -> None:
    page = student_page
    rows = _rows(page)
    assert len(rows) == len(grading.behaviour_keys("11.2")) >= 10
    assert all(mark == "✘" and "not written yet" in detail for mark, detail in rows.values())

    code_cells = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell")
    stub = 'raise NotImplementedError("write group_interactions here")'
    texts = code_cells.evaluate_all("cells => cells.map(cell => cell.innerText)")
    found = [index for index, text in enumerate(texts) if stub in text]
    assert len(found) == 1, "the 11.2 student notebook has no group_interactions stub"
    cell = code_cells.nth(found[0])  # by position: its text is about to change

    replace_cell_text(page, cell, WRONG)
    run_selected_and_below(page)
    report = _check_report(page)
    rows = _rows(page)
    three = next(name for name in rows if name.startswith("the opening path gives"))
    mark, detail = rows[three]
    assert mark == "✘", rows
    assert "[u3,calls] [r-test,r-read,a3]" in detail, detail  # the broken behaviour, named
    assert "expected [u1,a1] [u2,a2] [u3,calls,r-test,r-read,a3]" in detail
    assert "not written yet" not in " ".join(d for _, d in rows.values())
    assert "checks pass ✘" in report.inner_text()
    _show(page, "11.2-build-it-wrong")

    replace_cell_text(page, cell, RIGHT)
    run_selected_and_below(page)
    rows = _rows(page)
    assert rows and all(mark == "✔" for mark, _ in rows.values()), rows
    keys = grading.behaviour_keys("11.2")
    total = sum(grading.behaviour_source("11.2", key) == "chapter" for key in keys)
    extras = len(keys) - total
    text = _check_report(page).inner_text()
    assert f"{total}/{total} checks pass ✔" in text
    assert f"ctxlab's extras (optional): {extras}/{extras} pass" in text
    _show(page, "11.2-build-it-right")
