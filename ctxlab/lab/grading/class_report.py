"""The class report of ``ctxlab grade``: ``report.html``, one file that opens offline.

:func:`render` fills ``templates/class_report.html.j2`` (Jinja2, imported lazily) from the
graded records: the class at a glance, the share failing each row, misconceptions × labs,
who is stuck where, what could not be graded; inline CSS and SVG, no script.

:func:`cell` makes every text cell of ``grades.csv``, ``rows.csv`` and this report inert for
a spreadsheet (OWASP, CSV injection: a leading ``=``, ``+``, ``-``, ``@``, tab or CR gets a
``'``); :func:`shown` writes bidirectional control characters as ``\\u202e``.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Sequence
from importlib.resources import files
from typing import TYPE_CHECKING, Final

from ctxlab.lab.grading.usage import GradingUsageError

if TYPE_CHECKING:
    from ctxlab.lab.grading.graded import GradedLab, GradedRow

__all__ = ["cell", "render", "shown"]

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


def _lab_order(lab: str) -> tuple[int, str]:
    head, _, tail = lab.partition(".")
    return (0, f"{int(head):04d}.{int(tail):04d}") if (head + tail).isdigit() else (1, lab)


def _bars(records: Sequence[GradedLab], lab: str) -> tuple[int, list[tuple[GradedRow, int]]]:
    """How many students of ``lab`` were graded; each row (in first-seen order) with how
    many of them failed it."""
    graded = [r for r in records if r.lab == lab and r.graded]
    rows: dict[str, GradedRow] = {}
    failing: Counter[str] = Counter()
    for record in graded:
        for row in record.rows:
            rows.setdefault(row.key, row)
            failing[row.key] += not row.passed
    return len(graded), [(row, failing[key]) for key, row in rows.items()]


def _first_failed(record: GradedLab) -> GradedRow | None:
    """The failed row the student's table opens with (else the first chapter row failed)."""
    failed = [row for row in record.rows if not row.passed]
    lead = next((row for row in failed if row.key == record.lead), None)
    chapter = next((row for row in failed if row.source == "chapter"), None)
    return lead or chapter or (failed[0] if failed else None)


def _inert(value: object) -> object:
    """What the template writes: markup as it is, anything else inert (:func:`cell`) and
    HTML-escaped."""
    from markupsafe import Markup

    return value if isinstance(value, Markup) else Markup(html.escape(cell(str(value))))


def render(records: Sequence[GradedLab], language: str = "zh") -> str:
    """The class report of ``records`` as one HTML page (``language``: ``zh`` or ``en``);
    a :class:`GradingUsageError` when Jinja2 is not installed."""
    try:
        import jinja2
    except ImportError:
        raise GradingUsageError(
            "report.html is made with Jinja2, which is not installed: pip install jinja2"
            " (it comes with 'ctxlab[grade]' and 'ctxlab[lab]')",
            subject="jinja2",
        ) from None
    source = files(__package__).joinpath("templates/class_report.html.j2")
    environment = jinja2.Environment(
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=_inert,
    )
    template = environment.from_string(source.read_text(encoding="utf-8"))
    labs = sorted({r.lab for r in records}, key=_lab_order)
    counts: Counter[tuple[str, str]] = Counter(
        (identifier, r.lab) for r in records for identifier in dict.fromkeys(r.misconceptions)
    )
    ids = sorted({i for i, _ in counts}, key=lambda i: (-sum(counts[(i, b)] for b in labs), i))
    heat = {"ids": ids, "counts": counts, "top": max(counts.values(), default=0),
            "width": max(map(len, ids), default=0)}  # fmt: skip
    graded = [r for r in records if r.graded]
    return template.render(
        lang="zh" if language == "zh" else "en",
        records=records,
        labs=labs,
        students=sorted({r.student for r in records}),
        by={(r.student, r.lab): r for r in records},
        passed=sum(r.passed for r in records),
        graded=len(graded),
        seeds=sorted({r.seed for r in records if r.seed is not None}),
        bars=[(lab, *_bars(records, lab)) for lab in labs if _bars(records, lab)[0]],
        heat=heat if counts else None,
        stuck=[
            (r, sum(not row.passed for row in r.rows), _first_failed(r))
            for r in sorted(graded, key=lambda r: (r.student, r.lab))
            if not r.passed
        ],
        problems=sorted((r for r in records if not r.graded), key=lambda r: (r.student, r.lab)),
    )
