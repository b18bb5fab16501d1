"""Slides that fit (issue 18): split a too-tall slide of a ``make slides`` deck into sub-slides.

An nbconvert preprocessor used only by the deck template (``lecture/nbconvert/ctxlab-reveal``,
``conf.json``; ``make slides`` puts this folder on ``PYTHONPATH``). The notebooks are not
changed: only the deck sees the split.

A slide (a cell with ``slide_type`` ``slide`` or ``subslide`` and the cells after it up to the
next one) whose estimated height is more than a 1280×720 slide can show at a legible size is
cut into consecutive sub-slides:

* a long code cell is cut into pieces of at most ``max_code_lines`` lines, at top-level
  statement boundaries or blank lines where it can (never inside a bracket when it can be
  avoided); its outputs go with the last piece, and every piece keeps the cell's prompt;
* a long markdown cell is cut between its blocks (paragraphs, lists, tables), and a long
  table (a markdown table or an HTML ``<table>`` output, e.g. a pandas Styler) between its
  rows, with the table's header (and caption) repeated on every piece;
* the pieces are then packed, in order, onto sub-slides; each new sub-slide starts with the
  slide's title and ``(k/n)`` — "Build it — … (2/3)", in Chinese 「动手实现 — …（2/3）」 (the
  language comes from the notebook's ``metadata.ctxlab.language``, else from the edition's
  path ``notebooks/zh/…``), and the first one gets ``(1/n)`` after its heading.

Nothing is dropped or reordered: joining the pieces of a cell gives back its source, and the
cells keep their order. The height estimate is deliberately rough (in CSS pixels of the
1280×720 slide, measured on the ctxlab-reveal template); tests/browser/test_browser_slide_fit.py
measures the real slides.
"""

from __future__ import annotations

import copy
import io
import itertools
import math
import re
import tokenize
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

try:  # nbconvert is there when the deck is built; the unit tests need only the functions
    from nbconvert.preprocessors import Preprocessor
    from traitlets import Integer
except ImportError:  # pragma: no cover
    Preprocessor = object  # type: ignore[assignment,misc]
    Integer = None  # type: ignore[assignment,misc]

Cell = dict[str, Any]

#: A slide whose content is estimated taller than this (CSS px of the 1280×720 slide) is
#: split. The template shrinks a slide to 0.98·720/height: 1000 px is a factor of 0.71, a margin
#: for the estimate (within about 15% of the measured height).
SPLIT_ABOVE = 1000
#: The sub-slides of a split slide are packed up to this height (a factor of about 0.78).
PAGE_HEIGHT = 900
#: A code piece has at most this many lines (about 700 px of code at 19px/22.8px).
MAX_CODE_LINES = 30

# Measured on the ctxlab-reveal template (1280×720 slide, white theme).
_CODE_LINE = 22.8  # px per code line (19px monospace)
_CODE_CHARS = 100  # characters of code per visual line
_CELL_PAD = 24  # px around a cell's input or output
_TEXT_LINE = 26.0  # px per line of a paragraph (20px font)
_LIST_LINE = 32.0  # px per line of a list item
_TEXT_UNITS = 110  # latin characters per line of text (a CJK character counts 2)
_BLOCK_GAP = 16  # px between markdown blocks
_HEADING = {1: 70.0, 2: 58.0, 3: 48.0}  # px of a heading line (h4+ as h3)
_ROW = 34.0  # px per table row of one line
_IMAGE_WIDTH = 1160  # px: an image wider than this is scaled down
_WIDGET_ROW = 50.0  # px per slider, dropdown or button row of a widget

TITLES = {"en": "{title} ({k}/{n})", "zh": "{title}（{k}/{n}）"}
UNTITLED = {"en": "continued", "zh": "续"}
SPLIT_SLIDE_TYPES = ("slide", "subslide")


# -- helpers over notebook JSON ---------------------------------------------------------------


def cell_source(cell: Mapping[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def slide_type(cell: Mapping[str, Any]) -> str:
    metadata = cell.get("metadata", {}) or {}
    return str((metadata.get("slideshow", {}) or {}).get("slide_type", "-") or "-")


def _set_slide_type(cell: Cell, value: str) -> None:
    cell.setdefault("metadata", {})
    cell["metadata"] = dict(cell["metadata"])
    cell["metadata"]["slideshow"] = {**cell["metadata"].get("slideshow", {}), "slide_type": value}


def _visible(cell: Mapping[str, Any]) -> bool:
    return slide_type(cell) not in ("notes", "skip")


def text_units(text: str) -> int:
    """The width of a line of text in latin characters: a wide (CJK) character counts 2."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _visual_lines(text: str, capacity: int) -> int:
    return max(1, math.ceil(text_units(text) / capacity))


def language_of(nb: Mapping[str, Any], path: str = "") -> str:
    """The edition's language: ``metadata.ctxlab.language``, else ``zh`` in the path."""
    meta = (nb.get("metadata", {}) or {}).get("ctxlab", {}) or {}
    language = meta.get("language")
    if language in TITLES:
        return str(language)
    parts = re.split(r"[\\/]", path)
    return "zh" if "zh" in parts else "en"


def piece_title(title: str, k: int, n: int, language: str) -> str:
    """The title of piece k of n of a split slide, in the edition's language."""
    return TITLES.get(language, TITLES["en"]).format(title=title or UNTITLED[language], k=k, n=n)


# -- code ------------------------------------------------------------------------------------


def _code_line_kinds(lines: Sequence[str]) -> list[bool]:
    """For each line: does a new statement start there (not inside brackets, a string or a
    backslash continuation)? Falls back to "every line" when the code does not tokenize."""
    starts = [True] * len(lines)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO("".join(lines)).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return starts
    depth = 0
    inside = [False] * len(lines)
    for token in tokens:
        (row, _), (end_row, _) = token.start, token.end
        if token.type == tokenize.OP and token.string in "([{":
            depth += 1
        elif token.type == tokenize.OP and token.string in ")]}":
            depth = max(0, depth - 1)
        if token.type == tokenize.NL and depth > 0 and row < len(lines):
            inside[row] = True  # the next line continues a bracket
        if end_row > row:  # a multi-line string: its later lines are inside it
            for later in range(row, min(end_row, len(lines))):
                inside[later] = True
    for index in range(1, len(lines)):
        if inside[index] or lines[index - 1].rstrip("\n").endswith("\\"):
            starts[index] = False
    return starts


def _break_penalty(lines: Sequence[str], starts: Sequence[bool], index: int) -> float:
    """How bad it is to start a new piece at line ``index`` (0 = ideal)."""
    line = lines[index]
    before = lines[index - 1]
    blank_before = not before.strip()
    indent = len(line) - len(line.lstrip())
    if not starts[index]:
        return 100.0  # inside brackets or a string: only when nothing else is possible
    if not line.strip():
        return 12.0  # a piece would start with a blank line
    if indent == 0 and blank_before:
        return 0.0  # a top-level statement after a blank line
    if indent == 0:
        return 1.0
    if blank_before:
        return 2.0 + indent / 8
    if line.lstrip().startswith("#"):
        return 3.0 + indent / 8
    return 6.0 + indent / 4


def split_code(source: str, max_lines: int = MAX_CODE_LINES) -> list[str]:
    """Cut code into consecutive pieces of at most ``max_lines`` lines each, as few as
    possible (one more when that avoids cutting inside a bracket), at the best boundaries:
    top-level statements after a blank line, then other statements after a blank line, then
    comments, then any statement. ``"".join(pieces) == source``."""
    if max_lines < 1:
        raise ValueError("max_lines must be at least 1")
    lines = source.splitlines(keepends=True)
    total = len(lines)
    if total <= max_lines:
        return [source]
    starts = _code_line_kinds(lines)
    penalty = [0.0] + [_break_penalty(lines, starts, i) for i in range(1, total)]
    best: tuple[float, list[int]] | None = None
    fewest = math.ceil(total / max_lines)
    for count in (fewest, fewest + 1):
        found = _best_breaks(total, count, max_lines, penalty)
        if found is not None and (best is None or found[0] < best[0]):
            best = found
    assert best is not None  # `fewest` pieces of at most max_lines always exist
    bounds = [0, *best[1], total]
    return ["".join(lines[a:b]) for a, b in itertools.pairwise(bounds)]


def _best_breaks(
    total: int, count: int, max_lines: int, penalty: Sequence[float]
) -> tuple[float, list[int]] | None:
    """The ``count - 1`` break lines that minimise the penalties plus the imbalance."""
    target = total / count
    inf = float("inf")
    # cost[k][i]: best cost of cutting lines[:i] into k pieces; back[k][i]: the last break.
    cost = [[inf] * (total + 1) for _ in range(count + 1)]
    back = [[0] * (total + 1) for _ in range(count + 1)]
    cost[0][0] = 0.0
    for k in range(1, count + 1):
        for i in range(1, total + 1):
            for j in range(max(0, i - max_lines), i):
                if cost[k - 1][j] == inf:
                    continue
                step = cost[k - 1][j] + ((i - j - target) / target) ** 2
                if j > 0:
                    step += penalty[j]
                if step < cost[k][i]:
                    cost[k][i], back[k][i] = step, j
    if cost[count][total] == inf:
        return None
    breaks: list[int] = []
    at = total
    for k in range(count, 1, -1):
        at = back[k][at]
        breaks.append(at)
    return cost[count][total] + count * 0.5, sorted(breaks)


def code_height(source: str) -> float:
    lines = source.splitlines() or [""]
    return _CELL_PAD + _CODE_LINE * sum(_visual_lines(line, _CODE_CHARS) for line in lines)


# -- markdown --------------------------------------------------------------------------------

_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


def markdown_blocks(source: str) -> list[str]:
    """Cut markdown into its blocks (separated by blank lines, never inside a fenced code
    block); ``"".join(blocks) == source`` (each block keeps the blank lines after it)."""
    lines = source.splitlines(keepends=True)
    blocks: list[str] = []
    current: list[str] = []
    fenced = False
    for line in lines:
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        blank = not line.strip()
        if not blank and not fenced and current and not current[-1].strip():
            # a new block starts after blank lines (a list item continuing after a blank
            # line is a new block too: still a boundary the reader sees)
            blocks.append("".join(current))
            current = []
        current.append(line)
    if current:
        blocks.append("".join(current))
    return blocks


def _is_table(block: str) -> bool:
    lines = [line for line in block.splitlines() if line.strip()]
    return (
        len(lines) >= 2
        and all(_TABLE_ROW.match(line) for line in lines)
        and bool(_TABLE_RULE.match(lines[1]))
    )


def split_markdown_table(block: str, max_height: float) -> list[str]:
    """Cut a markdown table between rows so that each piece (its header repeated) is at
    most ``max_height`` high; the header and rule lines start every piece."""
    lines = block.splitlines(keepends=True)
    header, rows = lines[:2], lines[2:]
    header_height = _table_row_height(header[0])
    pieces: list[list[str]] = []
    height = 0.0
    for row in rows:
        row_height = _table_row_height(row) if row.strip() else 0.0
        if not pieces or height + row_height > max_height:
            pieces.append([])
            height = header_height
        pieces[-1].append(row)
        height += row_height
    return ["".join(header + piece) for piece in pieces] or [block]


def _table_row_height(row: str) -> float:
    cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
    return _row_height(cells)


def _row_height(cells: Sequence[str]) -> float:
    """A table row: the browser gives the columns the width their text needs, so a row
    takes about as many lines as its text fills the slide's width (plus a little per
    column)."""
    units = sum(text_units(cell) + 3 for cell in cells)
    return _ROW * max(1, math.ceil(units / _TEXT_UNITS))


def markdown_height(source: str) -> float:
    height = 0.0
    for block in markdown_blocks(source):
        height += _markdown_block_height(block) + _BLOCK_GAP
    return height


def _markdown_block_height(block: str) -> float:
    lines = [line for line in block.splitlines() if line.strip()]
    if not lines:
        return 0.0
    if _is_table(block):
        return sum(_table_row_height(line) for line in lines if not _TABLE_RULE.match(line))
    height = 0.0
    paragraph: list[str] = []

    def flush() -> float:
        text = " ".join(part.strip() for part in paragraph)
        paragraph.clear()
        return _TEXT_LINE * _visual_lines(text, _TEXT_UNITS) if text else 0.0

    item: list[str] = []

    def flush_item() -> float:
        text = " ".join(part.strip() for part in item)
        item.clear()
        return _LIST_LINE * _visual_lines(text, _TEXT_UNITS - 6) if text else 0.0

    for line in lines:
        stripped = line.strip()
        heading = re.match(r"^(#{1,6})\s", stripped)
        if heading:
            height += flush() + flush_item()
            level = min(3, len(heading.group(1)))
            height += _HEADING[level] * _visual_lines(stripped, _TEXT_UNITS * 2 // (level + 1))
        elif re.match(r"^([-*+]|\d+[.)])\s", stripped):
            height += flush() + flush_item()
            item.append(stripped)
        elif item:
            item.append(stripped)
        else:
            paragraph.append(stripped)
    return height + flush() + flush_item()


def heading_of(source: str) -> tuple[int, str] | None:
    """The first markdown heading of a cell: (line index, its text without the #s)."""
    for index, line in enumerate(source.splitlines()):
        match = re.match(r"^\s*#{1,6}\s+(.*?)\s*#*\s*$", line)
        if match:
            return index, match.group(1)
    return None


# -- outputs ---------------------------------------------------------------------------------

_TR = re.compile(r"<tr\b.*?</tr>\s*", re.S | re.I)
_TAGS = re.compile(r"<[^>]+>")


def split_html_table(html: str, max_rows: int) -> list[str]:
    """Cut the body of the (first) HTML table of an output between rows, at most
    ``max_rows`` body rows a piece; each piece repeats everything before the body rows (the
    style, the caption, the header) and after them. ``[html]`` when there is nothing to cut."""
    body = re.search(r"(<tbody[^>]*>)(.*?)(</tbody>)", html, re.S | re.I)
    if body is None or max_rows < 1:
        return [html]
    rows = _TR.findall(body.group(2))
    if len(rows) <= max_rows or "".join(rows).strip() != body.group(2).strip():
        return [html]
    head, tail = html[: body.start(2)], html[body.end(2) :]
    lead = body.group(2)[: len(body.group(2)) - len(body.group(2).lstrip())]
    count = math.ceil(len(rows) / max_rows)
    size = math.ceil(len(rows) / count)
    return [head + lead + "".join(rows[i : i + size]) + tail for i in range(0, len(rows), size)]


def html_table_rows(html: str) -> list[str]:
    """The body rows of the first table of an HTML output (the header rows excluded)."""
    body = re.search(r"<tbody[^>]*>(.*?)</tbody>", html, re.S | re.I)
    return _TR.findall(body.group(1)) if body else _TR.findall(html)


def _html_row_height(row: str) -> float:
    cells = re.findall(r"<t[dh]\b.*?</t[dh]>", row, re.S | re.I)
    return _row_height([_TAGS.sub("", cell).strip() for cell in cells])


def html_height(html: str) -> float:
    if re.search(r"<table\b", html, re.I):
        tables = re.findall(r"<table\b.*?</table>", html, re.S | re.I) or [html]
        height = 0.0
        for table in tables:
            height += sum(_html_row_height(row) for row in _TR.findall(table))
            if re.search(r"<caption\b", table, re.I):
                height += _ROW
        rest = re.sub(r"<table\b.*?</table>|<style\b.*?</style>", "", html, flags=re.S | re.I)
        return height + _text_height(_TAGS.sub("\n", rest))
    cleaned = re.sub(r"<style\b.*?</style>|<script\b.*?</script>", "", html, flags=re.S | re.I)
    text = re.sub(r"<(br|/p|/div|/li|/h\d|/pre)\b[^>]*>", "\n", cleaned, flags=re.I)
    return _text_height(_TAGS.sub("", text))


def _text_height(text: str) -> float:
    lines = [line for line in text.splitlines() if line.strip()]
    return sum(_TEXT_LINE * _visual_lines(line, _TEXT_UNITS) for line in lines)


def png_size(data: str) -> tuple[int, int] | None:
    """Width and height of a base64 PNG, from its IHDR chunk."""
    import base64
    import binascii

    try:
        head = base64.b64decode(data[:64].replace("\n", "") + "==", validate=False)[:24]
    except (binascii.Error, ValueError):
        return None
    if head[:8] != b"\x89PNG\r\n\x1a\n" or len(head) < 24:
        return None
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def output_height(output: Mapping[str, Any], widgets: Mapping[str, Any] | None = None) -> float:
    kind = output.get("output_type")
    if kind == "stream":
        text = output.get("text", "")
        text = "".join(text) if isinstance(text, list) else str(text)
        return code_height(text.rstrip("\n"))
    if kind == "error":
        return code_height("\n".join(output.get("traceback", [])))
    data = output.get("data", {}) or {}
    if "application/vnd.jupyter.widget-view+json" in data and widgets is not None:
        model = (data["application/vnd.jupyter.widget-view+json"] or {}).get("model_id", "")
        return widget_height(str(model), widgets)
    if "image/png" in data:
        metadata = (output.get("metadata", {}) or {}).get("image/png", {}) or {}
        raw = data["image/png"]
        size = png_size("".join(raw) if isinstance(raw, list) else str(raw))
        width = metadata.get("width") or (size[0] if size else _IMAGE_WIDTH)
        height = metadata.get("height") or (size[1] if size else 400)
        return _CELL_PAD + float(height) * min(1.0, _IMAGE_WIDTH / max(1.0, float(width)))
    if "text/html" in data:
        raw = data["text/html"]
        return _CELL_PAD + html_height("".join(raw) if isinstance(raw, list) else str(raw))
    if "text/markdown" in data:
        raw = data["text/markdown"]
        return markdown_height("".join(raw) if isinstance(raw, list) else str(raw))
    if "text/plain" in data:
        raw = data["text/plain"]
        return code_height("".join(raw) if isinstance(raw, list) else str(raw))
    return 0.0


def widget_height(model_id: str, widgets: Mapping[str, Any], depth: int = 0) -> float:
    """A rough height of a widget rendered from the notebook's saved widget state."""
    model = widgets.get(model_id)
    if model is None or depth > 20:
        return _WIDGET_ROW
    name = str(model.get("model_name", ""))
    state = model.get("state", {}) or {}
    children = [str(c).removeprefix("IPY_MODEL_") for c in state.get("children", []) or []]
    if name in ("VBoxModel", "BoxModel", "GridBoxModel", "AccordionModel", "TabModel"):
        return sum(widget_height(child, widgets, depth + 1) for child in children) + 8
    if name == "HBoxModel":
        return max([widget_height(child, widgets, depth + 1) for child in children] or [0.0])
    if name == "OutputModel":
        return sum(output_height(out, widgets) for out in state.get("outputs", []) or [])
    if name in ("HTMLModel", "HTMLMathModel"):
        return html_height(str(state.get("value", ""))) + 8
    if name.endswith("LayoutModel") or name.endswith("StyleModel"):
        return 0.0
    return _WIDGET_ROW


def cell_height(cell: Mapping[str, Any], widgets: Mapping[str, Any] | None = None) -> float:
    """The estimated height of a cell on a slide (CSS px of the 1280×720 slide)."""
    if not _visible(cell):
        return 0.0
    source = cell_source(cell)
    if cell.get("cell_type") == "markdown":
        return markdown_height(source)
    if cell.get("cell_type") != "code":
        return 0.0
    height = code_height(source) if source.strip() else 0.0
    return height + sum(output_height(out, widgets) for out in cell.get("outputs", []) or [])


# -- pieces of a slide and their packing ------------------------------------------------------


@dataclass
class Piece:
    """A part of a slide that goes onto one sub-slide: one or more cells (a visible cell and
    the notes after it), with its height."""

    cells: list[Cell]
    height: float


@dataclass
class Slide:
    cells: list[Cell] = field(default_factory=list)


def group_slides(cells: Sequence[Cell]) -> list[Slide]:
    """The notebook's cells, grouped by slide: a ``slide``/``subslide`` cell starts one."""
    slides: list[Slide] = []
    for cell in cells:
        if not slides or slide_type(cell) in SPLIT_SLIDE_TYPES:
            slides.append(Slide())
        slides[-1].cells.append(cell)
    return slides


def _new_id(cell: Mapping[str, Any], suffix: str, used: set[str]) -> str:
    base = f"{cell.get('id') or 'cell'}-{suffix}"
    candidate, n = base, 2
    while candidate in used:
        candidate, n = f"{base}{n}", n + 1
    used.add(candidate)
    return candidate


def split_cell(
    cell: Cell,
    max_height: float,
    max_code_lines: int,
    widgets: Mapping[str, Any] | None,
    used_ids: set[str],
) -> list[Cell]:
    """A cell as one or more consecutive cells, each estimated at most ``max_height`` high
    where the cell can be cut: code at statement boundaries (outputs on the last piece, and
    a long table output cut between its rows on further pieces), markdown between blocks
    and table rows."""
    if cell.get("cell_type") == "code":
        return _split_code_cell(cell, max_height, max_code_lines, widgets, used_ids)
    if cell.get("cell_type") == "markdown" and markdown_height(cell_source(cell)) > max_height:
        parts: list[str] = []
        for block in markdown_blocks(cell_source(cell)):
            if _is_table(block) and _markdown_block_height(block) > max_height:
                trailing = block[len(block.rstrip("\n")) :]
                rows = split_markdown_table(block.rstrip("\n") + "\n", max_height * 0.9)
                rows[-1] = rows[-1].rstrip("\n") + trailing
                parts.extend(rows)
            else:
                parts.append(block)
        packed = _pack_texts(parts, markdown_height, max_height)
        if len(packed) > 1:
            return _copies(cell, packed, used_ids, outputs=False)
    return [cell]


def _pack_texts(parts: Sequence[str], height: Any, max_height: float) -> list[str]:
    packed: list[str] = []
    current = ""
    for part in parts:
        if current and height(current + part) > max_height:
            packed.append(current)
            current = ""
        current += part
    if current:
        packed.append(current)
    return packed


def _copies(cell: Cell, sources: Sequence[str], used_ids: set[str], outputs: bool) -> list[Cell]:
    made: list[Cell] = []
    for k, source in enumerate(sources):
        piece = copy.deepcopy(cell)
        piece["source"] = source
        if k > 0:
            piece["id"] = _new_id(cell, f"part{k + 1}", used_ids)
            _set_slide_type(piece, "-")
        if outputs and "outputs" in piece and k < len(sources) - 1:
            piece["outputs"] = []
        made.append(piece)
    return made


def _split_code_cell(
    cell: Cell,
    max_height: float,
    max_code_lines: int,
    widgets: Mapping[str, Any] | None,
    used_ids: set[str],
) -> list[Cell]:
    source = cell_source(cell)
    pieces = split_code(source, max_code_lines)
    made = _copies(cell, pieces, used_ids, outputs=True)
    last = made[-1]
    outputs = last.get("outputs", []) or []
    # A table output too tall for a sub-slide: its rows on further pieces with no code
    # (the code stays above the first part of the table).
    for index, output in enumerate(outputs):
        html = (output.get("data", {}) or {}).get("text/html")
        if html is None or output_height(output, widgets) <= max_height:
            continue
        html = "".join(html) if isinstance(html, list) else str(html)
        rows = html_table_rows(html)
        if not rows:
            continue
        per_row = max(_html_row_height(row) for row in rows)
        max_rows = max(1, int((max_height * 0.85 - 2 * _ROW) // per_row))
        parts = split_html_table(html, max_rows)
        if len(parts) < 2:
            continue
        first = copy.deepcopy(output)
        first["data"] = {**output["data"], "text/html": parts[0]}
        last["outputs"] = [*outputs[:index], first]
        rest = outputs[index + 1 :]
        for k, part in enumerate(parts[1:], start=1):
            extra = copy.deepcopy(cell)
            extra["id"] = _new_id(cell, f"table{k + 1}", used_ids)
            extra["source"] = ""
            extra["metadata"] = {**extra.get("metadata", {}), "ctxlab_output_only": True}
            _set_slide_type(extra, "-")
            out = copy.deepcopy(output)
            out["data"] = {**output["data"], "text/html": part}
            extra["outputs"] = [out] + (rest if k == len(parts) - 1 else [])
            made.append(extra)
        break
    return made


def paginate(
    cells: Sequence[Cell],
    language: str = "en",
    *,
    widgets: Mapping[str, Any] | None = None,
    split_above: float = SPLIT_ABOVE,
    page_height: float = PAGE_HEIGHT,
    max_code_lines: int = MAX_CODE_LINES,
) -> list[Cell]:
    """The notebook's cells with every too-tall slide split into titled sub-slides.

    Pure: returns new cells and leaves ``cells`` as they are. A slide estimated at most
    ``split_above`` high is kept as it is."""
    used_ids = {str(cell.get("id")) for cell in cells if cell.get("id")}
    result: list[Cell] = []
    for slide in group_slides([copy.deepcopy(cell) for cell in cells]):
        total = sum(cell_height(cell, widgets) for cell in slide.cells)
        if total <= split_above or not any(_visible(cell) for cell in slide.cells):
            result.extend(slide.cells)
            continue
        result.extend(_split_slide(slide, language, widgets, page_height, max_code_lines, used_ids))
    return result


def _split_slide(
    slide: Slide,
    language: str,
    widgets: Mapping[str, Any] | None,
    page_height: float,
    max_code_lines: int,
    used_ids: set[str],
) -> list[Cell]:
    title_room = _HEADING[3] + _BLOCK_GAP
    pieces: list[Piece] = []
    for cell in slide.cells:
        if not _visible(cell):
            if pieces:
                pieces[-1].cells.append(cell)  # notes stay with the cell before them
            else:
                pieces.append(Piece([cell], 0.0))
            continue
        parts = split_cell(cell, page_height - title_room, max_code_lines, widgets, used_ids)
        for part in parts:
            pieces.append(Piece([part], cell_height(part, widgets)))
    # Pack the pieces onto pages, in order.
    pages: list[list[Piece]] = []
    height = 0.0
    for piece in pieces:
        visible = any(_visible(cell) for cell in piece.cells)
        if pages and (not visible or height + piece.height <= page_height):
            pages[-1].append(piece)
            height += piece.height
            continue
        pages.append([piece])
        height = title_room + piece.height
    if len(pages) < 2:
        return [cell for piece in pieces for cell in piece.cells]
    title = _slide_title(slide)
    n = len(pages)
    first_cells = [cell for piece in pages[0] for cell in piece.cells]
    _number_heading(first_cells, title, n, language)
    out = list(first_cells)
    for k, page in enumerate(pages[1:], start=2):
        page_cells = [cell for piece in page for cell in piece.cells]
        heading: Cell = {
            "cell_type": "markdown",
            "id": _new_id(slide.cells[0], f"title{k}", used_ids),
            "metadata": {"slideshow": {"slide_type": "subslide"}, "ctxlab_split_title": True},
            "source": "### " + piece_title(title, k, n, language),
        }
        for cell in page_cells:
            if slide_type(cell) in SPLIT_SLIDE_TYPES:
                _set_slide_type(cell, "-")
        out.append(heading)
        out.extend(page_cells)
    return out


def _slide_title(slide: Slide) -> str:
    """The slide's first heading; else the bold words its text starts with ("**Exercise 2.**
    Write …" gives "Exercise 2."); else "" (the sub-slides are then titled "continued")."""
    texts = [
        cell_source(c) for c in slide.cells if c.get("cell_type") == "markdown" and _visible(c)
    ]
    for text in texts:
        found = heading_of(text)
        if found is not None:
            return found[1]
    for text in texts:
        bold = re.match(r"^\s*\*\*([^*\n]+)\*\*", text)
        if bold:
            return bold.group(1).strip()
    return ""


def _number_heading(cells: Iterable[Cell], title: str, n: int, language: str) -> None:
    """Put (1/n) after the first heading of the first sub-slide (its text is the title)."""
    for cell in cells:
        if cell.get("cell_type") != "markdown" or not _visible(cell):
            continue
        found = heading_of(cell_source(cell))
        if found is None or found[1] != title:
            continue
        lines = cell_source(cell).splitlines(keepends=True)
        line = lines[found[0]]
        end = line[len(line.rstrip("\r\n")) :]
        hashes = re.match(r"^\s*#{1,6}\s+", line)
        prefix = hashes.group(0) if hashes else ""
        lines[found[0]] = prefix + piece_title(title, 1, n, language) + end
        cell["source"] = "".join(lines)
        return


# -- the nbconvert preprocessor ----------------------------------------------------------------


class SplitLongSlides(Preprocessor):
    """nbconvert: split every slide taller than a legible 1280×720 slide into sub-slides."""

    if Integer is not None:
        max_code_lines = Integer(MAX_CODE_LINES, help="lines of code per piece").tag(config=True)
        split_above = Integer(SPLIT_ABOVE, help="split a slide estimated taller (px)").tag(
            config=True
        )
        page_height = Integer(PAGE_HEIGHT, help="pack sub-slides up to this height (px)").tag(
            config=True
        )

    def preprocess(self, nb: Any, resources: Any) -> tuple[Any, Any]:
        import nbformat

        path = str(((resources or {}).get("metadata", {}) or {}).get("path", "") or "")
        name = str(((resources or {}).get("metadata", {}) or {}).get("name", "") or "")
        language = language_of(nb, f"{path}/{name}")
        state = ((nb.get("metadata", {}) or {}).get("widgets", {}) or {}).get(
            "application/vnd.jupyter.widget-state+json", {}
        ) or {}
        cells = paginate(
            [dict(cell) for cell in nb.cells],
            language,
            widgets=state.get("state", {}) or {},
            split_above=self.split_above,
            page_height=self.page_height,
            max_code_lines=self.max_code_lines,
        )
        nb.cells = [nbformat.from_dict(cell) for cell in cells]  # type: ignore[no-untyped-call]
        return nb, resources
