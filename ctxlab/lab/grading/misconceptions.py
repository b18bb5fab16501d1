"""The misconception catalogue, its evidence and its hint ladder.

Each lab's catalogue is data, ``catalogue/lab11_N.json``: per mistake, its title, the rows
it explains (``signature``), a hint pointing at the chapter's sentence (never the expected
value), that sentence, the smallest failing input, and its *evidence*: what
``tests/misconceptions/lab11_N/<slug>.py`` answers on some inputs. It matches when the
student's function answers so on all of them (:func:`diagnose`, the check loop's last step;
no buggy code runs at grading time) and explains what failed (:func:`explaining`). The
ladder: the first match's hint, then, run again with the same first match, the chapter's
sentence too.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from ctxlab import errors
from ctxlab.lab.grading import drawn
from ctxlab.lab.grading.calls import Failed, Trial
from ctxlab.lab.grading.perform import CallRecord, named
from ctxlab.lab.grading.plain import decode
from ctxlab.lab.grading.text import Text

#: The key of the check loop's last step, :func:`diagnose` (never a row of the report).
DIAGNOSIS: Final = "known_mistakes"
#: How that step's detail starts, before the matched ids.
_MARK: Final = "matched:"
#: Where each lab's catalogue is (``lab11_3.json``).
FOLDER: Final = Path(__file__).with_name("catalogue")


@dataclass(frozen=True)
class Misconception:
    """One named mistake of a lab: its evidence, its hint, the chapter's sentence."""

    id: str  # "11.3/int-truncation": the lab, then the slug of its buggy file
    title_en: str  # what students do, never the expected value
    title_zh: str
    signature: frozenset[str]  # the rows the mistake explains
    hint_en: str
    hint_zh: str
    quote_zh: str  # the chapter's sentence, verbatim, and rendered in English
    quote_en: str
    smallest_input_en: str
    smallest_input_zh: str
    priority: int = 50  # lower is shown first among matches
    #: Whose rule the mistake breaks: the chapter's (the lab fails) or ctxlab's (an extra).
    rule: Literal["chapter", "ctxlab"] = "chapter"
    #: ``(input id, the buggy answer there)``, as JSON text (:func:`canonical`).
    evidence: tuple[tuple[str, str], ...] = field(default=(), compare=False, repr=False)

    @property
    def lab(self) -> str:
        return self.id.split("/", 1)[0]

    @property
    def slug(self) -> str:
        return self.id.split("/", 1)[1]


def _text(data: Any) -> str:
    return json.dumps(data, ensure_ascii=True, sort_keys=True)


def load(lab: str) -> tuple[tuple[Misconception, ...], dict[str, str]]:
    """Lab ``lab``'s catalogue, in order, and the inputs its evidence names (JSON text)."""
    data = json.loads((FOLDER / f"lab11_{lab.split('.')[1]}.json").read_text(encoding="utf-8"))
    items = tuple(
        Misconception(
            **{k: v for k, v in entry.items() if k not in ("signature", "evidence")},
            signature=frozenset(entry["signature"]),
            evidence=tuple((key, _text(answer)) for key, answer in entry["evidence"]),
        )
        for entry in data["misconceptions"]
    )
    return items, {key: _text(value) for key, value in data["inputs"].items()}


#: What the chapter leaves open in a returned value (``type: fields``): ctxlab's tool_pairs, and
#: a user message's timestamp (the path's, but the summary's: 11.5's course_ledger).
_EXTENSIONS: Final = {"InteractionGroup": ("tool_pairs",), "UserMessage": ("timestamp",)}


def canonical(record: CallRecord, rule: str = "ctxlab") -> Any:
    """One call's record as the evidence compares it: the result as plain data, or the class
    of what was raised, and the arguments the call changed. On the chapter's ``rule``, only
    what the chapter decides: any ``ValueError`` is a refusal (ctxlab's named errors are
    ValueErrors) and the fields of :data:`_EXTENSIONS` are left out, so a student who skips
    ctxlab's optional extras is shown the same hints."""
    if "raised" in record:
        name = str(record["raised"].get("base"))
        error = getattr(errors, name, None) or getattr(builtins, name, None)
        chapter = rule == "chapter" and isinstance(error, type) and issubclass(error, ValueError)
        found: dict[str, Any] = {"raised": "ValueError" if chapter else name}
    elif "too_large" in record:
        found = {"too_large": True}
    else:
        returned = record.get("returned")
        found = {"returned": _chapters(returned) if rule == "chapter" else returned}
    if record.get("changed"):
        found["changed"] = sorted(str(name) for name in record["changed"])
    return found


def _chapters(data: Any) -> Any:
    """Plain data (:func:`~.plain.encode`) without the fields of :data:`_EXTENSIONS`."""
    if isinstance(data, list):
        return [_chapters(item) for item in data]
    if not isinstance(data, dict):
        return data
    found = {key: _chapters(value) for key, value in data.items()}
    if data.get("$") == "object":
        dropped = _EXTENSIONS.get(data["t"], ())
        found["f"] = {key: value for key, value in found["f"].items() if key not in dropped}
        with contextlib.suppress(KeyError, TypeError, IndexError):  # a context: a summary sent?
            sent, kept = found["f"]["messages"]["v"], found["f"]["kept_entry_ids"]["v"]
            if len(sent) > len(kept) + (sent[0]["t"] == "SystemMessage"):
                del found["f"]["tokens"]["f"]["available_for_messages"]
    return found


def probe_call(data: Mapping[str, Any] | str) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """An evidence input (or its JSON text) as the call's arguments: plain data, or a
    function named ``{"function": "ctxlab.module:name"}``."""
    found: Mapping[str, Any] = json.loads(data) if isinstance(data, str) else data
    kwargs: dict[str, Any] = {}
    for name, value in found["kwargs"].items():
        if isinstance(value, dict) and set(value) == {"function"}:
            if not str(value["function"]).startswith("ctxlab."):  # pragma: no cover
                raise ValueError(f"evidence names a function outside ctxlab: {value}")
            kwargs[name] = named(str(value["function"]))
        else:
            kwargs[name] = decode(value)
    return tuple(decode(item) for item in found["args"]), kwargs


_ASKING = Text("looking for a known mistake", "查找已知的错误")


def diagnose(
    items: Sequence[Misconception],
    inputs: Mapping[str, str],
    t: Trial,
    failed: Sequence[tuple[str, str]] | None = None,
) -> None:
    """The check loop's last step: call the student's function on the evidence inputs (each
    once, as far as needed, within half the time limit) and end with the ids of the
    misconceptions it behaves like (:func:`found_in` reads them); given the ``failed`` rows
    (key, source), only of those that explain them (:func:`explaining`)."""
    records: dict[str, CallRecord] = {}
    began, slowest = drawn.now(), 0.0

    def answer(key: str, rule: str) -> Any:
        nonlocal slowest
        if key not in records:
            if not drawn.in_time(began, slowest):
                return None  # no time to ask: equal to no evidence
            args, kwargs = probe_call(inputs[key])
            started = drawn.now()
            records[key] = t.record(_ASKING, args, kwargs)
            slowest = max(slowest, drawn.now() - started)
        return canonical(records[key], rule)

    found = [
        item.id
        for item in (items if failed is None else explaining(items, failed))
        if item.evidence
        and all(answer(key, item.rule) == json.loads(want) for key, want in item.evidence)
    ]
    said = " ".join([_MARK, *found])
    raise Failed(Text(said, said))


_CRASH = re.compile(r"raised ([A-Za-z_][A-Za-z0-9_]*)")


def to_diagnose(rows: Sequence[tuple[bool, str]]) -> bool:
    """Is a known mistake looked for, given each row's (passed, English detail)? When a row
    failed, unless every row failed by raising one of Python's exceptions (a crash, not a
    mistake to guess)."""

    def crashed(detail: str) -> bool:
        found = _CRASH.search(detail)
        return found is not None and isinstance(getattr(builtins, found.group(1), None), type)

    return not all(passed for passed, _ in rows) and not all(
        not passed and crashed(detail) for passed, detail in rows
    )


def found_in(detail: str) -> tuple[str, ...]:
    """The ids :func:`diagnose` ended with (none if it did not end so)."""
    return tuple(detail.removeprefix(_MARK).split()) if detail.startswith(_MARK) else ()


def ordered(catalogue: Sequence[Misconception], ids: Iterable[str]) -> tuple[Misconception, ...]:
    """The misconceptions named by ``ids``, most likely first: a chapter rule before
    ctxlab's, then ``priority``, then the catalogue's order (the sort is stable)."""
    wanted = set(ids)
    found = [item for item in catalogue if item.id in wanted]
    return tuple(sorted(found, key=lambda item: (item.rule != "chapter", item.priority)))


def explaining(
    found: Sequence[Misconception], failed: Iterable[tuple[str, str]]
) -> tuple[Misconception, ...]:
    """Those of ``found`` that explain the failed rows, given as (key, source): each one
    explains a failed row, and every failed chapter row but one at most (the random rows
    apart: a seed may pass them); one on ctxlab's rules only when no chapter row failed. A
    mistake that explains a small part of what failed is most likely not the student's."""
    keys = {key for key, _ in failed}
    chapter = {key for key, source in failed if source == "chapter"}
    fixed = {key for key in chapter if not drawn.is_random(key)}

    def explains(item: Misconception) -> bool:
        if item.rule != "chapter":  # a random row failed is a chapter row failed too
            return bool(item.signature & keys) and not chapter
        return bool(item.signature & keys) and len(fixed - item.signature) <= 1

    return tuple(item for item in found if explains(item))


_EXTRA_HEAD = Text(
    "Hint on ctxlab's optional extras (not the chapter's rule; the lab's verdict comes from "
    "the chapter's rows): ",
    "提示（关于 ctxlab 的选做扩展检查，不是本章的规则；实验是否通过只看本章的检查）：",
)


def hint_lines(item: Misconception, rung: int, *, passed: bool = False) -> Text:
    """What the report opens with at ``rung`` (2: with the chapter's words); on ctxlab's
    rules or a ``passed`` lab, said to be about an optional extra."""
    head = _EXTRA_HEAD if item.rule == "ctxlab" or passed else Text("Hint: ", "提示：")
    text = head + Text(item.hint_en, item.hint_zh)
    if rung < 2:
        return text
    return Text(
        f"{text.en}\nThe chapter: “{item.quote_en}”\n"
        f"Smallest failing input: {item.smallest_input_en}",
        f"{text.zh}\n本章原文：「{item.quote_zh}」\n最小的失败输入：{item.smallest_input_zh}",
    )
