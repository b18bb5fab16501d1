"""What every lab shows with, once: the course style, the one table wrapper, widget boxes.

* the course style: one matplotlib style readable when projected (text 14 pt or larger, the
  Okabe–Ito colour-blind-safe palette, kept and dropped bars that differ by hatching and
  outline as well as colour; chapter 11, § 上下文按预算重建). Figures are made by
  :func:`new_figure`, never registered with pyplot, so a widget can redraw them freely;
* :func:`show`: a ``DataFrame`` as a :class:`CourseTable` (left-aligned, no index, an HTML id
  derived from the content so nbval can compare it, a repr without a memory address);
* widget boxes (:func:`widget_box`, :func:`slider`, :func:`figure_html`) and
  :func:`call_safely`, which runs a student's function for a widget or a comparison table
  with a time limit and turns what goes wrong into a message.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import hashlib
import html
import io
import re
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TextIO, TypeVar

import ipywidgets as widgets
import matplotlib
import pandas as pd
from cycler import cycler
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from pandas.io.formats.style import Styler

from ctxlab import fixtures
from ctxlab.context import TokenEstimator
from ctxlab.entries import CompactionSessionEntry, MessageSessionEntry, SessionEntry
from ctxlab.interactions import group_interactions, message_entries
from ctxlab.lab.language import Texts, get_language, set_figure_language, tr

say = Texts("display")

__all__ = [
    "DROPPED",
    "FIGSIZE",
    "FIGSIZE_TALL",
    "GROUP_COLOURS",
    "KEPT",
    "MAX_FIGURE_HEIGHT",
    "MIN_FONT_SIZE",
    "PALETTE",
    "CourseFigure",
    "CourseTable",
    "SafeCall",
    "TokenEstimator",
    "call_safely",
    "course_rc",
    "default_estimator",
    "default_path",
    "entry_kind",
    "figure_html",
    "figure_widget",
    "group_colour",
    "group_numbers",
    "in_language",
    "new_figure",
    "relinked",
    "show",
    "slider",
    "styled",
    "tidy_number",
    "use_course_style",
    "widget_box",
]

# -- the course style ------------------------------------------------------------------------------

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

#: The tallest a lab figure may be (inches, shown at 100 dpi): a figure then fits on a 16:9
#: slide at 1280×720 under the code cell that draws it.
MAX_FIGURE_HEIGHT = 4.2

FIGSIZE: tuple[float, float] = (10.0, 4.0)
FIGSIZE_TALL: tuple[float, float] = (10.0, MAX_FIGURE_HEIGHT)

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


def use_course_style(language: str | None = None, *, notice: TextIO | None = None) -> None:
    """Apply the course style to matplotlib's global rcParams (idempotent); with ``language``,
    draw figure text in it where a font allows (:func:`~ctxlab.lab.fonts.use_figure_language`,
    its notice to ``notice``)."""
    matplotlib.rcParams.update(course_rc())
    if language is not None:
        from ctxlab.lab import fonts

        set_figure_language(fonts.use_figure_language(language, notice=notice))


class CourseFigure(Figure):
    """A lab figure whose PNG output carries alt text in its metadata (``make slides``
    writes it into the deck's ``<img alt="...">``)."""

    def alt_text(self) -> str:
        """What the figure shows, in words: its ``alt`` label if set, else its titles."""
        label = str(self.get_label() or "").strip()
        if label:
            return label
        titles = [self.get_suptitle()] if self.get_suptitle() else []
        titles += [
            ax.get_title(loc) for ax in self.axes for loc in ("left", "center", "right")
            if ax.get_title(loc)
        ]  # fmt: skip
        return " / ".join(titles) or "figure"

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        # IPython asks this before its PNG formatter, whose metadata (width, height) would
        # replace ours: register, once, a PNG printer for this class that calls the
        # Figure printer of the moment (the inline backend's) and adds the alt text.
        _register_png_alt()
        return {}, {}


def _png_with_alt(fig: CourseFigure) -> Any:
    from IPython.core.getipython import get_ipython

    shell = get_ipython()  # type: ignore[no-untyped-call]
    png = shell.display_formatter.formatters["image/png"]
    data = png.lookup_by_type(Figure)(fig)
    metadata: dict[str, Any] = {}
    if isinstance(data, tuple):
        data, metadata = data[0], dict(data[1] or {})
    return data, {**metadata, "alt": fig.alt_text()}


def _register_png_alt() -> None:
    try:
        from IPython.core.getipython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return
    shell = get_ipython()  # type: ignore[no-untyped-call]
    if shell is None:
        return
    png = shell.display_formatter.formatters["image/png"]
    try:
        png.lookup_by_type(Figure)
    except KeyError:  # no figure formatter (no inline backend): nothing to add alt text to
        return
    if png.type_printers.get(CourseFigure) is not _png_with_alt:
        png.for_type(CourseFigure, _png_with_alt)


def new_figure(
    size: tuple[float, float] = FIGSIZE, *, constrained: bool = True
) -> tuple[Figure, Axes]:
    """A new figure with one axes at a fixed size, in the course style (even when
    :func:`use_course_style` was never called). ``constrained=False``: fixed margins, much
    faster for a figure a widget redraws."""
    with matplotlib.rc_context(course_rc()):
        fig = CourseFigure(figsize=size, layout="constrained" if constrained else None)
        ax = fig.add_subplot()
    return fig, ax


FigureFunction = TypeVar("FigureFunction", bound=Callable[..., Figure])


def styled(draw: FigureFunction) -> FigureFunction:
    """Draw under the course rcParams, so titles and legends get 14 pt+ text too."""

    @functools.wraps(draw)
    def wrapper(*args: Any, **kwargs: Any) -> Figure:
        with matplotlib.rc_context(course_rc()):
            return draw(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def group_colour(number: int) -> str:
    """The colour of interaction group ``number`` (1-based)."""
    return GROUP_COLOURS[(number - 1) % len(GROUP_COLOURS)]


# -- paths, entries and numbers --------------------------------------------------------------------


def default_path(path: Sequence[SessionEntry] | None) -> list[SessionEntry]:
    """``path`` as a list, or the chapter's ten-entry opening path when it is None."""
    return fixtures.opening_path() if path is None else list(path)


def default_estimator(estimate: TokenEstimator | None) -> TokenEstimator:
    """``estimate``, or the chapter's test estimator when it is None."""
    return fixtures.opening_estimator if estimate is None else estimate


def relinked(entries: Iterable[SessionEntry]) -> list[SessionEntry]:
    """``entries`` made one path: each entry's parent is the entry before it, the first is the
    root (a compaction, which always has a parent, is left as it is)."""
    path: list[SessionEntry] = []
    for entry in entries:
        parent = path[-1].id if path else None
        keep = entry.parent_id == parent or (not path and isinstance(entry, CompactionSessionEntry))
        path.append(entry if keep else dataclasses.replace(entry, parent_id=parent))  # type: ignore[arg-type]
    return path


Number = TypeVar("Number")


def tidy_number(value: Number) -> Number | int:
    """A whole float as an int (3.0 shows as 3); every other value unchanged."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def entry_kind(entry: SessionEntry) -> str:
    """``user``, ``assistant``, ``toolResult``, ``system``, ``compaction`` or ``metadata``."""
    if isinstance(entry, MessageSessionEntry):
        return entry.message.role
    return entry.type


def group_numbers(path: Sequence[SessionEntry]) -> dict[str, int]:
    """Entry id → the 1-based number of its interaction group on ``path`` (the core's
    grouping; system messages belong to no group)."""
    groups = group_interactions(message_entries(path))
    return {entry_id: n for n, group in enumerate(groups, 1) for entry_id in group.entry_ids}


# -- the table wrapper -----------------------------------------------------------------------------


class CourseTable(Styler):  # type: ignore[misc]  # pandas ships no type information
    """A ``Styler`` made by :func:`show`, with a plain-text repr that is stable (the default
    one shows a memory address)."""

    table_name = ""

    def __repr__(self) -> str:
        rows, columns = self.data.shape
        return f"<table {self.table_name or self.uuid}: {rows} rows × {columns} columns>"


_TABLE_STYLES = [
    {"selector": "th", "props": "text-align: left; font-size: 1.05em;"},
    {
        "selector": "td",
        "props": "text-align: left; white-space: pre-wrap; font-size: 1.05em; vertical-align: top;",
    },
]
_CAPTION_STYLE = {"selector": "caption", "props": "caption-side: top; font-weight: bold;"}


def show(
    frame: pd.DataFrame, name: str, caption: str = "", row_styles: Sequence[str] = ()
) -> CourseTable:
    """``frame`` as the course shows every table: left-aligned, no index, line breaks kept,
    an optional bold caption; ``name`` starts the HTML id and names the table in its repr.
    ``row_styles``: the CSS of each row, in order."""
    # The id is the same on every run (nbval compares the HTML) and differs between tables
    # of different content (two tables with one id would style each other's cells).
    content = frame.to_json(orient="split", force_ascii=False, default_handler=str)
    uuid = f"{name}_{hashlib.sha1(content.encode('utf-8')).hexdigest()[:10]}"
    table = CourseTable(frame, uuid=uuid, cell_ids=False)
    table.table_name = name
    table.hide(axis="index")
    if caption:
        table.set_caption(html.escape(caption))
    table.set_table_styles([*_TABLE_STYLES, _CAPTION_STYLE] if caption else _TABLE_STYLES)
    if row_styles:
        table.apply(lambda row: [row_styles[int(row.name)]] * len(row), axis=1)
    return table


def in_language(frame: pd.DataFrame, zh_columns: dict[str, str]) -> pd.DataFrame:
    """``frame`` with Chinese column headers in the Chinese edition (built with English keys)."""
    return frame.rename(columns=zh_columns) if get_language() == "zh" else frame


# -- widget boxes ----------------------------------------------------------------------------------


def widget_box(
    children: Iterable[Any], *, controls: Mapping[str, Any], outputs: Mapping[str, Any]
) -> Any:
    """A framed ``VBox`` with CSS class ``ctxlab-widget``; ``box.controls`` and ``box.outputs``
    name the widgets tests drive and read."""
    box = widgets.VBox(list(children), layout={"border": "1px solid #999999", "padding": "8px"})
    box.add_class("ctxlab-widget")
    box.controls = dict(controls)
    box.outputs = dict(outputs)
    return box


def slider(description: str, value: int, high: int) -> Any:
    """An integer slider from 0 to ``high`` that updates on release (not while dragging)."""
    control = widgets.IntSlider(
        value=value,
        min=0,
        max=high,
        step=1,
        description=description,
        continuous_update=False,
        layout={"width": "460px"},
    )
    control.style.description_width = "130px"
    return control


def figure_html(fig: Figure) -> str:
    """The figure as the widget shows it: an ``<img>`` of its PNG (inline, base64) whose
    ``alt`` is the figure's alt text (:meth:`CourseFigure.alt_text`, the same text the
    static figure's output carries)."""
    alt = fig.alt_text() if isinstance(fig, CourseFigure) else str(fig.get_label() or "")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return (
        f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}"'
        ' style="width: 100%; height: auto">'
    )


def figure_widget() -> Any:
    """The widget a figure's :func:`figure_html` is shown in (ipywidgets' Image has no alt)."""
    image = widgets.HTML(layout={"width": "760px", "max_width": "100%"})
    image.add_class("ctxlab-figure")
    return image


# -- the student's code ----------------------------------------------------------------------------


@dataclass(frozen=True)
class SafeCall:
    """What :func:`call_safely` got: ``value`` when ``ok``, else ``error`` (a plain message)."""

    ok: bool
    value: Any = None
    error: str = ""


_ADDRESS = re.compile(r" at 0x[0-9A-Fa-f]+")


def _stop(thread: threading.Thread) -> None:
    """Ask a thread that overran to stop, by raising SystemExit in it (CPython only)."""
    ident = thread.ident
    if ident is None or sys.implementation.name != "cpython":  # pragma: no cover
        return
    try:
        import ctypes

        ctypes.pythonapi.PyThreadState_SetAsyncExc(
            ctypes.c_ulong(ident), ctypes.py_object(SystemExit)
        )
        thread.join(0.5)
    except Exception:  # pragma: no cover - ctypes unavailable: leave the daemon thread
        return
    if thread.is_alive():  # blocked: its stop must not stay pending for everyone (3.11)
        from ctxlab.lab.grading.runner import clear_stray_stop

        clear_stray_stop()


def _call(function: Callable[..., Any], args: Any, kwargs: Any) -> SafeCall:
    """One call of a student's function, its exception (if any) made a plain message."""
    try:
        return SafeCall(True, function(*args, **kwargs))
    except NotImplementedError:
        return SafeCall(False, error=say("not_written_yet_the_stub"))
    except KeyboardInterrupt:  # the student stops a direct call: stop, do not go on
        raise
    except BaseException as error:  # student code may raise anything
        from ctxlab.lab.grading.text import StopStudent

        if isinstance(error, StopStudent):  # the trace-hook clock ends an overrunning call
            raise
        try:
            message = str(error)
        except Exception:
            message = ""
        text = f"{type(error).__name__}: {message}" if message else type(error).__name__
        text = _ADDRESS.sub("", text)
        shown = text[:300] + "..." if len(text) > 300 else text
        return SafeCall(False, error=tr("raised ", "抛出了 ") + shown)


def call_safely(
    function: Callable[..., Any], *args: Any, seconds: float = 5.0, **kwargs: Any
) -> SafeCall:
    """Call a student's ``function`` in a daemon thread (under Pyodide: the grader's
    trace-hook clock); an exception, or no return within ``seconds``, comes back as a message."""
    from ctxlab.lab.grading import runner

    box: list[SafeCall] = []
    late = SafeCall(False, error=say("did_not_return_within_s", seconds=seconds))
    if not runner.threads_available():
        finished = runner.run_traced(lambda: box.append(_call(function, args, kwargs)), seconds)
        return box[0] if finished and box else late
    thread = threading.Thread(
        target=lambda: box.append(_call(function, args, kwargs)),
        name="ctxlab-student-call",
        daemon=True,
    )
    try:
        thread.start()
    except RuntimeError:  # "can't start new thread": call it directly instead
        return _call(function, args, kwargs)
    thread.join(seconds)
    if thread.is_alive() or not box:
        _stop(thread)
        return late
    return box[0]
