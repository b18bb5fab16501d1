"""The misconception catalogue and its hint ladder (issue 24).

Each lab's file ends with its catalogue, ``LAB.misconceptions(...)``: one
:class:`Misconception` per mistake a student draws from the chapter, each with a title (what
students do, in one line; the classroom kit lists it under "common mistakes"), the rows a
buggy implementation of that mistake fails (its *signature*), a hint in both languages that
points at the chapter's sentence without stating the expected value, that sentence (quoted
verbatim from the chapter, and rendered in English), and the smallest failing input in
words. ``tests/misconceptions/lab11_N/<slug>.py`` holds the buggy implementation of each
(the catalogue's evidence; ``tests/test_misconceptions.py`` runs every one).

:func:`match` reads a report's failed rows: a misconception matches when every row of its
signature failed and, when it has a ``clue`` (a regular expression), the clue is found in the
English detail of one of those rows (the first failing case shows the mistake itself). The
matches are ordered most likely first: a mistake about one of the chapter's rules before one
about ctxlab's own rules (``rule``), then one confirmed by its clue, then the more specific
signature (more rows), then ``priority`` (lower first), then the catalogue's order.

Each entry says whose rule the mistake breaks (``rule``). ``"chapter"``: its signature holds
at least one chapter row, so the lab is not passed. ``"ctxlab"``: its signature holds only
ctxlab's rows, optional extras -- a student may pass the lab and still make it; its hint says
so, and the report labels it as a hint about ctxlab's optional extras
(``tests/test_misconceptions.py`` checks the declared rule against the rows' kinds).

The ladder: the report of a failed lab opens with the first match's hint (rung 1); the next
``check_implementation`` of the same lab in the same process with the same first match adds
the chapter's sentence and the smallest failing input (rung 2). The engine keeps the rung.

This module imports no lab: :func:`match` is given the lab's catalogue.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from ctxlab.lab.grading.text import Text

__all__ = ["Misconception", "evidence", "hint_lines", "match"]


@dataclass(frozen=True)
class Misconception:
    """One named mistake of a lab: its signature, its hint, the chapter's sentence."""

    #: ``"11.3/int-truncation"``: the lab, then the slug of its buggy file.
    id: str
    #: What students do, in one line and each language (``"Truncates fractional token
    #: estimates with int()"``): the mistake named, never the expected value.
    title_en: str
    title_zh: str
    #: The rows the buggy implementation fails; it matches when every one of them failed.
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
    #: Lower is shown first among matches of equal signature size.
    priority: int = 50
    #: A regular expression that must be found in the English detail of a failed signature
    #: row for this to match (it then ranks first); empty: the signature alone decides.
    clue: str = ""
    #: Whose rule the mistake breaks: ``"chapter"`` (a chapter row is in its signature: the
    #: lab fails) or ``"ctxlab"`` (only ctxlab's optional extra rows are).
    rule: Literal["chapter", "ctxlab"] = "chapter"

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


def match(
    catalogue: Sequence[Misconception],
    failed_keys: Iterable[str],
    details: Mapping[str, str] | None = None,
) -> tuple[Misconception, ...]:
    """The misconceptions of a lab's ``catalogue`` whose every signature row is in ``failed_keys``,
    most likely first; ``details`` (row key -> English detail) lets a clue rank a match."""
    failed = frozenset(failed_keys)

    def clued(item: Misconception) -> bool:
        texts = (details or {}).get
        return bool(item.clue) and any(
            re.search(item.clue, texts(key, "") or "") for key in sorted(item.signature)
        )

    found = [
        item
        for item in catalogue
        if item.signature and item.signature <= failed and (not item.clue or clued(item))
    ]
    order = {item.id: index for index, item in enumerate(catalogue)}
    found.sort(
        key=lambda item: (
            item.rule != "chapter",
            not item.clue,
            -len(item.signature),
            item.priority,
            order[item.id],
        )
    )
    return tuple(found)


_NOT_EVIDENCE = ("not run: ", "not written yet: ")
_CRASH = re.compile(r"raised ([A-Za-z_][A-Za-z0-9_]*)")


def evidence(failed: Mapping[str, str], rows: int) -> dict[str, str]:
    """The failed rows (key -> English detail) that say something about a misconception:
    not a row left unrun after a hang or failed by the unwritten stub; and nothing when every
    one of the lab's ``rows`` failed by raising a Python built-in exception (a function that
    crashes on every input shows its crash, not a guess).
    """
    kept = {
        key: detail
        for key, detail in failed.items()
        if not any(detail.startswith(prefix) or f": {prefix}" in detail for prefix in _NOT_EVIDENCE)
    }

    def crashed(detail: str) -> bool:
        found = _CRASH.search(detail)
        return found is not None and isinstance(getattr(builtins, found.group(1), None), type)

    if len(failed) == rows and all(crashed(detail) for detail in kept.values()):
        return {}
    return kept


_EXTRA_HEAD = Text(
    "Hint on ctxlab's optional extras (not the chapter's rule; the lab's verdict comes from "
    "the chapter's rows): ",
    "提示（关于 ctxlab 的选做扩展检查，不是本章的规则；实验是否通过只看本章的检查）：",
)


def hint_lines(item: Misconception, rung: int) -> Text:
    """What the report opens with at ``rung`` (1: the hint; 2: with the chapter's words).
    A hint about one of ctxlab's own rules says so first: it is about an optional extra, not
    about the lab's verdict."""
    head = Text("Hint: ", "提示：")
    if item.rule == "ctxlab":
        head = _EXTRA_HEAD
    text = head + item.hint
    if rung >= 2:
        second = item.rung_two()
        text = Text(f"{text.en}\n{second.en}", f"{text.zh}\n{second.zh}")
    return text
