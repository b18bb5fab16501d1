"""No English prose in what the Chinese edition *prints* (issue 18, item 4; issue 27, item 3).

``test_zh_edition`` reads the sources: the labels a code cell passes to ``print`` and
``show``. This test reads the stored outputs of every executed zh notebook (the instructor
editions: the student editions are committed without outputs, and
``tests/test_student_run.py`` runs them): the streams, the ``text/plain`` reprs and the
``text/html`` tables (tags stripped). A run of three or more English words fails the test;
only the few pieces listed in :data:`ENGLISH_ON_PURPOSE` (the chapter's own English text, and
code) are taken out of a line first, each with its reason.

The session's own texts are no exception any more: the dialogue, the tool results and the
summaries are ctxlab's (the chapter gives ids and costs, not words), and the Chinese edition
uses their Chinese version (``ctxlab.fixtures``, ``language="zh"``). Everything else -- a
ctxlab error printed by a cell, a migration note, a case label, a table header, a warning --
must come out in Chinese too (through :mod:`ctxlab.lab.errors_zh` or a ``:::zh`` variant of
the source); an exception's type is named, and what it means is said in Chinese.

``CTXLAB_ZH_OUTPUTS=DIR`` points the test at executed copies elsewhere (DIR/instructor/*.ipynb):
to check a change of the sources before the notebooks are re-executed and committed.
"""

from __future__ import annotations

import html
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ctxlab import fixtures
from test_zh_edition import KEPT_WORDS

pytestmark = pytest.mark.teaching

ROOT = Path(__file__).resolve().parents[1]
ZH_DIR = Path(os.environ.get("CTXLAB_ZH_OUTPUTS") or ROOT / "notebooks" / "zh")
ZH_NOTEBOOKS = sorted(ZH_DIR.glob("instructor/*.ipynb"))

#: A segment of a line between Chinese characters (and Chinese punctuation).
SEGMENT = re.compile(r"[^\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]+")
#: A prose word: letters only. Ids (``r-test``, ``a1``), fields (``summary.goal``),
#: camelCase names and the words the chapter keeps in English are code, not prose.
TOKEN = re.compile(r"[A-Za-z0-9_.\-\[\]'’]+")
PROSE_WORDS = 3

#: English that may stand in any zh output: a piece of text -> why. Short, and none of it
#: is ctxlab's prose.
ENGLISH_ON_PURPOSE: dict[str, str] = {
    "Prefer small diffs.": "the chapter's own system content (patch-2), as the chapter writes it",
    "export function buildContext(": "TypeScript code: the read tool's result (often cut short)",
    "isinstance(True, int)": "Python code in the 11.1 bool-is-number hint",
    "python -m ctxlab grade submissions/*/*.ipynb --out grades/": "the grading command line",
}


#: The field names of the wire format (JSON keys of the fixtures): code, not prose.
WIRE_KEYS: set[str] = set()


def _wire_keys() -> None:
    """Collect the wire form's field names (the fixtures' JSON keys) into :data:`WIRE_KEYS`."""

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            WIRE_KEYS.update(value)
            for item in value.values():
                walk(item)
        elif isinstance(value, list | tuple):
            for item in value:
                walk(item)

    for path in (fixtures.recompacted_path(), fixtures.system_patch_path()):
        for entry in path:
            walk(entry.to_json())
    for record in [*fixtures.compaction_corruptions().values(), *fixtures.draft_records().values()]:
        walk(record)


_wire_keys()


def _output_texts(cell: dict[str, Any]) -> Iterator[str]:
    """What a reader sees of each output: the stream, else the richest text the front end
    shows (a widget or a figure shows no text; a table shows its HTML, not its repr)."""
    for output in cell.get("outputs", []):
        if output["output_type"] == "stream":
            yield "".join(output["text"])
        data = output.get("data", {})
        if "application/vnd.jupyter.widget-view+json" in data or "image/png" in data:
            continue
        if "text/html" in data:
            markup = "".join(data["text/html"])
            markup = re.sub(r"<style.*?</style>", " ", markup, flags=re.S)
            yield html.unescape(re.sub(r"<[^>]+>", " ", markup))
        elif "text/plain" in data:
            yield "".join(data["text/plain"])


def _prose_word(token: str) -> bool:
    word = token.strip("'’.")
    return (
        len(word) >= 2
        and word.isalpha()
        and word not in KEPT_WORDS
        and word not in WIRE_KEYS
        and not re.search(r"[a-z][A-Z]", word)
    )


def _prose_words(segment: str) -> list[str]:
    """The prose words of a segment."""
    return [word for word in TOKEN.findall(segment) if _prose_word(word)]


def english_prose(cell: dict[str, Any]) -> list[str]:
    """The English runs in a cell's stored outputs that are not listed on purpose."""
    found = []
    for text in _output_texts(cell):
        for line in text.splitlines():
            for piece in ENGLISH_ON_PURPOSE:
                line = line.replace(piece, " ")
            for segment in SEGMENT.findall(line):
                if len(_prose_words(segment.strip())) >= PROSE_WORDS:
                    found.append(segment.strip())
    return found


@pytest.mark.parametrize(
    "notebook", ZH_NOTEBOOKS, ids=[f"{p.parent.name}/{p.stem}" for p in ZH_NOTEBOOKS]
)
def test_zh_outputs_have_no_english_prose(notebook: Path) -> None:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    problems = [
        f"{cell.get('id')}: {run!r}"
        for cell in cells
        if cell["cell_type"] == "code"
        for run in english_prose(cell)
    ]
    assert not problems, "English prose in the zh edition's outputs:\n" + "\n".join(problems)


def test_the_check_sees_english_prose() -> None:
    cell = {
        "id": "x",
        "cell_type": "code",
        "outputs": [
            {
                "output_type": "stream",
                "text": ["session entry compact-1: summary.goal is missing\n"],
            },
            {
                "output_type": "execute_result",
                "data": {"text/html": ["<td>History is append-only: never edit or delete</td>"]},
            },
        ],
    }
    assert english_prose(cell) == [  # a fixture's English text too (issue 27)
        "session entry compact-1: summary.goal is missing",
        "History is append-only: never edit or delete",
    ]
    ids_only = {"id": "x", "outputs": [{"output_type": "stream", "text": ["calls, r-test, a1\n"]}]}
    assert english_prose(ids_only) == []


def test_a_fixture_text_in_english_is_english_prose() -> None:
    """The English session texts are no exception in the zh edition (issue 27)."""
    goal = fixtures.compact1_summary(language="en").goal
    cell = {"id": "x", "outputs": [{"output_type": "stream", "text": [f"goal: {goal}\n"]}]}
    assert english_prose(cell) != []
    chinese = fixtures.compact1_summary(language="zh").goal
    cell = {"id": "x", "outputs": [{"output_type": "stream", "text": [f"goal：{chinese}\n"]}]}
    assert english_prose(cell) == []


def test_the_notebooks_are_there() -> None:
    assert len(ZH_NOTEBOOKS) == 7  # the six labs and the course-start notebook
