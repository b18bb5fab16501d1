"""Tables for labs 11.1-11.3: the path, the grouping, the pairing matrix, the budget ledger.

Each ``*_table`` function returns a pandas ``DataFrame`` of plain Python values (ids, ints,
short strings), computed by the core -- ``parse_session_entry``, ``group_interactions``,
``build_context`` -- never re-implemented here. Each ``*_styler`` function returns a
:class:`CourseStyler`: a pandas ``Styler`` with a fixed table id (nbval compares the HTML)
and a plain-text ``repr`` without a memory address.

Sections of chapter 11:

* 11.1 "摘要先成为 session 中的一条普通事实" -- :func:`path_table`, :func:`wire_json`,
  :func:`corruption_table`, :func:`parse_verdict`;
* 11.2 "两个 tool result 仍属于 u3 开始的同一组" -- :func:`grouping_table`,
  :func:`pairing_matrix`, :func:`cut_points`, :func:`grouping_errors_table`;
* 11.3 "31 个 token 怎样留下第二、三组" -- :func:`ledger_table`, :func:`sweep_table`.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
from pandas.io.formats.style import Styler

from ctxlab import fixtures
from ctxlab.context import ContextResult, build_context, resume_candidates
from ctxlab.entries import (
    CompactionSessionEntry,
    MessageSessionEntry,
    SessionEntry,
    parse_session_entry,
)
from ctxlab.errors import CtxlabError
from ctxlab.interactions import InteractionGroup, group_interactions
from ctxlab.lab.style import GROUP_COLOURS
from ctxlab.messages import AssistantMessage, ToolResultMessage, text_of

__all__ = [
    "VALID_CASE",
    "BudgetLedger",
    "CourseStyler",
    "CutPoint",
    "LedgerGroup",
    "budget_ledger",
    "content_uuid",
    "corruption_table",
    "cut_points",
    "group_label",
    "grouping_errors",
    "grouping_errors_table",
    "grouping_styler",
    "grouping_table",
    "grouping_verdict",
    "ledger_styler",
    "ledger_table",
    "pairing_matrix",
    "parse_verdict",
    "path_styler",
    "path_table",
    "preview",
    "sweep_table",
    "wire_json",
]

Estimator = Callable[[Any], int | float]

#: The name of the valid case in :func:`parse_verdict` (the widget's first choice).
VALID_CASE = "valid compact-1"


class CourseStyler(Styler):  # type: ignore[misc]  # pandas ships no type information
    """A ``Styler`` whose plain-text repr is stable (the default one shows an address)."""

    table_name = ""

    def __repr__(self) -> str:
        rows, columns = self.data.shape
        return f"<table {self.table_name or self.uuid}: {rows} rows × {columns} columns>"


def content_uuid(name: str, frame: pd.DataFrame) -> str:
    """A table id that is the same on every run (nbval compares the HTML) but differs
    between tables with different content.

    Styler's CSS selects cells by ``#T_<uuid>_row<r>_col<c>``: two tables on one page with
    the same uuid would style each other's cells (a slider redrawing the ledger picked up
    the hatching of the static ledger above it).
    """
    content = frame.to_json(orient="split", force_ascii=False, default_handler=str)
    return f"{name}_{hashlib.sha1(content.encode('utf-8')).hexdigest()[:10]}"


def _styler(frame: pd.DataFrame, name: str) -> CourseStyler:
    styler = CourseStyler(frame, uuid=content_uuid(name, frame), cell_ids=False)
    styler.table_name = name
    styler.hide(axis="index")
    styler.set_table_styles(
        [
            {"selector": "th", "props": "text-align: left; font-size: 1.05em;"},
            {"selector": "td", "props": "text-align: left; font-size: 1.05em;"},
        ]
    )
    return styler


def preview(text: str, width: int = 36) -> str:
    """One line of at most ``width`` characters (newlines shown as ⏎)."""
    flat = text.replace("\n", " ⏎ ")
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _entries(path: Sequence[SessionEntry] | None) -> list[SessionEntry]:
    return fixtures.opening_path() if path is None else list(path)


def _estimator(estimate: Estimator | None) -> Estimator:
    return fixtures.opening_estimator if estimate is None else estimate


def _message_entries(path: Iterable[SessionEntry]) -> list[MessageSessionEntry]:
    return [entry for entry in path if isinstance(entry, MessageSessionEntry)]


def _tool_ids(entry: SessionEntry) -> str:
    if isinstance(entry, MessageSessionEntry):
        message = entry.message
        if isinstance(message, AssistantMessage):
            return ", ".join(call.id for call in message.tool_calls)
        if isinstance(message, ToolResultMessage):
            return f"→ {message.tool_call_id}"
    return ""


# -- Lab 11.1 ---------------------------------------------------------------------------------


def path_table(
    path: Sequence[SessionEntry] | None = None, estimate: Estimator | None = None
) -> pd.DataFrame:
    """One row per entry: id, parent, role (or entry type), text preview, tool call ids, cost.

    The cost is the estimator's price of the entry's message (default: the chapter's test
    estimator); entries that are not messages have no cost of their own (``"—"``).
    """
    price = _estimator(estimate)
    rows: list[dict[str, object]] = []
    for entry in _entries(path):
        role: str
        cost: int | float | str
        if isinstance(entry, MessageSessionEntry):
            role, text, cost = entry.message.role, text_of(entry.message), price(entry.message)
        elif isinstance(entry, CompactionSessionEntry):
            role = "compaction"
            text = f"summary: {entry.summary.goal} (first kept: {entry.first_kept_entry_id})"
            cost = "—"
        else:
            role, text, cost = "metadata", f"{entry.key} = {json.dumps(entry.value)}", "—"
        rows.append(
            {
                "id": entry.id,
                "parent": entry.parent_id if entry.parent_id is not None else "—",
                "role": role,
                "text": preview(text),
                "tool call ids": _tool_ids(entry),
                "cost": cost,
            }
        )
    return pd.DataFrame(rows, columns=["id", "parent", "role", "text", "tool call ids", "cost"])


def _group_numbers(path: Sequence[SessionEntry]) -> dict[str, int]:
    groups = group_interactions(_message_entries(path))
    return {entry_id: n for n, group in enumerate(groups, 1) for entry_id in group.entry_ids}


def _row_colours(ids: Sequence[str], numbers: Mapping[str, int], column: str) -> Callable[..., Any]:
    def colour(row: pd.Series) -> list[str]:
        number = numbers.get(str(row[column]))
        if number is None:
            return ["background-color: #EEEEEE"] * len(row)
        tint = GROUP_COLOURS[(number - 1) % len(GROUP_COLOURS)]
        return [f"background-color: {tint}33"] * len(row)

    return colour


def path_styler(
    path: Sequence[SessionEntry] | None = None, estimate: Estimator | None = None
) -> CourseStyler:
    """:func:`path_table`, each row tinted with its interaction group's colour."""
    entries = _entries(path)
    frame = path_table(entries, estimate)
    try:
        numbers = _group_numbers(entries)
    except CtxlabError:
        numbers = {}
    styler = _styler(frame, "path")
    styler.apply(_row_colours(frame["id"].tolist(), numbers, "id"), axis=1)
    return styler


def wire_json(entry: SessionEntry | Mapping[str, Any]) -> str:
    """An entry's wire form as pretty JSON, keys in the wire order."""
    wire = entry if isinstance(entry, Mapping) else entry.to_json()
    return json.dumps(wire, indent=2, ensure_ascii=False)


def parse_verdict(case: str) -> str:
    """What ``parse_session_entry`` says about ``compact-1`` or one of its corruptions.

    ``case`` is :data:`VALID_CASE` or a key of ``fixtures.compaction_corruptions()``.
    """
    corruptions = fixtures.compaction_corruptions()
    if case == VALID_CASE:
        wire: Mapping[str, Any] = fixtures.compact1().to_json()
    elif case in corruptions:
        wire = corruptions[case]
    else:
        known = ", ".join([VALID_CASE, *corruptions])
        return f"unknown case {case!r}; pick one of: {known}"
    try:
        entry = parse_session_entry(wire)
    except CtxlabError as error:
        return f"rejected ✘ {error}"
    return f"accepted ✔ {entry.type} entry {entry.id} (parent {entry.parent_id})"


def corruption_table() -> pd.DataFrame:
    """Each of the chapter's corruptions of ``compact-1`` and the parser's error message."""
    rows = []
    for case, wire in fixtures.compaction_corruptions().items():
        try:
            parse_session_entry(wire)
        except CtxlabError as error:
            message = str(error)
        else:  # pragma: no cover - would mean the parser lets a corruption through
            message = "(accepted!)"
        rows.append({"case": case, "error": message})
    return pd.DataFrame(rows, columns=["case", "error"])


# -- Lab 11.2 ---------------------------------------------------------------------------------


def group_label(number: int, group: InteractionGroup) -> str:
    """``group 3: u3…a3``."""
    ids = group.entry_ids
    span = ids[0] if len(ids) == 1 else f"{ids[0]}…{ids[-1]}"
    return f"group {number}: {span}"


def grouping_table(path: Sequence[SessionEntry] | None = None) -> pd.DataFrame:
    """Each message entry and the interaction group ``group_interactions`` puts it in.

    System messages belong to no group (``"—"``). Raises the core's ``InteractionError``
    when the path cannot be grouped.
    """
    entries = _message_entries(_entries(path))
    groups = group_interactions(entries)
    where: dict[str, tuple[int, InteractionGroup]] = {}
    for number, group in enumerate(groups, 1):
        for entry_id in group.entry_ids:
            where[entry_id] = (number, group)
    rows = []
    for entry in entries:
        found = where.get(entry.id)
        rows.append(
            {
                "id": entry.id,
                "role": entry.message.role,
                "group": found[0] if found else "—",
                "starts with": found[1].head.id if found else "—",
                "tool call ids": _tool_ids(entry),
            }
        )
    return pd.DataFrame(rows, columns=["id", "role", "group", "starts with", "tool call ids"])


def grouping_styler(path: Sequence[SessionEntry] | None = None) -> CourseStyler:
    """:func:`grouping_table` with rows tinted by group."""
    entries = _entries(path)
    frame = grouping_table(entries)
    styler = _styler(frame, "grouping")
    styler.apply(_row_colours(frame["id"].tolist(), _group_numbers(entries), "id"), axis=1)
    return styler


def pairing_matrix(path: Sequence[SessionEntry] | None = None, head: str = "u3") -> pd.DataFrame:
    """Tool-call ids (rows, declaration order) × result entries (columns, path order).

    A cell is ``"✔"`` when ``group_interactions`` paired that call with that result.
    """
    groups = group_interactions(_message_entries(_entries(path)))
    group = next((g for g in groups if g.head.id == head), None)
    if group is None:
        heads = ", ".join(g.head.id for g in groups)
        raise ValueError(f"no interaction starts with {head!r}; groups start with {heads}")
    results = [e.id for e in group.entries if isinstance(e.message, ToolResultMessage)]
    pairs = set(group.tool_pairs)
    data = [
        ["✔" if (call_id, result) in pairs else "" for result in results]
        for call_id, _ in group.tool_pairs
    ]
    index = pd.Index([call_id for call_id, _ in group.tool_pairs], name="call id")
    return pd.DataFrame(data, index=index, columns=pd.Index(results, name="result"))


@dataclass(frozen=True)
class CutPoint:
    """A place between two neighbouring message entries; legal only between two groups."""

    before: str
    after: str
    legal: bool

    @property
    def label(self) -> str:
        return f"{self.before}|{self.after}"


def cut_points(path: Sequence[SessionEntry] | None = None) -> tuple[CutPoint, ...]:
    """Every place between two neighbouring grouped entries, legal or not.

    A cut is legal exactly where one group ends and the next begins; any cut inside a group
    would separate part of an interaction (a tool call from its result, or from the answer).
    """
    groups = group_interactions(_message_entries(_entries(path)))
    cuts: list[CutPoint] = []
    flat = [(n, entry_id) for n, g in enumerate(groups) for entry_id in g.entry_ids]
    for (n1, left), (n2, right) in itertools.pairwise(flat):
        cuts.append(CutPoint(left, right, n1 != n2))
    return tuple(cuts)


def grouping_errors() -> dict[str, list[SessionEntry]]:
    """The chapter's broken (and one reordered-but-valid) variants of the opening path."""
    return {
        "r-test answers unknown-1": fixtures.unknown_call_path(),
        "r-read missing": fixtures.missing_result_path(),
        "r-read also answers test-1": fixtures.duplicate_result_path(),
        "read-1 declared twice": fixtures.duplicate_call_path(),
        "r-test moved before calls": fixtures.results_before_call_path(),
    }


def grouping_verdict(path: Sequence[SessionEntry]) -> str:
    """``accepted ✔ ...`` with the groups, or ``rejected ✘ <the core's error>``."""
    try:
        groups = group_interactions(_message_entries(path))
    except CtxlabError as error:
        return f"rejected ✘ {error}"
    shown = "; ".join(f"[{', '.join(g.entry_ids)}]" for g in groups)
    return f"accepted ✔ {len(groups)} groups: {shown}"


def grouping_errors_table() -> pd.DataFrame:
    """Case → what ``group_interactions`` says."""
    rows = [
        {"case": case, "group_interactions says": grouping_verdict(path)}
        for case, path in grouping_errors().items()
    ]
    return pd.DataFrame(rows, columns=["case", "group_interactions says"])


# -- Lab 11.3 ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class LedgerGroup:
    """One candidate group as the ledger shows it."""

    number: int
    label: str
    cost: int | float
    kept: bool
    running_total: int | float  # after this group (kept) or what it would have made


@dataclass(frozen=True)
class BudgetLedger:
    """``build_context``'s result and the per-group view of it, newest group first."""

    result: ContextResult
    summary_cost: int | float
    groups: tuple[LedgerGroup, ...]


def _candidate_groups(path: Sequence[SessionEntry]) -> list[InteractionGroup]:
    """The groups the budget chooses from: after the newest compaction's first kept entry."""
    _, candidates = resume_candidates(path)
    return group_interactions(candidates)


def budget_ledger(
    path: Sequence[SessionEntry] | None = None,
    *,
    max_tokens: int | float = 31,
    reserved_output: int | float = 4,
    safety_margin: int | float = 2,
    estimate: Estimator | None = None,
    summary_language: str = "en",
) -> BudgetLedger:
    """Run ``build_context`` and explain its result group by group.

    Which groups were kept comes from ``result.kept_entry_ids``; the fixed numbers from
    ``result.tokens``; each group's cost is the estimator's price of its messages. The
    running total of a dropped group is what keeping it too would have made.
    """
    entries = _entries(path)
    price = _estimator(estimate)
    result = build_context(
        entries,
        max_tokens=max_tokens,
        reserved_output=reserved_output,
        safety_margin=safety_margin,
        estimate_tokens=price,
        summary_language=summary_language,  # type: ignore[arg-type]
    )
    kept_ids = set(result.kept_entry_ids)
    groups = _candidate_groups(entries)
    kept_cost: int | float = 0
    rows: list[tuple[int, InteractionGroup, int | float, bool]] = []
    for number in range(len(groups), 0, -1):
        group = groups[number - 1]
        cost = sum((price(e.message) for e in group.entries), start=0)
        kept = group.head.id in kept_ids
        rows.append((number, group, cost, kept))
        if kept:
            kept_cost += cost
    summary_cost = result.tokens.messages - kept_cost
    running = summary_cost
    ledger: list[LedgerGroup] = []
    for number, group, cost, kept in rows:
        ledger.append(LedgerGroup(number, group_label(number, group), cost, kept, running + cost))
        if kept:
            running += cost
    return BudgetLedger(result, summary_cost, tuple(ledger))


def _n(value: int | float) -> int | float:
    """Show 3.0 as 3: ledgers read better without trailing zeros."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def ledger_table(
    path: Sequence[SessionEntry] | None = None,
    *,
    max_tokens: int | float = 31,
    reserved_output: int | float = 4,
    safety_margin: int | float = 2,
    estimate: Estimator | None = None,
    summary_language: str = "en",
) -> pd.DataFrame:
    """The budget ledger of chapter 11.3 as a table: item, tokens, running total, decision."""
    view = budget_ledger(
        path,
        max_tokens=max_tokens,
        reserved_output=reserved_output,
        safety_margin=safety_margin,
        estimate=estimate,
        summary_language=summary_language,
    )
    t = view.result.tokens
    available = _n(t.available_for_messages)
    rows: list[dict[str, object]] = [
        {"item": "max_tokens", "tokens": _n(t.max_tokens), "running total": "", "decision": ""},
        {"item": "− system (replayed)", "tokens": _n(t.system), "running total": "",
         "decision": "fixed"},
        {"item": "− reserved_output", "tokens": _n(t.reserved_output), "running total": "",
         "decision": "fixed"},
        {"item": "− safety_margin", "tokens": _n(t.safety_margin), "running total": "",
         "decision": "fixed"},
        {"item": "= available for messages", "tokens": available, "running total": "",
         "decision": "budget"},
    ]  # fmt: skip
    has_summary = any(isinstance(e, CompactionSessionEntry) for e in _entries(path))
    if has_summary:
        rows.append(
            {
                "item": "summary (newest compaction)",
                "tokens": _n(view.summary_cost),
                "running total": _n(view.summary_cost),
                "decision": "kept first",
            }
        )
    stopped = False
    for group in view.groups:
        if group.kept:
            if group.running_total > t.available_for_messages:
                decision = f"kept whole: overflow, {_n(group.running_total)} > {available}"
            else:
                decision = "kept"
        elif not stopped:
            decision = f"dropped: would make {_n(group.running_total)} > {available}"
            stopped = True
        else:
            decision = "dropped: the choice already stopped"
        rows.append(
            {
                "item": f"{group.label} ({_n(group.cost)})",
                "tokens": _n(group.cost),
                "running total": _n(group.running_total) if group.kept else "",
                "decision": decision,
            }
        )
    rows.append(
        {
            "item": f"reason: {view.result.reason}",
            "tokens": _n(t.total),
            "running total": "",
            "decision": "total sent",
        }
    )
    return pd.DataFrame(rows, columns=["item", "tokens", "running total", "decision"])


def ledger_styler(
    path: Sequence[SessionEntry] | None = None,
    *,
    max_tokens: int | float = 31,
    reserved_output: int | float = 4,
    safety_margin: int | float = 2,
    estimate: Estimator | None = None,
    summary_language: str = "en",
) -> CourseStyler:
    """:func:`ledger_table` with kept rows green and dropped rows hatched grey."""
    frame = ledger_table(
        path,
        max_tokens=max_tokens,
        reserved_output=reserved_output,
        safety_margin=safety_margin,
        estimate=estimate,
        summary_language=summary_language,
    )

    def colour(row: pd.Series) -> list[str]:
        decision = str(row["decision"])
        if decision.startswith("kept"):
            style = "background-color: #009E7333; font-weight: bold"
        elif decision.startswith("dropped"):
            style = (
                "background: repeating-linear-gradient(45deg, #FFFFFF, #FFFFFF 6px,"
                " #DDDDDD 6px, #DDDDDD 8px); color: #555555; text-decoration: line-through"
            )
        elif decision == "budget":
            style = "font-weight: bold; border-top: 2px solid #000000"
        else:
            style = ""
        return [style] * len(row)

    styler = _styler(frame, "ledger")
    styler.apply(colour, axis=1)
    return styler


def sweep_table(
    path: Sequence[SessionEntry] | None = None,
    *,
    max_tokens: Iterable[int] = range(61),
    reserved_output: int | float = 4,
    safety_margin: int | float = 2,
    estimate: Estimator | None = None,
) -> pd.DataFrame:
    """``build_context`` at every ``max_tokens``: groups kept, kept ids, reason, total."""
    entries = _entries(path)
    price = _estimator(estimate)
    groups = _candidate_groups(entries)
    heads = {g.head.id for g in groups}
    rows = []
    for budget in max_tokens:
        result = build_context(
            entries,
            max_tokens=budget,
            reserved_output=reserved_output,
            safety_margin=safety_margin,
            estimate_tokens=price,
        )
        rows.append(
            {
                "max_tokens": budget,
                "groups kept": sum(1 for i in result.kept_entry_ids if i in heads),
                "reason": result.reason,
                "total": _n(result.tokens.total),
                "kept ids": ", ".join(result.kept_entry_ids),
            }
        )
    return pd.DataFrame(rows, columns=["max_tokens", "groups kept", "reason", "total", "kept ids"])
