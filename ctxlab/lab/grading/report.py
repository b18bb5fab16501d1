"""The lab report: one ✔ or ✘ row per behaviour, as text and as a table (spec §10).

:func:`~ctxlab.lab.grading.check_implementation` returns a :class:`LabReport`: a table in a
notebook, the same as text with ``str()``, in the language of :func:`ctxlab.lab.set_language`.
The chapter's rows decide the lab (:attr:`LabReport.passed`); ctxlab's follow as optional
extras. Its texts (and Gradescope's) are data, ``texts.json``.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias

from ctxlab.lab.grading.misconceptions import Misconception, hint_lines, ordered
from ctxlab.lab.grading.text import Text, clean

#: A row's kind: the chapter's rule, or ctxlab's extension.
Source: TypeAlias = Literal["chapter", "ctxlab"]


def _no_check(trial: Any) -> None:
    """The ``run`` of a checked row: only a declared row holds its check."""


@dataclass(frozen=True)
class CheckResult:
    """One behaviour of a lab, from its declaration in the lab's file (``@LAB.check``, with
    its check ``run``) to its row in a report (:meth:`row`): ✔ or ✘ and, for ✘, the first
    failing example (``detail``). Its kind (``source``): ``"chapter"``, the chapter's
    sentence quoted (``quote_zh``/``quote_en``; ``course``: the course's code), or
    ``"ctxlab"``, why ctxlab decides so (``why_en``/``why_zh``). Properties pick the language."""

    key: str
    passed: bool
    behaviour_en: str
    behaviour_zh: str
    detail_en: str = ""
    detail_zh: str = ""
    #: What the function printed during this check (bounded), and how much was cut.
    output: str = ""
    output_cut: int = 0
    source: Source = "chapter"
    quote_zh: str = ""
    quote_en: str = ""
    why_en: str = ""
    why_zh: str = ""
    course: bool = False
    #: The check that decides this row, where the lab's file declares it (a checked row: none).
    run: Callable[[Any], None] = field(default=_no_check, compare=False, repr=False)

    def row(
        self, passed: bool, detail: Text | None = None, output: str = "", output_cut: int = 0
    ) -> CheckResult:
        """This declared row, checked (every route makes its rows here)."""
        return replace(
            self,
            passed=passed,
            detail_en=clean(detail.en) if detail else "",
            detail_zh=clean(detail.zh) if detail else "",
            output=output,
            output_cut=output_cut,
            run=_no_check,
        )

    @property
    def quote(self) -> str:
        return Text(self.quote_en, self.quote_zh).pick()

    @property
    def why(self) -> str:
        return Text(self.why_en, self.why_zh).pick()

    @property
    def behaviour(self) -> str:
        return Text(self.behaviour_en, self.behaviour_zh).pick()

    @property
    def detail(self) -> str:
        return Text(self.detail_en, self.detail_zh).pick()

    @property
    def mark(self) -> str:
        return "✔" if self.passed else "✘"

    def _printed(self) -> list[str]:
        """The lines shown under the row for what the function printed (none if nothing)."""
        if not self.output and not self.output_cut:
            return []
        lines = [said("printed").pick()]
        lines.extend(f"  {line}" for line in self.output.splitlines())
        if self.output_cut:
            lines.append(said("cut", count=self.output_cut).pick())
        return lines


#: How a row left unrun after a hang begins (:data:`~.runner.NOT_RUN`; never a leading row).
_NOT_RUN_EN: Final = "not run:"

#: The report's and Gradescope's texts, ``[English, Chinese]`` with ``{fields}``.
TEXTS: Final = json.loads((Path(__file__).parent / "texts.json").read_text(encoding="utf-8"))


def said(key: str, /, **values: object) -> Text:
    """The report's text ``key``, filled with ``values`` (a :class:`Text` by language)."""
    en, zh = TEXTS["report"][key]
    return Text(
        en.format_map({k: v.en if isinstance(v, Text) else v for k, v in values.items()}),
        zh.format_map({k: v.zh if isinstance(v, Text) else v for k, v in values.items()}),
    )


@dataclass(frozen=True)
class LabFacts:
    """What a report says of its lab beyond its rows (the lab's file declares it): ctxlab's
    solution and the helpers that count as it (the notice names them), ``budget`` (a failed
    report adds the a/b/c legend), the misconception catalogue."""

    solution: str = ""
    helpers: str = ""
    budget: bool = False
    catalogue: tuple[Misconception, ...] = ()


@dataclass(frozen=True, repr=False)
class LabReport:
    """The result of :func:`check_implementation`: one :class:`CheckResult` per behaviour;
    a table in a notebook (``_repr_html_``), the same as text with ``str()``."""

    lab: str
    function: str
    results: tuple[CheckResult, ...]
    #: The function is, wraps or called ctxlab's own solution: the report is not passed.
    used_reference: bool = False
    #: Check threads that could not be stopped, still running at the end.
    stuck_threads: int = 0
    #: The hint ladder's rung (set by the engine): 0 none, 1 the first misconception's
    #: hint, 2 also the chapter's sentence and the smallest failing input.
    hint_rung: int = 0
    #: ctxlab's objects found changed and put back before the checks ran.
    repaired: tuple[str, ...] = ()
    facts: LabFacts = LabFacts()
    #: The misconceptions the function behaved like on their evidence (the loop's last step).
    matched: tuple[str, ...] = ()
    #: The seed the random rows drew from, and how many random cases they ran.
    seed: int | None = None
    random_cases: int = 0

    def matches(self) -> tuple[Misconception, ...]:
        """The matched misconceptions (each explains the failed rows), most likely first."""
        return ordered(self.facts.catalogue, self.matched)

    @property
    def misconceptions(self) -> tuple[str, ...]:
        """The ids of the misconceptions the function behaves like, most likely first."""
        return tuple(item.id for item in self.matches())

    @property
    def hint(self) -> str:
        """The one prioritized hint the report opens with (empty when none)."""
        matches = self.matches()
        if not matches or self.hint_rung < 1:
            return ""
        return hint_lines(matches[0], self.hint_rung, passed=self.passed).pick()

    @property
    def chapter_results(self) -> tuple[CheckResult, ...]:
        return tuple(result for result in self.results if result.source == "chapter")

    @property
    def extra_results(self) -> tuple[CheckResult, ...]:
        return tuple(result for result in self.results if result.source != "chapter")

    def seed_line(self) -> str:
        """How many random cases ran, and the seed that draws them again (empty if none)."""
        if not self.random_cases or self.seed is None:
            return ""
        return said("seed", count=self.random_cases, seed=self.seed).pick()

    @property
    def passed(self) -> bool:
        """Every chapter row passed on the student's own code (ctxlab's rows do not count)."""
        chapter = self.chapter_results
        return bool(chapter) and all(r.passed for r in chapter) and not self.used_reference

    @property
    def extras_passed(self) -> bool:
        """Every one of ctxlab's extra rows passed (True when there is none)."""
        return all(result.passed for result in self.extra_results)

    @property
    def notices(self) -> tuple[str, ...]:
        """What the report says first, in plain words (empty when there is nothing to say)."""
        notices: list[Text] = []
        if self.used_reference:
            name = self.facts.solution or f"ctxlab's {self.function}"
            notices.append(said("reference", keyword=self.function, name=name))
            if self.facts.helpers:
                notices[-1] += said("reference_helpers", helpers=self.facts.helpers)
        if self.stuck_threads:
            stuck = "stuck_1" if self.stuck_threads == 1 else "stuck"
            notices.append(said(stuck, count=self.stuck_threads))
        if self.repaired:
            where, more = self.repaired, len(self.repaired) > 3
            names = Text(
                ", ".join(where[:3]) + (f" and {len(where) - 3} more" if more else ""),
                "、".join(where[:3]) + (f" 等 {len(where)} 处" if more else ""),
            )
            notices.append(said("repaired", names=names))
        return tuple(notice.pick() for notice in notices)

    @property
    def failed(self) -> tuple[CheckResult, ...]:
        return tuple(result for result in self.results if not result.passed)

    def _lead_order(self, result: CheckResult) -> tuple[bool, bool, int]:
        """A failed row's place in the choice of the lead (lower: first): it ran, a chapter row,
        declared earlier (a lab declares the chapter's own example first)."""
        unrun = result.detail_en.startswith(_NOT_RUN_EN)
        return unrun, result.source != "chapter", self.results.index(result)

    @property
    def lead(self) -> tuple[CheckResult | None, tuple[CheckResult, ...]]:
        """(the failed row the table opens with, the failed rows folded under it): of the
        rows the first matched misconception explains (else: of all failed rows), the first
        chapter row that ran leads (first, one quoting the sentence the hint quotes);
        the rows that mistake fails too are folded; without a match, the rows of the leading
        row's own part of the table that any catalogued mistake of it fails too (a chapter
        row never folds ctxlab's optional rows: a student may skip them). A second mistake
        stays apart."""
        failed = self.failed
        if not failed:
            return None, ()
        matches = self.matches()
        if matches:
            together, quote = matches[0].signature, matches[0].quote_zh.strip("。 ")
            explained = [r for r in failed if r.key in together] or list(failed)
            head = min(explained, key=lambda r: (not _quotes(r, quote), *self._lead_order(r)))
        else:
            head = min(failed, key=self._lead_order)
            signatures = [item.signature for item in self.facts.catalogue]
            together = frozenset(k for keys in signatures if head.key in keys for k in keys)
            together &= {r.key for r in failed if r.source == head.source}
        return head, tuple(r for r in failed if r.key in together and r is not head)

    @property
    def fold_text(self) -> Text:
        """The line under the leading row: how many more rows fail with it."""
        folded = self.lead[1]
        if not folded:
            return Text("", "")
        count, rows = len(folded), "row" if len(folded) == 1 else "rows"
        matches = self.matches()
        if not matches:
            return said("folded", count=count, rows=rows)
        title = Text(matches[0].title_en, matches[0].title_zh)
        return said("folded_by", title=title, count=count, rows=rows)

    def headline(self) -> str:
        """The lab's verdict: the chapter's rows passed, of how many."""
        name, mark = f"{self.lab} · {self.function}", "✔" if self.passed else "✘"
        return said("headline", name=name, count=_tally(self.chapter_results), mark=mark).pick()

    def extras_headline(self) -> str:
        """The heading of ctxlab's rows and their own count (empty when there is none)."""
        extras = self.extra_results
        return said("extras", count=_tally(extras)).pick() if extras else ""

    def _forms(self) -> tuple[str, str]:
        """The report as text and as HTML, from one walk: notices, the hint, the verdict,
        the chapter's rows then ctxlab's (the leading row first, the rows folded under it),
        the budget legend (an empty line of text is left out)."""
        text = [f"⚠ {notice}" for notice in self.notices]
        page = [
            '<div class="ctxlab-lab-report">',
            *(_NOTICE.format(html.escape(notice)) for notice in self.notices),
        ]
        if self.hint:
            text.append("💡 " + self.hint.replace("\n", "\n   "))
            page.append(_HINT.format(html.escape(self.hint)))
        text.extend((self.headline(), self.seed_line()))
        page.append(_HEAD.format(_colour(self.passed), html.escape(self.headline())))
        page.append(_small(self.seed_line()) + _TABLE.format(*said("heads").pick().split("|")))
        head, folded = self.lead
        for index, rows in enumerate((self.chapter_results, self.extra_results)):
            if index and rows:
                text.append(self.extras_headline())
                page.append(_EXTRAS.format(html.escape(self.extras_headline())))
            for result in sorted((r for r in rows if r not in folded), key=lambda r: r is not head):
                text.append(f"{result.mark} {result.behaviour}")
                text.extend(f"    {line}" for line in result.detail.splitlines())
                text.extend(f"    {line}" for line in result._printed())
                page.append(_html_row(result))
                if result is head and folded:
                    text.append(f"  {self.fold_text.pick()}")
                    for row in folded:
                        text.append(f"    · {row.behaviour}")
                        text.extend(f"    {line}" for line in row._printed())
                    inner = "".join(_html_row(r) for r in folded)
                    page.append(_FOLDED.format(html.escape(self.fold_text.pick()), inner))
        legend = said("legend").pick() if self.facts.budget and self.failed else ""
        text.append(legend)
        page.append(f"</tbody></table>{_small(legend)}</div>")
        return "\n".join(line for line in text if line), "".join(page)

    def __str__(self) -> str:
        return self._forms()[0]

    __repr__ = __str__

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        return self._forms()[1]


#: The HTML of a report's parts (:meth:`LabReport._forms`).
_NOTICE: Final = (
    '<p class="ctxlab-lab-report-notice" style="border-left:6px solid #E69F00;'
    'padding:0.2em 0.6em"><strong>⚠ {}</strong></p>'
)
_HINT: Final = (
    '<p class="ctxlab-lab-report-hint" style="border-left:6px solid #0072B2;'
    'padding:0.2em 0.6em;white-space:pre-wrap">💡 {}</p>'
)
_HEAD: Final = (
    '<p style="border-left:6px solid {};padding:0.2em 0.6em;font-size:1.1em">'
    "<strong>{}</strong></p>"
)
_TABLE: Final = (
    '<table class="ctxlab-lab-report-table"><thead><tr><th style="text-align:left">{}</th>'
    '<th>{}</th><th style="text-align:left">{}</th></tr></thead><tbody>'
)
_EXTRAS: Final = (
    '<tr class="ctxlab-lab-report-extras"><th colspan="3" style="text-align:left;'
    'font-weight:normal;padding-top:0.6em"><em>{}</em></th></tr>'
)
_FOLDED: Final = (
    '<tr class="ctxlab-lab-report-folded"><td colspan="3" style="text-align:left">'
    "<details><summary>{}</summary><table>{}</table></details></td></tr>"
)


def _tally(rows: tuple[CheckResult, ...]) -> str:
    return f"{sum(row.passed for row in rows)}/{len(rows)}"


def _small(line: str) -> str:
    return f'<p style="font-size:0.9em">{html.escape(line)}</p>' if line else ""


def _colour(passed: bool, extra: bool = False) -> str:
    """Okabe-Ito green for ✔, vermilion for ✘; a failed extra row orange, never red."""
    if passed:
        return "#009E73"
    return "#E69F00" if extra else "#D55E00"


def _source_note(result: CheckResult) -> str:
    """A row's hover text: the chapter's sentence, or why ctxlab decides so."""
    if result.source == "chapter" and result.quote_zh:
        note = "course_note" if result.course else "chapter_note"
        return said(note, quote=result.quote_zh, quote_en=result.quote_en).pick()
    if not result.why:
        return ""
    return said("ctxlab_note", why_en=result.why_en, why_zh=result.why_zh).pick()


def _html_row(result: CheckResult) -> str:
    note = _source_note(result)
    title = f' title="{html.escape(note, quote=True)}"' if note else ""
    colour = _colour(result.passed, extra=result.source != "chapter")
    row = (
        f'<tr><td style="text-align:left"{title}>{html.escape(result.behaviour)}</td>'
        f'<td style="text-align:center;color:{colour};font-weight:bold">{result.mark}</td>'
        '<td style="text-align:left;white-space:pre-wrap;font-family:monospace">'
        f"{html.escape(result.detail)}</td></tr>"
    )
    printed = result._printed()  # what the function printed during the check
    if not printed:
        return row
    note = '<div style="font-size:0.85em;color:#555">'
    cut = f"{note}{html.escape(printed[-1])}</div>" if result.output_cut else ""
    return row + (
        '<tr class="ctxlab-lab-report-output"><td colspan="3" style="text-align:left">'
        f"{note}{html.escape(printed[0])}</div>"
        '<pre style="text-align:left;font-family:monospace;white-space:pre-wrap;margin:0;'
        'max-height:12em;overflow:auto;background:#f6f6f6;padding:0.2em 0.4em">'
        f"{html.escape(result.output)}</pre>{cut}</td></tr>"
    )


def _quotes(result: CheckResult, sentence: str) -> bool:
    """Whether a crafted row (not a random one) quotes the sentence a matched mistake's hint
    quotes (cut at either end as quotes are): that row isolates the mistake best."""
    own, crafted = result.quote_zh.strip("。 "), not result.detail_en.startswith("random case ")
    return bool(own and sentence) and (sentence in own or own in sentence) and crafted
