"""Lab 11.3 in both languages (issue 18): what the zh edition shows comes out in Chinese, the
English edition keeps its words, and the budget widget's picture carries alt text."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ipywidgets")

from ctxlab.lab import lab11_3
from ctxlab.lab.grading import lab11_3 as grading
from ctxlab.lab.language import set_figure_language, set_language

pytestmark = pytest.mark.teaching

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "notebooks" / "_src" / "11.3-budgeted-context.md"
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def zh() -> Iterator[None]:
    """Chinese text; figures drawn in English, as where no CJK font is installed (and with
    no missing-glyph warnings here). The stored notebooks show the Chinese-drawn case."""
    set_language("zh")
    set_figure_language("en")
    try:
        yield
    finally:
        set_language("en")
        set_figure_language(None)


def _alt(box: Any) -> str:
    value = box.outputs["figure"].value
    found = re.search(r'<img alt="([^"]*)" src="data:image/png;base64,', value)
    assert found, "the widget's figure is not an <img> with alt text"
    return html.unescape(found.group(1))


# -- the widget's image carries alt text ---------------------------------------------------


def test_widget_image_has_english_alt_text_that_follows_the_slider() -> None:
    box = lab11_3.build_budget_widget()
    first = _alt(box)
    assert first == lab11_3.budget_figure(None, lab11_3.CHAPTER_BUDGET).alt_text()
    assert first.startswith("Budget of max_tokens 31: fixed costs system 3, reserved_output 4")
    assert "group 1 (7) dropped" in first and "reason trimmed, total 31" in first
    box.controls["max_tokens"].value = 40
    moved = _alt(box)
    assert moved != first
    assert "group 1 (7) kept" in moved and "reason within_budget, total 38" in moved
    box.controls["max_tokens"].value = 19
    assert "reason single_group_overflow" in _alt(box)


def test_widget_image_has_chinese_alt_text_in_the_zh_edition(zh: None) -> None:
    box = lab11_3.build_budget_widget()
    first = _alt(box)
    assert CJK.search(first)
    assert "第 1 组（7）丢弃" in first and "reason trimmed" in first
    assert "Budget of" not in first and "dropped" not in first
    box.controls["max_tokens"].value = 40
    moved = _alt(box)
    assert moved != first and "第 1 组（7）保留" in moved and "within_budget" in moved


def test_alt_text_is_in_the_notebook_language_even_if_the_figure_is_drawn_in_english(
    zh: None,
) -> None:
    fig = lab11_3.budget_figure(None, lab11_3.CHAPTER_BUDGET)
    assert fig.axes[0].get_title(loc="left").startswith("max_tokens 31: ")  # drawn in en
    assert CJK.search(fig.alt_text())  # described in zh


def test_stored_figure_and_widget_share_the_alt_text() -> None:
    for edition in ("en", "zh"):
        notebook = ROOT / "notebooks" / edition / "instructor" / "11.3-budgeted-context.ipynb"
        cells = {c["id"]: c for c in json.loads(notebook.read_text(encoding="utf-8"))["cells"]}
        (output,) = [o for o in cells["11-3-08"]["outputs"] if "image/png" in o.get("data", {})]
        alt = output["metadata"]["image/png"]["alt"]
        if edition == "zh":
            assert CJK.search(alt) and "第 3 组（15）保留" in alt
        else:
            assert alt.startswith("Budget of max_tokens 31:")


# -- exercise labels, tables, check descriptions -------------------------------------------


def test_every_check_description_is_chinese_and_within_budget_is_the_course_codes() -> None:
    for check in grading.LAB.checks:
        assert CJK.search(check.behaviour_zh), check.key
    (within,) = [c for c in grading.LAB.checks if c.key == "within_budget"]
    # Not the chapter's text, not ctxlab's invention: the course's own buildContext returns it.
    assert within.behaviour_en.startswith("the course's code (not in the chapter's text):")
    assert within.behaviour_zh.startswith("课程代码（本章正文没有提到）：")


# -- the source: zh code comments, the extension labelled ----------------------------------


def _cell(cell_id: str) -> str:
    text = SOURCE.read_text(encoding="utf-8")
    start = text.index(f":::cell {cell_id} ")
    end = text.index("\n:::cell ", start + 1)
    return text[start:end]


def test_zh_build_it_solution_has_chinese_comments() -> None:
    cell = _cell("11-3-b02")
    assert ":::instructor-zh" in cell
    zh = cell.split(":::instructor-zh", 1)[1]
    comments = re.findall(r"#\s*(.+)", zh)
    docstrings = re.findall(r'"""(.+?)"""', zh, flags=re.S)
    assert len(comments) >= 6
    for text in [*comments, *docstrings]:
        assert CJK.search(text), text


def test_within_budget_is_labelled_the_course_codes_wherever_it_is_taught() -> None:
    text = SOURCE.read_text(encoding="utf-8")
    for cell_id in ("11-3-00", "11-3-24", "11-3-f19", "11-3-b01", "11-3-b02"):
        cell = _cell(cell_id)
        for variant in re.split(r"\n:::(?:en|zh|student|instructor)[-a-z]*\n", cell)[1:]:
            if "within_budget" in variant:
                assert "the course's code" in variant or "课程代码" in variant, (
                    cell_id,
                    variant[:80],
                )
    assert text.count("within_budget") > 0
    # Nowhere is it called ctxlab's own (sources of every lab, the coverage map, the glossary).
    notebooks = SOURCE.parent.parent
    for path in [
        *sorted(SOURCE.parent.glob("*.md")),
        notebooks / "COVERAGE.md",
        notebooks / "GLOSSARY.zh.md",
    ]:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "within_budget" in line:
                assert not re.search(
                    r"ctxlab extension|ctxlab 扩展|ctxlab's third|ctxlab 的第三", line
                ), (
                    path.name,
                    number,
                )
