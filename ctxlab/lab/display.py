"""What every lab shows with: the course style, the one table wrapper, widget boxes.

Each lab module (:mod:`ctxlab.lab.lab11_1` ... :mod:`ctxlab.lab.lab11_x`) holds its own
tables, figures, widgets and self-checks; this module holds what they share, once:

* **the course style** -- one matplotlib style for every figure, readable when projected:
  text 14 pt or larger everywhere, the Okabe–Ito palette (safe for the common forms of
  colour blindness), and kept versus dropped bars that differ by hatching and outline as
  well as by colour, so a grey-scale projector or a colour-blind student still sees which
  groups the budget kept (chapter 11, § 上下文按预算重建). Every figure is built with
  :func:`new_figure` and returned without ``plt.show()``: it is not registered with pyplot,
  so a widget can redraw it a hundred times without leaking figures;
* **the table wrapper** -- :func:`show` wraps a ``DataFrame`` in a :class:`CourseTable`: a
  left-aligned pandas ``Styler`` without the index, whose HTML id is derived from the
  table's content (the same on every run, so nbval can compare it, and different for
  different tables, so two tables on one page never style each other's cells) and whose
  plain-text ``repr`` has no memory address; :func:`in_language` gives a frame Chinese
  headers in the Chinese edition;
* **entries as table cells** -- :func:`entry_kind` and :func:`group_numbers`, the
  interaction group of every message entry as the core's
  :func:`~ctxlab.group_interactions` cuts them;
* **widget boxes** -- :func:`widget_box` (the ``ctxlab-widget`` CSS hook, and the
  ``controls``/``outputs`` dicts tests drive and read), :func:`slider`,
  :func:`figure_png` and :func:`figure_html` (a figure as an ``<img>`` with its alt text);
* **the student's code** -- :func:`call_safely` runs a student's function for a widget or a
  comparison table: an exception, or a call that does not return in time, comes back as a
  message instead of crashing (or freezing) the kernel;
* **defaults** -- the chapter's opening path and test estimator (:func:`default_path`,
  :func:`default_estimator`), the core's :data:`TokenEstimator` type, and
  :func:`tidy_number` (3.0 shown as 3).

Text this module itself shows a student (the messages of :func:`call_safely`) exists in
English and Chinese and is picked when it is made (:func:`ctxlab.lab.language.tr`); captions
and slider descriptions come from the lab modules, already in the notebook's
language.
"""

from __future__ import annotations

import base64
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
from typing import Any, TypeVar

import ipywidgets as widgets
import matplotlib
import pandas as pd
from cycler import cycler
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from pandas.io.formats.style import Styler

from ctxlab import fixtures
from ctxlab.context import TokenEstimator
from ctxlab.entries import MessageSessionEntry, SessionEntry
from ctxlab.interactions import group_interactions, message_entries
from ctxlab.lab.language import get_language, tr

__all__ = [
    "BOX_LAYOUT",
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
    "content_uuid",
    "course_rc",
    "default_estimator",
    "default_path",
    "entry_kind",
    "figure_html",
    "figure_png",
    "group_colour",
    "group_numbers",
    "in_language",
    "new_figure",
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
#: slide at 1280×720 under the code cell that draws it (issue 11, lecture fit).
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


def use_course_style() -> None:
    """Apply the course style to matplotlib's global rcParams (idempotent)."""
    matplotlib.rcParams.update(course_rc())


class CourseFigure(Figure):
    """A lab figure: a matplotlib ``Figure`` whose PNG output carries alt text.

    The notebook shows it through the inline backend's PNG formatter as any figure; this
    class adds a PNG printer for itself (registered by ``_repr_mimebundle_``, which IPython
    asks first) that calls the inline backend's and adds ``{"alt": ...}`` to the PNG's
    metadata, so the stored output carries the alt text, and ``make slides`` writes it into the
    ``<img alt="...">`` of the deck (lecture/nbconvert/ctxlab-reveal/index.html.j2).
    """

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
    """A new figure with one axes at a fixed size, in the course style.

    The style is applied to this figure even when :func:`use_course_style` was never
    called, so figures look the same in a notebook and in a plain test. Pass
    ``constrained=False`` for a figure that a widget redraws often: it then keeps
    matplotlib's fixed margins (set them with ``fig.subplots_adjust``), which is much
    faster to draw than the constrained-layout solver.
    """
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


# -- defaults --------------------------------------------------------------------------------------


def default_path(path: Sequence[SessionEntry] | None) -> list[SessionEntry]:
    """``path`` as a list, or the chapter's ten-entry opening path when it is None."""
    return fixtures.opening_path() if path is None else list(path)


def default_estimator(estimate: TokenEstimator | None) -> TokenEstimator:
    """``estimate``, or the chapter's test estimator when it is None."""
    return fixtures.opening_estimator if estimate is None else estimate


Number = TypeVar("Number")


def tidy_number(value: Number) -> Number | int:
    """A whole float as an int (3.0 shows as 3); every other value unchanged."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


# -- entries as table cells ------------------------------------------------------------------------


def entry_kind(entry: SessionEntry) -> str:
    """``user``, ``assistant``, ``toolResult``, ``system``, ``compaction`` or ``metadata``."""
    if isinstance(entry, MessageSessionEntry):
        return entry.message.role
    return entry.type


def group_numbers(path: Sequence[SessionEntry]) -> dict[str, int]:
    """Entry id → the 1-based number of its interaction group on ``path``.

    The groups are the core's :func:`~ctxlab.group_interactions` of the path's message
    entries; system messages belong to no group. Raises the core's ``InteractionError``
    when the path cannot be grouped.
    """
    groups = group_interactions(message_entries(path))
    return {entry_id: n for n, group in enumerate(groups, 1) for entry_id in group.entry_ids}


# -- the table wrapper -----------------------------------------------------------------------------


def content_uuid(name: str, frame: pd.DataFrame) -> str:
    """A table id that is the same on every run (nbval compares the HTML) but differs
    between tables with different content.

    Styler's CSS selects cells by ``#T_<uuid>_row<r>_col<c>``: two tables on one page with
    the same uuid would style each other's cells (a slider redrawing the ledger picked up
    the hatching of the static ledger above it).
    """
    content = frame.to_json(orient="split", force_ascii=False, default_handler=str)
    return f"{name}_{hashlib.sha1(content.encode('utf-8')).hexdigest()[:10]}"


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


def show(frame: pd.DataFrame, name: str, caption: str = "") -> CourseTable:
    """``frame`` as the course shows every table: left-aligned, no index, one row per line
    of text (multi-line cells keep their line breaks), an optional bold caption on top.

    ``name`` starts the HTML table's id (``T_<name>_<hash of the content>``) and names
    the table in its ``repr``. Style rows further with the Styler API, e.g.
    ``show(frame, "path").apply(group_row_colours(numbers), axis=1)``.
    """
    table = CourseTable(frame, uuid=content_uuid(name, frame), cell_ids=False)
    table.table_name = name
    table.hide(axis="index")
    if caption:
        table.set_caption(html.escape(caption))
        table.set_table_styles([*_TABLE_STYLES, _CAPTION_STYLE])
    else:
        table.set_table_styles(_TABLE_STYLES)
    return table


def in_language(frame: pd.DataFrame, zh_columns: dict[str, str]) -> pd.DataFrame:
    """``frame`` with its column headers in Chinese when the notebook is Chinese.

    The frames are built with English keys (the code and the tests index them so); only
    the headers a student reads change."""
    return frame.rename(columns=zh_columns) if get_language() == "zh" else frame


# -- widget boxes ----------------------------------------------------------------------------------

#: The frame around every widget.
BOX_LAYOUT: Mapping[str, str] = MappingProxyType({"border": "1px solid #999999", "padding": "8px"})


def widget_box(
    children: Iterable[Any], *, controls: Mapping[str, Any], outputs: Mapping[str, Any]
) -> Any:
    """A framed ``VBox`` with CSS class ``ctxlab-widget`` (the browser tests' hook).

    ``box.controls`` and ``box.outputs`` name the widgets to drive and to read, so tests
    (and the browser tests) find them without walking the children.
    """
    box = widgets.VBox(list(children), layout=dict(BOX_LAYOUT))
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


def figure_png(fig: Figure, dpi: int = 80) -> bytes:
    """The figure as PNG bytes (what a widget's ``Image`` shows)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


def figure_html(fig: Figure) -> str:
    """The figure as the widget shows it: an ``<img>`` of its PNG (inline, base64) whose
    ``alt`` is the figure's alt text (:meth:`CourseFigure.alt_text`, the same text the
    static figure's output carries)."""
    alt = fig.alt_text() if isinstance(fig, CourseFigure) else str(fig.get_label() or "")
    data = base64.b64encode(figure_png(fig)).decode("ascii")
    return (
        f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}"'
        ' style="width: 100%; height: auto">'
    )


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


def _call(function: Callable[..., Any], args: Any, kwargs: Any) -> SafeCall:
    """One call of a student's function, its exception (if any) made a plain message."""
    try:
        return SafeCall(True, function(*args, **kwargs))
    except NotImplementedError:
        return SafeCall(
            False,
            error=tr(
                "not written yet (the stub raises NotImplementedError)",
                "还没有写（占位函数抛出 NotImplementedError）",
            ),
        )
    except KeyboardInterrupt:  # the student stops a direct call: stop, do not go on
        raise
    except BaseException as error:  # student code may raise anything
        from ctxlab.lab.grading.perform import StopStudent

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
    """Call a student's ``function`` in a daemon thread with a time limit.

    Never raises: an exception becomes ``SafeCall(False, error="raised ...")`` (the stub's
    ``NotImplementedError`` reads "not written yet"), a call that does not return within
    ``seconds`` becomes "did not return within ... s" and is asked to stop. A thread, not a
    process, so it works the same on Windows and with functions defined in a notebook.
    Under Pyodide (JupyterLite), where no thread can be started, the call runs in this
    thread under the grader's trace-hook clock (:func:`~ctxlab.lab.grading.runner.run_traced`).
    """
    from ctxlab.lab.grading import runner

    box: list[SafeCall] = []
    late = SafeCall(
        False,
        error=tr(
            f"did not return within {seconds:g} s (an endless loop?)",
            f"{seconds:g} 秒内没有返回（死循环？）",
        ),
    )
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
