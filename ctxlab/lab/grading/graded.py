"""One graded (student, lab) of ``ctxlab grade`` (spec §11), and what is written of a class.

:class:`GradedLab` is the one record from a submission to every output, carried as JSON
(``asdict``, :meth:`GradedLab.from_json`) between the grading processes and through the
cache. :func:`write_outputs` writes ``grades.csv``, ``rows.csv``, Gradescope's
``results.json`` per (student, lab) and ``report.html`` (:func:`render`, from
``templates/class_report.html.j2``: inline CSS and SVG, no script); :func:`write_bundle`, the
Gradescope bundle (``gradescope/``). Every text cell is inert for a spreadsheet (:func:`cell`,
OWASP's advice against CSV injection), bidirectional controls shown escaped (:func:`shown`).
"""

from __future__ import annotations

import csv
import html
import json
import re
import shutil
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ctxlab.lab.grading.drawn import is_random
from ctxlab.lab.grading.report import TEXTS
from ctxlab.lab.grading.submissions import KEYWORDS, LabSource
from ctxlab.lab.grading.text import Text
from ctxlab.lab.grading.usage import GradingUsageError

if TYPE_CHECKING:
    from ctxlab.lab.grading.misconceptions import Misconception
    from ctxlab.lab.grading.report import CheckResult, LabReport
    from ctxlab.lab.grading.sandbox import GradeOutcome


def _tuples(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` with its misconceptions as a tuple (JSON writes a list)."""
    return {**data, "misconceptions": tuple(data.get("misconceptions", ()))}


def _in(language: str, en: str, zh: str) -> str:
    return (zh if language == "zh" else "") or en


@dataclass(frozen=True)
class GradedRow:
    """One row of a graded lab (``source``: ``chapter`` or ``ctxlab``); ``misconceptions``:
    the ids matched when it failed; ``folded``: it fails with the row the table opens with."""

    key: str
    source: str
    passed: bool
    behaviour_en: str = ""
    behaviour_zh: str = ""
    detail_en: str = ""
    detail_zh: str = ""
    misconceptions: tuple[str, ...] = ()
    folded: bool = False

    def behaviour(self, language: str) -> str:
        return _in(language, self.behaviour_en, self.behaviour_zh)

    def detail(self, language: str) -> str:
        return _in(language, self.detail_en, self.detail_zh)


@dataclass(frozen=True)
class GradedLab:
    """One graded (student, lab): ``status`` (``ok``, ``timeout``, ``crashed``, ``refused``,
    ``invalid``) and ``reason``; the counts of the chapter's rows and ctxlab's extras; the
    misconceptions matched, most likely first; the hint the student would see first; the
    key of the row the table opens with (``lead``); the rows (none when no check ran)."""

    student: str
    lab: str
    file: str = ""
    status: str = "ok"
    reason: str = ""
    passed: bool = False
    chapter_passed: int = 0
    chapter_total: int = 0
    extras_passed: int = 0
    extras_total: int = 0
    misconceptions: tuple[str, ...] = ()
    hint_en: str = ""
    hint_zh: str = ""
    lead: str = ""
    function: str = ""
    rows: tuple[GradedRow, ...] = ()
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    seed: int | None = None

    @property
    def graded(self) -> bool:
        """Did the checks run (a report with rows), whatever the status?"""
        return bool(self.rows)

    def hint(self, language: str) -> str:
        return _in(language, self.hint_en, self.hint_zh)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GradedLab:
        """A record from its JSON (a field the JSON lacks takes its default)."""
        rows = tuple(GradedRow(**_tuples(row)) for row in data.get("rows", ()))
        return cls(**{**_tuples(data), "rows": rows})

    @classmethod
    def ungraded(cls, source: LabSource, status: str, reason: str) -> GradedLab:
        """``source`` with no report: ``status`` and ``reason`` say why."""
        function = KEYWORDS.get(source.lab, "")
        return cls(source.student, source.lab, str(source.path), status, reason, function=function)

    @classmethod
    def of(cls, source: LabSource, outcome: GradeOutcome) -> GradedLab:
        """The record of ``source`` graded in the sandbox."""
        base = replace(
            cls.ungraded(source, outcome.status, outcome.reason),
            seconds=round(float(outcome.seconds), 3),
            cpu_seconds=round(float(outcome.cpu_seconds), 3),
        )
        report = outcome.report
        if report is None:
            return base
        chapter, extras = report.chapter_results, report.extra_results
        matched = report.matches()
        lead, folded_rows = report.lead
        folded = {row.key for row in folded_rows}
        hint = _hint(report, matched)
        return replace(
            base,
            passed=bool(report.passed),
            chapter_passed=sum(r.passed for r in chapter),
            chapter_total=len(chapter),
            extras_passed=sum(r.passed for r in extras),
            extras_total=len(extras),
            misconceptions=tuple(report.misconceptions),
            hint_en=hint.en,
            hint_zh=hint.zh,
            lead=lead.key if lead is not None else "",
            function=report.function,
            rows=tuple(_row(r, matched, folded) for r in report.results),
            seed=report.seed,
        )


def _row(r: CheckResult, matched: Sequence[Misconception], folded: set[str]) -> GradedRow:
    ids = () if r.passed else tuple(item.id for item in matched if r.key in item.signature)
    texts = (r.behaviour_en, r.behaviour_zh, r.detail_en, r.detail_zh)
    return GradedRow(r.key, r.source, bool(r.passed), *texts, ids, r.key in folded)


def _hint(report: LabReport, matched: Sequence[Misconception]) -> Text:
    """The hint a student stuck on this report sees first: the likeliest misconception's,
    else the leading failed row's behaviour; empty when nothing failed."""
    from ctxlab.lab.grading.misconceptions import hint_lines

    if matched:
        return hint_lines(matched[0], 1, passed=report.passed)  # as the notebook's first rung
    first = report.lead[0]
    if first is None:
        return Text("", "")
    return Text(f"Start with this rule: {first.behaviour_en}", f"先看这一条：{first.behaviour_zh}")


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
    """The failed row the student's table opens with (:meth:`GradedLab.of` names it)."""
    return next((row for row in record.rows if row.key == record.lead), None)


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
        bars=[(lab, *bars) for lab in labs if (bars := _bars(records, lab))[0]],
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


def write_combined(path: Path, results: list[dict[str, Any]]) -> None:
    """One ``results.json`` of ``results`` at ``path`` (none: no file was found)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    empty = "No .ipynb or .py file was found in the submission."
    combined = {"score": 0.0, "output": empty, "tests": []}
    if results:
        combined = {
            "score": sum(r["score"] for r in results),
            "max_score": sum(r["max_score"] for r in results),
            "execution_time": round(sum(r["execution_time"] for r in results), 2),
            "output": "\n\n".join(r["output"] for r in results),
            "visibility": "visible",
            "stdout_visibility": "hidden",
            "tests": [test for r in results for test in r["tests"]],
            "extra_data": {"labs": [r["extra_data"] for r in results]},
        }
    _write_json(path, combined)


def _write_json(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def write_bundle(folder: Path, lab: str | None, language: str) -> list[Path]:
    """Write the Gradescope autograder bundle into ``folder`` (zip its files)."""
    import ctxlab

    template = Path(__file__).resolve().parent / "gradescope"
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name in ("setup.sh", "run_autograder", "README.md"):
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
    """Everything ``ctxlab grade`` writes of ``records`` into ``outdir`` (``combined``: also
    one Gradescope ``results.json`` of them all; ``held_back``: a random row's visibility)."""
    _write_csv(outdir / "grades.csv", GRADES_COLUMNS, map(vars, records))
    rows = (
        {**vars(row), "student": r.student, "lab": r.lab, "behaviour": row.behaviour(language),
         "detail": row.detail(language)}
        for r in records
        for row in r.rows
    )  # fmt: skip
    _write_csv(outdir / "rows.csv", ROWS_COLUMNS, rows)
    folder = outdir / "gradescope"  # made afresh; a name keeps letters, digits and ``.-_``
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir()
    results = [gradescope_result(record, language, held_back) for record in records]
    for record, result in zip(records, results, strict=True):
        names = (record.student, record.lab)
        name = "-".join((_UNSAFE.sub("_", t).strip("._") or "_")[:100] for t in names)
        _write_json(folder / f"{name}.json", result)
    if combined is not None:
        write_combined(combined, results)
    (outdir / "report.html").write_text(render(records, language), encoding="utf-8")
