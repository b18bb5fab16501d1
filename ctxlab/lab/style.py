"""One matplotlib style for every lab figure, readable when projected.

Text is 14 pt or larger everywhere (titles, labels, ticks, legends), the colours are the
Okabe–Ito palette (safe for the common forms of colour blindness), and kept versus dropped
bars differ by hatching and outline as well as by colour, so a grey-scale projector or a
colour-blind student still sees which groups the budget kept (chapter 11, § 上下文按预算重建).

Every figure function in :mod:`ctxlab.lab` builds its figure with :func:`new_figure` and
returns it without calling ``plt.show()``: the figure is not registered with pyplot, so a
widget can redraw it a hundred times without leaking figures, and a notebook shows it by
making it the cell's value (or ``display(fig)``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import matplotlib
from cycler import cycler
from matplotlib.axes import Axes
from matplotlib.figure import Figure

__all__ = [
    "DROPPED",
    "FIGSIZE",
    "FIGSIZE_TALL",
    "GROUP_COLOURS",
    "KEPT",
    "MIN_FONT_SIZE",
    "PALETTE",
    "course_rc",
    "new_figure",
    "use_course_style",
]

#: The Okabe–Ito colour-blind-safe palette, by name.
PALETTE: Mapping[str, str] = MappingProxyType(
    {
        "black": "#000000",
        "orange": "#E69F00",
        "sky_blue": "#56B4E9",
        "bluish_green": "#009E73",
        "yellow": "#F0E442",
        "blue": "#0072B2",
        "vermillion": "#D55E00",
        "reddish_purple": "#CC79A7",
        "grey": "#999999",
    }
)

#: One colour per interaction group, in path order (group 1, group 2, ...).
GROUP_COLOURS: tuple[str, ...] = (
    PALETTE["sky_blue"],
    PALETTE["orange"],
    PALETTE["bluish_green"],
    PALETTE["reddish_purple"],
    PALETTE["yellow"],
    PALETTE["blue"],
    PALETTE["vermillion"],
)

#: Bar keyword arguments for a kept group: solid fill, firm black outline.
KEPT: Mapping[str, object] = MappingProxyType(
    {"facecolor": PALETTE["bluish_green"], "edgecolor": PALETTE["black"], "linewidth": 1.5}
)

#: Bar keyword arguments for a dropped group: white fill, dashed outline, hatched.
DROPPED: Mapping[str, object] = MappingProxyType(
    {
        "facecolor": "#FFFFFF",
        "edgecolor": PALETTE["vermillion"],
        "linewidth": 1.5,
        "linestyle": "--",
        "hatch": "///",
    }
)

FIGSIZE: tuple[float, float] = (10.0, 4.5)
FIGSIZE_TALL: tuple[float, float] = (10.0, 6.5)

#: The smallest font size (points) any text in a lab figure may have.
MIN_FONT_SIZE = 14.0


def course_rc() -> dict[str, object]:
    """The rcParams of the course style (a fresh dict each call)."""
    return {
        "font.size": 15,
        "axes.titlesize": 17,
        "axes.titleweight": "bold",
        "axes.labelsize": 15,
        "xtick.labelsize": 14,
        "ytick.labelsize": 14,
        "legend.fontsize": 14,
        "legend.title_fontsize": 14,
        "figure.titlesize": 18,
        "axes.prop_cycle": cycler(color=list(GROUP_COLOURS)),
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.grid": False,
        "figure.dpi": 100,
        "savefig.dpi": 200,
        "hatch.linewidth": 1.5,
        "svg.hashsalt": "ctxlab",
    }


def use_course_style() -> None:
    """Apply the course style to matplotlib's global rcParams (idempotent)."""
    matplotlib.rcParams.update(course_rc())


def new_figure(
    size: tuple[float, float] = FIGSIZE, *, constrained: bool = True
) -> tuple[Figure, Axes]:
    """A new figure with one axes at a fixed size, in the course style.

    The style is applied to this figure even when :func:`use_course_style` was never
    called, so figures look the same in a notebook and in a plain test. Pass
    ``constrained=False`` for a figure that a widget redraws often: it then keeps
    matplotlib's fixed margins (set them with ``fig.subplots_adjust``), which is much
    faster to draw than the constrained-layout solver.
    """
    with matplotlib.rc_context(course_rc()):
        fig = Figure(figsize=size, layout="constrained" if constrained else None)
        ax = fig.add_subplot()
    return fig, ax
