"""The classroom kit of each lab (issue 27, items 4 and 5): ``ctxlab.lab.classroom`` and its
cells in the notebook sources.

Every edition is built in memory from ``notebooks/_src`` (what ``make notebooks`` writes).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chapter_text import chapter_text_if_here
from ctxlab.lab import classroom
from ctxlab.lab.grading import behaviour_keys, behaviour_source
from ctxlab.lab.grading.labs import catalogue
from ctxlab.lab.language import set_language
from nbsource_module import load_nbsource
from test_checklists import _build_it_text, _items_by_kind, item_keys

pytestmark = pytest.mark.teaching

nbsource = load_nbsource()
SOURCES = {source.lab: source for source in nbsource.load_sources()}
QUIZ_LABS = ("11.1", "11.2", "11.3", "11.4", "11.5")
PERIODS = {"11.1": 90, "11.2": 90, "11.3": 90, "11.4": 90, "11.5": 90}
#: Labs without the recap and timing cells (issue 32: that boilerplate is in the course-start
#: notebook, linked in one line after the title).
LEAN = {"11.1", "11.2", "11.5"}
COURSE_START = {
    "zh": "检查表怎么读、成绩以什么为准、怎样提交：见 [开课须知](00-course-start.ipynb)。",
    "en": "How to read the check table, which result counts for your grade, how to hand in: "
    "[Course start](00-course-start.ipynb).",
}
REPO = Path(__file__).resolve().parents[1]
HAN = re.compile(r"[\u4e00-\u9fff]")
EDITIONS = [(language, role) for language in ("en", "zh") for role in ("student", "instructor")]


@pytest.fixture(params=["en", "zh"])
def language(request: pytest.FixtureRequest) -> Iterator[str]:
    set_language(request.param)
    yield str(request.param)
    set_language("en")


def _chapter_texts() -> list[str]:
    """The chapter's list of what its tests fix: as Lab 11.5 quotes it (cell 11-5-g04, in the
    repository), and from the chapter itself where it is on this machine."""
    g04 = _cells("11.5", "zh", "student")["11-5-g04"].source
    quote = " ".join(g04[g04.index("「这些测试固定了") :].split("」")[0].split())
    texts = [quote]
    text = chapter_text_if_here()
    if text is not None:
        chapter = " ".join(text.split())
        texts.append(chapter[chapter.index("这些测试固定了") :].split("。")[0])
    return texts


def _cells(lab: str, language: str, role: str) -> dict[str, Any]:
    notebook = nbsource.build_notebook(SOURCES[lab], nbsource.Edition(language, role))
    return {cell.id: cell for cell in notebook.cells}


def _n(lab: str) -> str:
    return lab.replace(".", "-")


def _exercise_cells(lab: str) -> set[str]:
    """Ids of the self-checked exercise cells (not the build-it check, not the quiz)."""
    cells = _cells(lab, "en", "instructor")
    return {
        cell_id
        for cell_id, cell in cells.items()
        if cell.cell_type == "code"
        and ".check_" in cell.source
        and "check_implementation" not in cell.source
        and "check_quiz" not in cell.source
    }


# ----------------------------------------------------------------------------- timing plans


@pytest.mark.parametrize("lab", QUIZ_LABS)
def test_the_core_rows_fit_the_class_period(lab: str) -> None:
    plan = classroom.timing_plan(lab)
    assert plan.period == PERIODS[lab]
    assert plan.core_minutes == PERIODS[lab], (lab, plan.core_minutes)
    assert plan.stretch_minutes > 0
    assert all(row.minutes > 0 for row in plan.rows)


def test_the_optional_lab_is_all_stretch() -> None:
    plan = classroom.timing_plan("11.x")
    assert plan.period is None and plan.core_minutes == 0 and plan.stretch_minutes > 0


@pytest.mark.parametrize("lab", classroom.LABS)
def test_every_plan_row_starts_at_a_cell_of_the_notebook_in_order(lab: str) -> None:
    ids = list(_cells(lab, "en", "student"))
    rows = [row.cell for row in classroom.timing_plan(lab).rows]
    assert all(cell in ids for cell in rows), [c for c in rows if c not in ids]
    assert [ids.index(c) for c in rows] == sorted(ids.index(c) for c in rows), "notebook order"


@pytest.mark.parametrize("lab", classroom.LABS)
def test_every_exercise_has_a_core_or_stretch_mark(lab: str) -> None:
    marked = {row.cell: row.mark for row in classroom.timing_plan(lab).exercises}
    assert set(marked) == _exercise_cells(lab)
    assert set(marked.values()) <= {"core", "stretch"}


@pytest.mark.parametrize("lab", QUIZ_LABS)
@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_check_tables_extras_are_stretch(lab: str, language: str) -> None:
    """The stretch rows are the grading registry's ctxlab rows, and the keys the build-it
    checklist lists under "ctxlab extensions" only (the course's code is core)."""
    kinds = _items_by_kind(_build_it_text(SOURCES[lab], language))
    core = {key for item in kinds["chapter"] for key in item_keys(item) or []}
    extra = {key for item in kinds["ctxlab"] for key in item_keys(item) or []}
    stretch = classroom.stretch_checks(lab)
    assert stretch and set(stretch) == extra - core
    assert stretch == tuple(k for k in behaviour_keys(lab) if behaviour_source(lab, k) == "ctxlab")


def test_the_plan_renders_in_both_languages(language: str) -> None:
    plan = classroom.timing_plan("11.3")
    text, page = str(plan), plan._repr_html_()
    if language == "zh":
        assert "时间安排" in text and "必做" in text and "选做" in text and "分钟" in page
        assert " min" not in text
    else:
        assert "Timing plan" in text and "core" in text and "stretch" in text
        assert not HAN.search(text)
    for key in ("options_named", "estimator_errors_named"):  # 11.3's ctxlab extras
        assert key in text and key in page
    assert "within_budget" not in text  # the course's code: a core row


# ----------------------------------------------------------------------------- kit cells


@pytest.mark.parametrize("lab", classroom.LABS)
@pytest.mark.parametrize(("language", "role"), EDITIONS)
def test_every_edition_has_the_kit_cells(lab: str, language: str, role: str) -> None:
    cells = _cells(lab, language, role)
    n = _n(lab)
    if lab in LEAN:
        assert f"{n}-k01" not in cells and f"{n}-k02" not in cells
        assert COURSE_START[language] in cells[f"{n}-00"].source
        assert (f"{n}-k03" in cells) == (role == "instructor"), "the guide is the instructor's"
        ids = list(cells)
        check = next(i for i, c in enumerate(ids) if "check_implementation(" in cells[c].source)
        assert check < ids.index(f"{n}-k04") < ids.index(f"{n}-k06"), "near the end"
        assert f'classroom.common_mistakes("{lab}")' in cells[f"{n}-k05"].source
        return
    recap = cells[f"{n}-k01"].source if f"{n}-k01" in cells else ""
    # issue 32, item 5: a rewritten lab has one line linking the course start instead of the
    # reminders, and its timing plan only in the instructor edition
    linked = "00-course-start.ipynb" in recap
    wanted = [f"{n}-k01"] + ([] if linked and role == "student" else [f"{n}-k02"])
    if lab in QUIZ_LABS:
        wanted += [f"{n}-k04", f"{n}-k05", f"{n}-k06", f"{n}-k07"]
    for cell_id in wanted:
        assert cell_id in cells, (lab, language, role, cell_id)
    assert (f"{n}-k03" in cells) == (role == "instructor"), "the guide is the instructor's"
    if linked:
        assert "\n" not in recap.strip() and (HAN.search(recap) is not None) == (language == "zh")
    else:
        if language == "zh":
            assert "开始之前" in recap and HAN.search(recap)
        else:
            assert "Before you start" in recap and not HAN.search(recap.split("\n", 1)[0])
        # two lines at most per reminder: a "- **…**" line and an indented continuation (a
        # Chinese one is one line: a break between two Chinese characters shows as a space)
        reminders = [line for line in recap.split("\n") if line.startswith("- **")]
        assert len(reminders) >= 2
        assert recap.count("\n  ") <= len(reminders)
    ids = list(cells)
    if f"{n}-k02" in cells:
        assert f'classroom.timing_plan("{lab}")' in cells[f"{n}-k02"].source
        setup = next(i for i, c in enumerate(ids) if "setup_notebook(" in cells[c].source)
        assert ids.index(f"{n}-k01") < ids.index(f"{n}-k02") and setup < ids.index(f"{n}-k02")
    if lab in QUIZ_LABS:
        check = next(i for i, c in enumerate(ids) if "check_implementation(" in cells[c].source)
        assert check < ids.index(f"{n}-k04") < ids.index(f"{n}-k06"), "near the end"
        assert f'classroom.common_mistakes("{lab}")' in cells[f"{n}-k05"].source


@pytest.mark.parametrize("lab", QUIZ_LABS)
@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_quiz_has_four_to_six_questions_each_naming_its_chapter_test(
    lab: str, language: str
) -> None:
    text = _cells(lab, language, "student")[f"{_n(lab)}-k06"].source
    questions = re.findall(r"^(\d+)\. (.*)$", text, re.M)
    assert 4 <= len(questions) <= 6
    assert len(questions) == len(classroom.QUIZZES[lab])
    for (number, body), question in zip(questions, classroom.QUIZZES[lab], strict=True):
        assert int(number) == question.number
        named = "".join(f"「{rule}」" for rule in question.rules) or f"「{question.test}」"
        assert body.startswith(("(", "（")) and named in body.split(")")[0].split("）")[0], (
            lab,
            number,
        )


# ----------------------------------------------------------------------------- the quiz


#: The chapter's tests, in the words of 「15 项测试固定到哪里」, by the lab whose
#: ``--test-name-pattern="Lab 11.N"`` run they belong to.
CHAPTER_TESTS: dict[str, tuple[str, ...]] = {
    "11.1": ("严格 compaction schema", "两个 Store 的重开"),
    "11.2": ("user 分组", "call/result 配对"),
    "11.3": ("固定成本", "完整组裁剪", "最新组超限"),
    "11.4": ("纯创建",),
    "11.5": ("最新摘要恢复", "二次压缩", "跨压缩边界的 system 重放", "公开副本隔离"),
}


@pytest.mark.parametrize("lab", QUIZ_LABS)
def test_every_question_is_tied_to_a_test_of_its_lab_or_to_rules_quoted_verbatim(
    lab: str,
) -> None:
    """A question names one of its lab's tests, or, when it checks a rule the chapter states
    outside its list of tests (Lab 11.4's cut points and parent), that rule's words."""
    names = set(CHAPTER_TESTS[lab])
    for question in classroom.QUIZZES[lab]:
        assert bool(question.test) != bool(question.rules), (lab, question.number)
        assert not question.test or question.test in names
    for listed in _chapter_texts():
        for name in names:
            assert name in listed, name
    text = chapter_text_if_here()
    if text is not None:
        chapter = re.sub(r"\s+", "", text)  # the chapter's lines are wrapped with spaces
        for question in classroom.QUIZZES[lab]:
            for rule in question.rules:
                assert re.sub(r"\s+", "", rule) in chapter, (lab, question.number, rule)


@pytest.mark.parametrize("lab", QUIZ_LABS)
def test_every_question_names_sections_of_its_notebook(lab: str) -> None:
    """A wrong answer sends the student back to the sections that teach the question: one
    or two headings that the notebook has, in each language."""
    for language, index in (("en", 0), ("zh", 1)):
        headings = {
            line.lstrip("#").strip()
            for cell in _cells(lab, language, "student").values()
            if cell.cell_type == "markdown"
            for line in cell.source.splitlines()
            if re.match(r"#{2,3} ", line)
        }
        for question in classroom.QUIZZES[lab]:
            assert 1 <= len(question.sections) <= 2, (lab, question.number)
            for pair in question.sections:
                assert pair[index] in headings, (lab, language, question.number, pair[index])


def test_a_wrong_answer_names_the_rules_and_the_sections_to_re_read(language: str) -> None:
    verdict = classroom.check_quiz_answer("11.4", 5, "a")
    if language == "zh":
        assert verdict.hint == (
            "这道题考的是本章的规则「system message 也不能成为切点」："
            "回头再读一读本 notebook 的「system patch」一节。"
        )
    else:
        assert verdict.hint == (
            "This question checks the chapter's rule 「system message 也不能成为切点」:"
            " re-read the section “A system patch” of this notebook."
        )
    assert "两节" in str(classroom.check_quiz_answer("11.4", 3, "a")) or language == "en"


def _answers(lab: str, role: str) -> list[Any]:
    """The values the k07 cell of an edition assigns to q1, q2, ..."""
    source = _cells(lab, "en", role)[f"{_n(lab)}-k07"].source
    values: list[Any] = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign):
            values.append(ast.literal_eval(node.value))
    return values


def _wrong(question: classroom.Question, right: Any) -> list[Any]:
    if question.kind == "choice":
        return [letter for letter in "abc" if letter != right]
    if question.kind == "choices":
        return ["a", "d", "abcd", "bc"]
    if question.kind == "number":
        return [right + 1, right - 1, "7"]
    if question.kind == "ids":
        return [list(reversed(right)), right[1:], ["u1", "a1"]]
    return ["x", right.upper() + "-", "u1"]


@pytest.mark.parametrize("lab", QUIZ_LABS)
def test_the_instructor_answers_pass_and_wrong_answers_fail(lab: str, language: str) -> None:
    answers = _answers(lab, "instructor")
    report = classroom.check_quiz(lab, *answers)
    assert report.passed and report.score == len(answers), str(report)
    mark = "✔ 正确" if language == "zh" else "✔ Correct"
    assert str(report).count(mark) == len(answers)
    for question, right in zip(classroom.QUIZZES[lab], answers, strict=True):
        for wrong in _wrong(question, right):
            verdict = classroom.check_quiz_answer(lab, question.number, wrong)
            assert not verdict.ok, (lab, question.number, wrong)
            assert ("还不对" if language == "zh" else "Not yet") in str(verdict)


@pytest.mark.parametrize("lab", QUIZ_LABS)
def test_the_student_quiz_is_blank_and_says_not_answered_yet(lab: str, language: str) -> None:
    cell = _cells(lab, language, "student")[f"{_n(lab)}-k07"].source
    assert _answers(lab, "student") == [...] * len(classroom.QUIZZES[lab])
    namespace: dict[str, Any] = {"classroom": classroom}
    exec(cell.rsplit("\n", 1)[0], namespace)  # the assignments
    report = eval(cell.rsplit("\n", 1)[1], namespace)  # the check call
    assert report.score == 0
    words = "还没有作答" if language == "zh" else "not answered yet"
    assert str(report).count(words) == len(classroom.QUIZZES[lab])


@pytest.mark.parametrize("lab", QUIZ_LABS)
def test_the_quiz_answers_are_absent_from_the_student_edition(lab: str) -> None:
    answers = _answers(lab, "instructor")
    for language in ("en", "zh"):
        cells = _cells(lab, language, "student")
        quiz = cells[f"{_n(lab)}-k07"].source
        for number, answer in enumerate(answers, start=1):
            assert f"q{number} = {answer!r}" not in quiz and f"q{number} = ..." in quiz
        shown = [repr(a) for a in answers if not isinstance(a, int)]
        shown += [f'"{a}"' for a in answers if isinstance(a, str)]
        for cell in cells.values():
            if cell.cell_type == "markdown":
                for literal in shown:
                    assert literal not in cell.source, (lab, language, cell.id, literal)


@pytest.mark.parametrize(
    ("answer", "ok"),
    [("b", True), ("B", True), ("(b)", True), ("ｂ", True), (" b ", True), ("c", False)],
)
def test_a_letter_is_read_in_any_usual_form(answer: str, ok: bool) -> None:
    assert classroom.check_quiz_answer("11.4", 2, answer).ok is ok


def test_several_letters_may_be_a_string_or_a_list() -> None:
    for answer in ("ad", "a, d", ["d", "a"], "Ａ，Ｄ"):
        assert classroom.check_quiz_answer("11.4", 3, answer).ok, answer
    assert not classroom.check_quiz_answer("11.4", 3, ["a"]).ok


def test_a_wrong_kind_of_answer_is_a_verdict_not_a_traceback(language: str) -> None:
    verdict = classroom.check_quiz_answer("11.3", 1, "sixteen")
    assert not verdict.ok
    assert ("答案" if language == "zh" else "answer") in str(verdict)


def test_check_quiz_wants_one_answer_per_question() -> None:
    from ctxlab.errors import CtxlabError

    with pytest.raises(CtxlabError, match="5 questions, got 2 answers"):
        classroom.check_quiz("11.2", 3, "c")
    with pytest.raises(CtxlabError, match="lab must be one of"):
        classroom.check_quiz("11.9")


# ----------------------------------------------------------------------------- mistakes


@pytest.mark.parametrize("lab", QUIZ_LABS)
def test_common_mistakes_render_one_line_and_a_hint_each(lab: str, language: str) -> None:
    listed = classroom.common_mistakes(lab, always=True)
    assert len(listed.rows) >= 3
    text, page = str(listed), listed._repr_html_()
    for ident, line, hint in listed.rows:
        assert ident in text and line in text and hint in text
        assert ident in page
        assert bool(HAN.search(line)) == (language == "zh")
    keys = set(behaviour_keys(lab))
    for mistake in classroom.mistake_catalogue(lab):
        assert mistake.lab == lab and set(mistake.checks) <= keys, mistake.id


@pytest.mark.parametrize("lab", QUIZ_LABS)
def test_the_mistakes_are_the_misconception_catalogue(lab: str, language: str) -> None:
    """One row per catalogue entry, in its order: its title as the line, its hint, its
    signature as the rows; a mistake about ctxlab's optional extras says so."""
    mistakes = classroom.mistake_catalogue(lab)
    entries = catalogue(lab)
    assert len(entries) >= 8 and [m.id for m in mistakes] == [e.id for e in entries]
    for mistake, entry in zip(mistakes, entries, strict=True):
        assert set(mistake.checks) == entry.signature
        assert mistake.hint == (entry.hint_zh if language == "zh" else entry.hint_en)
        title = entry.title_zh if language == "zh" else entry.title_en
        assert mistake.line.startswith(title)
        extra = "ctxlab 的选做扩展" if language == "zh" else "ctxlab's optional extra"
        assert (extra in mistake.line) == (entry.rule == "ctxlab"), entry.id
    assert any(e.rule == "ctxlab" for e in catalogue("11.1"))
    assert classroom.mistake_catalogue("11.x") == ()
    none = "本实验没有收录常见错误" if language == "zh" else "none catalogued"
    assert none in str(classroom.common_mistakes("11.x"))


def test_the_mistakes_list_unfolds_only_after_a_failed_check(language: str) -> None:
    """Issue 32, item 3: no mistake nor hint shows before the student's first check run with
    a ✘ row in the kernel; a passing run does not unfold it, a failing one does."""
    from ctxlab.lab import check_implementation
    from ctxlab.lab.grading import reference_functions

    seen = set(classroom._FAILED_CHECKS)  # earlier tests in this process ran checks too
    classroom._FAILED_CHECKS.clear()
    try:
        folded = classroom.common_mistakes("11.2")
        text, page = str(folded), folded._repr_html_()
        for ident, _line, hint in folded.rows:
            assert ident not in text and hint not in text and hint not in page
        assert ("✘" in text) and ("✘" in page)
        check_implementation("11.2", **reference_functions("11.2"))  # passed: still folded
        assert not classroom.failed_check_seen("11.2")

        def stub(path: object) -> list[object]:
            raise NotImplementedError("write group_interactions here")

        check_implementation("11.2", group_interactions=stub)  # not written yet: still folded
        assert not classroom.failed_check_seen("11.2")

        def group_interactions(path: object) -> list[object]:
            return []

        report = check_implementation("11.2", group_interactions=group_interactions)
        assert not report.passed and classroom.failed_check_seen("11.2")
        unfolded = str(classroom.common_mistakes("11.2"))
        assert all(hint in unfolded for _, _, hint in folded.rows)
        assert not classroom.failed_check_seen("11.3")
    finally:
        classroom._FAILED_CHECKS.clear()
        classroom._FAILED_CHECKS.update(seen)


# ----------------------------------------------------------------------------- the guide


@pytest.mark.parametrize("lab", QUIZ_LABS)
def test_the_instructor_guide_has_the_plan_the_stuck_points_and_grading(
    lab: str, language: str
) -> None:
    guide = classroom.instructor_guide(lab)
    text, page = str(guide), guide._repr_html_()
    for part in ("python -m ctxlab grade", "--out grades/", "grades/report.html", "grades.csv"):
        assert part in text and part in page
    assert f"{PERIODS[lab]}" in text
    for mistake in classroom.mistake_catalogue(lab):
        assert mistake.line in text and mistake.hint in text
    if language == "zh":
        assert "学生容易卡住的地方" in text and "课后评分" in text
    else:
        assert "Where students get stuck" in text and "Grading after the lab" in text


@pytest.mark.parametrize("readme", ["README.md", "README.zh.md"])
def test_the_notebooks_readme_table_matches_the_plans(readme: str) -> None:
    text = (REPO / "notebooks" / readme).read_text(encoding="utf-8")
    text = text[text.index("### 课堂材料包" if "zh" in readme else "### The classroom kit") :]
    for lab in classroom.LABS:
        plan = classroom.timing_plan(lab)
        row = next(line for line in text.split("\n") if line.startswith(f"| {lab} |"))
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert cells[3] == f"+{plan.stretch_minutes}", (readme, lab)
        quiz = len(classroom.QUIZZES.get(lab, ()))
        assert cells[5] == (str(quiz) if quiz else "—"), (readme, lab)
        if plan.period is not None:
            assert cells[1].startswith(str(plan.period)) and cells[2] == str(plan.core_minutes)


def test_stretch_rows_follow_the_grading_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxlab.lab import grading

    def source(lab: str, key: str) -> str:
        return "ctxlab" if key == "three_groups" else "chapter"

    monkeypatch.setattr(grading, "behaviour_source", source)
    assert classroom.stretch_checks("11.2") == ("three_groups",)
    assert "three_groups" in str(classroom.timing_plan("11.2"))
    assert classroom.stretch_checks("11.x") == ()
