"""The class report of ``ctxlab grade``: ``report.html``, one file that opens offline.

:func:`render` turns the graded records (one
:class:`~ctxlab.lab.grading.graded.GradedLab` per student × lab) into one HTML page with
inline CSS and SVG, no script and no external asset, in English or Chinese:

* the class at a glance: a student × lab grid (passed, not passed, not graded);
* per lab, the share of graded students failing each row -- a bar per row, the chapter's
  rows apart from ctxlab's extras;
* a heat map of misconceptions × labs: how many students each misconception holds back;
* who is stuck where: each student with a lab not passed, the rows failed, the
  misconceptions matched and the hint that student would see first;
* the submissions that could not be graded, with status and reason.

What a student chose -- a name, a file name, a lab tag -- reaches a lecturer's spreadsheet.
:func:`cell` makes every text cell of ``grades.csv``, ``rows.csv`` and this report inert, as
OWASP recommends against CSV injection: a text beginning with ``=``, ``+``, ``-``, ``@``, a
tab or a carriage return gets a leading single quote and stays otherwise intact. ctxlab's own
numbers (counts, seconds; never negative) are written as numbers and left alone; a student's
text that merely looks like one (``-2+3``) is text and is neutralised. :func:`shown` writes
the bidirectional control characters (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F,
U+061C) as ``\\u202e`` in every output, so a name cannot reorder what the lecturer reads.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from ctxlab.lab.grading.graded import GradedLab, GradedRow

__all__ = ["cell", "render", "shown"]

_WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "title": "ctxlab · class report",
        "subtitle": "Chapter 11 labs, graded by ctxlab grade",
        "students": "students",
        "pairs": "student × lab pairs",
        "passed": "passed",
        "not_passed": "not passed",
        "not_graded": "not graded",
        "glance": "The class at a glance",
        "student": "student",
        "lab": "Lab",
        "rows_title": "Which rows the class fails",
        "rows_note": "Per lab: the share of graded students (status ok, timeout or crashed)"
        " whose row is ✘.",
        "chapter": "the chapter's",
        "ctxlab": "ctxlab's extra",
        "graded": "graded",
        "heat_title": "Misconceptions × labs",
        "heat_note": "Students per cell: how many students a catalogued misconception holds"
        " back in each lab.",
        "heat_none": "No catalogued misconception matched any failure.",
        "stuck_title": "Who is stuck where",
        "stuck_note": "Each lab not passed, with the rows failed and the hint the student"
        " would see first.",
        "stuck_none": "Nobody is stuck: every graded lab is passed.",
        "failed_rows": "rows failed",
        "first_failed": "first failed row",
        "misconceptions": "misconceptions",
        "hint": "hint",
        "status": "status",
        "problems_title": "Not graded",
        "problems_none": "Every submission could be graded.",
        "reason": "reason",
        "file": "file",
        "legend_pass": "passed",
        "legend_fail": "not passed",
        "legend_bad": "not graded (invalid, timeout, crashed, refused)",
        "none": "—",
    },
    "zh": {
        "title": "ctxlab · 班级报告",
        "subtitle": "第 11 章的实验，由 ctxlab grade 评分",
        "students": "名学生",
        "pairs": "个“学生 × 实验”",
        "passed": "通过",
        "not_passed": "未通过",
        "not_graded": "未评分",
        "glance": "全班一览",
        "student": "学生",
        "lab": "实验",
        "rows_title": "全班在哪些检查上出错",
        "rows_note": "每个实验：已评分的学生（状态 ok、timeout 或 crashed）中这一行为 ✘ 的比例。",
        "chapter": "本章的规则",
        "ctxlab": "ctxlab 的扩展",
        "graded": "已评分",
        "heat_title": "误解 × 实验",
        "heat_note": "每格是学生人数：某个已归档的误解在各个实验里卡住了多少学生。",
        "heat_none": "没有任何失败与已归档的误解相符。",
        "stuck_title": "谁卡在哪里",
        "stuck_note": "每个未通过的实验：失败的行，以及学生首先会看到的提示。",
        "stuck_none": "没有人卡住：已评分的实验全部通过。",
        "failed_rows": "失败的行",
        "first_failed": "第一条失败的规则",
        "misconceptions": "误解",
        "hint": "提示",
        "status": "状态",
        "problems_title": "未能评分",
        "problems_none": "每份提交都能评分。",
        "reason": "原因",
        "file": "文件",
        "legend_pass": "通过",
        "legend_fail": "未通过",
        "legend_bad": "未评分（invalid、timeout、crashed、refused）",
        "none": "—",
    },
}

_GREEN, _RED, _ORANGE, _GREY = "#009E73", "#D55E00", "#E69F00", "#999999"

_CSS: Final = """
body{font-family:system-ui,-apple-system,"Segoe UI","Noto Sans CJK SC","PingFang SC",
"Microsoft YaHei",sans-serif;margin:1.5em auto;max-width:72em;padding:0 1em;color:#222;
line-height:1.45}
h1{margin-bottom:0}h2{margin-top:1.8em;border-bottom:2px solid #ddd;padding-bottom:.2em}
.sub{color:#555;margin-top:.2em}.note{color:#555;font-size:.92em}
.stats{display:flex;gap:1em;flex-wrap:wrap;margin:1em 0}
.stat{border:1px solid #ddd;border-radius:6px;padding:.5em .9em;min-width:7em}
.stat b{display:block;font-size:1.5em}
table{border-collapse:collapse;margin:.6em 0}th,td{padding:.25em .6em;text-align:left;
vertical-align:top;border-bottom:1px solid #eee}th{background:#f5f5f5}
.grid td.cell{text-align:center;font-weight:bold;min-width:3.2em;color:#fff}
.ok{background:#009E73}.no{background:#D55E00}.bad{background:#999}.na{background:#fff;color:#999!important}
.bars td.label{max-width:38em}.src{font-size:.8em;border-radius:3px;padding:0 .3em;
white-space:nowrap}.src-chapter{background:#e8f4fb;color:#0072B2}
.src-ctxlab{background:#fdf2e0;color:#8a5a00}.count{white-space:nowrap;color:#555;
font-variant-numeric:tabular-nums}
.legend span{display:inline-block;width:1em;height:1em;vertical-align:middle;margin:0 .3em 0 .9em}
.hint{max-width:34em}.reason{font-family:monospace;font-size:.9em;white-space:pre-wrap;
max-width:40em}
"""


_BIDI: Final = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
#: What a spreadsheet reads as the start of a formula (OWASP, CSV injection).
_FORMULA: Final = ("=", "+", "-", "@", "\t", "\r")


def shown(text: str) -> str:
    """``text`` with every bidirectional control character written as ``\\uXXXX``."""
    return _BIDI.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def cell(text: str) -> str:
    """A text cell as a spreadsheet must read it: :func:`shown`, and a leading ``'`` when it
    would start a formula (OWASP's advice for CSV); otherwise unchanged."""
    text = shown(text)
    return "'" + text if text.startswith(_FORMULA) else text


def _e(text: object) -> str:
    return html.escape(cell(str(text)))


def _glance(records: Sequence[GradedLab], labs: list[str], w: dict[str, str]) -> str:
    students = sorted({r.student for r in records})
    by = {(r.student, r.lab): r for r in records}
    head = "".join(f"<th>{_e(w['lab'])} {_e(lab)}</th>" for lab in labs)
    lines = []
    for student in students:
        cells = []
        for lab in labs:
            record = by.get((student, lab))
            if record is None:
                cells.append(f'<td class="cell na" title="{_e(w["none"])}">·</td>')
            elif record.passed:
                cells.append(f'<td class="cell ok" title="{_e(w["passed"])}">✔</td>')
            elif record.status == "ok" or record.graded:
                text = f"{record.chapter_passed}/{record.chapter_total}"
                cells.append(f'<td class="cell no" title="{_e(w["not_passed"])}">{_e(text)}</td>')
            else:
                reason, status = _e(record.reason), _e(record.status)
                cells.append(f'<td class="cell bad" title="{reason}">{status}</td>')
        lines.append(f"<tr><th>{_e(student)}</th>{''.join(cells)}</tr>")
    legend = (
        f'<p class="legend note"><span style="background:{_GREEN}"></span>{_e(w["legend_pass"])}'
        f'<span style="background:{_RED}"></span>{_e(w["legend_fail"])}'
        f'<span style="background:{_GREY}"></span>{_e(w["legend_bad"])}</p>'
    )
    return (
        f'<table class="grid" id="glance"><thead><tr><th>{_e(w["student"])}</th>{head}</tr>'
        f"</thead><tbody>{''.join(lines)}</tbody></table>{legend}"
    )


def _bar(share: float, width: int = 220) -> str:
    filled = round(width * share)
    colour = _RED if share >= 0.5 else _ORANGE if share > 0 else _GREEN
    return (
        f'<svg width="{width}" height="14" role="img" aria-label="{share:.0%}">'
        f'<rect width="{width}" height="14" fill="#eee" rx="2"/>'
        f'<rect width="{filled}" height="14" fill="{colour}" rx="2"/></svg>'
    )


def _rows_section(
    records: Sequence[GradedLab], labs: list[str], w: dict[str, str], lang: str
) -> str:
    parts = []
    for lab in labs:
        graded = [r for r in records if r.lab == lab and r.graded]
        if not graded:
            continue
        order: list[str] = []
        names: dict[str, GradedRow] = {}
        failing: Counter[str] = Counter()
        for record in graded:
            for row in record.rows:
                if row.key not in names:
                    order.append(row.key)
                    names[row.key] = row
                if not row.passed:
                    failing[row.key] += 1
        lines = []
        for key in order:
            row = names[key]
            share = failing[key] / len(graded)
            source = "chapter" if row.source == "chapter" else "ctxlab"
            lines.append(
                f'<tr data-key="{_e(key)}"><td class="label">{_e(row.behaviour(lang))} '
                f'<span class="src src-{source}">{_e(w[source])}</span></td>'
                f"<td>{_bar(share)}</td>"
                f'<td class="count">{failing[key]}/{len(graded)} · {share:.0%}</td></tr>'
            )
        parts.append(
            f'<h3>{_e(w["lab"])} {_e(lab)} <span class="note">({len(graded)} {_e(w["graded"])})'
            f'</span></h3><table class="bars" data-lab="{_e(lab)}"><tbody>{"".join(lines)}'
            "</tbody></table>"
        )
    return "".join(parts)


def _heat(records: Sequence[GradedLab], labs: list[str], w: dict[str, str]) -> str:
    counts: Counter[tuple[str, str]] = Counter()
    for record in records:
        for identifier in dict.fromkeys(record.misconceptions):
            counts[(identifier, record.lab)] += 1
    if not counts:
        return f'<p class="note" id="heat-none">{_e(w["heat_none"])}</p>'
    ids = sorted({i for i, _ in counts}, key=lambda i: (-sum(counts[(i, lab)] for lab in labs), i))
    top = max(counts.values())
    cell, left, head = 54, 16 + 8 * max(len(i) for i in ids), 28
    width, height = left + cell * len(labs) + 10, head + cell * len(ids) + 10
    out = [
        f'<svg id="heatmap" width="{width}" height="{height}" role="img"'
        f' aria-label="{_e(w["heat_title"])}" font-size="13">'
    ]
    for column, lab in enumerate(labs):
        x = left + column * cell + cell / 2
        out.append(f'<text x="{x}" y="18" text-anchor="middle">{_e(lab)}</text>')
    for line, identifier in enumerate(ids):
        y = head + line * cell
        out.append(
            f'<text x="{left - 8}" y="{y + cell / 2 + 4}" text-anchor="end"'
            f' font-family="monospace">{_e(identifier)}</text>'
        )
        for column, lab in enumerate(labs):
            n = counts[(identifier, lab)]
            strength = n / top
            fill = f"rgba(213,94,0,{0.12 + 0.88 * strength:.2f})" if n else "#f4f4f4"
            x = left + column * cell
            out.append(
                f'<rect class="heat-cell" data-misconception="{_e(identifier)}"'
                f' data-lab="{_e(lab)}" data-count="{n}" x="{x + 2}" y="{y + 2}"'
                f' width="{cell - 4}" height="{cell - 4}" rx="4" fill="{fill}"/>'
            )
            if n:
                colour = "#fff" if strength > 0.55 else "#222"
                out.append(
                    f'<text x="{x + cell / 2}" y="{y + cell / 2 + 5}" text-anchor="middle"'
                    f' fill="{colour}" font-weight="bold">{n}</text>'
                )
    out.append("</svg>")
    return "".join(out)


def _stuck(records: Sequence[GradedLab], w: dict[str, str], lang: str) -> str:
    stuck = [r for r in records if r.graded and not r.passed]
    if not stuck:
        return f'<p class="note">{_e(w["stuck_none"])}</p>'
    lines = []
    for record in sorted(stuck, key=lambda r: (r.student, r.lab)):
        failed = [row for row in record.rows if not row.passed]
        chapter_first = next((r for r in failed if r.source == "chapter"), None)
        lead = next((r for r in failed if r.key == record.lead), None)
        first = lead or chapter_first or (failed[0] if failed else None)  # the table's first
        lines.append(
            f'<tr class="stuck"><td>{_e(record.student)}</td><td>{_e(record.lab)}</td>'
            f'<td class="count">{len(failed)}/{len(record.rows)}</td>'
            f"<td>{_e(first.behaviour(lang)) if first else _e(w['none'])}</td>"
            f"<td>{_e(', '.join(record.misconceptions) or w['none'])}</td>"
            f'<td class="hint">{_e(record.hint(lang) or w["none"])}</td>'
            f"<td>{_e(record.status)}</td></tr>"
        )
    return (
        f'<table id="stuck"><thead><tr><th>{_e(w["student"])}</th><th>{_e(w["lab"])}</th>'
        f"<th>{_e(w['failed_rows'])}</th><th>{_e(w['first_failed'])}</th>"
        f"<th>{_e(w['misconceptions'])}</th><th>{_e(w['hint'])}</th><th>{_e(w['status'])}</th>"
        f"</tr></thead><tbody>{''.join(lines)}</tbody></table>"
    )


def _problems(records: Sequence[GradedLab], w: dict[str, str]) -> str:
    bad = [r for r in records if not r.graded]
    if not bad:
        return f'<p class="note">{_e(w["problems_none"])}</p>'
    lines = "".join(
        f'<tr class="problem"><td>{_e(r.student)}</td><td>{_e(r.lab)}</td>'
        f'<td>{_e(r.status)}</td><td class="reason">{_e(r.reason)}</td>'
        f'<td class="note">{_e(r.file)}</td></tr>'
        for r in sorted(bad, key=lambda r: (r.student, r.lab))
    )
    return (
        f'<table id="problems"><thead><tr><th>{_e(w["student"])}</th><th>{_e(w["lab"])}</th>'
        f"<th>{_e(w['status'])}</th><th>{_e(w['reason'])}</th><th>{_e(w['file'])}</th></tr>"
        f"</thead><tbody>{lines}</tbody></table>"
    )


def _lab_order(lab: str) -> tuple[int, str]:
    head, _, tail = lab.partition(".")
    return (0, f"{int(head):04d}.{int(tail):04d}") if (head + tail).isdigit() else (1, lab)


def _seeds(records: Sequence[GradedLab], lang: str) -> str:
    """The seeds the random rows drew from (for the lecturer only: ``--seed N`` replays)."""
    seeds = sorted({r.seed for r in records if r.seed is not None})
    if not seeds:
        return ""
    shown = ", ".join(str(seed) for seed in seeds)
    if lang == "zh":
        return f'<p class="note">随机用例的种子：{shown}（ctxlab grade --seed N 可重现）</p>'
    return f'<p class="note">Seed of the random rows: {shown} (ctxlab grade --seed N replays)</p>'


def render(records: Sequence[GradedLab], language: str = "zh") -> str:
    """The class report of ``records`` as one HTML page (``language``: ``zh`` or ``en``)."""
    w = _WORDS["zh" if language == "zh" else "en"]
    lang = "zh" if language == "zh" else "en"
    labs = sorted({r.lab for r in records}, key=_lab_order)
    students = {r.student for r in records}
    passed = sum(r.passed for r in records)
    graded = sum(r.graded for r in records)
    stats = (
        f'<div class="stats"><div class="stat"><b>{len(students)}</b>{_e(w["students"])}</div>'
        f'<div class="stat"><b>{len(records)}</b>{_e(w["pairs"])}</div>'
        f'<div class="stat"><b style="color:{_GREEN}">{passed}</b>{_e(w["passed"])}</div>'
        f'<div class="stat"><b style="color:{_RED}">{graded - passed}</b>{_e(w["not_passed"])}'
        f'</div><div class="stat"><b style="color:{_GREY}">{len(records) - graded}</b>'
        f"{_e(w['not_graded'])}</div></div>"
    )
    html_lang = "zh-CN" if lang == "zh" else "en"
    return (
        f'<!DOCTYPE html>\n<html lang="{html_lang}"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(w['title'])}</title><style>{_CSS}</style></head><body>"
        f'<h1>{_e(w["title"])}</h1><p class="sub">{_e(w["subtitle"])}</p>{stats}'
        f"{_seeds(records, lang)}"
        f'<h2 id="s-glance">{_e(w["glance"])}</h2>{_glance(records, labs, w)}'
        f'<h2 id="s-rows">{_e(w["rows_title"])}</h2><p class="note">{_e(w["rows_note"])}</p>'
        f"{_rows_section(records, labs, w, lang)}"
        f'<h2 id="s-heat">{_e(w["heat_title"])}</h2><p class="note">{_e(w["heat_note"])}</p>'
        f"{_heat(records, labs, w)}"
        f'<h2 id="s-stuck">{_e(w["stuck_title"])}</h2><p class="note">{_e(w["stuck_note"])}</p>'
        f"{_stuck(records, w, lang)}"
        f'<h2 id="s-problems">{_e(w["problems_title"])}</h2>{_problems(records, w)}'
        "</body></html>\n"
    )
