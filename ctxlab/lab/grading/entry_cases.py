"""Lab 11.1's crafted cases: compact-1's wire form with one field changed.

Every case of Lab 11.1's fixed rows starts from compact-1's wire form (the chapter: parentId
a3, firstKeptEntryId u2, tokensBefore 29) with one field changed, renamed or deleted. A
refusal case (:data:`Case`) is its label, the value, and the field path the error is about;
the lab's file checks each one (``_refuses``), its rows name which cases they take.
"""

from __future__ import annotations

from typing import Any

from ctxlab import fixtures as fx
from ctxlab.errors import shown
from ctxlab.lab.grading.text import Text
from ctxlab.lab.language import tr

__all__ = [
    "LISTS",
    "Case",
    "changed",
    "compact_1_wire",
    "draft_cases",
    "edit",
    "empty_cases",
    "item_cases",
    "missing_cases",
    "timestamp_cases",
    "tokens_cases",
    "type_cases",
    "unknown_cases",
    "value_cases",
    "whitespace_cases",
    "wire_label",
]


def compact_1_wire() -> dict[str, Any]:
    """compact-1's wire form (the chapter: parentId a3, firstKept u2, tokensBefore 29)."""
    return fx.compact1().to_json()


def wire_label(name: Text | str) -> Text:
    """A case's label: compact-1 and what was changed in it (``name``: a :class:`Text`, or a
    ``str`` that is code and reads the same in both languages, such as ``tokensBefore = -1``)."""
    text = name if isinstance(name, Text) else Text(name, name)
    return Text(f"compact-1 with {text.en}", f"compact-1（{text.zh}）")


def edit(wire: dict[str, Any], dotted: str, value: object = None, *, delete: bool = False) -> None:
    *parents, key = dotted.split(".")
    target = wire
    for name in parents:
        target = target[name]
    if delete:
        del target[key]
    else:
        target[key] = value


def changed(dotted: str, value: object = None, *, delete: bool = False) -> dict[str, Any]:
    """compact-1's wire form with the field ``dotted`` set to ``value`` (or deleted)."""
    wire = compact_1_wire()
    edit(wire, dotted, value, delete=delete)
    return wire


#: A refusal case: its label, the wire value, and the field path the error is about (or the
#: paths it may name, when the value allows several, such as an empty summary).
Case = tuple[Text | str, object, str | tuple[str, ...]]


def value_cases(cases: tuple[tuple[str, object], ...]) -> list[Case]:
    return [
        (f"{dotted} = {shown(value)}", changed(dotted, value), dotted) for dotted, value in cases
    ]


def _renamed(dotted: str, new_name: str) -> dict[str, Any]:
    """compact-1's wire form with the key ``dotted`` renamed to ``new_name`` (same value)."""
    wire = compact_1_wire()
    *parents, key = dotted.split(".")
    target = wire
    for name in parents:
        target = target[name]
    target[new_name] = target.pop(key)
    return wire


#: (the current key, the name it is replaced by): the chapter's early-draft ``files``, and
#: the snake_case spellings of the camelCase wire keys (Python names are not wire names).
_ALIASES: tuple[tuple[str, str], ...] = (
    ("summary.changedFiles", "files"),
    ("firstKeptEntryId", "first_kept_entry_id"),
    ("tokensBefore", "tokens_before"),
    ("parentId", "parent_id"),
    ("summary.changedFiles", "changed_files"),
)


def draft_cases() -> list[Case]:
    cases: list[Case] = []
    for dotted, new_name in _ALIASES:
        prefix = "summary." if dotted.startswith("summary.") else ""
        key = dotted.removeprefix("summary.")
        name = Text(f"{new_name} instead of {key}", f"用 {new_name} 代替 {key}")
        cases.append((name, _renamed(dotted, new_name), prefix + new_name))
    beside = compact_1_wire()
    beside["summary"]["files"] = ["context.ts"]
    name = Text("files beside changedFiles", "changedFiles 旁多了 files")
    cases.append((name, beside, "summary.files"))
    return cases


_MISSING = (
    "summary.changedFiles",
    "summary.goal",
    "summary.unresolved",
    "firstKeptEntryId",
    "tokensBefore",
    "parentId",
    "timestamp",
    "summary",
)


def missing_cases() -> list[Case]:
    cases: list[Case] = [
        (Text(f"{dotted} missing", f"缺少 {dotted}"), changed(dotted, delete=True), dotted)
        for dotted in _MISSING
    ]
    # An empty summary misses all seven fields: the error may name any of them.
    every = tuple(f"summary.{key}" for key in ("goal", *LISTS))
    cases.append((Text("summary = {}", "summary 为 {}"), changed("summary", {}), every))
    return cases


def empty_cases() -> list[Case]:
    values = [("parentId", None)] + [
        (d, "") for d in ("parentId", "firstKeptEntryId", "summary.goal")
    ]
    return value_cases(tuple(values))


LISTS = ("constraints", "completed", "decisions", "changedFiles", "unresolved", "next")


def item_cases() -> list[Case]:
    cases: tuple[tuple[str, object, str], ...] = (
        # field, value, the field path the error names (an item by its index)
        ("summary.decisions", [42], "summary.decisions[0]"),
        ("summary.changedFiles", ["context.ts", None], "summary.changedFiles[1]"),
        ("summary.next", "Read context.ts.", "summary.next"),
        ("summary.completed", [["nested"]], "summary.completed[0]"),
        ("summary.constraints", {"0": "append-only"}, "summary.constraints"),
        ("summary.unresolved", ["ok", "ok", 3.5], "summary.unresolved[2]"),
        # null is no array (string[]): it is not read as an empty list
        *((f"summary.{name}", None, f"summary.{name}") for name in LISTS),
    )
    return [
        (f"{dotted} = {shown(value)}", changed(dotted, value), field)
        for dotted, value, field in cases
    ]


def tokens_cases() -> list[Case]:
    bad = (-1, float("nan"), float("inf"), float("-inf"), -0.5, True, False, "29", None)
    return value_cases(tuple(("tokensBefore", value) for value in bad))


def type_cases() -> list[Case]:
    cases = value_cases(
        (
            ("summary", tr("Keep the context small.", "让上下文保持精简。")),
            ("summary.goal", 7),
            ("timestamp", "100"),
            ("timestamp", True),
            ("timestamp", None),
            ("firstKeptEntryId", 2),
            ("parentId", 3),
            ("summary", None),
            ("summary", 5),
            ("summary", ["goal"]),
        )
    )
    cases += [(f"id = {shown(bad)}", changed("id", bad), "id") for bad in (5, None)]
    cases += [
        (Text(f"the value {shown(value)}", f"值 {shown(value)}"), value, "")
        for value in (["compact-1"], "compact-1", None, 42)
    ]
    return cases


def unknown_cases() -> list[Case]:
    cases: list[Case] = [
        (Text(f"an extra key {dotted}", f"多了一个键 {dotted}"), changed(dotted, []), dotted)
        for dotted in ("summary.notes", "notes", "summary.goals", "first_kept_entry_id")
    ]
    migration: tuple[tuple[Text, str, str], ...] = (
        (Text("nextSteps instead of next", "用 nextSteps 代替 next"), "summary.next", "nextSteps"),
        (
            Text("invariants beside constraints", "constraints 旁多了 invariants"),
            "",
            "summary.invariants",
        ),
        (
            Text("compactedEntryIds on the entry", "entry 上多了 compactedEntryIds"),
            "",
            "compactedEntryIds",
        ),
    )
    for name, remove, add in migration:
        if remove:
            cases.append((name, _renamed(remove, add), f"summary.{add}"))
        else:
            wire = compact_1_wire()
            edit(wire, add, ["context.ts"])
            cases.append((name, wire, add))
    # A draft name is named as such, also when a current field is missing as well.
    wire = compact_1_wire()
    wire["compactedEntryIds"] = ["u1"]
    del wire["firstKeptEntryId"]
    name = Text(
        "compactedEntryIds instead of firstKeptEntryId",
        "用 compactedEntryIds 代替 firstKeptEntryId",
    )
    cases.append((name, wire, "compactedEntryIds"))
    return cases


#: Blank forms beyond the empty string: spaces, a tab, a newline, and a mix of them.
_WHITESPACE = (" ", "   ", "\t", "\n", " \t\r\n ")


def whitespace_cases() -> list[Case]:
    cases: list[Case] = []
    for dotted in ("parentId", "firstKeptEntryId", "summary.goal"):
        cases += value_cases(tuple((dotted, blank) for blank in _WHITESPACE))
    cases += [(f"id = {shown(b)}", changed("id", b), "id") for b in ("", *_WHITESPACE)]
    return cases


def timestamp_cases() -> list[Case]:
    bad = (float("nan"), float("inf"), float("-inf"))
    return value_cases(tuple(("timestamp", value) for value in bad))
