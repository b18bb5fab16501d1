"""The deck-side slide splitter (notebooks/_build/slides_split.py, issue 18): pure functions
over notebook JSON, no browser. The browser test (tests/browser/test_browser_slide_fit.py)
measures the built decks."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from nbsource_module import load_build_module

REPO = Path(__file__).resolve().parent.parent
INSTRUCTOR = sorted((REPO / "notebooks").glob("*/instructor/*.ipynb"))


def _load() -> ModuleType:
    return load_build_module("slides_split")


split = _load()


def source(cell: dict[str, Any]) -> str:
    return str(split.cell_source(cell))


def code_cell(text: str, cell_id: str = "c1", outputs: list[Any] | None = None) -> dict[str, Any]:
    return {
        "cell_type": "code",
        "id": cell_id,
        "metadata": {},
        "execution_count": 7,
        "source": text,
        "outputs": outputs or [],
    }


def md_cell(text: str, cell_id: str, kind: str = "-") -> dict[str, Any]:
    return {
        "cell_type": "markdown",
        "id": cell_id,
        "metadata": {"slideshow": {"slide_type": kind}},
        "source": text,
    }


LONG_CODE = "\n".join(
    [
        "import math",
        "",
        "LIMIT = 3",
        "",
        "",
        "def f(values):",
        '    """Sum, checked."""',
        *[f"    a{i} = values[{i}]  # step {i}" for i in range(30)],
        "    total = sum(",
        *[f"        a{i}," for i in range(30)],
        "    )",
        "    return total",
        "",
        "",
        "def g(x):",
        *[f"    x = x + {i}" for i in range(12)],
        "    return x",
        "",
        "print(f(list(range(30))), g(1))",
    ]
)


# -- code ------------------------------------------------------------------------------------


@pytest.mark.parametrize("max_lines", [5, 12, 20, 30, 200])
def test_code_pieces_keep_every_line_once_in_order_and_are_at_most_n_lines(max_lines: int) -> None:
    pieces = split.split_code(LONG_CODE, max_lines)
    assert "".join(pieces) == LONG_CODE
    assert all(1 <= len(piece.splitlines()) <= max_lines for piece in pieces)
    total = len(LONG_CODE.splitlines())
    assert len(pieces) <= -(-total // max_lines) + 1  # as few as possible (one more at most)


def test_code_is_cut_at_top_level_statements_and_never_inside_brackets_when_it_can_be() -> None:
    pieces = split.split_code(LONG_CODE, 40)
    starts = [piece.splitlines()[0] for piece in pieces[1:]]
    # never a line inside the bracket of sum( … ) and never a continuation line
    assert all(not line.startswith("        a") and line.strip() != ")" for line in starts)
    assert any(line.startswith("def ") or line.startswith("print(") for line in starts)


def test_short_code_stays_whole_and_a_bad_limit_is_refused() -> None:
    assert split.split_code("x = 1\ny = 2\n", 5) == ["x = 1\ny = 2\n"]
    with pytest.raises(ValueError):
        split.split_code("x = 1\n", 0)


def test_code_that_does_not_tokenize_is_still_cut_losslessly() -> None:
    text = "%matplotlib inline\n" + "".join(f"x{i} = (\n" for i in range(25))
    pieces = split.split_code(text, 10)
    assert "".join(pieces) == text and all(len(p.splitlines()) <= 10 for p in pieces)


# -- a slide split into sub-slides ------------------------------------------------------------


def build_it_slide(language: str) -> list[dict[str, Any]]:
    title = "Build it — `f(values)`" if language == "en" else "动手实现 — `f(values)`"
    output = {"output_type": "stream", "name": "stdout", "text": "435 67\n"}
    return [
        md_cell("# Lab\n\nIntro.", "t0", "slide"),
        md_cell(f"## {title}\n\nWrite `f` yourself.\n", "b01", "slide"),
        md_cell("Say what f does.", "nb01", "notes"),
        code_cell(LONG_CODE, "b02", [output]),
        md_cell("## Check\n\nRun it.", "c01", "slide"),
    ]


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_long_build_it_slide_becomes_titled_sub_slides(language: str) -> None:
    cells = build_it_slide(language)
    before = json.dumps(cells, sort_keys=True)
    made = split.paginate(cells, language, page_height=600, split_above=600, max_code_lines=20)
    assert json.dumps(cells, sort_keys=True) == before, "paginate changed its input"
    pieces = [c for c in made if c["id"] == "b02" or c["id"].startswith("b02-part")]
    assert len(pieces) >= 3
    # every line of the cell exactly once, in order; at most 20 lines a piece
    assert "".join(source(c) for c in pieces) == LONG_CODE
    assert all(len(source(c).splitlines()) <= 20 for c in pieces)
    # outputs only on the last piece; every piece keeps the cell's prompt
    assert [bool(c["outputs"]) for c in pieces] == [False] * (len(pieces) - 1) + [True]
    assert {c["execution_count"] for c in pieces} == {7}
    # the titles: the slide's heading and (k/n), in the edition's language
    titles = [source(c) for c in made if c["metadata"].get("ctxlab_split_title")]
    n = len(titles) + 1
    heading = "Build it — `f(values)`" if language == "en" else "动手实现 — `f(values)`"
    if language == "en":
        assert titles == [f"### {heading} ({k}/{n})" for k in range(2, n + 1)]
        assert source(made[1]).startswith(f"## {heading} (1/{n})\n")
    else:
        assert titles == [f"### {heading}（{k}/{n}）" for k in range(2, n + 1)]
        assert source(made[1]).startswith(f"## {heading}（1/{n}）\n")
    # each title starts a sub-slide; nothing else does; the other slides are untouched
    for cell in made:
        kind = split.slide_type(cell)
        assert (kind == "subslide") == bool(cell["metadata"].get("ctxlab_split_title"))
    assert made[0] == cells[0] and made[-1] == cells[-1]
    # the notes stay right after the cell they were after, and ids stay unique
    assert [c["id"] for c in made].index("nb01") == [c["id"] for c in made].index("b01") + 1
    assert len({c["id"] for c in made}) == len(made)


def test_nothing_is_dropped_or_reordered() -> None:
    cells = build_it_slide("en")
    made = split.paginate(cells, "en", page_height=500, split_above=500, max_code_lines=15)
    originals = [c for c in made if not c["metadata"].get("ctxlab_split_title")]
    # joined back by original cell, the sources are the original ones, in the same order
    joined: dict[str, str] = {}
    order: list[str] = []
    for cell in originals:
        root = cell["id"].split("-part")[0]
        if root not in joined:
            order.append(root)
            joined[root] = ""
        joined[root] += source(cell)
    assert order == [c["id"] for c in cells]
    for cell in cells:
        expected = source(cell)
        if cell["id"] == "b01":  # only its heading gains "(1/n)"
            assert re.sub(r" \(1/\d+\)", "", joined["b01"], count=1) == expected
        else:
            assert joined[cell["id"]] == expected


def test_a_slide_that_fits_is_left_alone() -> None:
    cells = [md_cell("## Small\n\nText.", "s1", "slide"), code_cell("x = 1\n", "s2")]
    assert split.paginate(cells, "en") == cells


# -- tables ----------------------------------------------------------------------------------


def styler_table(rows: int) -> str:
    body = "".join(
        f'    <tr>\n      <td class="data row{i} col0" >record {i}</td>\n'
        f'      <td class="data row{i} col1" >verdict {i}</td>\n    </tr>\n'
        for i in range(rows)
    )
    return (
        '<style type="text/css">\n#T_x th {\n  text-align: left;\n}\n</style>\n'
        '<table id="T_x">\n  <caption>strict parser vs. migration</caption>\n'
        "  <thead>\n    <tr>\n      <th>draft record</th>\n      <th>verdict</th>\n"
        "    </tr>\n  </thead>\n  <tbody>\n" + body + "  </tbody>\n</table>\n"
    )


def test_a_long_html_table_is_cut_between_rows_with_its_header_repeated() -> None:
    html = styler_table(13)
    parts = split.split_html_table(html, 5)
    assert len(parts) == 3
    for part in parts:
        assert "<caption>strict parser vs. migration</caption>" in part
        assert "<th>draft record</th>" in part and part.count("<thead>") == 1
        assert "<style" in part and part.rstrip().endswith("</table>")
        assert 1 <= len(split.html_table_rows(part)) <= 5
    rows = [row for part in parts for row in split.html_table_rows(part)]
    assert rows == split.html_table_rows(html)
    assert split.split_html_table(html, 20) == [html]


def test_a_table_output_too_tall_for_a_slide_continues_on_sub_slides() -> None:
    output = {
        "output_type": "execute_result",
        "execution_count": 3,
        "metadata": {},
        "data": {"text/html": styler_table(40), "text/plain": "<Styler>"},
    }
    cells = [
        md_cell("### Every draft record at a glance", "x11", "subslide"),
        code_cell('display.show(lab11_x.draft_table(), "draft-records")', "x12", [output]),
    ]
    made = split.paginate(cells, "en", page_height=700, split_above=700)
    tables = [c for c in made if c["cell_type"] == "code"]
    assert len(tables) >= 3
    assert source(tables[0]) == source(cells[1]) and all(source(c) == "" for c in tables[1:])
    assert all(c["metadata"].get("ctxlab_output_only") for c in tables[1:])
    rows = [
        row
        for cell in tables
        for out in cell["outputs"]
        for row in split.html_table_rows(out["data"]["text/html"])
    ]
    assert rows == split.html_table_rows(styler_table(40))
    titles = [source(c) for c in made if c["metadata"].get("ctxlab_split_title")]
    assert titles[0] == f"### Every draft record at a glance (2/{len(titles) + 1})"


def test_a_long_markdown_table_repeats_its_header() -> None:
    header = "| chapter | ctxlab |\n|---|---|\n"
    rows = "".join(f"| `name{i}()` | `name_{i}()` |\n" for i in range(30))
    table = header + rows
    parts = split.split_markdown_table(table, 300)
    assert len(parts) > 1
    assert all(part.startswith(header) for part in parts)
    assert "".join(part[len(header) :] for part in parts) == rows


def test_markdown_blocks_keep_the_text_and_fenced_code_whole() -> None:
    text = "## T\n\nPara one\nstill one.\n\n```python\nx = 1\n\ny = 2\n```\n\n- a\n- b\n"
    blocks = split.markdown_blocks(text)
    assert "".join(blocks) == text
    assert any("x = 1\n\ny = 2" in block for block in blocks)


# -- language, and the real notebooks ------------------------------------------------------------


def test_the_language_comes_from_the_metadata_or_the_edition_path() -> None:
    assert split.language_of({"metadata": {"ctxlab": {"language": "zh"}}}) == "zh"
    assert split.language_of({"metadata": {}}, "notebooks/zh/instructor/11.1.ipynb") == "zh"
    assert split.language_of({"metadata": {}}, "notebooks/en/instructor/11.1.ipynb") == "en"
    assert split.piece_title("动手实现 — x", 2, 3, "zh") == "动手实现 — x（2/3）"
    assert split.piece_title("Build it — x", 2, 3, "en") == "Build it — x (2/3)"


@pytest.mark.parametrize("path", INSTRUCTOR, ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
def test_every_instructor_notebook_splits_losslessly_into_slides_of_legible_height(
    path: Path,
) -> None:
    nb = json.loads(path.read_text(encoding="utf-8"))
    widgets = nb["metadata"].get("widgets", {})
    state = widgets.get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    language = split.language_of(nb, str(path))
    assert language == path.parent.parent.name
    made = split.paginate(nb["cells"], language, widgets=state)
    # the code of every cell, in order, exactly once
    code = [source(c) for c in nb["cells"] if c["cell_type"] == "code"]
    pieces = [c for c in made if c["cell_type"] == "code"]
    rebuilt: list[str] = []
    for cell in pieces:
        if cell["id"] in {c["id"] for c in nb["cells"]}:
            rebuilt.append(source(cell))
        else:
            rebuilt[-1] += source(cell)
    assert rebuilt == code
    assert all(len(source(c).splitlines()) <= split.MAX_CODE_LINES for c in pieces)
    # the instructor's long solutions are cut (the reason for the splitter); the
    # course-start notebook has none
    assert len(pieces) > len(code) or path.stem == "00-course-start"
    # every slide (but a lone widget) is estimated legible now
    for slide in split.group_slides(made):
        height = sum(split.cell_height(cell, state) for cell in slide.cells)
        one_cell = sum(1 for cell in slide.cells if split.slide_type(cell) != "notes") <= 2
        assert height <= split.SPLIT_ABOVE or one_cell, split._slide_title(slide)


# -- wiring: the template runs it, `make slides` can import it ------------------------------------


TEMPLATES = REPO / "lecture" / "nbconvert"


def test_the_deck_template_runs_the_splitter_before_reveal_reads_the_slide_types() -> None:
    conf = json.loads((TEMPLATES / "ctxlab-reveal" / "conf.json").read_text(encoding="utf-8"))
    found = {
        key: value["type"]
        for key, value in conf["preprocessors"].items()
        if value.get("enabled") and value["type"] == "slides_split.SplitLongSlides"
    }
    assert len(found) == 1
    # nbconvert runs a template's preprocessors in key order; reveal's own one is 500-reveal
    assert next(iter(found)) < "500-reveal"


def test_make_slides_puts_the_splitter_on_the_python_path() -> None:
    from test_makefile import make_n

    recipe = make_n("slides", lang="en_US.UTF-8", from_scratch=True).replace("\\\n", " ")
    line = next(line for line in recipe.splitlines() if "nbconvert --to slides" in line)
    assert f'PYTHONPATH="{REPO}/notebooks/_build' in line
    assert line.index("PYTHONPATH=") < line.index("nbconvert --to slides")


def test_a_deck_built_with_the_template_has_the_split_sub_slides() -> None:
    import nbformat
    from nbconvert.exporters import SlidesExporter

    nb = nbformat.v4.new_notebook(metadata={"ctxlab": {"language": "zh"}})
    for cell in build_it_slide("zh"):
        maker = nbformat.v4.new_code_cell if cell["cell_type"] == "code" else None
        if maker is not None:
            made = maker(cell["source"], metadata=cell["metadata"], id=cell["id"])
            made["outputs"] = [nbformat.from_dict(out) for out in cell["outputs"]]
            made["execution_count"] = cell["execution_count"]
        else:
            made = nbformat.v4.new_markdown_cell(
                cell["source"], metadata=cell["metadata"], id=cell["id"]
            )
        nb.cells.append(made)
    sys.path.insert(0, str(REPO / "notebooks" / "_build"))
    try:
        exporter = SlidesExporter(
            extra_template_basedirs=[str(TEMPLATES)], template_name="ctxlab-reveal"
        )
        html, _ = exporter.from_notebook_node(nb)
    finally:
        sys.path.remove(str(REPO / "notebooks" / "_build"))
    assert "动手实现 — <code>f(values)</code>（2/" in html
    assert "动手实现 — <code>f(values)</code>（1/" in html
    # one code input (with the cell's prompt) per piece, as paginate made them
    pieces = [c for c in split.paginate(build_it_slide("zh"), "zh") if c["cell_type"] == "code"]
    assert len(pieces) > 1
    assert html.count('jp-InputArea-prompt">In\u00a0[7]:') == len(pieces)


def test_a_slide_without_a_heading_is_titled_by_its_bold_lead_words() -> None:
    cells = [
        md_cell("**Exercise 2.** Write `my_migration(wire, earlier)`.", "e1", "subslide"),
        code_cell(LONG_CODE, "e2"),
    ]
    made = split.paginate(cells, "en", page_height=600, split_above=600, max_code_lines=20)
    titles = [source(c) for c in made if c["metadata"].get("ctxlab_split_title")]
    assert titles and all(t.startswith("### Exercise 2. (") for t in titles)
    assert source(made[0]) == source(cells[0])  # no heading to number: the text is unchanged
    plain = [md_cell("Some text.", "p1", "subslide"), code_cell(LONG_CODE, "p2")]
    made = split.paginate(plain, "zh", page_height=600, split_above=600, max_code_lines=20)
    titles = [source(c) for c in made if c["metadata"].get("ctxlab_split_title")]
    assert titles and all(t.startswith("### 续（") for t in titles)
