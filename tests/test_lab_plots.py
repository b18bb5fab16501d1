"""Lab figures: fixed sizes, text of 14 pt or larger, kept vs dropped told apart by hatching."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.text import Text

from ctxlab import fixtures
from ctxlab.lab import display, lab11_2, lab11_3

pytestmark = pytest.mark.teaching


def _text_sizes(fig: Figure) -> list[float]:
    fig.draw_without_rendering()
    return [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


def _check(fig: Figure, size: tuple[float, float]) -> None:
    assert isinstance(fig, Figure)
    assert tuple(fig.get_size_inches()) == size
    sizes = _text_sizes(fig)
    assert sizes, "the figure has no text"
    assert min(sizes) >= display.MIN_FONT_SIZE


def test_timeline_figure_is_fixed_size_and_readable() -> None:
    fig = lab11_2.timeline_figure()
    _check(fig, display.FIGSIZE)
    texts = {t.get_text() for t in fig.findobj(Text)}
    assert {"sys", "calls", "r-test", "r-read", "group 1", "group 3"} <= texts
    marks = [t.get_text() for t in fig.findobj(Text) if t.get_text() in ("✔", "✘")]
    assert marks.count("✔") == 2 and marks.count("✘") == 6


def test_budget_figure_hatches_dropped_groups_only() -> None:
    fig = lab11_3.budget_figure(
        None, lab11_3.Budget(max_tokens=31, reserved_output=4, safety_margin=2)
    )
    _check(fig, display.FIGSIZE_TALL)
    ax = fig.axes[0]
    bars = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert [round(b.get_width()) for b in bars] == [3, 4, 2, 15, 7, 7]
    hatched = [bool(b.get_hatch()) for b in bars]
    assert hatched == [False, False, False, False, False, True]
    assert "trimmed" in ax.get_title(loc="left")


def test_budget_figure_marks_overflow_in_its_title() -> None:
    fig = lab11_3.budget_figure(None, lab11_3.Budget(max_tokens=19))
    assert "single_group_overflow" in fig.axes[0].get_title(loc="left")
    bars = [p for p in fig.axes[0].patches if isinstance(p, Rectangle)]
    assert [bool(b.get_hatch()) for b in bars][3:] == [False, True, True]


def test_course_style_sets_large_text_and_palette() -> None:
    rc = display.course_rc()
    for key in ("font.size", "xtick.labelsize", "ytick.labelsize", "legend.fontsize"):
        assert float(rc[key]) >= display.MIN_FONT_SIZE  # type: ignore[arg-type]
    assert display.KEPT.get("hatch", "") == "" and display.DROPPED["hatch"]
    assert len(set(display.GROUP_COLOURS)) == len(display.GROUP_COLOURS)
    fig, ax = display.new_figure()
    assert tuple(fig.get_size_inches()) == display.FIGSIZE and fig.axes == [ax]


def test_budget_figure_of_a_resumed_path_has_a_summary_bar() -> None:
    fig = lab11_3.budget_figure(fixtures.resumed_path(), lab11_3.Budget(max_tokens=31))
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels[3] == "summary"
