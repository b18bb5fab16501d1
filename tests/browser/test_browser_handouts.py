"""Every summary sheet prints on ONE A4 page in Chromium (issue 27, item 4).

The sheets are built the way ``make handouts`` builds them (``ctxlab.lab.handouts.build``),
into a temporary folder, in both languages. Each is printed twice: by playwright's
``page.pdf(format="A4")`` in the session's Chromium, and by ``chromium --headless
--print-to-pdf`` exactly as ``make handouts`` prints its PDFs. Both must give one page. A
sheet made two pages long must count as two, so the count is not trivially one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import ARTIFACTS, find_chromium

from ctxlab.lab import handouts

pytestmark = pytest.mark.browser

LABS = tuple(handouts.HANDOUTS)
SHEETS = [(lab, language) for language in handouts.LANGUAGES for lab in LABS]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    import matplotlib

    matplotlib.use("Agg")
    out = tmp_path_factory.mktemp("handouts")
    handouts.build(out, LABS, pdf=True)
    yield out


_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")


def _pages(pdf: bytes) -> int:
    """The number of pages of a PDF (its ``/Type /Page`` objects, as Chromium writes them)."""
    return len(_PAGE.findall(pdf))


def test_the_page_count_reads_chromiums_page_objects() -> None:
    two = b"1 0 obj <</Type/Pages>> 2 0 obj <</Type /Page/Parent 1 0 R>>"
    assert _pages(two + b"\n3 0 obj <</Type/Page/Parent 1 0 R>>") == 2


def _print(page: Any, sheet: Path) -> bytes:
    page.goto(sheet.resolve().as_uri())
    page.emulate_media(media="print")
    return bytes(page.pdf(format="A4", prefer_css_page_size=True, print_background=True))


@pytest.mark.parametrize(("lab", "language"), SHEETS, ids=lambda v: str(v))
def test_the_sheet_prints_on_one_a4_page(
    built: Path, browser_context: Any, lab: str, language: str
) -> None:
    sheet = built / language / f"{lab}.html"
    page = browser_context.new_page()
    pdf = _print(page, sheet)
    assert _pages(pdf) == 1, f"{language}/{lab}: more than one A4 page"
    # what `make handouts` itself printed with `chromium --print-to-pdf`
    made = sheet.with_suffix(".pdf").read_bytes()
    assert made.startswith(b"%PDF") and _pages(made) == 1, f"{language}/{lab}"
    # the picture is drawn, and nothing runs off the page's width
    width = page.evaluate("document.querySelector('figure img').naturalWidth")
    assert width > 0
    overflow = page.evaluate(
        "document.documentElement.scrollWidth > document.documentElement.clientWidth"
    )
    assert not overflow, f"{language}/{lab}: wider than the page"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / f"handout-{language}-{lab}.pdf").write_bytes(pdf)


def test_a_sheet_twice_as_long_counts_two_pages(built: Path, browser_context: Any) -> None:
    text = (built / "zh" / "11.5.html").read_text(encoding="utf-8")
    body = text.split("<body>", 1)[1].split("</body>", 1)[0]
    doubled = built / "doubled.html"
    doubled.write_text(text.replace("</body>", body + "</body>"), encoding="utf-8")
    pdf = _print(browser_context.new_page(), doubled)
    assert _pages(pdf) >= 2
    chromium = find_chromium()
    assert chromium is not None
    target = built / "doubled.pdf"
    handouts.print_pdf(doubled, target, chromium)
    assert _pages(target.read_bytes()) >= 2
