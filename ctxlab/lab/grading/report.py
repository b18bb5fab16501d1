"""The lab report: one ✔ or ✘ row per behaviour of the chapter, as text and as a table.

:func:`~ctxlab.lab.grading.check_implementation` returns a :class:`LabReport`; in a notebook
it shows as a table (one row per behaviour, in the chapter's words, ✔ or ✘, and for ✘ the
first failing example), and ``str()`` gives the same as plain text. Both languages are kept
in every row; :func:`ctxlab.lab.set_language` chooses which one is shown.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from ctxlab.lab.grading.text import Text
from ctxlab.lab.language import get_language

__all__ = ["CheckResult", "LabReport"]


@dataclass(frozen=True)
class CheckResult:
    """One behaviour of a lab, checked: ✔ or ✘, and for ✘ the first failing example.

    ``behaviour`` and ``detail`` are in the language of :func:`ctxlab.lab.set_language`;
    both languages are kept (``behaviour_en``/``behaviour_zh``, ``detail_en``/``detail_zh``).
    """

    key: str
    passed: bool
    behaviour_en: str
    behaviour_zh: str
    detail_en: str = ""
    detail_zh: str = ""

    @property
    def behaviour(self) -> str:
        """The behaviour, in the chapter's words."""
        return self.behaviour_zh if get_language() == "zh" else self.behaviour_en

    @property
    def detail(self) -> str:
        """For ✘: the first failing example, expected vs got (empty for ✔)."""
        return self.detail_zh if get_language() == "zh" else self.detail_en

    @property
    def mark(self) -> str:
        return "✔" if self.passed else "✘"


# The budget labs name a budget max_tokens/reserved_output/safety_margin in their details.
_LEGEND = Text(
    "A budget a/b/c means max_tokens=a, reserved_output=b, safety_margin=c.",
    "预算 a/b/c 表示 max_tokens=a、reserved_output=b、safety_margin=c。",
)
_BUDGET_LABS = ("11.3", "11.5")


@dataclass(frozen=True, repr=False)
class LabReport:
    """The result of :func:`check_implementation`: one :class:`CheckResult` per behaviour.

    In a notebook it shows as a table (``_repr_html_``); ``str()`` gives the same as text.
    """

    lab: str
    function: str
    results: tuple[CheckResult, ...]

    @property
    def passed(self) -> bool:
        """True when every check passed."""
        return bool(self.results) and all(result.passed for result in self.results)

    @property
    def failed(self) -> tuple[CheckResult, ...]:
        return tuple(result for result in self.results if not result.passed)

    def headline(self) -> str:
        done = sum(result.passed for result in self.results)
        total = len(self.results)
        mark = "✔" if self.passed else "✘"
        if get_language() == "zh":
            return f"Lab {self.lab} · {self.function}：通过 {done}/{total} 项检查 {mark}"
        return f"Lab {self.lab} · {self.function}: {done}/{total} checks pass {mark}"

    def _legend(self) -> str:
        """The budget legend, shown under a failed report of a budget lab."""
        return _LEGEND.pick() if self.lab in _BUDGET_LABS and not self.passed else ""

    def __str__(self) -> str:
        lines = [self.headline()]
        for result in self.results:
            lines.append(f"{result.mark} {result.behaviour}")
            if result.detail:
                lines.extend(f"    {line}" for line in result.detail.splitlines())
        if self._legend():
            lines.append(self._legend())
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        zh = get_language() == "zh"
        heads = ("行为", "结果", "说明") if zh else ("behaviour", "result", "detail")
        rows = "".join(_html_row(result) for result in self.results)
        legend = ""
        if self._legend():
            legend = f'<p style="font-size:0.9em">{html.escape(self._legend())}</p>'
        return (
            '<div class="ctxlab-lab-report">'
            f'<p style="border-left:6px solid {_colour(self.passed)};padding:0.2em 0.6em;'
            f'font-size:1.1em"><strong>{html.escape(self.headline())}</strong></p>'
            '<table class="ctxlab-lab-report-table">'
            f'<thead><tr><th style="text-align:left">{heads[0]}</th><th>{heads[1]}</th>'
            f'<th style="text-align:left">{heads[2]}</th></tr></thead>'
            f"<tbody>{rows}</tbody></table>{legend}</div>"
        )


def _colour(passed: bool) -> str:
    """Okabe-Ito green for ✔, vermilion for ✘ (readable with colour blindness)."""
    return "#009E73" if passed else "#D55E00"


def _html_row(result: CheckResult) -> str:
    return (
        "<tr>"
        f'<td style="text-align:left">{html.escape(result.behaviour)}</td>'
        f'<td style="text-align:center;color:{_colour(result.passed)};font-weight:bold">'
        f"{result.mark}</td>"
        f'<td style="text-align:left;white-space:pre-wrap;font-family:monospace">'
        f"{html.escape(result.detail)}</td>"
        "</tr>"
    )
