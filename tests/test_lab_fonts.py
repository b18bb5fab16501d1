"""Chinese text in figures renders, or falls back to English: never empty boxes (issue 12)."""

from __future__ import annotations

import io
import os
import warnings

import pytest

pytestmark = pytest.mark.teaching

mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")

from matplotlib import pyplot as plt  # noqa: E402

from ctxlab.lab import fonts  # noqa: E402

CHINESE = "会话压缩摘要：保留的组与丢弃的组"


def _draw(title: str, xlabel: str = "token 预算") -> list[str]:
    """Draw and render a figure; returns matplotlib's warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        figure, axes = plt.subplots()
        axes.set_title(title)
        axes.set_xlabel(xlabel)
        figure.canvas.draw()
        plt.close(figure)
    return [str(w.message) for w in caught]


@pytest.fixture(autouse=True)
def _restore_rc() -> object:
    saved = mpl.rcParams.copy()
    yield
    mpl.rcParams.update(saved)


def test_default_font_really_lacks_chinese_glyphs() -> None:
    """The check below could fail: without the fallback, matplotlib warns."""
    fonts.use_figure_language("en")
    assert any("missing from font" in message for message in _draw(CHINESE))


def test_chinese_figure_text_renders_without_missing_glyphs() -> None:
    if fonts.cjk_font() is None:
        if os.environ.get("CI"):
            pytest.fail("CI installs fonts-noto-cjk: no CJK font found by matplotlib")
        pytest.skip("no CJK font on this machine (apt-get install fonts-noto-cjk)")
    assert fonts.use_figure_language("zh") == "zh"
    assert not [m for m in _draw(CHINESE) if "missing from font" in m]


def test_without_a_cjk_font_figures_fall_back_to_english_with_a_notice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(fonts, "cjk_font", lambda: None)
    notice = io.StringIO()
    assert fonts.use_figure_language("zh", notice=notice) == "en"
    lines = notice.getvalue().splitlines()
    assert len(lines) == 1 and "English" in lines[0] and "fonts-noto-cjk" in lines[0]
    assert not [
        m for m in _draw("kept vs dropped groups", "token budget") if "missing from font" in m
    ]
