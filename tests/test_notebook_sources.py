"""Notebook sources that cannot drift (issue 13): every committed edition is exactly what its
one source (``notebooks/_src/*.md``) builds, and an edit made in JupyterLab can be carried back
into the source with ``nbsource.py harvest``.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from nbsource_module import load_nbsource

REPO = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.teaching


nbsource = load_nbsource()
SOURCES = nbsource.load_sources()


def test_every_lab_has_a_source() -> None:
    labs = {source.lab for source in SOURCES}
    assert {"11.1", "11.2", "11.3", "11.4", "11.5", "11.x"} <= labs


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.name)
def test_committed_editions_are_what_the_source_builds(source: object) -> None:
    problems = [p for e in source.editions() for p in nbsource.drift(source, e)]  # type: ignore[attr-defined]
    assert not problems, "\n".join(problems) + "\nrun `make notebooks` after editing a source"


def test_no_committed_edition_lacks_a_source() -> None:
    assert nbsource.orphans(SOURCES) == []


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.name)
def test_source_text_round_trips(source: object) -> None:
    path = source.path  # type: ignore[attr-defined]
    text = path.read_text(encoding="utf-8")
    assert nbsource.write_source(nbsource.parse_source(text, path)) == text


def test_editions_pick_the_most_specific_variant() -> None:
    text = "\n".join(
        [
            ":::notebook demo lab=11.9 languages=en,zh",
            ":::cell d-00 markdown slide=slide",
            ":::en",
            "Hello",
            ":::zh",
            "你好",
            ":::cell d-01 code",
            ":::student",
            "answer = ...",
            ":::instructor",
            "answer = 42",
            ":::cell d-02 code tags=nbval-ignore-output only=instructor",
            "print(answer)",
        ]
    )
    source = nbsource.parse_source(text)
    student_zh = nbsource.build_notebook(source, nbsource.Edition("zh", "student"))
    teacher_en = nbsource.build_notebook(source, nbsource.Edition("en", "instructor"))
    assert [c.source for c in student_zh.cells] == ["你好", "answer = ..."]
    assert [c.source for c in teacher_en.cells] == ["Hello", "answer = 42", "print(answer)"]
    assert teacher_en.cells[2].metadata["tags"] == ["nbval-ignore-output"]
    assert student_zh.metadata["ctxlab"]["edition"] == "student"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (":::cell a markdown\nx", "starts with ':::notebook"),
        (":::notebook d lab=1 languages=en\n:::cell a table\nx", "markdown|code"),
        (":::notebook d lab=1 languages=en\n:::cell a code slide=big\nx", "slide type"),
        (":::notebook d lab=1 languages=en\n:::cell a code\n:::zh\nx", "languages are"),
        (":::notebook d lab=1 languages=en,zh\n:::cell a markdown\n:::en\nx", "no text for the zh"),
        (":::notebook d lab=1 languages=en\n:::cell a code\nx\n:::cell a code\ny", "duplicate"),
        (":::notebook d lab=1 languages=en\n:::cell a code\n:::bogus thing", "unknown directive"),
        (":::notebook d lab=1 languages=en\n:::cell a markdown slide=notes\nx", ":2: speaker"),
        (
            ":::notebook d lab=1 languages=en\n:::cell a markdown slide=notes only=student\nx",
            "needs only=instructor",
        ),
    ],
)
def test_malformed_sources_are_refused_with_a_line(text: str, message: str) -> None:
    with pytest.raises(nbsource.SourceError, match=message):
        nbsource.parse_source(text)


def test_harvest_carries_an_edit_back_into_the_right_variant(tmp_path: Path) -> None:
    source = next(s for s in SOURCES if s.lab == "11.3")
    (tmp_path / "notebooks" / "_src").mkdir(parents=True)
    source_copy = tmp_path / "notebooks" / "_src" / f"{source.name}.md"
    shutil.copy(source.path, source_copy)
    edition = nbsource.Edition("en", "instructor")
    notebook = json.loads(source.notebook_path(edition).read_text(encoding="utf-8"))
    markdown = next(c for c in notebook["cells"] if c["cell_type"] == "markdown")
    code = next(c for c in notebook["cells"] if c["cell_type"] == "code")
    markdown["source"] = "# Edited on the projector"
    new_cell = {
        "id": "lecturer-added",
        "cell_type": "code",
        "metadata": {"slideshow": {"slide_type": "-"}},
        "source": "1 + 1",
        "outputs": [],
        "execution_count": None,
    }
    index = notebook["cells"].index(code)
    notebook["cells"].insert(index + 1, new_cell)
    edited = tmp_path / "edited.ipynb"
    edited.write_text(json.dumps(notebook), encoding="utf-8")

    changes = nbsource.harvest(edited, repo=tmp_path)

    assert any(markdown["id"] in c and "updated" in c for c in changes)
    assert any("lecturer-added" in c and "new code cell" in c for c in changes)
    harvested = nbsource.parse_source(source_copy.read_text(encoding="utf-8"), source_copy)
    rebuilt = nbsource.build_notebook(harvested, edition)
    assert [c["source"] for c in rebuilt.cells] == [
        "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        for c in notebook["cells"]
    ]
    # Harvesting the same notebook again finds nothing left to carry back.
    assert nbsource.harvest(edited, repo=tmp_path) == []


def test_harvest_refuses_a_notebook_not_built_from_a_source(tmp_path: Path) -> None:
    stray = tmp_path / "stray.ipynb"
    stray.write_text(json.dumps({"cells": [], "metadata": {}}), encoding="utf-8")
    with pytest.raises(nbsource.SourceError, match="no 'ctxlab' metadata"):
        nbsource.harvest(stray, repo=tmp_path)


# ----------------------------------------------------------------------------- two languages
# issue 12: the Chinese edition is made from the same source as the English one. Code cells
# run the same code: besides the setup cell's language line, only string literals and
# comments may differ (issue 18: print labels, captions and docstrings in the edition's
# language); the sections are the same, and every markdown cell of the Chinese edition holds
# Chinese prose.

BILINGUAL = [s for s in SOURCES if "zh" in s.languages]
HAN = re.compile(r"[\u4e00-\u9fff]")


def _code_skeleton(text: str) -> list[tuple[int, str]]:
    """The tokens of a code cell without its string literals and comments (IPython magics,
    lines starting with ``%``, are kept as they are)."""
    import io
    import tokenize

    lines = [line for line in text.split("\n") if not line.startswith("%")]
    skeleton = []
    inside_fstring = 0  # 3.12+ tokenizes an f-string's fields: skip them, as 3.11 does
    for token in tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline):
        if sys.version_info >= (3, 12):
            if token.type == tokenize.FSTRING_START:
                inside_fstring += 1
                skeleton.append((tokenize.STRING, "<str>"))
                continue
            if token.type == tokenize.FSTRING_END:
                inside_fstring -= 1
                continue
            if inside_fstring:
                continue
        if token.type in (tokenize.COMMENT, tokenize.NL):
            continue
        if token.type == tokenize.STRING:
            skeleton.append((token.type, "<str>"))
            continue
        skeleton.append((token.type, token.string))
    # consecutive string parts (an f-string's pieces, implicit concatenation) count as one
    merged: list[tuple[int, str]] = []
    for item in skeleton:
        if item[1] == "<str>" and merged and merged[-1][1] == "<str>":
            continue
        merged.append(item)
    return merged


def _heading_levels(text: str) -> list[int]:
    return [len(m.group(1)) for m in re.finditer(r"^(#{1,6}) ", text, re.M)]


def _pairs(source: Any) -> list[tuple[Any, Any]]:
    pairs = []
    for role in nbsource.ROLES:
        en = nbsource.build_notebook(source, nbsource.Edition("en", role))
        zh = nbsource.build_notebook(source, nbsource.Edition("zh", role))
        pairs.append((en, zh))
    return pairs


@pytest.mark.parametrize("source", BILINGUAL, ids=lambda s: s.name)
def test_both_languages_have_the_same_cells_code_and_sections(source: Any) -> None:
    for en, zh in _pairs(source):
        assert [c.id for c in en.cells] == [c.id for c in zh.cells]
        for a, b in zip(en.cells, zh.cells, strict=True):
            assert a.cell_type == b.cell_type, a.id
            assert a.metadata == b.metadata, a.id
            if a.cell_type == "code":
                differ = [
                    (x, y)
                    for x, y in zip(a.source.split("\n"), b.source.split("\n"), strict=False)
                    if x != y
                ]
                if all("setup_notebook(" in x and "setup_notebook(" in y for x, y in differ):
                    continue  # only the language line of the setup cell differs
                assert _code_skeleton(a.source) == _code_skeleton(b.source), (
                    f"cell {a.id}: code differs between the editions beyond strings and comments"
                )
            else:
                assert _heading_levels(a.source) == _heading_levels(b.source), a.id


@pytest.mark.parametrize("source", BILINGUAL, ids=lambda s: s.name)
def test_every_markdown_cell_of_the_chinese_edition_is_chinese(source: Any) -> None:
    for _, zh in _pairs(source):
        for cell in zh.cells:
            if cell.cell_type == "markdown":
                assert HAN.search(cell.source), f"cell {cell.id} has no Chinese text"
        setup = next(c for c in zh.cells if "setup_notebook(" in c.source)
        assert 'setup_notebook(language="zh")' in setup.source


def slides_without_notes(source: object) -> list[str]:
    """The ids of the cells that start a slide (``slide`` or ``subslide``) but are not
    followed, before the next slide starts, by a speaker-notes cell (``notes``)."""
    missing: list[str] = []
    current: str | None = None
    has_notes = False
    for cell in source.cells:  # type: ignore[attr-defined]
        if cell.slide in ("slide", "subslide"):
            if current is not None and not has_notes:
                missing.append(current)
            current, has_notes = cell.id, False
        elif cell.slide == "notes" and cell.cell_type == "markdown":
            has_notes = True
    if current is not None and not has_notes:
        missing.append(current)
    return missing


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.name)
def test_every_slide_has_a_speaker_note(source: object) -> None:
    """Issue 11 (lecture fit): a lecturer presenting any slide finds a note for it."""
    missing = slides_without_notes(source)
    assert not missing, f"slides without a notes cell: {', '.join(missing)}"


def test_slides_without_notes_finds_a_slide_that_lacks_one() -> None:
    text = "\n".join(
        [
            ":::notebook demo lab=11.9 languages=en",
            ":::cell d-00 markdown slide=slide",
            "# One",
            ":::cell d-01 markdown slide=notes only=instructor",
            "A note.",
            ":::cell d-02 markdown slide=subslide",
            "## Two",
            ":::cell d-03 code slide=fragment",
            "1 + 1",
            ":::cell d-04 markdown slide=slide",
            "# Three",
            ":::cell d-05 markdown slide=notes only=instructor",
            "Another note.",
        ]
    )
    assert slides_without_notes(nbsource.parse_source(text)) == ["d-02"]


def test_harvest_moves_cells_and_keeps_the_other_roles_cells_in_place(tmp_path: Path) -> None:
    text = "\n".join(
        [
            ":::notebook demo lab=11.9 languages=en",
            ":::cell d-00 markdown",
            "Intro",
            ":::cell d-01 code only=student",
            "hint = 1",
            ":::cell d-02 code",
            "a = 1",
            ":::cell d-03 code",
            "b = 2",
        ]
    )
    (tmp_path / "notebooks" / "_src").mkdir(parents=True)
    source_path = tmp_path / "notebooks" / "_src" / "demo.md"
    source_path.write_text(text + "\n", encoding="utf-8")
    source = nbsource.parse_source(text, source_path)
    notebook = nbsource.build_notebook(source, nbsource.Edition("en", "instructor"))
    notebook.metadata["ctxlab"]["source"] = "notebooks/_src/demo.md"
    cells = notebook.cells
    notebook.cells = [cells[0], cells[2], cells[1]]  # d-03 moved above d-02
    edited = tmp_path / "demo.ipynb"
    edited.write_text(json.dumps(notebook), encoding="utf-8")

    changes = nbsource.harvest(edited, repo=tmp_path)

    assert "cells reordered as in the notebook" in changes
    harvested = nbsource.parse_source(source_path.read_text(encoding="utf-8"), source_path)
    assert [c.id for c in harvested.cells] == ["d-00", "d-01", "d-03", "d-02"]


def test_every_lab_has_an_english_and_a_chinese_edition() -> None:
    """Issue 12: every notebook exists in both languages, student and instructor alike."""
    assert {s.name for s in BILINGUAL} == {s.name for s in SOURCES}
    for source in SOURCES:
        for edition in source.editions():
            assert source.notebook_path(edition).is_file(), source.notebook_path(edition)


def test_the_code_skeleton_ignores_strings_and_comments_only() -> None:
    en = 'print("kept:", ", ".join(ids))  # the ids\nx = f"{n} entries"'
    zh = 'print("保留：", "、".join(ids))  # 保留的 id\nx = f"{n} 条 entry"'
    assert _code_skeleton(en) == _code_skeleton(zh)
    assert _code_skeleton(en) != _code_skeleton(en.replace("ids", "other"))
