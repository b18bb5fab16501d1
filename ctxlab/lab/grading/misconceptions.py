"""The misconception catalogue, its evidence and its hint ladder (issues 24, 33).

Each lab's catalogue is data, ``catalogue/lab11_N.json``: one :class:`Misconception` per
mistake a student draws from the chapter -- its title, its *signature* (the rows it
explains), a hint that points at the chapter's sentence without stating the expected value,
that sentence (verbatim, and in English), the smallest failing input, and its *evidence*:
inputs and what the buggy file ``tests/misconceptions/lab11_N/<slug>.py`` answers there
(:func:`canonical`), written by ``tests/misconception_evidence.py`` and checked in CI.

It matches when the student's function *behaves* like it -- the buggy answer on every input
of its evidence, and a row it explains failed. :func:`diagnose` asks that as the last step
of the check loop, only when a row failed (:func:`to_diagnose`); no buggy code runs at
grading time. Matches are ordered: a chapter rule's mistake before ctxlab's (``rule``), then
``priority``, then the catalogue's order; with no match there is no hint. The ladder: a
failed report opens with the first match's hint; the next run of the same lab with the same
first match adds the chapter's sentence and the smallest failing input (the engine keeps
the rung). This module imports no lab: it is given the lab's catalogue.
"""

from __future__ import annotations

import builtins
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from ctxlab.lab.grading.calls import Failed, Trial
from ctxlab.lab.grading.perform import CallRecord, named
from ctxlab.lab.grading.plain import decode
from ctxlab.lab.grading.text import Text

__all__ = [
    "DIAGNOSIS",
    "Misconception",
    "canonical",
    "diagnose",
    "found_in",
    "hint_lines",
    "load",
    "ordered",
    "probe_call",
    "to_diagnose",
]

#: The key of the check loop's last step, :func:`diagnose` (never a row of the report).
DIAGNOSIS: Final = "known_mistakes"
#: How that step's detail starts, before the matched ids.
_MARK: Final = "matched:"
#: Where each lab's catalogue is (``lab11_3.json``).
FOLDER: Final = Path(__file__).with_name("catalogue")


@dataclass(frozen=True)
class Misconception:
    """One named mistake of a lab: its evidence, its hint, the chapter's sentence."""

    #: ``"11.3/int-truncation"``: the lab, then the slug of its buggy file.
    id: str
    #: What students do, in one line and each language (``"Truncates fractional token
    #: estimates with int()"``): the mistake named, never the expected value.
    title_en: str
    title_zh: str
    #: The rows the buggy implementation fails: the rows the mistake explains.
    signature: frozenset[str]
    #: Where the hint points, in each language: the chapter's sentence, never the answer.
    hint_en: str
    hint_zh: str
    #: The chapter's sentence, verbatim (``quote_zh``), and rendered in English.
    quote_zh: str
    quote_en: str
    #: The smallest input on which the mistake shows, in words.
    smallest_input_en: str
    smallest_input_zh: str
    #: Lower is shown first among matches.
    priority: int = 50
    #: Whose rule the mistake breaks: ``"chapter"`` (a chapter row is in its signature: the
    #: lab fails) or ``"ctxlab"`` (only ctxlab's optional extra rows are).
    rule: Literal["chapter", "ctxlab"] = "chapter"
    #: ``(input id, the buggy answer there)``: it matches when the student's function gives
    #: every one of these answers (:func:`canonical`; kept as JSON text: immutable, and
    #: nothing for grading's guard of ctxlab's objects to walk before every check).
    evidence: tuple[tuple[str, str], ...] = field(default=(), compare=False, repr=False)

    @property
    def lab(self) -> str:
        return self.id.split("/", 1)[0]

    @property
    def slug(self) -> str:
        return self.id.split("/", 1)[1]

    @property
    def title(self) -> Text:
        return Text(self.title_en, self.title_zh)

    @property
    def hint(self) -> Text:
        return Text(self.hint_en, self.hint_zh)

    def rung_two(self) -> Text:
        """The second rung: the chapter's sentence (verbatim in Chinese, rendered in the
        English edition) and the smallest failing input."""
        return Text(
            f"The chapter: “{self.quote_en}”\nSmallest failing input: {self.smallest_input_en}",
            f"本章原文：「{self.quote_zh}」\n最小的失败输入：{self.smallest_input_zh}",
        )


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


def canonical(record: CallRecord) -> Any:
    """One call's record as the evidence compares it: the result's fields as plain data, or
    the class of what was raised (the nearest of ctxlab's or Python's), and the arguments
    the call changed."""
    if "raised" in record:
        found: dict[str, Any] = {"raised": str(record["raised"].get("base"))}
    elif "too_large" in record:
        found = {"too_large": True}
    else:
        found = {"returned": record.get("returned")}
    if record.get("changed"):
        found["changed"] = sorted(str(name) for name in record["changed"])
    return found


def probe_call(data: Mapping[str, Any] | str) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """An evidence input (or its JSON text) as the call's arguments: plain data
    (:mod:`.plain`), a function named ``{"function": "ctxlab.module:name"}`` (an estimator
    of the lab's checks)."""
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


def diagnose(items: Sequence[Misconception], inputs: Mapping[str, str], t: Trial) -> None:
    """The check loop's last step: call the student's function on the catalogue's evidence
    inputs (each once, only as far as needed) and end with the ids of the misconceptions it
    behaves like (:func:`found_in` reads them). A slow function is asked only for half the
    check's time limit: a misconception whose evidence it had no time for does not match."""
    from ctxlab.lab.grading import drawn

    answers: dict[str, Any] = {}
    began, slowest = drawn.now(), 0.0

    def answer(key: str) -> Any:
        nonlocal slowest
        if key not in answers:
            if not drawn.in_time(began, slowest):
                return _NO_TIME
            args, kwargs = probe_call(inputs[key])
            started = drawn.now()
            answers[key] = canonical(t.record(_ASKING, args, kwargs))
            slowest = max(slowest, drawn.now() - started)
        return answers[key]

    found = [
        item.id
        for item in items
        if item.evidence and all(answer(key) == json.loads(want) for key, want in item.evidence)
    ]
    said = " ".join([_MARK, *found])
    raise Failed(Text(said, said))


#: What :func:`diagnose` answers for an input it had no time to ask (equal to no evidence).
_NO_TIME: Final = object()

_CRASH = re.compile(r"raised ([A-Za-z_][A-Za-z0-9_]*)")


def to_diagnose(rows: Sequence[tuple[bool, str]]) -> bool:
    """Is a known mistake looked for, given each row's (passed, English detail)? When a row
    failed -- but not when every row failed by raising one of Python's exceptions: a
    function that crashes on every input (or is not written yet) shows its crash, not a
    guess."""

    def crashed(detail: str) -> bool:
        found = _CRASH.search(detail)
        return found is not None and isinstance(getattr(builtins, found.group(1), None), type)

    return not all(passed for passed, _ in rows) and not all(
        not passed and crashed(detail) for passed, detail in rows
    )


def found_in(detail: str) -> tuple[str, ...]:
    """The ids :func:`diagnose` ended with (none when the step did not end so: not run, a
    hang, a crash)."""
    if not detail.startswith(_MARK):
        return ()
    return tuple(detail[len(_MARK) :].split())


def ordered(catalogue: Sequence[Misconception], ids: Iterable[str]) -> tuple[Misconception, ...]:
    """The misconceptions of ``catalogue`` named by ``ids``, most likely first: a chapter
    rule before ctxlab's, then ``priority``, then the catalogue's order."""
    wanted = set(ids)
    found = [item for item in catalogue if item.id in wanted]
    order = {item.id: index for index, item in enumerate(catalogue)}
    found.sort(key=lambda item: (item.rule != "chapter", item.priority, order[item.id]))
    return tuple(found)


_EXTRA_HEAD = Text(
    "Hint on ctxlab's optional extras (not the chapter's rule; the lab's verdict comes from "
    "the chapter's rows): ",
    "提示（关于 ctxlab 的选做扩展检查，不是本章的规则；实验是否通过只看本章的检查）：",
)


def hint_lines(item: Misconception, rung: int, *, passed: bool = False) -> Text:
    """What the report opens with at ``rung`` (1: the hint; 2: with the chapter's words).
    A hint about one of ctxlab's own rules, or on a lab the chapter's rows ``passed``, says
    so first: it is about an optional extra, not about the lab's verdict."""
    head = Text("Hint: ", "提示：")
    if item.rule == "ctxlab" or passed:
        head = _EXTRA_HEAD
    text = head + item.hint
    if rung >= 2:
        second = item.rung_two()
        text = Text(f"{text.en}\n{second.en}", f"{text.zh}\n{second.zh}")
    return text
