"""Figures for labs 11.2 and 11.3, drawn from the core's results.

* :func:`timeline_figure` -- 11.2 "两个 tool result 仍属于 u3 开始的同一组": the path as a
  row of boxes coloured by interaction group, with every place a cut could fall marked
  legal (✔, solid, between groups) or illegal (✘, dotted, inside a group).
* :func:`budget_figure` -- 11.3 "31 个 token 怎样留下第二、三组": a waterfall of the fixed
  costs, then each group newest first, kept (solid) or dropped (hatched), against the line
  where the budget ends.
* :func:`sweep_figure` -- the number of groups kept and the ``reason`` for every
  ``max_tokens`` from 0 to 60.

Every function returns a :class:`~matplotlib.figure.Figure` of a fixed size in the course
style (:mod:`ctxlab.lab.style`) and never calls ``plt.show()``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import matplotlib
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch, Patch

from ctxlab import fixtures
from ctxlab.entries import MessageSessionEntry, SessionEntry
from ctxlab.interactions import group_interactions
from ctxlab.lab.style import (
    DROPPED,
    FIGSIZE,
    FIGSIZE_TALL,
    GROUP_COLOURS,
    KEPT,
    PALETTE,
    course_rc,
    new_figure,
)
from ctxlab.lab.tables import budget_ledger, cut_points, sweep_table

__all__ = ["budget_figure", "group_colour", "sweep_figure", "timeline_figure"]

Estimator = Callable[[Any], int | float]

_NO_GROUP = "#DDDDDD"

F = TypeVar("F", bound=Callable[..., Figure])


def _styled(draw: F) -> F:
    """Draw under the course rcParams, so titles and legends get 14 pt+ text too."""

    @functools.wraps(draw)
    def wrapper(*args: Any, **kwargs: Any) -> Figure:
        with matplotlib.rc_context(course_rc()):
            return draw(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def group_colour(number: int) -> str:
    """The colour of interaction group ``number`` (1-based)."""
    return GROUP_COLOURS[(number - 1) % len(GROUP_COLOURS)]


def _path(path: Sequence[SessionEntry] | None) -> list[SessionEntry]:
    return fixtures.opening_path() if path is None else list(path)


@_styled
def timeline_figure(path: Sequence[SessionEntry] | None = None) -> Figure:
    """The path's message entries in order, coloured by group, with every cut point marked."""
    entries = [e for e in _path(path) if isinstance(e, MessageSessionEntry)]
    groups = group_interactions(entries)
    number = {entry_id: n for n, g in enumerate(groups, 1) for entry_id in g.entry_ids}
    x_of = {entry.id: float(i) for i, entry in enumerate(entries)}

    fig, ax = new_figure(FIGSIZE)
    width, height = 0.86, 0.8
    for entry in entries:
        x = x_of[entry.id]
        n = number.get(entry.id)
        ax.add_patch(
            FancyBboxPatch(
                (x - width / 2, 0),
                width,
                height,
                boxstyle="round,pad=0.02,rounding_size=0.08",
                facecolor=group_colour(n) if n else _NO_GROUP,
                edgecolor=PALETTE["black"],
                linewidth=1.2,
                linestyle="-" if n else ":",
            )
        )
        ax.text(x, height / 2, entry.id, ha="center", va="center", fontsize=14)
        ax.text(x, -0.22, entry.message.role.replace("toolResult", "result"), ha="center",
                va="center", fontsize=14, color="#444444", rotation=0)  # fmt: skip

    for n, group in enumerate(groups, 1):
        first, last = x_of[group.entry_ids[0]], x_of[group.entry_ids[-1]]
        y = -0.55
        ax.plot([first - 0.4, last + 0.4], [y, y], color=group_colour(n), linewidth=5,
                solid_capstyle="butt")  # fmt: skip
        ax.text((first + last) / 2, y - 0.25, f"group {n}", ha="center", va="center",
                fontsize=15, fontweight="bold")  # fmt: skip

    for cut in cut_points(entries):
        x = (x_of[cut.before] + x_of[cut.after]) / 2
        if cut.legal:
            ax.plot([x, x], [-0.05, height + 0.3], color=PALETTE["bluish_green"], linewidth=3)
            ax.text(x, height + 0.45, "✔", ha="center", va="center", fontsize=20,
                    color=PALETTE["bluish_green"], fontweight="bold")  # fmt: skip
        else:
            ax.plot([x, x], [height + 0.05, height + 0.3], color=PALETTE["vermillion"],
                    linewidth=2, linestyle=":")  # fmt: skip
            ax.text(x, height + 0.45, "✘", ha="center", va="center", fontsize=16,
                    color=PALETTE["vermillion"])  # fmt: skip

    ax.set_xlim(-0.6, len(entries) - 0.4)
    ax.set_ylim(-1.0, height + 0.75)
    ax.set_axis_off()
    ax.set_title("Where may the budget cut?  ✔ between groups   ✘ inside a group", loc="left")
    return fig


@_styled
def budget_figure(
    path: Sequence[SessionEntry] | None = None,
    *,
    max_tokens: int | float = 31,
    reserved_output: int | float = 4,
    safety_margin: int | float = 2,
    estimate: Estimator | None = None,
) -> Figure:
    """Fixed costs, then each group newest first (kept solid, dropped hatched), as a waterfall.

    The dashed line is where the budget ends: fixed costs + ``available_for_messages``.
    """
    view = budget_ledger(
        path,
        max_tokens=max_tokens,
        reserved_output=reserved_output,
        safety_margin=safety_margin,
        estimate=estimate,
    )
    t = view.result.tokens
    fixed_style = {"edgecolor": PALETTE["black"], "linewidth": 1.5}
    rows: list[tuple[str, float, dict[str, object]]] = [
        ("system", float(t.system), {**fixed_style, "facecolor": "#BBBBBB"}),
        ("reserved_output", float(t.reserved_output), {**fixed_style, "facecolor": "#888888"}),
        ("safety_margin", float(t.safety_margin), {**fixed_style, "facecolor": "#555555"}),
    ]
    if view.summary_cost:
        rows.append(("summary", float(view.summary_cost), {**KEPT, "facecolor": PALETTE["yellow"]}))
    for group in view.groups:
        style = {**KEPT, "facecolor": group_colour(group.number)} if group.kept else dict(DROPPED)
        rows.append((group.label.replace(": ", "\n"), float(group.cost), style))

    # Fixed margins instead of constrained layout: a slider redraws this figure, and
    # the layout solver would more than double the time of each redraw.
    fig, ax = new_figure(FIGSIZE_TALL, constrained=False)
    fig.subplots_adjust(left=0.19, right=0.98, top=0.86, bottom=0.11)
    start = 0.0
    for index, (_, cost, style) in enumerate(rows):
        ax.barh(index, cost, left=start, height=0.7, **style)  # type: ignore[arg-type]
        ax.text(start + cost + 0.3, index, f"{cost:g}", va="center", ha="left", fontsize=14)
        start += cost
    fixed = float(t.system + t.reserved_output + t.safety_margin)
    budget_end = fixed + float(t.available_for_messages)
    ax.axvline(budget_end, color=PALETTE["black"], linestyle="--", linewidth=2)
    right = max(start, budget_end, float(t.max_tokens)) * 1.1 + 2
    on_left = budget_end > 0.6 * right  # keep the label inside the axes
    ax.text(budget_end, -0.9, f" budget ends: {budget_end:g} " , va="center",
            ha="right" if on_left else "left", fontsize=14, fontweight="bold")  # fmt: skip

    ax.set_yticks(range(len(rows)), [label for label, _, _ in rows])
    ax.invert_yaxis()
    ax.set_ylim(len(rows) - 0.5, -1.3)
    ax.set_xlim(0, right)
    ax.set_xlabel("tokens (running total)")
    ax.set_title(
        f"max_tokens {t.max_tokens:g}: {view.result.reason}, total {t.total:g}", loc="left"
    )
    fig.legend(
        handles=[
            Patch(**{**KEPT, "facecolor": "#FFFFFF"}, label="kept (solid)"),  # type: ignore[arg-type]
            Patch(**DROPPED, label="dropped (hatched)"),  # type: ignore[arg-type]
        ],
        loc="upper right",
        ncols=2,
        frameon=False,
    )
    return fig


_REASON_STYLE: dict[str, dict[str, object]] = {
    "single_group_overflow": {"facecolor": "#D55E0033", "hatch": "xx", "edgecolor": "#D55E00"},
    "trimmed": {"facecolor": "#E69F0033", "hatch": "//", "edgecolor": "#E69F00"},
    "within_budget": {"facecolor": "#009E7333", "hatch": "", "edgecolor": "#009E73"},
}


@_styled
def sweep_figure(
    path: Sequence[SessionEntry] | None = None,
    *,
    max_tokens: Iterable[int] = range(61),
    reserved_output: int | float = 4,
    safety_margin: int | float = 2,
    estimate: Estimator | None = None,
    mark: int | None = 31,
) -> Figure:
    """Groups kept (a step line) and ``reason`` (hatched bands) against ``max_tokens``."""
    frame = sweep_table(
        path,
        max_tokens=max_tokens,
        reserved_output=reserved_output,
        safety_margin=safety_margin,
        estimate=estimate,
    )
    budgets = [int(v) for v in frame["max_tokens"]]
    kept = [int(v) for v in frame["groups kept"]]
    reasons = [str(v) for v in frame["reason"]]

    fig, ax = new_figure(FIGSIZE)
    top = max(kept, default=0) + 0.8
    start = 0
    for i in range(1, len(budgets) + 1):
        if i == len(budgets) or reasons[i] != reasons[start]:
            ax.axvspan(budgets[start] - 0.5, budgets[i - 1] + 0.5, ymax=1.0, linewidth=0,
                       **_REASON_STYLE[reasons[start]])  # type: ignore[arg-type]  # fmt: skip
            start = i
    ax.step(budgets, kept, where="mid", color=PALETTE["black"], linewidth=3)
    if mark is not None and mark in budgets:
        y = kept[budgets.index(mark)]
        ax.plot([mark], [y], "o", color=PALETTE["black"], markersize=10)
        ax.annotate(
            f"max_tokens {mark}: {y} groups",
            (mark, y),
            xytext=(mark - 14, y + 0.45),
            fontsize=14,
            arrowprops={"arrowstyle": "->", "linewidth": 1.5},
            bbox={"boxstyle": "round", "facecolor": "#FFFFFF", "edgecolor": "#000000"},
        )
    ax.set_ylim(0, top)
    ax.set_yticks(range(0, int(top) + 1))
    ax.set_xlim(budgets[0] - 0.5, budgets[-1] + 0.5)
    ax.set_xlabel("max_tokens")
    ax.set_ylabel("groups kept")
    ax.set_title(
        f"Sweep (reserved_output {reserved_output:g}, safety_margin {safety_margin:g})",
        loc="left",
    )
    seen = list(dict.fromkeys(reasons))
    ax.legend(
        handles=[Patch(**_REASON_STYLE[r], label=r) for r in seen],  # type: ignore[arg-type]
        loc="lower right",
        frameon=True,
        framealpha=0.95,
    )
    return fig
