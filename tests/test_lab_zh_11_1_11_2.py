"""The Chinese edition of lab 11.2's teaching layer (issue 12): its labels, verdicts and
figure really speak Chinese when the notebook asks for it."""

from __future__ import annotations

import io
import re
import warnings
from collections.abc import Iterator

import pytest

pytest.importorskip("pandas")
mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")

from ctxlab import fixtures  # noqa: E402
from ctxlab.lab import fonts, lab11_2  # noqa: E402
from ctxlab.lab.language import set_figure_language, set_language  # noqa: E402

pytestmark = pytest.mark.teaching

HAN = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def zh() -> Iterator[None]:
    saved = mpl.rcParams.copy()
    set_language("zh")
    set_figure_language("zh")
    try:
        yield
    finally:
        set_language("en")
        set_figure_language(None)
        mpl.rcParams.update(saved)


def _figure_texts(fig: mpl.figure.Figure) -> list[str]:
    ax = fig.axes[0]
    texts = [ax.get_title(loc="left"), ax.get_xlabel(), ax.get_ylabel()]
    texts += [t.get_text() for t in ax.texts]
    legend = ax.get_legend()
    if legend is not None:
        texts += [t.get_text() for t in legend.get_texts()]
    return [t for t in texts if t]


# -- 11.2 ------------------------------------------------------------------------------------------


def _opening_groups() -> list[lab11_2.InteractionGroup]:
    from ctxlab import group_interactions
    from ctxlab.interactions import message_entries

    return group_interactions(message_entries(fixtures.opening_path()))


def test_11_2_group_label_is_chinese(zh: None) -> None:
    assert lab11_2.group_label(3, _opening_groups()[2]) == "第 3 组：u3…a3"


def test_11_2_checks_are_chinese(zh: None) -> None:
    verdict = lab11_2.check_legal_cuts(["a1|u2", "a2|u3", "r-test|r-read"])
    assert not verdict.ok and verdict.title == "这些切点落在组内：r-test|r-read"
    assert lab11_2.check_error_entry("r-test").title.startswith("r-test 带着 toolCallId unknown-1")
    assert lab11_2.check_group_of_u3(["u3", "calls", "r-read", "r-test", "a3"]).title == (
        "成员对了，顺序不对"
    )


def test_11_2_timeline_figure_is_drawn_in_chinese_without_missing_glyphs(zh: None) -> None:
    if fonts.cjk_font() is None:
        pytest.skip("no CJK font on this machine (apt-get install fonts-noto-cjk)")
    fonts.use_figure_language("zh")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        figures = [lab11_2.timeline_figure()]
        for fig in figures:
            fig.savefig(io.BytesIO(), format="png")  # renders every glyph (Agg)
    assert not [str(w.message) for w in caught if "missing from font" in str(w.message)]
    texts = _figure_texts(figures[0])
    assert texts[0].startswith("预算可以在哪里切开？")
    assert [t for t in texts if t.startswith("第 ")] == ["第 1 组", "第 2 组", "第 3 组"]
