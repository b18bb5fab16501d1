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

from ctxlab.errors import CtxlabError  # noqa: E402
from ctxlab.lab import fonts  # noqa: E402

CHINESE = "会话压缩摘要：保留的组 ✔ 与丢弃的组 ✘"


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


def test_setup_notebook_sets_the_language_of_text_and_figures(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from ctxlab import fixtures
    from ctxlab.lab import language, setup_notebook

    try:
        monkeypatch.setattr(fonts, "cjk_font", lambda: "DejaVu Sans")
        setup_notebook("zh")
        assert language.get_language() == "zh" and language.figure_language() == "zh"
        assert language.tr("kept", "保留") == "保留"
        assert fixtures.get_language() == "zh"  # the session's texts are Chinese too
        monkeypatch.setattr(fonts, "cjk_font", lambda: None)
        setup_notebook("zh")
        assert language.get_language() == "zh" and language.figure_language() == "en"
        assert language.tr_figure("kept", "保留") == "kept"
        assert capsys.readouterr().out.count("No Chinese font found") == 1
        with pytest.raises(CtxlabError, match="'en' or 'zh'"):
            setup_notebook("fr")
    finally:
        language.set_language("en")
        language.set_figure_language(None)
        fixtures.set_language("en")


def test_the_chinese_figure_font_is_the_simplified_chinese_face() -> None:
    """Debian's Noto CJK collection is read by matplotlib as its first face, "Noto Sans CJK
    JP" (Japanese glyph forms); the font chosen must be the SC face, whose 直 is another
    glyph than the JP face's."""
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    collections = [p for p in font_manager.findSystemFonts(fontext="ttc") if "NotoSansCJK" in p]
    if not collections:
        pytest.skip("no Noto Sans CJK collection on this machine (fonts-noto-cjk)")
    fonts.cjk_font.cache_clear()
    assert fonts.cjk_font() == fonts.SC_FAMILY
    sc_file = font_manager.findfont(
        font_manager.FontProperties(family=fonts.SC_FAMILY), fallback_to_default=False
    )
    sc = FT2Font(sc_file)
    assert sc.family_name == "Noto Sans CJK SC"
    jp = FT2Font(collections[0])  # face 0 of the collection
    assert jp.family_name.endswith("JP")

    # One collection, one set of outlines: each face maps 直 to its own region's glyph.
    assert sc.get_charmap()[ord("直")] != jp.get_charmap()[ord("直")]
