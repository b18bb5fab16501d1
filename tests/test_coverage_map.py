"""The chapter coverage map (``notebooks/COVERAGE.md``, issue 11) stays true.

The map lists every section and worked example of chapter 11 with the notebook cells
(``<source>.md#<cell id>``) and the tests (``tests/<file>.py::<function>``) that reproduce
it. This test fails when a listed cell is no longer in its source, when a listed test
function no longer exists (read with ``ast``, so nothing is imported or run), or when a
section of the chapter has no row.

Issue 18: the map's last table, ``## ctxlab extensions``, lists what ctxlab teaches beyond
the chapter. Every cell it names must exist and carry the label "ctxlab extension" in its
English text and 「ctxlab 扩展」 in its Chinese text.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MAP = REPO / "notebooks" / "COVERAGE.md"
SOURCES = REPO / "notebooks" / "_src"

pytestmark = pytest.mark.teaching

#: The chapter's ``#`` headings, in order (chapter-11-context-compaction.zh.txt).
CHAPTER_SECTIONS = (
    "同一段历史会产生一份更短的模型输入",
    "摘要先成为 session 中的一条普通事实",
    "两个 tool result 仍属于 u3 开始的同一组",
    "31 个 token 怎样留下第二、三组",
    "compact-1 记录摘要与保留起点",
    "恢复时把最新摘要接在保留后缀前面",
    "system 状态跨过 compaction 边界",
    "损坏记录在进入预算前就会被拒绝",
    "15 项测试固定到哪里",
    "本章验收",
    "可选迁移练习",
    "小结",
)

CELL = re.compile(r"([\w.-]+\.md)#([\w-]+)")
EXTENSIONS_HEADING = "## ctxlab extensions"
LABELS = {"en": "ctxlab extension", "zh": "ctxlab 扩展"}
COURSE_CODE_HEADING = "## The course's code, beyond the chapter's text"
COURSE_CODE_LABELS = {"en": "the course's code", "zh": "课程代码"}
TEST = re.compile(r"(tests/[\w/]+\.py)::(\w+)")


def _rows(text: str) -> list[list[str]]:
    """The body rows of every markdown table in ``text``, each as its cells."""
    rows = []
    text = text.split(EXTENSIONS_HEADING, 1)[0]
    for line in text.splitlines():
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if cells[0] in ("Chapter section", "Worked example (chapter's words)"):
            continue
        rows.append(cells)
    return rows


@cache
def _cell_ids(source: str) -> frozenset[str]:
    path = SOURCES / source
    if not path.is_file():
        return frozenset()
    ids = re.findall(r"^:::cell (\S+)", path.read_text(encoding="utf-8"), flags=re.MULTILINE)
    return frozenset(ids)


@cache
def _test_functions(test_file: str) -> frozenset[str]:
    path = REPO / test_file
    if not path.is_file():
        return frozenset()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return frozenset(
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")
    )


def missing_references(text: str) -> list[str]:
    """Every cell or test ``text`` names that does not exist, and every row naming none."""
    problems = []
    for row in _rows(text):
        if len(row) != 3:
            problems.append(f"row {row[0]!r}: expected 3 columns, got {len(row)}")
            continue
        subject, cells, tests = row
        found_cells = CELL.findall(cells)
        found_tests = TEST.findall(tests)
        if not found_cells:
            problems.append(f"row {subject!r}: no notebook cell")
        if not found_tests:
            problems.append(f"row {subject!r}: no test")
        for source, cell_id in found_cells:
            if cell_id not in _cell_ids(source):
                problems.append(f"row {subject!r}: cell {source}#{cell_id} does not exist")
        for test_file, function in found_tests:
            if function not in _test_functions(test_file):
                problems.append(f"row {subject!r}: test {test_file}::{function} does not exist")
    return problems


def test_every_listed_cell_and_test_exists() -> None:
    problems = missing_references(MAP.read_text(encoding="utf-8"))
    assert not problems, "\n".join(problems)


def test_every_chapter_section_has_a_row() -> None:
    subjects = [row[0] for row in _rows(MAP.read_text(encoding="utf-8"))]
    missing = [section for section in CHAPTER_SECTIONS if section not in subjects]
    assert not missing, f"sections missing from notebooks/COVERAGE.md: {missing}"


def test_the_map_lists_worked_examples_too() -> None:
    text = MAP.read_text(encoding="utf-8")
    assert "## Worked examples" in text
    assert len(_rows(text)) >= len(CHAPTER_SECTIONS) + 20


def test_the_readme_links_the_map() -> None:
    readme = (REPO / "notebooks" / "README.md").read_text(encoding="utf-8")
    assert "(COVERAGE.md)" in readme


def test_a_missing_cell_or_test_is_reported() -> None:
    text = "\n".join(
        [
            "| Chapter section | Notebook cells | Tests |",
            "|---|---|---|",
            "| 本章验收 | 11.3-budgeted-context.md#11-3-03, 11.3-budgeted-context.md#no-such"
            " | tests/test_coverage_map.py::test_every_listed_cell_and_test_exists,"
            " tests/test_coverage_map.py::test_gone, tests/no_such_file.py::test_x |",
            "| 小结 | none | none |",
        ]
    )
    problems = missing_references(text)
    assert any("11.3-budgeted-context.md#no-such" in p for p in problems)
    assert any("test_coverage_map.py::test_gone" in p for p in problems)
    assert any("no_such_file.py::test_x" in p for p in problems)
    assert any("'小结': no notebook cell" in p for p in problems)
    assert not any("#11-3-03" in p or "test_every_listed" in p for p in problems)


def _extension_rows(text: str, heading: str = EXTENSIONS_HEADING) -> list[list[str]]:
    """The rows of the table under ``heading`` (up to the next ``## `` heading), without its
    header row."""
    section = text.split(heading, 1)[1] if heading in text else ""
    section = section.split("\n## ", 1)[0]
    rows = []
    header_seen = False
    for line in section.splitlines():
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        if not header_seen:
            header_seen = True
            continue
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def _cell_texts(source: str, cell_id: str) -> dict[str, str]:
    """Language -> the cell's text in that language (every role's variant, joined)."""
    from nbsource_module import load_nbsource

    nbsource = load_nbsource()
    parsed = nbsource.parse_source((SOURCES / source).read_text(encoding="utf-8"))
    cell = next(c for c in parsed.cells if c.id == cell_id)
    return {
        language: "\n".join(
            cell.text_for(nbsource.Edition(language, role)) for role in nbsource.ROLES
        )
        for language in parsed.languages
    }


def extension_problems(
    text: str, heading: str = EXTENSIONS_HEADING, labels: dict[str, str] = LABELS
) -> list[str]:
    """Every row of the table under ``heading`` without a cell or a reason, every listed
    cell that is gone, and every listed cell whose text in some language lacks the label
    (``labels``: language -> label)."""
    problems = []
    rows = _extension_rows(text, heading)
    if not rows:
        problems.append(f"no table under {heading!r}")
    for row in rows:
        if len(row) != 3 or not row[2]:
            problems.append(f"extension {row[0]!r}: expected a cell column and a reason")
            continue
        found = CELL.findall(row[1])
        if not found:
            problems.append(f"extension {row[0]!r}: no notebook cell")
        for source, cell_id in found:
            if cell_id not in _cell_ids(source):
                problems.append(f"extension {row[0]!r}: cell {source}#{cell_id} does not exist")
                continue
            for language, cell_text in _cell_texts(source, cell_id).items():
                if labels[language] not in cell_text:
                    problems.append(
                        f"extension {row[0]!r}: cell {source}#{cell_id} ({language}) lacks"
                        f" the label {labels[language]!r}"
                    )
    return problems


def test_every_extension_cell_exists_and_carries_the_label() -> None:
    problems = extension_problems(MAP.read_text(encoding="utf-8"))
    assert not problems, "\n".join(problems)


def test_every_course_code_cell_exists_and_carries_the_label() -> None:
    """What the course's code does beyond the chapter's text (``within_budget``, the test
    estimator's costs past the opening path) is labelled so, never as ctxlab's own."""
    problems = extension_problems(
        MAP.read_text(encoding="utf-8"), COURSE_CODE_HEADING, COURSE_CODE_LABELS
    )
    assert not problems, "\n".join(problems)


def test_an_unlabelled_or_missing_extension_cell_is_reported() -> None:
    text = "\n".join(
        [
            EXTENSIONS_HEADING,
            "",
            "| ctxlab extension | Notebook cells | Why it is there |",
            "|---|---|---|",
            "| extras | 11.1-summary-is-a-fact.md#11-1-b01 | a reason |",
            "| unlabelled | 11.1-summary-is-a-fact.md#11-1-03 | a reason |",
            "| gone | 11.1-summary-is-a-fact.md#no-such | a reason |",
        ]
    )
    problems = extension_problems(text)
    assert not any("#11-1-b01" in p for p in problems)
    assert any("#11-1-03 (en) lacks" in p for p in problems)
    assert any("#11-1-03 (zh) lacks" in p for p in problems)
    assert any("#no-such does not exist" in p for p in problems)
