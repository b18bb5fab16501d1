"""The one-page summary sheets (issue 27, item 4): ``ctxlab.lab.handouts``, ``make handouts``.

That each sheet prints on ONE A4 page is checked in Chromium:
tests/browser/test_browser_handouts.py.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from chapter_text import chapter_text
from ctxlab import CtxlabError, fixtures
from ctxlab.lab import handouts
from ctxlab.lab.language import get_language

pytestmark = pytest.mark.teaching

REPO = Path(__file__).resolve().parents[1]
LABS = ("11.1", "11.2", "11.3", "11.4", "11.5")
HAN = re.compile(r"[\u4e00-\u9fff]")
TAGS = re.compile(r"<[^>]+>")


@pytest.fixture(scope="module")
def pages() -> dict[tuple[str, str], str]:
    import matplotlib

    matplotlib.use("Agg")
    return {
        (lab, language): handouts.handout_html(lab, language)
        for lab in LABS
        for language in handouts.LANGUAGES
    }


def _text(page: str) -> str:
    body = re.sub(r'src="data:[^"]+"', "", page.split("<body>", 1)[1])
    return html.unescape(TAGS.sub(" ", body))


@pytest.mark.parametrize("lab", LABS)
def test_every_rule_is_quoted_verbatim_from_the_chapter(lab: str) -> None:
    chapter = chapter_text()
    sheet = handouts.HANDOUTS[lab]
    assert f"#{sheet.heading_zh}" in chapter, "the heading is the chapter's section heading"
    assert 4 <= len(sheet.rules) <= 6
    for quote, english in sheet.rules:
        assert quote in chapter, quote
        assert english.strip() and not HAN.search(english)


@pytest.mark.parametrize("lab", LABS)
@pytest.mark.parametrize("language", handouts.LANGUAGES)
def test_the_sheet_has_the_rules_the_numbers_and_the_picture(
    pages: dict[tuple[str, str], str], lab: str, language: str
) -> None:
    page = pages[(lab, language)]
    assert page.startswith("<!doctype html>") and "@page { size: A4;" in page
    text = _text(page)
    for quote, english in handouts.HANDOUTS[lab].rules:
        assert f"「{quote}」" in text
        assert (english in text) == (language == "en")
    assert page.count('<img src="data:image/svg+xml;base64,') == 1
    assert re.search(r'<img [^>]*alt="[^"]+"', page), "the picture has alt text"
    assert f"--test-name-pattern=&quot;Lab {lab}&quot;" in page
    assert f"pytest -m lab{lab.replace('.', '_')}" in page
    if language == "zh":
        assert "本章的规则" in text and "一张图" in text
        assert "The chapter" not in text and "worked example" not in text
    else:
        assert "The chapter's rules" in text and "The picture" in text


def test_the_numbers_are_ctxlabs_own_results() -> None:
    """The sheet's numbers come from ctxlab: they follow the fixtures and the estimator."""
    import ctxlab

    result = ctxlab.build_context(
        fixtures.opening_path(), max_tokens=31, reserved_output=4, safety_margin=2,
        estimate_tokens=fixtures.opening_estimator,
    )  # fmt: skip
    rows = {label: value for label, value in handouts.HANDOUTS["11.3"].numbers()}
    assert rows["keptEntryIds"] == ", ".join(result.kept_entry_ids)
    assert rows["the fixed costs first"].endswith(f"= {result.tokens.available_for_messages}")
    assert rows["group costs, oldest first"] == "7, 7, 15"
    rows_11_4 = {label: value for label, value in handouts.HANDOUTS["11.4"].numbers()}
    assert rows_11_4["legal first kept entries (group heads)"] == "u1, u2, u3"
    assert rows_11_4["kept / summarised tokens"] == "u1: 29 / 0; u2: 22 / 7; u3: 15 / 14"
    rows_11_1 = {label: value for label, value in handouts.HANDOUTS["11.1"].numbers()}
    assert rows_11_1["compact-1: parentId"] == "a3"
    assert rows_11_1["JSONL store reopened: entries, the last one"] == "11, compact-1 (compaction)"


def test_the_numbers_change_when_the_fixture_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not copied by hand: with another estimator the 11.3 sheet shows other numbers."""
    import ctxlab.fixtures as fx

    monkeypatch.setattr(fx, "opening_estimator", lambda message: 2)
    rows = {label: value for label, value in handouts.HANDOUTS["11.3"].numbers()}
    assert rows["group costs, oldest first"] == "4, 4, 10"


def test_the_language_is_restored_after_a_sheet(pages: dict[tuple[str, str], str]) -> None:
    before = get_language()
    handouts.handout_html("11.2", "zh")
    assert get_language() == before


def test_an_unknown_lab_or_language_is_a_ctxlab_error() -> None:
    with pytest.raises(CtxlabError, match="handout: lab must be one of"):
        handouts.handout_html("11.9", "zh")
    with pytest.raises(CtxlabError, match="language one of"):
        handouts.handout_html("11.1", "fr")  # type: ignore[arg-type]


def test_build_writes_every_sheet_in_both_languages_and_an_index(tmp_path: Path) -> None:
    written = handouts.build(tmp_path, ("11.2", "11.4"), pdf=False)
    for language in ("zh", "en"):
        for lab in ("11.2", "11.4"):
            page = tmp_path / language / f"{lab}.html"
            assert page in written and page.read_text(encoding="utf-8").startswith("<!doctype")
    index = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert 'href="zh/11.2.html"' in index and 'href="en/11.4.html"' in index
    assert not list(tmp_path.rglob("*.pdf"))


def test_the_make_target_and_the_ignored_folder() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^handouts: .*## ", makefile, re.M)
    assert "-m ctxlab.lab.handouts --out $(HANDOUTS_DIR)" in makefile
    assert "handouts/" in (REPO / ".gitignore").read_text(encoding="utf-8").split("\n")
