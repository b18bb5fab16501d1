"""Lecture fit: every slide fits a 16:9 projector with nothing cut off (issues 11 and 18).

Two views of the same notebooks:

* **RISE** (``make lecture``): the 11.3 budget chart, the tallest figure under its code
  cell, fits a 1280×720 window with the lecture settings (from the stored outputs of the
  committed instructor edition; no kernel run needed).
* **reveal.js decks** (``make slides``, slides/ and slides/zh/): every slide of every deck is
  opened at 1280×720 and at 1920×1080. No element of a slide may lie outside the slide (nor
  outside the window), and no code, output or table may scroll. A screenshot of every slide
  at both sizes is kept under artifacts/slides/<language>/<deck>/<size>/ (git-ignored).
  The deck's template (lecture/nbconvert/ctxlab-reveal) splits a slide too tall for a
  legible 1280×720 slide into sub-slides (notebooks/_build/slides_split.py), wraps code,
  keeps table headers on one line and shrinks a slide that is still a little too big as a
  whole; this test fails when a slide is shrunk below MIN_FIT (it is unreadable from the back
  of a room). The fit factor of every slide is written to
  artifacts/slides/<language>/<deck>/<size>/fit-report.txt beside the screenshots.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from browser_support import NOTEBOOKS, REPO, open_deck_offline, screenshot, slug

pytestmark = pytest.mark.browser

SLIDE_NOTEBOOK = "11.3-budgeted-context.ipynb"
FIGURE_CALL = "lab11_3.budget_figure("
PROJECTOR = {"width": 1280, "height": 720}
SIZES = ({"width": 1280, "height": 720}, {"width": 1920, "height": 1080})
SLIDES = REPO / "slides"
DECKS = sorted([*SLIDES.glob("*.slides.html"), *(SLIDES / "zh").glob("*.slides.html")])
SLIDE_ARTIFACTS = REPO / "artifacts" / "slides"
#: Below this shrink factor text is hard to read from the back of a room.
LEGIBLE_FIT = 0.6
#: A slide shrunk below this factor fails the test (split it: slides_split.py's estimate
#: missed it, or the source needs a slide boundary).
MIN_FIT = LEGIBLE_FIT
TOLERANCE = 1.5  # px: sub-pixel rounding of scaled layouts


def figure_cell_index() -> int:
    """The index of the code cell that draws the budget figure (it has a stored PNG)."""
    cells = json.loads((NOTEBOOKS / SLIDE_NOTEBOOK).read_text(encoding="utf-8"))["cells"]
    for index, cell in enumerate(cells):
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        has_png = any("image/png" in out.get("data", {}) for out in cell.get("outputs", []))
        if FIGURE_CALL in source and has_png:
            return index
    raise AssertionError(f"no cell of {SLIDE_NOTEBOOK} draws {FIGURE_CALL}… with a stored PNG")


def test_the_budget_figure_slide_fits_1280x720(chromium: Any, lecture_server: Any) -> None:
    index = figure_cell_index()
    context = chromium.new_context(viewport=PROJECTOR, device_scale_factor=1)
    context.set_default_timeout(90_000)
    try:
        page = context.new_page()
        page.goto(
            lecture_server.url(f"rise/{SLIDE_NOTEBOOK}", activeCellIndex=str(index)),
            wait_until="domcontentloaded",
        )
        current = page.locator(".reveal .slides section.present")
        cell = current.locator(".jp-CodeCell", has_text=FIGURE_CALL).first
        cell.wait_for(state="visible")
        image = cell.locator(".jp-OutputArea-output img").first
        image.wait_for(state="visible")
        page.wait_for_function("img => img.complete && img.naturalHeight > 0",
                               arg=image.element_handle())  # fmt: skip
        page.wait_for_timeout(1_000)  # reveal.js finishes its layout and transition
        box = image.bounding_box()
        code = cell.locator(".jp-InputArea").first.bounding_box()
        screenshot(page, "lecture-11.3-figure-slide-1280x720")
        assert box is not None and code is not None
        assert code["y"] >= 0, f"the code cell starts above the window: {code}"
        assert box["y"] + box["height"] <= PROJECTOR["height"], f"figure overflows: {box}"
        assert box["x"] + box["width"] <= PROJECTOR["width"], f"figure overflows: {box}"
    finally:
        context.close()


# -- every slide of both reveal.js decks ----------------------------------------------------------

_SLIDE_COUNT = "() => window.Reveal.getSlides().length"

# Go to slide n (no transition), wait for its images, fit it, and report what is wrong.
_CHECK_SLIDE = r"""
async ([n, tolerance]) => {
  const Reveal = window.Reveal;
  const slide = Reveal.getSlides()[n];
  const at = Reveal.getIndices(slide);
  Reveal.slide(at.h, at.v, Number.MAX_SAFE_INTEGER);  // every fragment shown
  const images = [...slide.querySelectorAll("img")];
  await Promise.all(images.map((img) => img.decode().catch(() => null)));
  await document.fonts.ready;
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  window.ctxlabFitCurrent();
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  const frame = document.querySelector(".reveal .slides").getBoundingClientRect();
  const view = {left: 0, top: 0, right: window.innerWidth, bottom: window.innerHeight};
  const bounds = {
    left: Math.max(frame.left, view.left), top: Math.max(frame.top, view.top),
    right: Math.min(frame.right, view.right), bottom: Math.min(frame.bottom, view.bottom),
  };
  const name = (el) => {
    const text = (el.innerText || el.getAttribute("alt") || "").trim().replace(/\s+/g, " ");
    const cls = typeof el.className === "string" ? el.className.split(" ")[0] : "";
    return `<${el.tagName.toLowerCase()}${cls ? "." + cls : ""}> "${text.slice(0, 50)}"`;
  };
  const problems = [];
  const outside = new Set();
  for (const el of slide.querySelectorAll("*")) {
    if (el.closest("aside.notes, script, style")) continue;
    const style = getComputedStyle(el);
    if (style.display === "none" || style.visibility === "hidden") continue;
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) continue;
    const cut = [];
    const by = (side, px) => { if (px > tolerance) cut.push(`${side} by ${Math.round(px)}px`); };
    by("left", bounds.left - r.left);
    by("top", bounds.top - r.top);
    by("right", r.right - bounds.right);
    by("bottom", r.bottom - bounds.bottom);
    // Report the outermost element that sticks out, not each of its children.
    if (cut.length && !(el.parentElement && outside.has(el.parentElement))) {
      problems.push(`${name(el)} sticks out (${cut.join(", ")})`);
    }
    if (cut.length) outside.add(el);
    const scrolls = /(auto|scroll)/.test(style.overflowX + style.overflowY);
    if ((scrolls || /^(PRE|CODE|TABLE)$/.test(el.tagName)) && el.clientWidth > 0 &&
        (el.scrollWidth > el.clientWidth + tolerance ||
         (scrolls && el.scrollHeight > el.clientHeight + tolerance))) {
      problems.push(`${name(el)} scrolls (${el.scrollWidth}×${el.scrollHeight} in ` +
                    `${el.clientWidth}×${el.clientHeight})`);
    }
  }
  for (const el of slide.querySelectorAll("*")) {
    if (el.closest("aside.notes, script, style")) continue;
    const style = getComputedStyle(el);
    if (style.textOverflow === "ellipsis" && style.display !== "none" &&
        el.scrollWidth > el.clientWidth + tolerance) {
      problems.push(`${name(el)} is cut off with an ellipsis`);
    }
  }
  // Every image: a stored figure and a widget's figure (an <img> in an HTML widget) alike.
  for (const img of slide.querySelectorAll("img")) {
    const alt = (img.getAttribute("alt") || "").trim();
    if (!alt || alt.startsWith("No description")) problems.push(`a figure without alt text`);
  }
  for (const h of slide.querySelectorAll("h1, h2, h3, h4, h5, h6")) {
    if (getComputedStyle(h).textTransform !== "none") {
      problems.push(`${name(h)} is case-transformed`);
    }
  }
  for (const th of slide.querySelectorAll("th")) {
    if (getComputedStyle(th).whiteSpace !== "nowrap") problems.push(`${name(th)} may wrap`);
  }
  const fit = slide.dataset.ctxlabFit ? Number(slide.dataset.ctxlabFit) : 1;
  const title = (slide.querySelector("h1, h2, h3") || slide).innerText.trim().split("\n")[0];
  return {index: [at.h, at.v], fit, title: title.slice(0, 60), problems};
}
"""


def _deck_id(deck: Path) -> str:
    return f"{deck.parent.name}/{deck.name.removesuffix('.slides.html')}"


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s['width']}x{s['height']}")
@pytest.mark.parametrize("deck", DECKS, ids=_deck_id)
def test_every_slide_fits(chromium: Any, deck: Path, size: dict[str, int]) -> None:
    context = chromium.new_context(viewport=size, device_scale_factor=1)
    context.set_default_timeout(60_000)
    language = "zh" if deck.parent.name == "zh" else "en"
    folder = SLIDE_ARTIFACTS / language / slug(deck.name.removesuffix(".slides.html"))
    folder = folder / f"{size['width']}x{size['height']}"
    folder.mkdir(parents=True, exist_ok=True)
    try:
        page, _blocked, errors = open_deck_offline(context, deck)
        page.evaluate(
            "() => window.Reveal.configure({transition: 'none', backgroundTransition: 'none'})"
        )
        count = page.evaluate(_SLIDE_COUNT)
        assert count > 1, f"{deck.name}: reveal.js found {count} slides"
        failures: list[str] = []
        report: list[str] = []
        for n in range(count):
            result = page.evaluate(_CHECK_SLIDE, [n, TOLERANCE])
            h, v = result["index"]
            page.screenshot(path=str(folder / f"{n + 1:02d}-{h}-{v}.png"))
            where = f"slide {n + 1} (#/{h}/{v}) {result['title']!r}"
            mark = "  < MIN_FIT" if result["fit"] < MIN_FIT else ""
            report.append(f"{result['fit']:.3f}  {where}{mark}")
            if result["fit"] < MIN_FIT:
                failures.append(f"{where}: shrunk to {result['fit']:.2f} (< {MIN_FIT}): split it")
            failures.extend(f"{where}: {problem}" for problem in result["problems"][:6])
        # Every slide's shrink factor (1.000: not shrunk), one line a slide.
        (folder / "fit-report.txt").write_text(
            f"{_deck_id(deck)} at {size['width']}x{size['height']}: fit factor per slide\n"
            + "".join(f"{line}\n" for line in report),
            encoding="utf-8",
        )
        assert errors == [], f"JavaScript errors in {deck.name}: {errors}"
        assert not failures, f"{_deck_id(deck)} at {size['width']}×{size['height']}:\n" + "\n".join(
            failures
        )
    finally:
        context.close()
