"""No answers in the student edition (issue 17, item 4).

Every edition is built in memory from its source (``notebooks/_src/*.md``) by the
notebook-source tool, so these tests judge what ``make notebooks`` will write, not what happens
to be committed. An *exercise answer* is, mechanically:

1. **answer lines**: for every cell with a ``student`` and an ``instructor`` variant, each line
   of the instructor's text that the student's text lacks (whitespace collapsed; blank lines,
   comments, lone brackets and bare keywords such as ``else:`` or ``pass`` are not answers, nor
   is a line that a code cell shared by both roles already has, e.g. ``max_tokens=max_tokens,``).
   None may stand in any cell of the student edition of that notebook and language (as a line
   of a code cell, anywhere in a markdown cell).
2. **answer statements**: for a simple answer assignment in the instructor's variant of an
   *exercise* (a role-varied code cell that calls a ``.check_…`` function;
   ``NAME = <literal or arithmetic>``, e.g. ``available_at_40 = 40 - 3 - 4 - 2``), its value
   written the way an answer is written: ``… = 31`` after an arithmetic chain, the chain itself
   (``40 − 3 − 4 − 2``, any minus sign), ``NAME = 31``, a string as a quoted literal, or a list
   or set of ids as one whole comma/and-separated run (``u1, a1, u2 …``, ``a1|u2 和 a2|u3``) —
   never a bare number or a single id, which the chapter's worked example uses everywhere.
   A run of ids joined by arrows is a path (``sys → u1 → …``), not an answer statement. None may
   stand in a markdown cell of the student edition.
3. **speaker notes**: no ``slide=notes`` cell is part of a student edition (nbsource.py refuses
   a notes cell without ``only=instructor``).
4. **the lecturer's voice**: none of :data:`INSTRUCTOR_VOICE` stands in a student edition.
5. **no answer before the run** (issue 27): every committed student edition is exactly what
   ``nbsource.py build`` writes, with no output and no execution count in any cell, and no
   predict prompt ("Predict" / 「先预测」) is followed by a code cell holding a stored output.
   ``tests/test_student_run.py`` executes each student edition instead.
6. **asked before it is answered** (issue 32, item 3): for each question of :data:`ASKED` (per
   lab: a predict prompt, exercise or quiz question, and the texts that would answer it), no
   answer stands in what the student sees before the question: the markdown above it (the
   learning goals and tables too), the outputs of the code cells above it, and its own cell
   up to the question.
"""

from __future__ import annotations

import ast
import html
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from nbsource_module import load_nbsource

pytestmark = pytest.mark.teaching

nbsource = load_nbsource()
SOURCES = nbsource.load_sources()
#: The labs' sources: every source but the course-start notebook (``lab=course``: no exercise).
LAB_SOURCES = [source for source in SOURCES if source.lab != "course"]

#: Phrases only a lecturer is addressed with (en and zh), matched case-insensitively.
INSTRUCTOR_VOICE = (
    "in class",
    "the room",
    "ask the class",
    "let the class",
    "let a student",
    "students write",
    "aloud",
    "before you do",
    "instructor edition",
    "answer key",
    "before class",
    "ask:",
    "ask which",
    "ask before",
    "keep repeating",
    "move on",
    "课堂上",
    "给课堂",
    "全班",
    "教师版",
    "问问大家",
    "问问学生",
    "请大家",
    "先让一位同学",
    "大声读",
    "学生自己写",
    "学生照着",
    "课前",
    "指着",
    "反复强调",
    "往下讲",
    "揭晓之前",
)

#: Lines that are no answer even when only the instructor's variant has them.
TRIVIAL = re.compile(
    r"^(?:[\s()\[\]{},:;]*|pass|\.\.\.|else:|try:|break|continue|return|\"\"\"|''')$"
)
MINUS = str.maketrans({"−": "-", "–": "-", "×": "*", "（": "(", "）": ")"})
_WORD = r"[A-Za-z](?:[\w-]|\.(?=\w))*"  # an id may hold a dot, but does not end a sentence
ID = rf"{_WORD}(?:\|{_WORD})?"
#: One id, maybe in backticks or quotes, in a run of ids.
RUN_ITEM = re.compile(rf"[`\"']?({ID})[`\"']?")
RUN_SEPARATOR = re.compile(r"\s*(?:,|，|、|\band\b|和|及)\s*")


def _normalise(text: str) -> str:
    return " ".join(text.translate(MINUS).split())


def _answer_lines(student: str, instructor: str, shared: frozenset[str] = frozenset()) -> list[str]:
    """Lines of ``instructor`` that ``student`` lacks, normalised, without trivial ones and
    without the ``shared`` lines (those of code cells both roles have)."""
    have = {_normalise(line) for line in student.split("\n")} | shared
    lines = []
    for line in instructor.split("\n"):
        norm = _normalise(line)
        if norm in have or norm.startswith("#") or TRIVIAL.match(norm):
            continue
        lines.append(norm)
    return lines


def _shared_code_lines(source: Any, language: str) -> frozenset[str]:
    """Normalised lines of the code cells that read the same in both roles' editions."""
    student = nbsource.Edition(language, "student")
    instructor = nbsource.Edition(language, "instructor")
    lines = set()
    for cell in source.cells:
        both = cell.in_edition(student) and cell.in_edition(instructor)
        if cell.cell_type != "code" or not both:
            continue
        if cell.text_for(student) == cell.text_for(instructor):
            lines |= {_normalise(line) for line in cell.text_for(student).split("\n")}
    return frozenset(lines)


def _stands_in(line: str, cell_type: str, text: str) -> bool:
    """Whether an answer line stands in a cell: as one of its lines in code, anywhere in prose."""
    if cell_type == "markdown":
        return line in _normalise(text)
    return line in {_normalise(own) for own in text.split("\n")}


def _is_exercise(text: str) -> bool:
    """An exercise cell calls a ``.check_…`` function (the build-it check is not one)."""
    return ".check_" in text and "check_implementation" not in text


def _student_instructor_texts(cell: Any, language: str) -> tuple[str, str] | None:
    """The student's and the instructor's text of ``cell`` when they differ by role."""
    keys = {key for key, _ in cell.variants}
    if not keys & {"student", "instructor", f"student-{language}", f"instructor-{language}"}:
        return None
    student = nbsource.Edition(language, "student")
    instructor = nbsource.Edition(language, "instructor")
    if not (cell.in_edition(student) or cell.in_edition(instructor)):
        return None
    return cell.text_for(student), cell.text_for(instructor)


# ----------------------------------------------------------------------------- statements


def _value(node: ast.expr) -> Any:
    """The value of a literal or a little arithmetic (numbers, + - * and brackets)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
        left, right = _value(node.left), _value(node.right)
        if isinstance(node.op, ast.Add):
            return left + right
        return left - right if isinstance(node.op, ast.Sub) else left * right
    if isinstance(node, ast.Set):
        return {_value(element) for element in node.elts}
    return ast.literal_eval(node)


def answer_assignments(code: str) -> list[tuple[str, Any, str]]:
    """``(name, value, expression)`` of each simple top-level ``NAME = <answer>`` of ``code``;
    an assignment whose right side is no literal or arithmetic is not one."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    found = []
    for statement in tree.body:
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
            continue
        target = statement.targets[0]
        if not isinstance(target, ast.Name):
            continue
        try:
            value = _value(statement.value)
        except (ValueError, TypeError, SyntaxError):
            continue
        if value is Ellipsis:
            continue
        found.append((target.id, value, ast.unparse(statement.value)))
    return found


def _id_runs(text: str) -> list[list[str]]:
    """Every maximal run of ids joined by commas or "and" (en/zh); arrows end a run."""
    runs: list[list[str]] = []
    for line in text.split("\n"):
        position, run = 0, []
        while position < len(line):
            item = RUN_ITEM.match(line, position)
            if item is None:
                position += 1
                if run:
                    runs.append(run)
                run = []
                continue
            run.append(item.group(1))
            position = item.end()
            separator = RUN_SEPARATOR.match(line, position)
            if separator is None or separator.end() == position:
                runs.append(run)
                run = []
                continue
            position = separator.end()
        if run:
            runs.append(run)
    return [run for run in runs if len(run) >= 2]


def statements_of(name: str, value: Any, expression: str, text: str) -> list[str]:
    """The places where ``text`` states the answer ``name = value`` (see the module docstring)."""
    norm = _normalise(text)
    found = []
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = re.escape(repr(value))
        chain = rf"\d[\d\s.()]*[-+*][\d\s.()+\-*]*=\s*{number}(?!\.?\d)"
        for pattern in (chain, rf"\b{re.escape(name)}\s*=\s*{number}(?!\.?\d)"):
            found += [m.group(0) for m in re.finditer(pattern, norm)]
        if re.search(r"[-+*]", expression):
            loose = r"\s*".join(re.escape(part) for part in _normalise(expression).split())
            found += [m.group(0) for m in re.finditer(rf"(?<![\d.]){loose}(?!\.?\d)", norm)]
    elif isinstance(value, str):
        for quote in ('"', "'"):
            literal = quote + value.encode("unicode_escape").decode("ascii") + quote
            if literal in text or quote + value + quote in text:
                found.append(literal)
    elif isinstance(value, (list, tuple, set, frozenset)) and len(value) >= 2:
        items = [str(item) for item in value]
        for run in _id_runs(text):
            same = set(run) == set(items) if isinstance(value, (set, frozenset)) else run == items
            if same and len(run) == len(items):
                found.append(", ".join(run))
    return found


# ----------------------------------------------------------------------------- the checks


def answer_leaks(source: Any) -> list[str]:
    """Every exercise answer of the instructor edition that a student edition shows (1, 2)."""
    leaks = []
    for language in source.languages:
        student = nbsource.Edition(language, "student")
        shown = [cell for cell in source.cells if cell.in_edition(student)]
        shared = _shared_code_lines(source, language)
        for cell in source.cells:
            texts = _student_instructor_texts(cell, language)
            if texts is None:
                continue
            student_text, instructor_text = texts
            for line in _answer_lines(student_text, instructor_text, shared):
                for other in shown:
                    if _stands_in(line, other.cell_type, other.text_for(student)):
                        leaks.append(
                            f"{source.name} {language}/student: cell {other.id} shows the "
                            f"answer line {line!r} of cell {cell.id}"
                        )
            if cell.cell_type != "code" or not _is_exercise(instructor_text):
                continue
            for name, value, expression in answer_assignments(instructor_text):
                if name in {n for n, _, _ in answer_assignments(student_text)}:
                    continue  # the student's variant gives it too: not an answer
                for other in shown:
                    if other.cell_type != "markdown":
                        continue
                    prose = other.text_for(student)
                    for statement in statements_of(name, value, expression, prose):
                        leaks.append(
                            f"{source.name} {language}/student: cell {other.id} states "
                            f"{name} of cell {cell.id}: {statement!r}"
                        )
    return leaks


def notes_in_student_editions(source: Any) -> list[str]:
    """Ids of speaker-notes cells that a built student edition holds (3)."""
    found = []
    for edition in source.editions():
        if edition.role != "student":
            continue
        notebook = nbsource.build_notebook(source, edition)
        for cell in notebook.cells:
            if cell.metadata["slideshow"]["slide_type"] == "notes":
                found.append(f"{source.name} {edition.language}/student: {cell.id}")
    return found


def instructor_voice(source: Any) -> list[str]:
    """Lecturer-voice phrases in the built student editions (4)."""
    found = []
    for edition in source.editions():
        if edition.role != "student":
            continue
        for cell in nbsource.build_notebook(source, edition).cells:
            lowered = cell.source.lower()
            for phrase in INSTRUCTOR_VOICE:
                if phrase in lowered:
                    found.append(f"{source.name} {edition.language}/student: {cell.id}: {phrase!r}")
    return found


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.name)
def test_no_exercise_answer_of_the_instructor_edition_is_in_the_student_edition(
    source: Any,
) -> None:
    leaks = answer_leaks(source)
    assert not leaks, "\n".join(leaks)


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.name)
def test_the_student_edition_has_no_speaker_notes(source: Any) -> None:
    found = notes_in_student_editions(source)
    assert not found, "speaker notes in a student edition:\n" + "\n".join(found)


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.name)
def test_the_student_edition_does_not_speak_to_the_lecturer(source: Any) -> None:
    found = instructor_voice(source)
    assert not found, "lecturer's voice in a student edition:\n" + "\n".join(found)


def test_every_source_has_exercises_the_leak_check_reads() -> None:
    """The leak check is not vacuous: every lab has answer assignments it judges."""
    for source in LAB_SOURCES:
        answers = [
            answer
            for cell in source.cells
            if (texts := _student_instructor_texts(cell, "en"))
            and cell.cell_type == "code"
            and _is_exercise(texts[1])
            for answer in answer_assignments(texts[1])
        ]
        lines = [
            line
            for cell in source.cells
            if (texts := _student_instructor_texts(cell, "en"))
            for line in _answer_lines(*texts)
        ]
        assert lines, source.name
        if source.lab != "11.x":  # 11.x's exercises are functions: answer lines only
            assert answers, source.name


# ----------------------------------------------------------------------------- the checks catch


DEMO = "\n".join(
    [
        ":::notebook demo lab=11.9 languages=en,zh",
        ":::cell d-00 markdown slide=slide",
        ":::en",
        "## Exercise: with max_tokens=40, what is available? (31 − 3 − 4 − 2 = 22 was the example)",
        ":::zh",
        "## 练习：max_tokens=40 时额度是多少？",
        ":::cell d-01 code",
        ":::student",
        "available_at_40 = ...",
        "kept = ...",
        "first = ...",
        "lab.check_demo(available_at_40, kept, first)",
        ":::instructor",
        "available_at_40 = 40 - 3 - 4 - 2",
        'kept = ["u1", "a1", "u2"]',
        'first = "compact-2"',
        "lab.check_demo(available_at_40, kept, first)",
        ":::cell d-02 markdown",
        ":::en",
        "{leak_en}",
        ":::zh",
        "{leak_zh}",
    ]
)


@pytest.mark.parametrize(
    ("leak_en", "found"),
    [
        ("That is 40 − 3 − 4 − 2.", "40 - 3 - 4 - 2"),
        ("So 40 - 9 = 31 tokens.", "= 31"),
        ("available_at_40 = 31", "available_at_40 = 31"),
        ("Kept: `u1`, `a1` and `u2`.", "u1, a1, u2"),
        ('The answer is "compact-2".', '"compact-2"'),
        ('Copy this: kept = ["u1", "a1", "u2"]', "answer line"),
    ],
)
def test_the_leak_check_finds_an_answer_statement(leak_en: str, found: str) -> None:
    text = DEMO.replace("{leak_en}", leak_en).replace("{leak_zh}", "没有答案。")
    leaks = answer_leaks(nbsource.parse_source(text))
    assert any(found in leak for leak in leaks), leaks


@pytest.mark.parametrize(
    "harmless",
    [
        "The chapter's budget: 31 tokens, 31 − 3 − 4 − 2 = 22.",
        "The path: `sys → u1 → a1 → u2 → a2`.",
        "`u1` opens a group; `compact-2` is the newest compaction.",
        "Ids such as u1, a1 or u3.",
    ],
)
def test_the_leak_check_lets_the_worked_example_be(harmless: str) -> None:
    text = DEMO.replace("{leak_en}", harmless).replace("{leak_zh}", "没有答案。")
    assert answer_leaks(nbsource.parse_source(text)) == []


def test_the_voice_check_finds_the_lecturer_addressed() -> None:
    text = DEMO.replace("{leak_en}", "Ask the room to add them up.").replace(
        "{leak_zh}", "先请大家把它们加起来。"
    )
    found = instructor_voice(nbsource.parse_source(text))
    assert any("'the room'" in f for f in found) and any("'请大家'" in f for f in found), found


def test_a_harvested_notes_cell_becomes_instructor_only(tmp_path: Any) -> None:
    import json

    text = ":::notebook demo lab=11.9 languages=en\n:::cell d-00 markdown slide=slide\n# One\n"
    (tmp_path / "notebooks" / "_src").mkdir(parents=True)
    source_path = tmp_path / "notebooks" / "_src" / "demo.md"
    source_path.write_text(text, encoding="utf-8")
    source = nbsource.parse_source(text, source_path)
    notebook = nbsource.build_notebook(source, nbsource.Edition("en", "instructor"))
    notebook.metadata["ctxlab"]["source"] = "notebooks/_src/demo.md"
    notebook.cells[0].metadata["slideshow"]["slide_type"] = "notes"
    added = dict(notebook.cells[0], id="d-01", source="A new note.")
    notebook.cells.append(added)
    edited = tmp_path / "demo.ipynb"
    edited.write_text(json.dumps(notebook), encoding="utf-8")

    nbsource.harvest(edited, repo=tmp_path)

    harvested = nbsource.parse_source(source_path.read_text(encoding="utf-8"), source_path)
    assert [(c.id, c.slide, c.only) for c in harvested.cells] == [
        ("d-00", "notes", "instructor"),
        ("d-01", "notes", "instructor"),
    ]


# --------------------------------------------------------------- no answer before the run

STUDENT_EDITIONS = sorted(nbsource.NOTEBOOKS.glob("*/student/*.ipynb"))
PREDICT = re.compile(r"Predict|先预测")


def stored_outputs(notebook: dict[str, Any]) -> list[str]:
    """Cells of a committed notebook that hold an output or an execution count."""
    return [
        f"cell {cell.get('id')}"
        for cell in notebook["cells"]
        if cell["cell_type"] == "code" and (cell.get("outputs") or cell.get("execution_count"))
    ]


def answered_prompts(notebook: dict[str, Any]) -> list[str]:
    """Predict prompts whose next code cell holds a stored output (its answer)."""
    cells = notebook["cells"]
    found = []
    for index, cell in enumerate(cells):
        text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] != "markdown" or not PREDICT.search(text):
            continue
        following = next((c for c in cells[index + 1 :] if c["cell_type"] == "code"), None)
        if following is not None and following.get("outputs"):
            found.append(f"cell {cell.get('id')} is answered by cell {following.get('id')}")
    return found


@pytest.mark.parametrize("path", STUDENT_EDITIONS, ids=lambda p: "/".join(p.parts[-3:]))
def test_the_student_edition_is_committed_without_outputs(path: Path) -> None:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    assert stored_outputs(notebook) == [], f"{path.name}: run `nbsource.py build`"
    assert answered_prompts(notebook) == [], path.name


def test_every_student_edition_has_predict_prompts_the_check_reads() -> None:
    prompts = 0
    for path in STUDENT_EDITIONS:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        prompts += sum(
            1
            for c in cells
            if c["cell_type"] == "markdown" and PREDICT.search("".join(c["source"]))
        )
    labs = [path for path in STUDENT_EDITIONS if path.name != "00-course-start.ipynb"]
    assert len(labs) == 12 and prompts >= 12 * 2, prompts


def test_a_predict_prompt_answered_by_a_stored_output_is_found() -> None:
    shown = {"output_type": "stream", "name": "stdout", "text": "22\n"}
    notebook = {
        "cells": [
            {"cell_type": "markdown", "id": "p", "source": "**Predict, then run:** how many?"},
            {"cell_type": "markdown", "id": "m", "source": "A note."},
            {"cell_type": "code", "id": "c", "source": "print(22)", "outputs": [shown],
             "execution_count": 3},
            {"cell_type": "markdown", "id": "q", "source": "**先预测，再运行：**还剩多少？"},
            {"cell_type": "code", "id": "d", "source": "print(1)", "outputs": [],
             "execution_count": None},
        ]
    }  # fmt: skip
    assert answered_prompts(notebook) == ["cell p is answered by cell c"]
    assert stored_outputs(notebook) == ["cell c"]


# ------------------------------------------------------------- asked before it is answered

#: An id in a quoted or bare list: ``u4``, ``'u4'``, `` `u4` ``.
_Q = r"['\"`]?"


@dataclass(frozen=True)
class Asked:
    """One question a student edition asks (a predict prompt, an exercise or a quiz
    question) and the texts that would answer it.

    ``question`` is a regex that finds the question in the edition (its cell, and its place
    in the cell); ``answers`` are regexes, each one way the prose or an output could state
    the answer. None may match in what the student sees before the question: the markdown
    of the cells above it (learning goals and tables included), the outputs of the code
    cells above it (a code cell both roles share shows the student what the executed
    instructor edition stores), and the question's own cell up to the question."""

    lab: str
    kind: str  # "predict", "exercise" or "quiz"
    question: str
    answers: tuple[str, ...]
    why: str
    language: str = "zh"


#: Issue 32, item 3: the instances the issue names first, then those found by reading each zh
#: student edition as a student. The data follows the notebooks: a question reworded or
#: dropped makes the test say so (update its entry then).
ASKED: tuple[Asked, ...] = (
    # -- 11.1
    Asked("11.1", "predict", r"整条路径一共多少 token",
          (r"一共\s*32", r"整条路径：\s*32", r"7 \+ 7 \+ 15"),
          "the path's total and the group costs, before the cell computes them"),
    Asked("11.1", "predict", r"summary 有几个字段", (r"七字段\s*summary", r"七个字段"),
          "the learning goals say 「七字段 summary」 before the prompt asks how many fields"),
    Asked("11.1", "predict", r"parser 拒绝本章这条记录时，错误信息会指出什么",
          (r"entry compact-1[：:]\s*summary\.files",),
          "the refusal's message, naming compact-1 and summary.files, before the run prints it"),
    Asked("11.1", "predict", r"两个 Store 会拒绝 `compact-1` 吗",
          (r"没有 compaction 专用代码", r"不需要 compaction 专用代码"),
          "the chapter's claim on the stores, stated before the prompt and its run"),
    Asked("11.1", "quiz", r"`JsonlSessionStore.open` 打开这个文件会怎样",
          (r"(?:报错|错误)[^\n。]{0,8}第 11 行", r"line 11: session entry compact-1"),
          "the reopen of a file with a bad line 11 (the old quiz asked what the check table's "
          "row on `files` says)"),
    Asked("11.1", "quiz", r"重新打开的 Store 返回几条 entry",
          (r"entry 条数：\s*13\b", r"\b13\s*条\s*entry"),
          "a cell above printing the count for the very same input (13)"),
    # -- 11.2
    Asked("11.2", "predict", r"一共几组？", (r"u1`?、`?u2`? 和 `?u3`? 各自开启一组",
          r"tool result 仍属于 u3 开始的同一组", r"开篇路径分成三组"),
          "the title (the chapter's heading) said where the two tool results go"),
    Asked("11.2", "exercise", r"`u3` 开始的那一组包含哪些 id",
          (rf"{_Q}u3{_Q}\s*[,，、]\s*{_Q}calls{_Q}\s*[,，、]\s*{_Q}r-test{_Q}\s*[,，、]\s*"
           rf"{_Q}r-read{_Q}\s*[,，、]\s*{_Q}a3{_Q}",),
          "the group of u3 as a list"),
    Asked("11.2", "predict", r"遍历怎样处理 `patch-1`",
          (r"不会切开或混入哪一组",),
          "the chapter's sentence is the answer: it stands after the run"),
    Asked("11.2", "predict", r"如果按位置配对，`read-1` 会配上哪条 result",
          (r"`?r-read`?\s*回答\s*`?read-1", r"`?read-1`?\s*的\s*result\s*是\s*`?r-read"),
          "the pairing, before the cell prints it"),
    Asked("11.2", "exercise", r"列出预算可以切开开篇路径的所有位置",
          (rf"{_Q}a1\|u2{_Q}\s*(?:[,，、]|和)\s*{_Q}a2\|u3{_Q}", r"a1\|u2\s+合法"),
          "the two legal cuts, as a list or as the cell's ✔ lines"),
    Asked("11.2", "exercise", r"哪条 entry 带着分组无法配对的 `toolCallId`",
          (r"拒绝：[^\n]{0,40}entry r-test",),
          "the refusal of unknown-1 names r-test; it is printed after the exercise"),
    # -- 11.3
    Asked("11.3", "predict", r"哪些 entry id 会被保留", (r"留下第二、三组", r"保留：\s*u2"),
          "the title (the chapter's heading) answered the first prompt"),
    Asked("11.3", "predict", r"`result.messages` 里有几条消息",
          (r"返回的 messages 依次是", r"却不在 keptEntryIds 里", r"\b9\s*条消息"),
          "issue 32: the chapter's answer is quoted after the prompt and its run"),
    Asked("11.3", "predict", r"同一条路径去掉 `sys`，预算不变",
          (r"这一项为 0，结果里也没有开头的 system",),
          "the chapter's sentence on a path without a system message stands after the run"),
    Asked("11.3", "predict", r"它会被整组丢掉、从中间截断，还是完整返回",
          (r"结果允许超过 maxTokens", r"仍然?完整返回"),
          "the chapter's sentence on the overflowing group stands after the run"),
    Asked("11.3", "exercise", r"40 个 token 能留下什么",
          (rf"(?:保留|kept_entry_ids)\S{{0,2}}\s*[:：]?\s*{_Q}u1{_Q}\s*[,，、]\s*{_Q}a1{_Q}",),
          "the ids kept at 40 (all of them), printed"),
    Asked("11.3", "exercise", r"`max_tokens` 最小取多少",
          (r"3 \+ \(7 \+ 7 \+ 15\) \+ 4 \+ 2", r"(?<![\d.])38(?![\d.])"),
          "the smallest budget that keeps everything: 38"),
    Asked("11.3", "quiz", r"同样的设置，但 `max_tokens=5`",
          (r"消息额度：\s*0\b",),
          "a cell above printed the allowance for the very same budget"),
    # -- 11.4
    Asked("11.4", "predict", r"`compact-1` 的 `parentId` 会是什么",
          (r"parent_id: 'a3'", r"`?parentId`?\s*取自"),
          "the parent, before the cell prints it"),
    Asked("11.4", "predict", r"交给 parser 往返一次，结果还和原来相等吗",
          (r"EntryParseError", r"summary\.goal\s*不能为空"),
          "the error of a blank goal, before the cell prints it"),
    Asked("11.4", "exercise", r"哪些 id 能被 `create_compaction_entry`\s*接受",
          (r"`?u2`?\s*合法", r"`?a2`?、`?calls`?、`?r-test`?",
           rf"{_Q}u1{_Q}\s*[,，、]\s*{_Q}u2{_Q}\s*(?:[,，、]|和)\s*{_Q}u3{_Q}"),
          "issue 32: the learning goals and the cell before exercise 1 listed the answer"),
    Asked("11.4", "predict", r"哪些 id 会被接受？\s*`compact-1` 是从",
          (r"会拒绝\s*`firstKeptEntryId: \"patch-2\"`", r"`u1` 被接受"),
          "the chapter's patch-2 example is the answer: it stands after the run"),
    Asked("11.4", "exercise", r"刚调用完 `create_compaction_entry\(\.\.\.\)` 时，它有几条",
          (r"创建之后：\s*10\b", r"只有显式调用\s*`?store\.append`?\s*才会写入",
           r"只有\s*`?store\.append`?\s*(?:才)?会写入", r"不接收\s*Store", r"显式写入"),
          "the learning goals, the subtitle and the section heading said that only the append "
          "writes"),
    Asked("11.4", "exercise", r"它的 `parentId` 会是什么",
          (r"parent(?:_id|Id)`?\s*[:：是为]\s*['\"`]?a4",),
          "compact-2's parent, a4"),
    Asked("11.4", "quiz", r"现在 Store 里有几条 entry",
          (r"store\.append 之后：\s*14\b", r"\b14\s*条\s*entry"),
          "a count printed for the very same input (the old quiz asked what cell 11-4-13 prints)"),
    Asked("11.4", "quiz", r"末尾再接一条 metadata entry `meta-1`",
          (r"parent(?:_id|Id)`?\s*[:：是为=]\s*['\"`]?meta-1",),
          "compact-2's parent after a trailing metadata entry (the old quiz repeated exercise 3)"),
    # -- 11.5
    Asked("11.5", "predict", r"十条原消息还有几条留在 session 里", (r"什么都没有删除",),
          "the heading of the prompt's own cell answers it"),
    Asked("11.5", "predict", r"哪些组放得下？选择停在哪里",
          (r"放不下：停止", r"kept_entry_ids：\s*u3"),
          "the ledger's verdicts and the kept ids, before the cells compute them"),
    # the groups printed as tuples ("组 ('u4', 'a4')") are no kept ids: excluded
    Asked("11.5", "exercise", r"把 `max_tokens` 改成 31",
          (rf"(?:^|(?<!组 )[:：\[(（]\s*){_Q}u4{_Q}\s*[,，、]\s*{_Q}a4{_Q}\s*(?:$|[\])）])",),
          "issue 32: kept at 31 on the resumed path is u4, a4"),
    Asked("11.5", "exercise", r"哪个\s*compaction 的摘要会交给模型",
          (r"`?compact-1`?\s*的摘要不再进入", r"只读取\s*`?compact-2`?",
           r"发送的是 compact-2 的摘要"),
          "issue 32: learning goal 2 stated exercise 2's answer"),
    Asked("11.5", "exercise", r"开头那条 system message，`content` 是\s*什么",
          (r"BASE\\n\\nPrefer small diffs",),
          "the replayed content, as a string"),
    Asked("11.5", "predict", r"相同的选项对同一条路径构建两次",
          (r"互不影响的副本", r"独立副本"),
          "the heading of the prompt's own cell said the builds are independent copies"),
    Asked("11.5", "predict", r"预算 31 时，哪一份上下文发送的原消息更多",
          (r"摘要做得太早", r"没有 compaction 时保留 u3"),
          "the comparison's answer, before the figure is drawn"),
    Asked("11.5", "quiz", r"`kept_entry_ids` 的第一条是哪条 entry",
          (r"kept_entry_ids：\s*u4\b",),
          "the answer for the very same input (the old quiz asked what cell 11-5-16 prints)"),
    Asked("11.5", "quiz", r"在去掉 `sys` 的 system-patch 路径上",
          (r"去掉 sys 后是 patch-1", r"timestamp\s*取自\s*`?patch-1"),
          "the replay's timestamp without sys (the old quiz asked what cell 11-5-21 prints)"),
    # -- the English editions: the instances issue 32 names
    Asked("11.2", "predict", r"How many groups\?", (r"`u1`, `u2` and `u3` each open a group",
          r"Both tool results still belong to the group `u3` starts"),
          "the prompt's own cell and the subtitle said three groups", "en"),
    Asked("11.3", "predict", r"Which entry ids are kept",
          (r"keep groups 2 and 3", r"留下第二、三组"), "the title answered the first prompt", "en"),
    Asked("11.3", "predict", r"How many messages does `result.messages` hold",
          (r"返回的 messages 依次是", r"yet it is not in `keptEntryIds`"),
          "issue 32: the chapter's answer is quoted after the prompt and its run", "en"),
    Asked("11.4", "exercise", r"opening-path ids that `create_compaction_entry` accepts",
          (r"`u2` is valid", r"`a2`,?\s+`calls`,?\s+(?:and\s+)?`r-test`"),
          "issue 32: the learning goals and the cell before exercise 1 listed the answer", "en"),
    Asked("11.4", "exercise", r"How many entries does it hold right after",
          (r"only an explicit `store\.append` writes", r"only `store\.append` writes",
           r"append explicitly"),
          "the learning goals and the headings said that only the append writes", "en"),
    Asked("11.5", "exercise", r"which\s+compaction's summary reaches the model",
          (r"makes `compact-1`'s summary disappear",),
          "issue 32: learning goal 2 stated exercise 2's answer", "en"),
    Asked("11.5", "predict", r"Two builds of the same path with the same options",
          (r"independent copies",),
          "the heading of the prompt's own cell said the builds are independent copies", "en"),
)  # fmt: skip


def _output_text(output: dict[str, Any]) -> str:
    """What a student sees of one output: its stream, its table (tags dropped) or its repr."""
    if output.get("output_type") == "stream":
        return "".join(output["text"])
    data = output.get("data", {})
    if "text/html" in data:
        markup = re.sub(r"<style.*?</style>", " ", "".join(data["text/html"]), flags=re.S)
        return html.unescape(re.sub(r"<[^>]+>", " ", markup))
    return "".join(data.get("text/plain", ""))


def stored_outputs_by_cell(language: str, name: str) -> dict[str, str]:
    """Cell id -> the text of its outputs in the executed instructor edition."""
    path = nbsource.NOTEBOOKS / language / "instructor" / f"{name}.ipynb"
    if not path.is_file():
        return {}
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return {
        str(cell.get("id")): "\n".join(_output_text(o) for o in cell.get("outputs", []))
        for cell in cells
        if cell["cell_type"] == "code"
    }


def seen_before(source: Any, asked: Asked, outputs: dict[str, str]) -> list[tuple[str, str]] | None:
    """``(where, text)`` of everything the student sees before ``asked``'s question, in
    order; ``None`` when the edition does not ask it."""
    student = nbsource.Edition(asked.language, "student")
    instructor = nbsource.Edition(asked.language, "instructor")
    seen: list[tuple[str, str]] = []
    for cell in source.cells:
        if not cell.in_edition(student):
            continue
        text = cell.text_for(student)
        if cell.cell_type == "markdown":
            found = re.search(asked.question, text)
            if found:
                return [*seen, (f"cell {cell.id} above the question", text[: found.start()])]
            seen.append((f"cell {cell.id}", text))
        elif cell.in_edition(instructor) and cell.text_for(instructor) == text:
            seen.append((f"the output of cell {cell.id}", outputs.get(cell.id, "")))
    return None


def answered_before_asked(source: Any, asked: Asked, outputs: dict[str, str]) -> list[str]:
    """Where an answer of ``asked`` stands before its question (item 6)."""
    seen = seen_before(source, asked, outputs)
    if seen is None:
        return [f"{asked.lab} {asked.language}/student: the {asked.kind} {asked.question!r} is "
                "not asked any more: update its entry of ASKED"]  # fmt: skip
    found = []
    for where, text in seen:
        for answer in asked.answers:
            for match in re.finditer(answer, text, flags=re.MULTILINE):
                found.append(
                    f"{asked.lab} {asked.language}/student: {where} answers the {asked.kind} "
                    f"{asked.question!r} before it is asked: {match.group(0)!r} ({asked.why})"
                )
    return list(dict.fromkeys(found))


@pytest.mark.parametrize("lab", sorted({asked.lab for asked in ASKED}))
def test_no_question_is_answered_before_it_is_asked(lab: str) -> None:
    """Issue 32, item 3: the prose, learning goals, tables and outputs a student sees before
    a predict prompt, an exercise or a quiz question do not hold its answer."""
    (source,) = [s for s in LAB_SOURCES if s.lab == lab]
    problems = []
    for asked in (a for a in ASKED if a.lab == lab):
        outputs = stored_outputs_by_cell(asked.language, source.name)
        problems += answered_before_asked(source, asked, outputs)
    assert not problems, "\n".join(problems)


def test_every_lab_has_questions_the_prose_check_reads() -> None:
    labs = {source.lab for source in LAB_SOURCES} - {"11.x"}
    assert labs <= {asked.lab for asked in ASKED}
    for asked in ASKED:
        for pattern in (asked.question, *asked.answers):
            re.compile(pattern)


ASKING = "\n".join(
    [
        ":::notebook demo lab=11.9 languages=zh",
        ":::cell d-00 markdown",
        "# 演示\n\n**学习目标。** 说明 `u2` 合法。",
        ":::cell d-01 code",
        "print('保留：u4, a4')",
        ":::cell d-02 markdown",
        "**先预测，再运行。** 会接受哪几条？",
        ":::cell d-03 markdown",
        "`u2` 合法；保留：u4, a4。",
    ]
)


def test_the_prose_check_finds_an_answer_above_its_question() -> None:
    source = nbsource.parse_source(ASKING)
    asked = Asked("11.9", "predict", r"会接受哪几条", (r"`?u2`?\s*合法", r"u4, a4"), "demo")
    found = answered_before_asked(source, asked, {"d-01": "保留：u4, a4\n"})
    assert len(found) == 2, found  # the goals and the output above; not the cell after it
    assert "cell d-00" in found[0] and "the output of cell d-01" in found[1]
    assert answered_before_asked(source, asked, {}) == [found[0]]
    gone = Asked("11.9", "predict", r"一共几组", (r"三组",), "demo")
    assert "not asked any more" in answered_before_asked(source, gone, {})[0]
