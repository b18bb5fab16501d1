"""The classroom kit of each lab, ctxlab's teaching material (not the chapter's), without
pandas or matplotlib: :func:`timing_plan` (:mod:`ctxlab.lab.plans`); :func:`common_mistakes`,
each mistake of the misconception catalogue with its hint, unfolded only after the student's
first check run with a ✘ row; :func:`check_quiz`, the exit quiz (:mod:`ctxlab.lab.quizzes`),
one verdict per question; :func:`instructor_guide`: the plan in short, where students get
stuck, how to grade.
"""

from __future__ import annotations

import functools
import html
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ctxlab.errors import CtxlabError
from ctxlab.lab.checks import Verdict, as_number, exercise, id_list
from ctxlab.lab.language import Texts, tr
from ctxlab.lab.plans import LABS, PLANS, lab_id, period_line, stretch_checks, timing_plan
from ctxlab.lab.quizzes import QUIZZES, Question

say = Texts("classroom")

if TYPE_CHECKING:
    from ctxlab.lab.grading import LabReport

__all__ = [
    "LABS",
    "PLANS",
    "QUIZZES",
    "Mistake",
    "Question",
    "QuizReport",
    "check_implementation",
    "check_quiz",
    "check_quiz_answer",
    "common_mistakes",
    "failed_check_seen",
    "instructor_guide",
    "mistake_catalogue",
    "note_check_run",
    "stretch_checks",
    "timing_plan",
]

# ------------------------------------------------------------------------- common mistakes


@dataclass(frozen=True)
class Mistake:
    """One mistake of the misconception catalogue as the kit shows it: the entry's title and
    hint, the check-table rows (behaviour keys) where it shows as ✘, whose rule it breaks."""

    id: str
    lab: str
    line_en: str
    line_zh: str
    hint_en: str
    hint_zh: str
    checks: tuple[str, ...] = field(default=())
    rule: Literal["chapter", "ctxlab"] = "chapter"

    @property
    def line(self) -> str:
        if self.rule == "ctxlab":
            return say("ctxlab_s_optional_extra", line_en=self.line_en, line_zh=self.line_zh)
        return tr(self.line_en, self.line_zh)

    @property
    def hint(self) -> str:
        return tr(self.hint_en, self.hint_zh)


def mistake_catalogue(lab: str) -> tuple[Mistake, ...]:
    """The mistakes of ``lab``, in catalogue order: its entries of the misconception catalogue
    (:mod:`ctxlab.lab.grading.misconceptions`, loaded with the lab's checks)."""
    from ctxlab.lab.grading import LABS as GRADED
    from ctxlab.lab.grading import behaviour_keys
    from ctxlab.lab.grading.labs import catalogue

    if lab_id(lab) not in GRADED:
        return ()
    keys = behaviour_keys(lab)
    return tuple(
        Mistake(
            item.id,
            lab,
            item.title_en,
            item.title_zh,
            item.hint_en,
            item.hint_zh,
            tuple(key for key in keys if key in item.signature),
            item.rule,
        )
        for item in catalogue(lab)
    )


#: The labs whose check (:func:`check_implementation`) has shown a ✘ row in this kernel. Until
#: then the common-mistakes list stays folded: its hints would answer the build-it.
_FAILED_CHECKS: set[str] = set()

#: A ✘ row with this in its (English) detail judged no code of the student's: the build-it
#: stub still raises NotImplementedError. Such a run is no failed check.
_NOT_WRITTEN = "not written yet"


def note_check_run(report: Any) -> None:
    """Record a check run of the notebook: a report with a ✘ row on the student's own code
    (not the unwritten stub) unfolds its lab's common-mistakes list (:func:`common_mistakes`)."""
    for result in getattr(report, "results", ()):
        detail = str(getattr(result, "detail_en", getattr(result, "detail", "")))
        if not getattr(result, "passed", True) and _NOT_WRITTEN not in detail:
            _FAILED_CHECKS.add(str(getattr(report, "lab", "")))
            return


def failed_check_seen(lab: str) -> bool:
    """Whether a check of ``lab`` with a ✘ row has run in this kernel."""
    return lab_id(lab) in _FAILED_CHECKS


def check_implementation(lab: str, **functions: Callable[..., Any]) -> LabReport:
    """:func:`ctxlab.lab.grading.check_implementation`, noting the run for
    :func:`common_mistakes` (``from ctxlab.lab import check_implementation`` gives this)."""
    from ctxlab.lab import grading

    report = grading.check_implementation(lab, **functions)
    note_check_run(report)
    return report


@dataclass(frozen=True, repr=False)
class MistakeList:
    """What :func:`common_mistakes` shows: one row per mistake (id, one line, hint), or, not
    ``unfolded`` (before the first failed check), one line saying when the list appears."""

    lab: str
    mistakes: tuple[Mistake, ...]
    unfolded: bool = True

    @property
    def rows(self) -> list[tuple[str, str, str]]:
        return [(m.id, m.line, m.hint) for m in self.mistakes]

    def __str__(self) -> str:
        lines = [tr(f"Common mistakes — Lab {self.lab}", f"常见错误 — 实验 {self.lab}")]
        if not self.mistakes:
            lines.append(tr("(none catalogued for this lab)", "（本实验没有收录常见错误）"))
        elif not self.unfolded:
            lines.append(say("this_list_appears_after_your"))
            return "\n".join(lines)
        for ident, line, hint in self.rows:
            lines.append(f"• {line} [{ident}]")
            lines.append("  " + tr("Hint: ", "提示：") + hint)
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        if self.mistakes and not self.unfolded:
            return (
                '<div class="ctxlab-common-mistakes"><p>'
                f"{html.escape(say('this_list_appears_after_your'))}</p></div>"
            )
        heads = (tr("mistake", "错误"), tr("hint", "提示"), "id")
        body = "".join(
            f'<tr><td style="text-align:left">{html.escape(line)}</td>'
            f'<td style="text-align:left">{html.escape(hint)}</td>'
            f"<td><code>{html.escape(ident)}</code></td></tr>"
            for ident, line, hint in self.rows
        )
        return (
            '<div class="ctxlab-common-mistakes"><table><thead><tr>'
            + "".join(f'<th style="text-align:left">{h}</th>' for h in heads)
            + f"</tr></thead><tbody>{body}</tbody></table></div>"
        )


def common_mistakes(lab: str, *, always: bool = False) -> MistakeList:
    """The lab's common mistakes, unfolded once a check of ``lab`` with a ✘ row has run in
    this kernel; ``always=True`` shows them regardless (the lecturer's view)."""
    lab = lab_id(lab)
    return MistakeList(lab, mistake_catalogue(lab), always or failed_check_seen(lab))


def _letters(answer: object, what: str) -> list[str]:
    """A choice answer as lower-case letters: ``"b"``, ``"B"``, ``"(b)"``, ``"Ｂ"``, or for
    several ``"a, d"``, ``"ad"``, ``["a", "d"]``."""
    items: list[object] = list(answer) if isinstance(answer, (list, tuple, set)) else [answer]
    letters: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise TypeError(say("answer_with_a_letter_such", what=what, item=item))
        text = unicodedata.normalize("NFKC", item).lower()
        letters.extend(ch for ch in text if ch.isalpha() and ch.isascii())
    return letters


def _text(answer: object, what: str) -> str:
    if not isinstance(answer, str):
        raise TypeError(say("answer_with_a_string_got", what=what, answer=answer))
    return unicodedata.normalize("NFKC", answer).strip().strip("'\"")


def _question(lab: str, number: object) -> Question:
    questions = QUIZZES.get(lab_id(lab), ())
    for question in questions:
        if question.number == number:
            return question
    raise CtxlabError(f"Lab {lab} has no quiz question {number!r} (it has {len(questions)})")


def _judge(question: Question, answer: object) -> Verdict:
    what = tr(f"question {question.number}", f"第 {question.number} 题")
    expected = question.expected()
    if question.kind == "choice":
        letters = _letters(answer, what)
        right = letters == [expected]
        shown = "".join(letters)
    elif question.kind == "choices":
        letters = _letters(answer, what)
        right = sorted(set(letters)) == sorted(expected)  # type: ignore[call-overload]
        shown = ", ".join(sorted(set(letters)))
    elif question.kind == "number":
        value = as_number(answer, what)
        right = value == expected
        shown = str(value)
    elif question.kind == "ids":
        ids = id_list(answer, what)
        right = ids == expected
        shown = ", ".join(ids)
    else:
        value_text = _text(answer, what)
        right = value_text == expected
        shown = value_text
    about = _about(question)
    if right:
        return Verdict(
            True,
            tr(f"{what}: {shown}", f"{what}：{shown}"),
            tr(f"{question.why_en} ({about})", f"{question.why_zh}（{about}）"),
        )
    return Verdict(
        False,
        tr(f"{what}: {shown} is not it", f"{what}：{shown} 不对"),
        hint=say("this_question_checks_re_read", about=about, sections=_sections(question)),
    )


def _sections(question: Question) -> str:
    """The notebook sections that teach ``question``, named by their headings."""
    en = " and ".join(f"“{heading.replace('`', '')}”" for heading, _ in question.sections)
    zh = "和".join(f"「{heading.replace('`', '')}」" for _, heading in question.sections)
    many = len(question.sections) > 1
    return tr(f"the section{'s' if many else ''} {en}", f"{zh}{'两' if many else '一'}节")


def _about(question: Question) -> str:
    """What ``question`` tests, as its notebook line names it: the chapter's test, or else
    the chapter's rules."""
    if question.test:
        return tr(f"the chapter's test 「{question.test}」", f"本章的测试「{question.test}」")
    quoted = "".join(f"「{rule}」" for rule in question.rules)
    rules = "rules" if len(question.rules) > 1 else "rule"
    return tr(f"the chapter's {rules} {quoted}", f"本章的规则{quoted}")


def check_quiz_answer(lab: str, number: int, answer: object) -> Verdict:
    """The verdict on one answer of ``lab``'s exit quiz (``...``: not answered yet)."""
    judge = functools.partial(_judge, _question(lab, number))
    return exercise(f"question {number}", f"第 {number} 题")(judge)(answer)


@dataclass(frozen=True, repr=False)
class QuizReport:
    """The verdicts of a whole exit quiz, one per question, in order."""

    lab: str
    verdicts: tuple[Verdict, ...]

    @property
    def score(self) -> int:
        return sum(verdict.ok for verdict in self.verdicts)

    @property
    def passed(self) -> bool:
        return self.score == len(self.verdicts)

    def headline(self) -> str:
        return say("exit_quiz_lab_right", lab=self.lab, score=self.score, total=len(self.verdicts))

    def __str__(self) -> str:
        return "\n".join([self.headline(), *(str(v) for v in self.verdicts)])

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return (
            f'<div class="ctxlab-quiz"><p><strong>{html.escape(self.headline())}</strong></p>'
            + "".join(verdict._repr_html_() for verdict in self.verdicts)
            + "</div>"
        )


def check_quiz(lab: str, *answers: object) -> QuizReport:
    """Check the answers of ``lab``'s exit quiz, in question order, one verdict each."""
    questions = QUIZZES.get(lab_id(lab), ())
    if len(answers) != len(questions):
        raise CtxlabError(
            f"check_quiz: Lab {lab}'s quiz has {len(questions)} questions,"
            f" got {len(answers)} answers"
        )
    return QuizReport(
        lab,
        tuple(check_quiz_answer(lab, q.number, a) for q, a in zip(questions, answers, strict=True)),
    )


# ----------------------------------------------------------------------- instructor guide


@dataclass(frozen=True, repr=False)
class InstructorGuide:
    """The instructor edition's guide to a lab: plan, where students get stuck, grading."""

    lab: str

    def _parts(self) -> tuple[str, str, list[tuple[str, list[str], bool]]]:
        """The title, the period line and each section: heading, items, numbered or not."""
        plan = timing_plan(self.lab)
        stuck = [
            say("stuck_row", mistake=mistake, rows=", ".join(mistake.checks) or "—")
            for mistake in mistake_catalogue(self.lab)
        ]
        grading = [
            say("after_the_lab_download_each"),
            say("put_them_in_one_folder", notebook=plan.notebook),
            say("run_python_m_ctxlab_grade"),
            say("open_grades_report_html_the"),
        ]
        sections = []
        if stuck:
            sections.append((tr("Where students get stuck:", "学生容易卡住的地方："), stuck, False))
        if self.lab in QUIZZES:
            sections.append((tr("Grading after the lab:", "课后评分："), grading, True))
        title = tr(f"Instructor's guide — Lab {self.lab}", f"教师指南 — 实验 {self.lab}")
        return title, period_line(plan), sections

    def __str__(self) -> str:
        title, period, sections = self._parts()
        lines = [title, period]
        for heading, items, numbered in sections:
            lines.append(heading)
            lines.extend(
                f"{n}. {item}" if numbered else f"• {item}" for n, item in enumerate(items, 1)
            )
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        title, period, sections = self._parts()
        out = [
            f'<div class="ctxlab-instructor-guide"><p><strong>{html.escape(title)}'
            f"</strong><br>{html.escape(period)}</p>"
        ]
        for heading, items, numbered in sections:
            tag = "ol" if numbered else "ul"
            out.append(f"<p>{html.escape(heading)}</p><{tag}>")
            out.extend(f"<li>{html.escape(item)}</li>" for item in items)
            out.append(f"</{tag}>")
        out.append("</div>")
        return "".join(out)


def instructor_guide(lab: str) -> InstructorGuide:
    """The instructor edition's guide to ``lab``: the plan in short, where students get
    stuck (from the misconception catalogue) and how to grade the class with ``ctxlab grade``."""
    return InstructorGuide(lab_id(lab))
