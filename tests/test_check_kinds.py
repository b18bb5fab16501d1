"""Two kinds of check rows: the chapter's and ctxlab's (issue 24, items 1 and 2).

Every row of a lab's check table is declared, in its ``@LAB.check(...)`` registration, as
the chapter's -- with the chapter's sentence it checks, quoted verbatim in Chinese and
rendered in English -- or as ctxlab's extension, with one line on why ctxlab decides so. A
rule the course's code decides and the notebook teaches (``course=True``) counts with the
chapter's; its quote is the notebook's. A lab is passed when every chapter row passes;
ctxlab's rows are optional extras, shown after them under their own heading and count.

The chapter's text is found by tests/chapter_text.py (``CTXLAB_CHAPTER``, else
``shared/seeds/`` beside the repository; CI has it); a quote not found in it verbatim fails.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chapter_text import CHAPTER_NAME, chapter_path, chapter_text
from ctxlab.lab import check_implementation, set_language
from ctxlab.lab import grading as g
from ctxlab.lab.grading.report import CheckResult, LabReport

pytestmark = pytest.mark.teaching

REPO = Path(__file__).resolve().parents[1]


def _rows(lab: str) -> tuple[CheckResult, ...]:
    return check_implementation(lab, **g.reference_functions(lab)).results


def _notebook_source(lab: str) -> str:
    (path,) = (REPO / "notebooks" / "_src").glob(f"{lab}-*.md")
    return path.read_text(encoding="utf-8")


def test_the_chapters_text_is_there() -> None:
    assert "历史不动，上下文按预算重建" in chapter_path().read_text(encoding="utf-8")


@pytest.mark.parametrize("lab", g.LABS)
def test_every_chapter_rows_quote_is_the_chapters_own_words(lab: str) -> None:
    chapter = chapter_text()
    for row in _rows(lab):
        if row.source != "chapter":
            continue
        assert row.quote_zh.strip() and row.quote_en.strip(), row.key
        assert not (row.why_en or row.why_zh), row.key
        if row.course:  # the course's code, as the lab's notebook states it
            assert row.quote_zh in _notebook_source(lab), (
                f"Lab {lab} {row.key}: course quote {row.quote_zh!r} is not in the notebook"
            )
            assert row.quote_zh not in chapter, f"{row.key}: in the chapter, so not course=True"
        else:
            assert row.quote_zh in chapter, (
                f"Lab {lab} {row.key}: {row.quote_zh!r} is not found verbatim in {CHAPTER_NAME}"
            )
        assert row.quote_en.isascii() or "→" in row.quote_en, row.key


@pytest.mark.parametrize("lab", g.LABS)
def test_every_ctxlab_row_says_why_in_both_languages(lab: str) -> None:
    for row in _rows(lab):
        assert row.source in ("chapter", "ctxlab"), row.key
        assert g.behaviour_source(lab, row.key) == row.source
        if row.source == "ctxlab":
            assert row.why_en.isascii() and row.why_en.strip(), row.key
            assert any("\u4e00" <= ch <= "\u9fff" for ch in row.why_zh), row.key
            assert not (row.quote_zh or row.quote_en or row.course), row.key
            assert not row.behaviour_en.startswith("ctxlab extension"), row.key
            assert "ctxlab 扩展" not in row.behaviour_zh, row.key


def test_each_lab_has_both_kinds_and_the_keys_that_changed_kind() -> None:
    kinds = {lab: {row.key: row.source for row in _rows(lab)} for lab in g.LABS}
    for lab, rows in kinds.items():
        assert sum(kind == "chapter" for kind in rows.values()) >= 8, lab
        assert sum(kind == "ctxlab" for kind in rows.values()) >= 2, lab
    # The rows the audit found over-strict: their ctxlab part is now a ctxlab row.
    assert kinds["11.1"]["rejects_bad_timestamp"] == "ctxlab"
    assert kinds["11.1"]["rejects_whitespace_ids"] == "ctxlab"
    assert kinds["11.1"]["rejects_blank_ids"] == "chapter"
    assert kinds["11.1"]["timestamp_any_number"] == "chapter"
    assert kinds["11.2"]["errors_name_entry_and_call"] == "ctxlab"
    assert kinds["11.3"]["options_named"] == kinds["11.3"]["estimator_errors_named"] == "ctxlab"
    assert kinds["11.5"]["first_kept_checked"] == "ctxlab"
    assert kinds["11.4"]["errors_named"] == "ctxlab"


def _row(key: str, passed: bool, source: str) -> CheckResult:
    extra = {"why_en": "why", "why_zh": "为什么"} if source == "ctxlab" else {}
    quote = {"quote_zh": "原文", "quote_en": "the text"} if source == "chapter" else {}
    return CheckResult(
        key,
        passed,
        f"{key} behaviour",
        f"{key} 行为",
        "" if passed else "expected x, got y",
        "" if passed else "期望 x，实际 y",
        source=source,  # type: ignore[arg-type]
        **extra,
        **quote,
    )


def test_passed_is_decided_by_the_chapters_rows_alone() -> None:
    extra_fails = LabReport(
        "11.2",
        "group_interactions",
        (_row("a", True, "chapter"), _row("x", False, "ctxlab"), _row("b", True, "chapter")),
    )
    assert extra_fails.passed and not extra_fails.extras_passed
    assert [r.key for r in extra_fails.chapter_results] == ["a", "b"]
    assert [r.key for r in extra_fails.extra_results] == ["x"]
    chapter_fails = LabReport(
        "11.2", "group_interactions", (_row("a", False, "chapter"), _row("x", True, "ctxlab"))
    )
    assert not chapter_fails.passed and chapter_fails.extras_passed
    used = LabReport("11.2", "group_interactions", (_row("a", True, "chapter"),), True)
    assert not used.passed and used.extras_passed  # the reference-use rule still applies
    assert not LabReport("11.2", "group_interactions", (_row("x", True, "ctxlab"),)).passed


def test_the_table_shows_the_chapters_rows_then_ctxlabs_extras_apart() -> None:
    report = LabReport(
        "11.2",
        "group_interactions",
        (_row("x", False, "ctxlab"), _row("a", True, "chapter"), _row("y", True, "ctxlab")),
    )
    lines = str(report).splitlines()
    assert lines[0] == "Lab 11.2 · group_interactions (the chapter's checks): 1/1 checks pass ✔"
    assert lines[1] == "✔ a behaviour"
    assert lines[2] == "ctxlab's extras (optional): 1/2 pass"
    assert lines[3:5] == ["✘ x behaviour", "    expected x, got y"]
    assert lines[5] == "✔ y behaviour"
    page = report._repr_html_()
    assert page.index("a behaviour") < page.index("ctxlab&#x27;s extras (optional): 1/2 pass")
    assert "#D55E00" not in page  # a failed extra is never the lab's red
    assert "border-left:6px solid #009E73" in page
    set_language("zh")
    try:
        text = str(report)
        assert text.splitlines()[0] == (
            "实验 11.2 · group_interactions（本章的检查）：通过 1/1 项检查 ✔"
        )
        assert "ctxlab 的扩展检查（选做）：通过 1/2 项" in text
        assert "ctxlab 的扩展检查（选做）" in report._repr_html_()
        assert report.results[0].why == "为什么" and report.results[1].quote == "原文"
    finally:
        set_language("en")


def test_a_report_without_extras_has_no_extras_heading() -> None:
    report = LabReport("11.3", "build_context", (_row("a", True, "chapter"),))
    assert "extras" not in str(report) and report.extras_headline() == ""


def test_a_rows_behaviour_shows_its_quote_or_its_reason_on_hover() -> None:
    report = check_implementation("11.2", **g.reference_functions("11.2"))
    page = report._repr_html_()
    assert 'title="the chapter: 「groupInteractions() 跳过 sys' in page
    assert 'title="ctxlab: the chapter asks for the entry id or the call id' in page
    set_language("zh")
    try:
        page = report._repr_html_()
        assert 'title="本章：「一个 call 至多对应一条 result」"' in page
        assert 'title="ctxlab：本章只要求携带 entry id 或 call id' in page
    finally:
        set_language("en")
    within = check_implementation("11.3", **g.reference_functions("11.3"))._repr_html_()
    assert 'title="the course&#x27;s code: 「三组都放得下' in within
