"""Interactive widgets for labs 11.1-11.3, each a thin shell over a pure render function.

The pure functions (:func:`parse_view`, :func:`grouping_view`, :func:`budget_view`) take the
controls' values and return plain data; the notebooks call them directly in a checked cell
before the widget cell (tagged ``nbval-ignore-output``). A ``build_*_widget()`` function
returns the top-level ``VBox``; its ``controls`` and ``outputs`` dicts give tests (and the
browser tests) the widgets to drive and read. CSS classes are stable hooks:
``ctxlab-widget`` on every container, ``ctxlab-parse-verdict`` (11.1),
``ctxlab-grouping-verdict`` (11.2), ``ctxlab-reason`` and ``ctxlab-kept`` (11.3).

Outputs are written into ``HTML``, ``Label`` and ``Image`` widgets (never an ``Output``
capture), so the wiring works -- and is tested -- without a running kernel.
"""

from __future__ import annotations

import dataclasses
import html
import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets
from matplotlib.figure import Figure

from ctxlab import fixtures
from ctxlab.entries import MessageSessionEntry, SessionEntry
from ctxlab.errors import CtxlabError
from ctxlab.lab import plots, tables
from ctxlab.messages import ToolResultMessage

__all__ = [
    "GROUPING_ORDERS",
    "R_TEST_ANSWERS",
    "BudgetView",
    "budget_view",
    "build_budget_widget",
    "build_grouping_widget",
    "build_parse_widget",
    "figure_png",
    "grouping_variant",
    "grouping_view",
    "parse_cases",
    "parse_view",
]

_BOX_LAYOUT = {"border": "1px solid #999999", "padding": "8px"}


def _verdict_html(text: str) -> str:
    colour = "#009E73" if text.startswith("accepted") else "#D55E00"
    return (
        f'<div style="border-left: 6px solid {colour}; padding: 4px 10px; font-size: 1.15em;'
        f' white-space: pre-wrap">{html.escape(text)}</div>'
    )


def figure_png(fig: Figure, dpi: int = 80) -> bytes:
    """The figure as PNG bytes (what the widget's ``Image`` shows)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


# -- 11.1: pick a corruption, see the parser's verdict -----------------------------------------


def parse_cases() -> tuple[str, ...]:
    """The dropdown's choices: the valid ``compact-1`` first, then each corruption."""
    return (tables.VALID_CASE, *fixtures.compaction_corruptions())


def parse_view(case: str) -> str:
    """What ``parse_session_entry`` says about the chosen case (pure)."""
    return tables.parse_verdict(case)


def build_parse_widget() -> Any:
    """Dropdown "case" → the parser's verdict (class ``ctxlab-parse-verdict``)."""
    dropdown = widgets.Dropdown(
        options=list(parse_cases()),
        value=tables.VALID_CASE,
        description="case",
        layout={"width": "480px"},
    )
    verdict = widgets.HTML(_verdict_html(parse_view(dropdown.value)))
    verdict.add_class("ctxlab-parse-verdict")

    def update(_: object = None) -> None:
        verdict.value = _verdict_html(parse_view(dropdown.value))

    dropdown.observe(update, names="value")
    box = widgets.VBox([dropdown, verdict], layout=_BOX_LAYOUT)
    box.add_class("ctxlab-widget")
    box.controls = {"case": dropdown}
    box.outputs = {"verdict": verdict}
    return box


# -- 11.2: reorder the results or corrupt an id -------------------------------------------------

#: Orders of group 3's middle three entries the widget offers.
GROUPING_ORDERS: tuple[str, ...] = (
    "calls, r-test, r-read",
    "calls, r-read, r-test",
    "r-test, calls, r-read",
    "r-read, r-test, calls",
)

#: What ``r-test.toolCallId`` may be set to.
R_TEST_ANSWERS: tuple[str, ...] = ("test-1", "read-1", "unknown-1")


def grouping_variant(order: str, r_test_answers: str) -> list[SessionEntry]:
    """The opening path with group 3's calls/results in ``order`` and r-test re-pointed."""
    wanted = [part.strip() for part in order.split(",")]
    if sorted(wanted) != ["calls", "r-read", "r-test"]:
        raise ValueError(f"order must arrange calls, r-test and r-read, got {order!r}")
    by_id: dict[str, SessionEntry] = {entry.id: entry for entry in fixtures.opening_path()}
    r_test = by_id["r-test"]
    assert isinstance(r_test, MessageSessionEntry)
    assert isinstance(r_test.message, ToolResultMessage)
    by_id["r-test"] = dataclasses.replace(
        r_test, message=dataclasses.replace(r_test.message, tool_call_id=r_test_answers)
    )
    ids = ["sys", "u1", "a1", "u2", "a2", "u3", *wanted, "a3"]
    return [by_id[entry_id] for entry_id in ids]


@dataclass(frozen=True)
class GroupingView:
    """What the 11.2 widget shows: the verdict and, when accepted, group 3's pairing."""

    verdict: str
    pairing: str


def grouping_view(order: str, r_test_answers: str) -> GroupingView:
    """Group the variant path (pure): accepted with the groups, or the core's error."""
    path = grouping_variant(order, r_test_answers)
    verdict = tables.grouping_verdict(path)
    try:
        pairing = tables.pairing_matrix(path).to_string()
    except CtxlabError:
        pairing = "(no pairing: the group was rejected)"
    return GroupingView(verdict, pairing)


def build_grouping_widget() -> Any:
    """Dropdowns "order" and "r-test answers" → grouping verdict (``ctxlab-grouping-verdict``)."""
    order = widgets.Dropdown(
        options=list(GROUPING_ORDERS), value=GROUPING_ORDERS[0], description="order"
    )
    answers = widgets.Dropdown(
        options=list(R_TEST_ANSWERS), value=R_TEST_ANSWERS[0], description="r-test answers"
    )
    order.style.description_width = "initial"
    answers.style.description_width = "initial"
    verdict = widgets.HTML()
    verdict.add_class("ctxlab-grouping-verdict")
    pairing = widgets.HTML()

    def update(_: object = None) -> None:
        view = grouping_view(order.value, answers.value)
        verdict.value = _verdict_html(view.verdict)
        pairing.value = f"<pre style='font-size: 1.1em'>{html.escape(view.pairing)}</pre>"

    update()
    order.observe(update, names="value")
    answers.observe(update, names="value")
    box = widgets.VBox([widgets.HBox([order, answers]), verdict, pairing], layout=_BOX_LAYOUT)
    box.add_class("ctxlab-widget")
    box.controls = {"order": order, "r-test answers": answers}
    box.outputs = {"verdict": verdict, "pairing": pairing}
    return box


# -- 11.3: three sliders redraw the ledger, the plot, the kept ids and the reason ------------


@dataclass(frozen=True)
class BudgetView:
    """Everything the 11.3 widget shows for one slider position."""

    reason: str  # "reason: trimmed"
    kept: str  # "kept: u2, a2, u3, calls, r-test, r-read, a3"
    ledger_html: str
    figure: Figure


def budget_view(max_tokens: int, reserved_output: int, safety_margin: int) -> BudgetView:
    """Build the context for the opening path and render its ledger and budget plot (pure)."""
    view = tables.budget_ledger(
        max_tokens=max_tokens, reserved_output=reserved_output, safety_margin=safety_margin
    )
    styler = tables.ledger_styler(
        max_tokens=max_tokens, reserved_output=reserved_output, safety_margin=safety_margin
    )
    figure = plots.budget_figure(
        max_tokens=max_tokens, reserved_output=reserved_output, safety_margin=safety_margin
    )
    kept = ", ".join(view.result.kept_entry_ids) or "(nothing)"
    return BudgetView(
        reason=f"reason: {view.result.reason}",
        kept=f"kept: {kept}",
        ledger_html=styler.to_html(),
        figure=figure,
    )


def _slider(description: str, value: int, high: int) -> Any:
    slider = widgets.IntSlider(
        value=value,
        min=0,
        max=high,
        step=1,
        description=description,
        continuous_update=False,
        layout={"width": "460px"},
    )
    slider.style.description_width = "130px"
    return slider


def build_budget_widget(
    render: Callable[[int, int, int], BudgetView] = budget_view,
) -> Any:
    """Sliders max_tokens (0-60, 31), reserved_output (4), safety_margin (2) → ledger + plot."""
    controls = {
        "max_tokens": _slider("max_tokens", 31, 60),
        "reserved_output": _slider("reserved_output", 4, 20),
        "safety_margin": _slider("safety_margin", 2, 20),
    }
    reason = widgets.Label()
    reason.add_class("ctxlab-reason")
    kept = widgets.Label()
    kept.add_class("ctxlab-kept")
    ledger = widgets.HTML()
    # max_width keeps the figure inside a narrow notebook column; wrapping puts it under
    # the ledger instead of cutting it off at the right.
    image = widgets.Image(format="png", layout={"width": "760px", "max_width": "100%"})

    def update(_: object = None) -> None:
        view = render(
            controls["max_tokens"].value,
            controls["reserved_output"].value,
            controls["safety_margin"].value,
        )
        reason.value = view.reason
        kept.value = view.kept
        ledger.value = view.ledger_html
        image.value = figure_png(view.figure)

    update()
    for control in controls.values():
        control.observe(update, names="value")
    box = widgets.VBox(
        [
            widgets.VBox(list(controls.values())),
            reason,
            kept,
            widgets.HBox(
                [ledger, image], layout={"flex_flow": "row wrap", "align_items": "flex-start"}
            ),
        ],
        layout=_BOX_LAYOUT,
    )
    box.add_class("ctxlab-widget")
    box.controls = controls
    box.outputs = {"reason": reason, "kept": kept, "ledger": ledger, "figure": image}
    return box
