"""What ``ctxlab grade`` writes from its records (spec §11), every text cell inert.

:func:`write_outputs` writes ``grades.csv``, ``rows.csv``, Gradescope's ``results.json`` per
(student, lab) (:func:`gradescope_result`) and ``report.html`` (:func:`render`, from
``templates/class_report.html.j2``: Jinja2, imported lazily; inline CSS and SVG, no script).
:func:`write_bundle` writes the Gradescope bundle that runs ``ctxlab grade`` there
(``gradescope/``). :func:`cell` makes a text cell inert for a spreadsheet (OWASP, CSV
injection: a leading ``=``, ``+``, ``-``, ``@``, tab or CR gets a ``'``); :func:`shown` writes
bidirectional control characters as ``\\u202e``.
"""

from __future__ import annotations

import csv
import html
import json
import re
import shutil
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any, Final

from ctxlab.lab.grading.drawn import is_random
from ctxlab.lab.grading.graded import GradedLab, GradedRow
from ctxlab.lab.grading.report import TEXTS
from ctxlab.lab.grading.usage import GradingUsageError

__all__ = [
    "GRADES_COLUMNS",
    "ROWS_COLUMNS",
    "cell",
    "gradescope_result",
    "render",
    "shown",
    "write_bundle",
    "write_combined",
    "write_outputs",
]

#: The columns of ``grades.csv``, in order.
GRADES_COLUMNS: Final = (
    *("student", "lab", "passed", "chapter_passed", "chapter_total", "extras_passed"),
    *("extras_total", "misconceptions", "seconds", "status", "reason", "file", "seed"),
)
#: The columns of ``rows.csv``: one line per student × lab × row.
ROWS_COLUMNS: Final = (
    *("student", "lab", "key", "source", "passed", "behaviour", "detail", "misconceptions"),
)
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


_UNSAFE = re.compile(r"[^\w.\-]+")


def gradescope_result(
    record: GradedLab, language: str = "zh", held_back: str = "after_published"
) -> dict[str, Any]:
    """One (student, lab) as Gradescope's ``results.json``: a test per row (a chapter row 1
    point, a ctxlab row 0) tagged with its source and misconception ids, the leading row
    first; a random row held back (``held_back``: its visibility)."""
    words = {key: pair[language == "zh"] for key, pair in TEXTS["gradescope"].items()}
    lab = record.lab
    tests = []
    rows = sorted(enumerate(record.rows, start=1), key=lambda pair: pair[1].key != record.lead)
    for number, row in rows:
        points = 1.0 if row.source == "chapter" else 0.0
        output = row.detail(language)
        if row.folded and not is_random(record.lead):  # said once, at the (visible) lead
            output = words["folded"]
        tests.append(
            {
                "name": shown(f"{words['lab']} {lab} · {row.behaviour(language)}"),
                "number": f"{lab}.{number}",
                "score": points if row.passed else 0.0,
                "max_score": points,
                "status": "passed" if row.passed else "failed",
                "output": shown(output),
                "tags": [row.source, *row.misconceptions],
                "visibility": held_back if is_random(row.key) else "visible",
            }
        )
    verdict = words["passed"] if record.passed else words["failed"]
    lines = [
        f"{words['lab']} {lab} · {record.function}: {verdict}"
        f" — {words['chapter']} {record.chapter_passed}/{record.chapter_total},"
        f" {words['extras']} {record.extras_passed}/{record.extras_total}"
    ]
    if record.status != "ok":
        lines.append(f"{words['status']} ({record.status}): {record.reason}")
    hint = record.hint(language)
    if hint:
        lines.append(f"{words['hint']}: {hint}")
    if any(is_random(row.key) and not row.passed for row in record.rows):
        lines.append(words["held_back"])
    return {
        "score": float(record.chapter_passed),
        "max_score": float(record.chapter_total),
        "execution_time": round(float(record.seconds), 2),
        "output": shown("\n".join(lines)),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {
            "student": shown(record.student),
            "lab": shown(lab),
            "status": record.status,
            "passed": record.passed,
            "misconceptions": list(record.misconceptions),
        },
    }


def _write_results(
    folder: Path,
    records: Sequence[GradedLab],
    language: str,
    held_back: str = "after_published",
    combined: Path | None = None,
) -> None:
    """``folder/<student>-<lab>.json`` for each record (``folder`` made afresh; a name keeps
    letters, digits and ``.-_``) and, when ``combined`` is given, one of them all there."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir()
    results = []
    for record in records:
        results.append(gradescope_result(record, language, held_back))
        names = (record.student, record.lab)
        name = "-".join((_UNSAFE.sub("_", t).strip("._") or "_")[:100] for t in names)
        _write_json(folder / f"{name}.json", results[-1])
    if combined is not None:
        write_combined(combined, results, "No lab was found in the submission.")


def write_combined(path: Path, results: list[dict[str, Any]], empty: str) -> None:
    """One ``results.json`` of ``results`` at ``path`` (``empty``: its output when none)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not results:
        _write_json(path, {"score": 0.0, "output": empty, "tests": []})
        return
    _write_json(
        path,
        {
            "score": sum(r["score"] for r in results),
            "max_score": sum(r["max_score"] for r in results),
            "execution_time": round(sum(r["execution_time"] for r in results), 2),
            "output": "\n\n".join(r["output"] for r in results),
            "visibility": "visible",
            "stdout_visibility": "hidden",
            "tests": [test for r in results for test in r["tests"]],
            "extra_data": {"labs": [r["extra_data"] for r in results]},
        },
    )


def _write_json(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


_BUNDLE_FILES: Final = ("setup.sh", "run_autograder", "README.md")


def write_bundle(folder: Path, lab: str | None, language: str) -> list[Path]:
    """Write the Gradescope autograder bundle into ``folder`` (zip its files)."""
    import ctxlab

    template = Path(__file__).resolve().parent / "gradescope"
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name in _BUNDLE_FILES:
        text = (template / name).read_text(encoding="utf-8")
        text = text.replace("@CTXLAB_VERSION@", ctxlab.__version__)
        text = text.replace("@CTXLAB_LAB@", lab or "")
        text = text.replace("@CTXLAB_LANGUAGE@", language)
        target = folder / name
        target.write_text(text, encoding="utf-8", newline="\n")
        if name != "README.md":
            target.chmod(0o755)
        written.append(target)
    return written


def _write_csv(path: Path, columns: Sequence[str], lines: Iterable[Mapping[str, Any]]) -> None:
    """``columns`` of ``lines``, one formatter for every cell: a flag as ``true``/``false``,
    a list joined by ``;``, seconds with two decimals, text made inert (:func:`cell`);
    ctxlab's own counts (never negative) as they are."""

    def value(v: object) -> object:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, float):
            return f"{v:.2f}"
        if isinstance(v, tuple):
            v = ";".join(v)
        return "" if v is None else cell(v) if isinstance(v, str) else v

    with path.open("w", encoding="utf-8", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(columns)
        writer.writerows([value(line[c]) for c in columns] for line in lines)


def write_outputs(
    outdir: Path,
    records: list[GradedLab],
    language: str,
    combined: Path | None,
    held_back: str = "after_published",
) -> None:
    _write_csv(outdir / "grades.csv", GRADES_COLUMNS, map(vars, records))
    rows = (
        {**vars(row), "student": r.student, "lab": r.lab, "behaviour": row.behaviour(language),
         "detail": row.detail(language)}
        for r in records
        for row in r.rows
    )  # fmt: skip
    _write_csv(outdir / "rows.csv", ROWS_COLUMNS, rows)
    _write_results(outdir / "gradescope", records, language, held_back, combined)
    (outdir / "report.html").write_text(render(records, language), encoding="utf-8")
