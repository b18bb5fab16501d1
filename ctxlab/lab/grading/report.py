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
    #: What the student's function printed during this check (bounded), and how many
    #: characters of it were cut.
    output: str = ""
    output_cut: int = 0

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

    def _printed(self) -> list[str]:
        """The lines shown under the row for what the function printed (none if nothing)."""
        if not self.output and not self.output_cut:
            return []
        lines = [_PRINTED.pick()]
        lines.extend(f"  {line}" for line in self.output.splitlines())
        if self.output_cut:
            lines.append(_cut(self.output_cut))
        return lines


# The budget labs name a budget max_tokens/reserved_output/safety_margin in their details.
_LEGEND = Text(
    "A budget a/b/c means max_tokens=a, reserved_output=b, safety_margin=c.",
    "预算 a/b/c 表示 max_tokens=a、reserved_output=b、safety_margin=c。",
)
_BUDGET_LABS = ("11.3", "11.5")

_PRINTED = Text("printed by your function:", "你的函数打印的内容：")

#: ctxlab's own solution of each lab, as the notice names it.
_REFERENCE_NAMES = {
    "11.1": "ctxlab's parse_compaction_entry (or ctxlab.parse_session_entry)",
    "11.2": "ctxlab.group_interactions",
    "11.3": "ctxlab.build_context",
    "11.4": "ctxlab.create_compaction_entry",
    "11.5": "ctxlab.build_context",
}


def _cut(count: int) -> str:
    return Text(f"… {count} more characters cut", f"… 另有 {count} 个字符被截去").pick()


def reference_notice(lab: str, keyword: str, *, rows: bool = True) -> Text:
    """The notice of a student's function that is, or calls, this lab's reference (``rows``:
    the report's wording; without it, one test's on the terminal route)."""
    name = _REFERENCE_NAMES.get(lab, f"ctxlab's {keyword}")
    judged = "these rows" if rows else "this check"
    judged_zh = "下面各行" if rows else "这项检查"
    return Text(
        f"Your {keyword} is, or calls, {name} — ctxlab's own solution of this lab — so"
        f" {judged} judged ctxlab's code, not yours, and the lab is not passed. Write"
        f" {keyword} yourself; the functions of earlier labs that the notebook imports stay"
        " allowed.",
        f"你的 {keyword} 就是（或调用了）{name}——ctxlab 自带的本实验参考实现——所以{judged_zh}"
        f"检查的是 ctxlab 的代码，不是你的，本实验不算通过。请自己实现 {keyword}；notebook"
        " 导入的前面实验的函数仍然可以调用。",
    )


def _stuck_notice(count: int) -> Text:
    if count == 1:
        en = (
            "1 check thread from an earlier check could not be stopped and is still running"
            " (blocked, or catching every exception); it slows this kernel down and may"
            " change what later checks see."
        )
    else:
        en = (
            f"{count} check threads from earlier checks could not be stopped and are still"
            " running (blocked, or catching every exception); they slow this kernel down and"
            " may change what later checks see."
        )
    return Text(
        en + " Restart the kernel (Kernel → Restart) to end them, then run the cells again.",
        f"前面的检查中有 {count} 个检查线程无法停止，仍在运行（阻塞了，或捕获了所有异常）；"
        "它们会拖慢这个 kernel，也可能影响后面的检查。请重启 kernel（Kernel → Restart）"
        "来结束它们，然后重新运行各个单元格。",
    )


def _repaired_notice(where: tuple[str, ...]) -> Text:
    names = ", ".join(where[:3]) + (f" and {len(where) - 3} more" if len(where) > 3 else "")
    names_zh = "、".join(where[:3]) + (f" 等 {len(where)} 处" if len(where) > 3 else "")
    return Text(
        f"ctxlab's own objects were changed after grading loaded them ({names}), by your"
        " function or by a thread of an earlier check that kept running. They were put back"
        " before each check, so these rows judged ctxlab as it should be; but while such a"
        " thread runs it can change them again at any moment. Restart the kernel"
        " (Kernel → Restart) and run the cells again.",
        f"评分器加载后，ctxlab 自己的对象被改动了（{names_zh}）：是你的函数，或前面某项检查中"
        "一直没有结束的线程改的。每项检查之前它们都已复原，所以下面各行检查的是正常的 ctxlab；"
        "但只要这样的线程还在运行，它随时可能再次改动。请重启 kernel（Kernel → Restart），"
        "然后重新运行各个单元格。",
    )


@dataclass(frozen=True, repr=False)
class LabReport:
    """The result of :func:`check_implementation`: one :class:`CheckResult` per behaviour.

    In a notebook it shows as a table (``_repr_html_``); ``str()`` gives the same as text.
    """

    lab: str
    function: str
    results: tuple[CheckResult, ...]
    #: True when the student's function is, wraps or called ctxlab's own solution of
    #: this lab: the rows then judged ctxlab's code, and the report is not passed.
    used_reference: bool = False
    #: How many check threads that could not be stopped were still running at the end.
    stuck_threads: int = 0
    #: ctxlab's objects that had been changed (by this function, or by a thread of an
    #: earlier check that kept running) and were put back before the checks ran.
    repaired: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        """True when every check passed on the student's own code."""
        return (
            bool(self.results)
            and all(result.passed for result in self.results)
            and not self.used_reference
        )

    @property
    def notices(self) -> tuple[str, ...]:
        """What the report says first, in plain words (empty when there is nothing to say)."""
        notices: list[str] = []
        if self.used_reference:
            notices.append(reference_notice(self.lab, self.function).pick())
        if self.stuck_threads:
            notices.append(_stuck_notice(self.stuck_threads).pick())
        if self.repaired:
            notices.append(_repaired_notice(self.repaired).pick())
        return tuple(notices)

    @property
    def failed(self) -> tuple[CheckResult, ...]:
        return tuple(result for result in self.results if not result.passed)

    def headline(self) -> str:
        done = sum(result.passed for result in self.results)
        total = len(self.results)
        mark = "✔" if self.passed else "✘"
        if get_language() == "zh":
            return f"实验 {self.lab} · {self.function}：通过 {done}/{total} 项检查 {mark}"
        return f"Lab {self.lab} · {self.function}: {done}/{total} checks pass {mark}"

    def _legend(self) -> str:
        """The budget legend, shown under a budget lab's report with a failed row."""
        failed = any(not result.passed for result in self.results)
        return _LEGEND.pick() if self.lab in _BUDGET_LABS and failed else ""

    def __str__(self) -> str:
        lines = [f"⚠ {notice}" for notice in self.notices]
        lines.append(self.headline())
        for result in self.results:
            lines.append(f"{result.mark} {result.behaviour}")
            if result.detail:
                lines.extend(f"    {line}" for line in result.detail.splitlines())
            lines.extend(f"    {line}" for line in result._printed())
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
        notices = "".join(
            f'<p class="ctxlab-lab-report-notice" style="border-left:6px solid #E69F00;'
            f'padding:0.2em 0.6em"><strong>⚠ {html.escape(notice)}</strong></p>'
            for notice in self.notices
        )
        return (
            f'<div class="ctxlab-lab-report">{notices}'
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
    ) + _html_printed(result)


def _html_printed(result: CheckResult) -> str:
    """The row under a check's row: what the function printed (nothing if it printed none)."""
    if not result.output and not result.output_cut:
        return ""
    note = '<div style="font-size:0.85em;color:#555">'
    cut = f"{note}{html.escape(_cut(result.output_cut))}</div>" if result.output_cut else ""
    return (
        '<tr class="ctxlab-lab-report-output"><td colspan="3" style="text-align:left">'
        f"{note}{html.escape(_PRINTED.pick())}</div>"
        '<pre style="text-align:left;font-family:monospace;white-space:pre-wrap;margin:0;'
        'max-height:12em;overflow:auto;background:#f6f6f6;padding:0.2em 0.4em">'
        f"{html.escape(result.output)}</pre>{cut}</td></tr>"
    )
