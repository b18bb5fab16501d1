"""``ctxlab grade`` grades what the student handed in (issue 34, item 4).

A submission that is or holds a symbolic link is refused, never followed; every text cell of
``grades.csv``, ``rows.csv`` and ``report.html`` that a spreadsheet would read as a formula is
made inert (OWASP, CSV injection); bidirectional control characters in names are shown escaped
in every output.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

import grade_class as gc
from ctxlab.lab.grading.graded import GradedLab, cell, write_outputs
from ctxlab.lab.grading.submissions import Submission, collect, lab_sources

pytestmark = pytest.mark.cli

REPO = Path(__file__).resolve().parent.parent
INSTRUCTOR = REPO / "notebooks" / "en" / "instructor" / "11.2-interaction-groups.ipynb"
FORMULAS = ('=HYPERLINK("x")', "+cmd|' /C calc'!A0", "@SUM(1)", "-2+3")
BIDI = "abc\u202etxt.exe\u2066x\u200f\u061c"


def _link(link: Path, target: Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    try:
        link.symlink_to(target, target_is_directory=target.is_dir())
    except (OSError, NotImplementedError) as error:  # Windows without the privilege
        pytest.skip(f"this platform cannot make a symbolic link here: {error}")


def _grade(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ctxlab", "grade", *map(str, args)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        cwd=REPO,
    )


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream))


def test_a_link_to_the_instructor_edition_is_refused_not_graded(tmp_path: Path) -> None:
    root = tmp_path / "class"
    (root / "copy").mkdir(parents=True)
    shutil.copy(INSTRUCTOR, root / "copy" / INSTRUCTOR.name)  # the same file, handed in
    _link(root / "mallory" / INSTRUCTOR.name, INSTRUCTOR)
    _link(root / "deep" / "a" / "b" / "lab.ipynb", INSTRUCTOR)
    gc.write_notebook(root / "deep" / "mine.ipynb", gc.notebook("11.2", "en", gc.wrong("11.2")))
    _link(root / "folder", root / "copy")  # a student folder that is a link
    _link(root / "flat.ipynb", INSTRUCTOR)  # a file of the class folder that is a link
    out = tmp_path / "out"
    done = _grade(root, "--out", out, "--jobs", "1", "--language", "en")
    assert done.returncode == 0, done.stderr
    grades = {line["student"]: line for line in _csv(out / "grades.csv")}
    assert sorted(grades) == ["copy", "deep", "flat", "folder", "mallory"]
    assert (grades["copy"]["status"], grades["copy"]["passed"]) == ("ok", "true")
    where = {
        "mallory": root / "mallory" / INSTRUCTOR.name,
        "deep": root / "deep" / "a" / "b" / "lab.ipynb",
        "folder": root / "folder",
        "flat": root / "flat.ipynb",
    }
    for student, link in where.items():
        line = grades[student]
        assert (line["status"], line["passed"]) == ("refused", "false"), line
        assert line["reason"].startswith(f"{link} is a symbolic link"), line["reason"]
        assert "never follows a link" in line["reason"]
    assert f"mallory  ?  refused: {where['mallory']} is a symbolic link" in done.stdout
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "is a symbolic link" in page
    result = json.loads((out / "gradescope" / "mallory-_.json").read_text(encoding="utf-8"))
    assert result["extra_data"]["status"] == "refused" and result["score"] == 0.0


def test_a_link_is_refused_before_it_is_read(tmp_path: Path) -> None:
    link = tmp_path / "late.ipynb"
    _link(link, INSTRUCTOR)  # made a link after collect() named the file
    (source,) = lab_sources(Submission("late", link))
    assert source.status == "refused" and source.problem.startswith(f"{link} is a symbolic")
    assert source.code == ""
    assert collect([link])[0].refused == ""  # a link the lecturer names is the lecturer's


def test_hidden_folders_are_not_read_so_a_link_there_refuses_nothing(tmp_path: Path) -> None:
    student = tmp_path / "class" / "ana"
    gc.write_notebook(student / "lab.ipynb", gc.notebook("11.2", "en", gc.wrong("11.2")))
    _link(student / ".ipynb_checkpoints" / "lab.ipynb", INSTRUCTOR)
    (submission,) = collect([tmp_path / "class"])
    assert (submission.refused, submission.path) == ("", student / "lab.ipynb")


def _record(student: str, file: str = "") -> GradedLab:
    row = {"key": "-k", "source": "chapter", "passed": False, "behaviour_en": "=rule",
           "behaviour_zh": "=规则", "detail_en": "@detail", "detail_zh": "@细节",
           "misconceptions": []}  # fmt: skip
    return GradedLab.from_json({"student": student, "lab": "11.2", "status": "ok", "reason": "+why",
            "file": file or f"{student}.ipynb", "passed": False, "chapter_passed": 0,
            "chapter_total": 1, "extras_passed": 0, "extras_total": 0, "misconceptions": [],
            "hint_en": "", "hint_zh": "", "function": "group_interactions", "rows": [row],
            "seconds": 0.5, "cpu_seconds": 0.5})  # fmt: skip


def test_every_text_cell_that_starts_a_formula_is_inert(tmp_path: Path) -> None:
    records = [_record(name) for name in (*FORMULAS, "\tTab", "\rCR", "plain")]
    write_outputs(tmp_path, records, "en", None)
    grades = _csv(tmp_path / "grades.csv")
    names = [line["student"] for line in grades]
    assert names == [*(f"'{n}" for n in FORMULAS), "'\tTab", "'\rCR", "plain"]
    for line in grades:
        assert line["reason"] == "'+why" and line["file"].startswith(("'", "plain"))
        numbers = (line["chapter_passed"], line["chapter_total"], line["seconds"])
        assert numbers == ("0", "1", "0.50")  # ctxlab's own numbers, as written
    rows = _csv(tmp_path / "rows.csv")
    assert [line["student"] for line in rows] == names
    assert {(r["key"], r["behaviour"], r["detail"]) for r in rows} == {
        ("'-k", "'=rule", "'@detail")
    }
    raw = (tmp_path / "grades.csv").read_text(encoding="utf-8")
    assert '"\'=HYPERLINK(""x"")"' in raw  # quoted as CSV wants, the quote kept inside
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "<th>&#x27;=HYPERLINK(&quot;x&quot;)</th>" in page
    assert "<td>&#x27;+cmd|&#x27; /C calc&#x27;!A0</td>" in page
    assert "<td>&#x27;@SUM(1)</td>" in page and "<td>&#x27;-2+3</td>" in page
    assert ">=HYPERLINK" not in page and ">+cmd" not in page and ">@SUM" not in page


def test_cell_keeps_what_is_no_formula() -> None:
    assert cell("alice") == "alice"
    assert cell(" =1") == " =1"  # only the first character decides
    assert cell("") == ""
    assert cell("-") == "'-"


def test_bidi_controls_in_names_are_shown_escaped_everywhere(tmp_path: Path) -> None:
    record = _record(BIDI, file=f"class/{BIDI}/lab.ipynb")
    record = replace(record, status="invalid", reason=f"{BIDI}: broken", rows=())
    write_outputs(tmp_path, [record], "en", tmp_path / "all.json")
    escaped = "abc\\u202etxt.exe\\u2066x\\u200f\\u061c"
    (line,) = _csv(tmp_path / "grades.csv")
    assert (line["student"], line["reason"]) == (escaped, f"{escaped}: broken")
    assert line["file"] == f"class/{escaped}/lab.ipynb"
    for path in tmp_path.rglob("*.*"):
        text = path.read_text(encoding="utf-8")
        for control in "\u202e\u2066\u200f\u061c":
            assert control not in text, path
    combined = json.loads((tmp_path / "all.json").read_text(encoding="utf-8"))
    assert combined["extra_data"]["labs"][0]["student"] == escaped
    assert escaped in (tmp_path / "report.html").read_text(encoding="utf-8")


def test_a_bidi_and_a_formula_name_through_ctxlab_grade(tmp_path: Path) -> None:
    root = tmp_path / "class"
    wrong = gc.notebook("11.2", "en", gc.wrong("11.2"))
    names = ['=HYPERLINK("x")', "@SUM(1)", "-2+3", BIDI]
    for name in names:
        gc.write_notebook(root / name / "lab.ipynb", wrong)
    out = tmp_path / "out"
    done = _grade(root, "--out", out, "--jobs", "1", "--language", "en")
    assert done.returncode == 0, done.stderr
    assert "\u202e" not in done.stdout and "abc\\u202etxt" in done.stdout
    students = sorted(line["student"] for line in _csv(out / "grades.csv"))
    assert students == sorted(["'=HYPERLINK(\"x\")", "'@SUM(1)", "'-2+3",
                               "abc\\u202etxt.exe\\u2066x\\u200f\\u061c"])  # fmt: skip
    assert {line["student"] for line in _csv(out / "rows.csv")} == set(students)
    for path in out.rglob("*.*"):
        if path.suffix != ".json" or path.parent.name == "gradescope":
            assert "\u202e" not in path.read_text(encoding="utf-8"), path
    assert os.listdir(out / "gradescope")
