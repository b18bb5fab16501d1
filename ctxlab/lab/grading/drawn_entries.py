"""Random compaction entries: Lab 11.1's random row, 11.4's summaries.

:func:`draw_wire` draws a valid entry's wire form, :func:`break_wire` one break where the
chapter constrains a field, :func:`broken` applies it, :func:`smaller_wire` shrinks.
"""

from __future__ import annotations

import copy
import json
import math
import random
from collections.abc import Iterator
from typing import Any, Final

from ctxlab.entries import SUMMARY_FIELDS

LISTS: Final = SUMMARY_FIELDS[1:]  # the summary's six lists, the fields after goal
_WORDS: Final = ("src/a.py", "测试通过", "keep API", "修复 bug", "x", "", "a\nb", "“q”", "🙂")


def _id(r: random.Random) -> str:
    return r.choice(("compact-", "k", "条目-", "e_")) + str(r.randrange(1000))


def _number(r: random.Random) -> int | float:
    return r.choice(
        (0, r.randrange(100_000), r.randrange(10**12), round(r.uniform(0, 10**6), 3), 0.5)
    )


def draw_wire(r: random.Random) -> dict[str, Any]:
    """A valid compaction entry's wire form, its keys in a random order."""
    summary_wire: dict[str, Any] = {"goal": r.choice(_WORDS[:5]) + " " + r.choice(_WORDS)}
    for name in LISTS:
        summary_wire[name] = [r.choice(_WORDS) for _ in range(r.choice((0, 0, 1, 2, 3)))]
    wire: dict[str, Any] = {
        "type": "compaction",
        "id": _id(r),
        "parentId": _id(r),
        "timestamp": r.choice((_number(r), -r.randrange(1000), 1.5e12)),
        "summary": _shuffled(r, summary_wire),
        "firstKeptEntryId": _id(r),
        "tokensBefore": _number(r),
    }
    return _shuffled(r, wire)


def _shuffled(r: random.Random, wire: dict[str, Any]) -> dict[str, Any]:
    keys = list(wire)
    r.shuffle(keys)
    return {key: wire[key] for key in keys}


#: The breaks the chapter decides: (field paths, values); ``...`` deletes the field, ``a->b``
#: renames it; ``summary.*`` is any of the six lists (``type`` is the parser's dispatch).
_TOP: Final = ("id", "parentId", "timestamp", "summary", "firstKeptEntryId", "tokensBefore")
_BREAKS: Final[tuple[tuple[tuple[str, ...], tuple[object, ...]], ...]] = (
    ((*_TOP, "summary.goal", *("summary.*",) * 6), (...,)),
    (("summary.*",), (None,)),
    (("summary.*",), ("a", 3, {"a": 1}, True)),
    (("summary.*",), ([1], ["a", None], ["a", 2], [["a"]], [True])),
    (("summary.goal", "parentId", "firstKeptEntryId"), ("",)),
    (("tokensBefore",), (-1, -0.5, -2)),
    (("tokensBefore",), (math.nan, math.inf, -math.inf)),
    (("timestamp", "tokensBefore"), (True, False)),
    (("timestamp", "tokensBefore"), ("29", None, [1])),
    (("id", "parentId", "firstKeptEntryId", "summary.goal"), (None, 7, ["x"], True)),
    (("summary",), (None, [], "goal", 5)),
    (("summary.files", "summary.changedFiles->files"), ([], ["a.py"])),
    (("firstKeptEntryId->first_kept_entry_id", "tokensBefore->tokens_before",
      "parentId->parent_id", "summary.changedFiles->changed_files"), (...,)),
)  # fmt: skip


def break_wire(r: random.Random) -> tuple[str, object]:
    """One break of a compaction entry: (field path, value), as :func:`broken` takes it."""
    fields, values = r.choice(_BREAKS)
    field = r.choice(fields)
    if field == "summary.*":
        field = "summary." + r.choice(LISTS)
    return field, r.choice(values)


def broken(wire: dict[str, Any], field: str, value: object) -> dict[str, Any]:
    """A deep copy of ``wire`` with ``field`` broken (:func:`edit`)."""
    out: dict[str, Any] = json.loads(json.dumps(wire))
    edit(out, field, value)
    return out


def edit(wire: dict[str, Any], field: str, value: object) -> None:
    """Set the field path ``field`` of ``wire`` to (a copy of) ``value`` (see _BREAKS)."""
    *parents, key = field.split(".")
    target = wire
    for name in parents:
        target = target[name]
    if "->" in key:
        old, new = key.split("->")
        target[new] = target.pop(old)
    elif value is ...:
        target.pop(key, None)
    else:
        target[key] = copy.deepcopy(value)


def break_text(field: str, value: object) -> str:
    if "->" in field:
        old, new = field.split("->")
        return f"{old} renamed {new}"
    if value is ...:
        return f"{field} missing"
    return f"{field} = {json.dumps(value, ensure_ascii=False)}"


def smaller_wire(wire: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Smaller candidates: list items dropped, texts and numbers plainer."""
    summary_wire = wire["summary"]
    for name in LISTS:
        items = summary_wire[name]
        for i in range(len(items)):
            yield {**wire, "summary": {**summary_wire, name: items[:i] + items[i + 1 :]}}
    if summary_wire["goal"] != "goal":
        yield {**wire, "summary": {**summary_wire, "goal": "goal"}}
    for key, text in (("id", "k1"), ("parentId", "a1"), ("firstKeptEntryId", "u1")):
        if wire[key] != text:
            yield {**wire, key: text}
    for key in ("timestamp", "tokensBefore"):
        number = wire[key]
        whole = int(number) if isinstance(number, float) and math.isfinite(number) else 0
        for plain in (0, 1, whole):
            if wire[key] != plain or type(wire[key]) is not type(plain):
                yield {**wire, key: plain}
    if list(wire) != sorted(wire):
        yield dict(sorted(wire.items()))
