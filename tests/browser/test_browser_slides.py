"""`make slides` output works with no network: a deck opened from disk, every request outside
file:// refused, still renders its first slide (reveal.js, require.js, MathJax and the widget
renderer all come from slides/_assets)."""

from __future__ import annotations

from typing import Any

import pytest
from browser_support import REPO, open_deck_offline, screenshot

pytestmark = pytest.mark.browser

SLIDES = REPO / "slides"
DECK = SLIDES / "11.3-budgeted-context.slides.html"


def test_exported_slides_render_offline(browser_context: Any) -> None:
    if not DECK.is_file():
        pytest.fail(f"{DECK.relative_to(REPO)} is missing: run `make slides` first")
    page, blocked, errors = open_deck_offline(browser_context, DECK)

    # reveal.js is ready (open_deck_offline waited for it) and shows the first section.
    first = page.locator(".reveal .slides > section").first
    assert first.is_visible()
    assert "present" in (first.get_attribute("class") or "")
    title = page.locator(".reveal .slides section.present h1").first
    assert "Lab 11.3" in (title.text_content() or "")
    # The saved widget state is rendered by the local html-manager, not a CDN copy.
    page.locator(".reveal .jupyter-widgets").first.wait_for(state="attached", timeout=30_000)
    screenshot(page, "slides-11.3-offline-first")
    assert blocked == [], f"the deck tried to reach the network: {blocked}"
    assert errors == [], f"JavaScript errors in the deck: {errors}"
