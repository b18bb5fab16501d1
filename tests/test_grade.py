"""``ctxlab grade`` (spec §11, issue 26): a small class graded end to end from the command line.

The class is made of the labs' student editions as ``nbsource`` builds them, their build-it
cell filled in (right, wrong, a syntax error, deleted), plus a malformed notebook, a notebook
of an unknown lab and a Chinese edition; then what ``--out`` holds is read back: the CSV
columns and values, the Gradescope results, the report, the cache that lets a rerun skip
what did not change, and the Gradescope autograder bundle.
"""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import grade_class as gc
from ctxlab.lab.grading import behaviour_keys
from ctxlab.lab.grading.batch import Progress
from ctxlab.lab.grading.graded import (
    GRADES_COLUMNS,
    ROWS_COLUMNS,
    GradedLab,
    gradescope_result,
    render,
)
from ctxlab.lab.grading.report import CheckResult, LabReport
from ctxlab.lab.grading.sandbox import GradeOutcome
from ctxlab.lab.grading.submissions import KEYWORDS, LabSource, Submission, lab_sources
from ctxlab.lab.grading.usage import GradingUsageError

pytestmark = pytest.mark.cli

REPO = Path(__file__).resolve().parent.parent

#: The rows of Lab 11.2 (the chapter's and ctxlab's).
ROWS_11_2 = len(behaviour_keys("11.2"))


def grade(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ctxlab", "grade", *map(str, args)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        cwd=REPO,
        env=env,
    )


def _moved_import() -> dict[str, Any]:
    """11.2 right, but the build-it cell's import moved into a cell of its own above it."""
    code = gc.solution("11.2")
    line = "from ctxlab import InteractionError, InteractionGroup"
    assert line in code
    data = gc.notebook("11.2", "en", code.replace(line, ""))
    first = {"cell_type": "code", "id": "setup-1", "metadata": {}, "source": line,
             "outputs": [], "execution_count": None}  # fmt: skip
    data["cells"].insert(1, first)
    return data


def _without_build_it() -> dict[str, Any]:
    data = gc.notebook("11.2", "en", None)
    data["cells"] = [
        c for c in data["cells"] if "ctxlab-build-it" not in c["metadata"].get("tags", [])
    ]
    return data


def _unknown_lab() -> dict[str, Any]:
    data = gc.notebook("11.2", "en", gc.solution("11.2"))
    for cell in data["cells"]:
        tags = cell["metadata"].get("tags", [])
        cell["metadata"]["tags"] = [
            "ctxlab-lab-11.9" if t == "ctxlab-lab-11.2" else t for t in tags
        ]
    data["metadata"]["ctxlab"]["lab"] = "11.9"
    return data


@pytest.fixture(scope="module")
def klass(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("class") / "class"
    nb2, nb3 = gc.notebook_name("11.2"), gc.notebook_name("11.3")
    gc.write_notebook(root / "alice" / nb2, gc.notebook("11.2", "en", gc.solution("11.2")))
    gc.write_notebook(root / "bob" / nb2, gc.notebook("11.2", "en", gc.wrong("11.2")))
    chen = gc.notebook("11.3", "zh", gc.solution("11.3", "zh"))
    gc.write_notebook(root / "chen" / nb3, chen, lines=True)  # as JupyterLab saves it
    broken = gc.solution("11.2").replace(
        "def group_interactions(entries):", "def group_interactions(entries)"
    )
    gc.write_notebook(root / "dana" / nb2, gc.notebook("11.2", "en", broken))
    gc.write_notebook(root / "emil" / nb2, _without_build_it())
    (root / "fay").mkdir()
    (root / "fay" / "lab.ipynb").write_text('{"cells": [', encoding="utf-8")
    gc.write_notebook(root / "gus" / "lab.ipynb", _unknown_lab())
    gc.write_notebook(root / "hana" / nb2, _moved_import())
    gc.write_notebook(root / "ines" / nb2, _as_jupyterlite_saves(gc.solution("11.2")), lines=True)
    return root


def _as_jupyterlite_saves(code: str) -> dict[str, Any]:
    """11.2 as JupyterLite downloads it: the Pyodide kernel, nbformat 4.4 (no cell ids)."""
    data = gc.notebook("11.2", "zh", code)
    data["nbformat_minor"] = 4
    data["metadata"]["kernelspec"] = {"name": "python", "display_name": "Python (Pyodide)",
                                      "language": "python"}  # fmt: skip
    for cell in data["cells"]:
        cell.pop("id", None)
    return data


@pytest.fixture(scope="module")
def graded(klass: Path) -> tuple[Path, subprocess.CompletedProcess[str]]:
    out = klass.parent / "out"
    done = grade(klass, "--out", out, "--jobs", "2", "--language", "en")
    return out, done


def _grades(out: Path) -> dict[str, dict[str, str]]:
    with (out / "grades.csv").open(encoding="utf-8", newline="") as stream:
        return {row["student"]: row for row in csv.DictReader(stream)}


def test_each_student_gets_one_line_with_status_and_reason(
    graded: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    out, done = graded
    assert done.returncode == 0, done.stderr
    grades = _grades(out)
    assert sorted(grades) == ["alice", "bob", "chen", "dana", "emil", "fay", "gus", "hana", "ines"]
    expect = {  # student: (lab, passed, status, words of the reason)
        "alice": ("11.2", "true", "ok", ""),
        "bob": ("11.2", "false", "ok", ""),
        "chen": ("11.3", "true", "ok", ""),  # the Chinese edition
        "hana": ("11.2", "true", "ok", ""),  # its import comes from an earlier cell
        "ines": ("11.2", "true", "ok", ""),  # downloaded from JupyterLite
        "dana": ("11.2", "false", "invalid", "syntax error"),
        "emil": ("11.2", "false", "invalid", "missing build-it cell"),
        "fay": ("?", "false", "invalid", "malformed notebook"),
        "gus": ("11.9", "false", "invalid", "unknown lab"),
    }
    for student, (lab, passed, status, words) in expect.items():
        row = grades[student]
        assert (row["lab"], row["passed"], row["status"]) == (lab, passed, status), row
        assert words in row["reason"], row
        line = next(x for x in done.stdout.splitlines() if x.startswith(f"{student}  "))
        assert status in line or passed == "true", line
    assert "9 student·lab pairs" in done.stdout
    assert "ctxlab grade: 5/5 graded" in done.stderr  # the progress, as plain lines


def test_grades_csv_columns_and_values(
    graded: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    out, _ = graded
    with (out / "grades.csv").open(encoding="utf-8", newline="") as stream:
        reader = csv.DictReader(stream)
        assert tuple(reader.fieldnames or ()) == GRADES_COLUMNS
        lines = list(reader)
    for row in lines:
        assert row["passed"] in ("true", "false")
        assert row["status"] in ("ok", "timeout", "crashed", "refused", "invalid")
        float(row["seconds"])
        for column in ("chapter_passed", "chapter_total", "extras_passed", "extras_total"):
            assert int(row[column]) >= 0
    grades = _grades(out)
    alice, bob = grades["alice"], grades["bob"]
    total = int(alice["chapter_total"]) + int(alice["extras_total"])
    assert total == ROWS_11_2 and alice["chapter_passed"] == alice["chapter_total"]
    assert int(bob["chapter_passed"]) < int(bob["chapter_total"])
    assert grades["dana"]["chapter_total"] == "0"


def test_rows_csv_one_line_per_student_and_row(
    graded: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    out, _ = graded
    with (out / "rows.csv").open(encoding="utf-8", newline="") as stream:
        reader = csv.DictReader(stream)
        assert tuple(reader.fieldnames or ()) == ROWS_COLUMNS
        rows = list(reader)
    bob = [r for r in rows if r["student"] == "bob"]
    assert len(bob) == ROWS_11_2 and {r["source"] for r in bob} <= {"chapter", "ctxlab"}
    failed = [r for r in bob if r["passed"] == "false"]
    assert failed and all(r["detail"] for r in failed)
    assert not [r for r in rows if r["student"] == "dana"]  # not graded: no rows


def _check_gradescope_shape(data: dict[str, Any]) -> None:
    """The fields of Gradescope's autograder results.json that ctxlab writes."""
    assert isinstance(data["score"], float) and isinstance(data["max_score"], float)
    assert isinstance(data["output"], str) and data["visibility"] == "visible"
    for test in data["tests"]:
        assert set(test) == {"name", "number", "score", "max_score", "status", "output",
                             "tags", "visibility"}  # fmt: skip
        assert test["status"] in ("passed", "failed")
        assert isinstance(test["name"], str) and isinstance(test["output"], str)
        assert all(isinstance(tag, str) for tag in test["tags"])
        assert test["tags"][0] in ("chapter", "ctxlab")
        assert test["score"] == (test["max_score"] if test["status"] == "passed" else 0.0)
    assert data["score"] == sum(t["score"] for t in data["tests"])


def test_gradescope_results_per_student_and_lab(
    graded: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    out, _ = graded
    names = sorted(p.name for p in (out / "gradescope").iterdir())
    assert "alice-11.2.json" in names and "chen-11.3.json" in names and len(names) == 9
    alice = json.loads((out / "gradescope" / "alice-11.2.json").read_text(encoding="utf-8"))
    _check_gradescope_shape(alice)
    assert alice["score"] == alice["max_score"] > 0
    bob = json.loads((out / "gradescope" / "bob-11.2.json").read_text(encoding="utf-8"))
    _check_gradescope_shape(bob)
    assert bob["score"] < bob["max_score"]
    assert any(t["status"] == "failed" and t["output"] for t in bob["tests"])
    dana = json.loads((out / "gradescope" / "dana-11.2.json").read_text(encoding="utf-8"))
    _check_gradescope_shape(dana)
    assert dana["tests"] == [] and "syntax error" in dana["output"]


def test_report_html_is_one_offline_file(
    graded: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    out, _ = graded
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    for section in ("glance", "heatmap" if "heatmap" in page else "heat-none", "stuck", "problems"):
        assert f'id="{section}"' in page
    assert "http://" not in page and "https://" not in page and "<script" not in page
    assert 'data-lab="11.2"' in page and "bob" in page and "unknown lab" in page


def test_rerun_skips_what_did_not_change(klass: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = grade(klass, "--out", out, "--jobs", "2", "--language", "en")
    assert "(5 graded, 0 unchanged)" in first.stdout, first.stdout
    # a notebook run again (new outputs, same code) and an untouched class: nothing graded
    alice = klass / "alice" / gc.notebook_name("11.2")
    data = json.loads(alice.read_text(encoding="utf-8"))
    data["cells"][-1].setdefault("outputs", []).append(
        {"output_type": "stream", "name": "stdout", "text": "ran again\n"}
    )
    alice.write_text(json.dumps(data), encoding="utf-8")
    second = grade(klass, "--out", out, "--jobs", "2", "--language", "en")
    assert "(0 graded, 5 unchanged)" in second.stdout, second.stdout
    assert second.stdout.count("(unchanged, not graded again)") == 5
    assert _grades(out)["alice"]["passed"] == "true"
    # bob fixes his function: he alone is graded again
    bob = klass / "bob" / gc.notebook_name("11.2")
    gc.write_notebook(bob, gc.notebook("11.2", "en", gc.solution("11.2")))
    third = grade(klass, "--out", out, "--jobs", "2", "--language", "en")
    assert "(1 graded, 4 unchanged)" in third.stdout, third.stdout
    assert _grades(out)["bob"]["passed"] == "true"
    gc.write_notebook(bob, gc.notebook("11.2", "en", gc.wrong("11.2")))  # as the class was


def test_a_py_file_with_lab_and_hostile_files(tmp_path: Path) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "right.py").write_text(gc.solution("11.2"), encoding="utf-8")
    (folder / "killer.py").write_text(gc.hostile("kills-parent"), encoding="utf-8")
    (folder / "spinner.py").write_text(gc.hostile("spins"), encoding="utf-8")
    out = tmp_path / "out"
    done = grade(folder, "--lab", "11.2", "--out", out, "--jobs", "2", "--time-limit", "1")
    assert done.returncode == 0, done.stderr
    grades = _grades(out)
    assert grades["right"]["passed"] == "true"
    # The sandbox keeps the parent out of reach (a pid namespace with bubblewrap): the
    # attempt fails its rows, or, where it could reach, the child is gone; never a pass.
    assert grades["killer"]["status"] in ("ok", "crashed")  # the batch went on
    assert grades["killer"]["passed"] == "false"
    assert grades["spinner"]["status"] == "timeout" and grades["spinner"]["passed"] == "false"
    no_lab = grade(folder / "right.py", "--out", tmp_path / "out2", "--jobs", "1")
    assert "invalid: a .py file is graded for the lab given with --lab" in no_lab.stdout


@pytest.mark.parametrize("reply", ["", '{"student": "ann", "la'])
def test_a_grading_process_that_ends_without_a_record_costs_only_its_file(
    monkeypatch: pytest.MonkeyPatch, reply: str
) -> None:
    """A grading process that dies before it answers, or halfway through its line, costs
    that file (``crashed``); the next file gets a new process."""
    from ctxlab.lab.grading import batch

    script = f"import sys; sys.stdin.readline(); sys.stdout.write({reply!r}); sys.exit(3)"
    spawned: list[subprocess.Popen[str]] = []

    def spawn() -> subprocess.Popen[str]:
        pipe = subprocess.PIPE
        spawned.append(subprocess.Popen([sys.executable, "-c", script], stdin=pipe, stdout=pipe,
                                        encoding="utf-8", start_new_session=True))  # fmt: skip
        return spawned[-1]

    monkeypatch.setattr(batch, "_spawn", spawn)
    sources = [LabSource(name, "11.2", Path(f"{name}.ipynb"), "x = 1\n") for name in ("a", "b")]
    graded = list(batch._grade_all(sources, 1, 1.0, 7))
    assert [(s.student, r.student) for s, r in graded] == [("a", "a"), ("b", "b")]
    for _, record in graded:
        assert (record.status, record.passed, record.rows) == ("crashed", False, ())
        assert record.reason == "the grading process was killed while it ran this file"
    assert len(spawned) == 2 and all(p.poll() is not None for p in spawned)


def test_a_class_leaves_no_sandbox_folder_behind(klass: Path, tmp_path: Path) -> None:
    """Each grading process removes its folder of sandbox files (the stubbed copy of ctxlab
    the children import) when the batch is done with it."""
    temp = tmp_path / "temp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    done = grade(klass, "--out", tmp_path / "out", "--jobs", "2", "--lab", "11.2", env=env)
    assert done.returncode == 0, done.stderr
    assert not list(temp.glob("ctxlab-sandbox-*")), sorted(p.name for p in temp.iterdir())


def test_a_killed_grading_process_leaves_its_sandbox_folder_to_the_next(tmp_path: Path) -> None:
    """A grading process killed mid-file (hung, or over its limit) cannot remove its folder
    of sandbox files, nor its child's cgroup: the next grading process does, never while
    their owner lives."""
    from ctxlab.lab.grading.confine import _pids_cgroup_parent

    temp, files = tmp_path / "temp", tmp_path / "files"
    temp.mkdir()
    files.mkdir()
    (files / "right.py").write_text(gc.solution("11.2"), encoding="utf-8")
    env = {**os.environ, "TMPDIR": str(temp)}
    sleeps = "import time\n\ndef group_interactions(entries):\n    time.sleep(600)\n"
    job = {"student": "s", "lab": "11.2", "path": "s.py", "code": sleeps, "time_limit": 300}
    hung = subprocess.Popen(
        [sys.executable, "-m", "ctxlab.lab.grading.batch", "--serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=REPO,
        env=env,
        start_new_session=os.name == "posix",
    )
    try:
        assert hung.stdin is not None
        hung.stdin.write(json.dumps({**job, "seed": 0}) + "\n")
        hung.stdin.flush()
        waited = time.monotonic() + 240  # a slow, loaded machine
        while not list(temp.glob("ctxlab-sandbox-*/run-*")):  # its child runs the file
            assert time.monotonic() < waited and hung.poll() is None
            time.sleep(0.1)
        [folder] = temp.glob("ctxlab-sandbox-*")
        done = grade(files, "--lab", "11.2", "--out", tmp_path / "out1", env=env)
        assert done.returncode == 0, done.stderr
        assert folder.is_dir()  # its owner lives: kept
    finally:
        if os.name == "posix":  # as the batch kills a silent one
            os.killpg(hung.pid, signal.SIGKILL)
        else:  # pragma: no cover
            hung.kill()
        hung.wait(60)
    assert (folder / "lib-11_2").is_dir()  # nothing of the killed process removed it
    done = grade(files, "--lab", "11.2", "--out", tmp_path / "out2", env=env)
    assert done.returncode == 0, done.stderr
    assert not folder.exists(), sorted(p.name for p in temp.iterdir())
    cgroups = _pids_cgroup_parent()
    assert cgroups is None or not list(cgroups.glob(f"{folder.name}-*"))


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    assert grade().returncode == 2
    unknown = grade(tmp_path, "--lab", "11.9")
    assert unknown.returncode == 2 and "unknown lab '11.9'" in unknown.stderr
    missing = grade(tmp_path / "nowhere.ipynb")
    assert missing.returncode == 2 and "no such file" in missing.stderr
    assert grade(tmp_path, "--jobs", "0").returncode == 2


def test_the_core_cli_does_not_load_the_grader() -> None:
    code = "import sys, ctxlab.cli; print(any(m.startswith('ctxlab.lab') for m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert done.stdout.strip() == "False", done.stderr
    helped = subprocess.run([sys.executable, "-m", "ctxlab", "--help"], capture_output=True,
                            text=True, cwd=REPO)  # fmt: skip
    assert "grade" in helped.stdout


def test_gradescope_bundle_runs_like_gradescope(klass: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    done = grade("--gradescope-bundle", bundle, "--lab", "11.2", "--language", "en")
    assert done.returncode == 0, done.stderr
    setup, run = bundle / "setup.sh", bundle / "run_autograder"
    for script in (setup, run):
        text = script.read_text(encoding="utf-8")
        assert text.startswith("#!/usr/bin/env bash") and "@CTXLAB_" not in text
        assert os.access(script, os.X_OK)
        assert subprocess.run(["bash", "-n", str(script)]).returncode == 0
    assert "ctxlab==0.1.0" in setup.read_text(encoding="utf-8")
    assert 'LAB="11.2"' in run.read_text(encoding="utf-8")
    # Gradescope's layout: /autograder/submission holds the student's upload
    autograder = tmp_path / "autograder"
    (autograder / "submission").mkdir(parents=True)
    upload = klass / "alice" / gc.notebook_name("11.2")
    (autograder / "submission" / upload.name).write_bytes(upload.read_bytes())
    env = {**os.environ, "AUTOGRADER": str(autograder), "CTXLAB_PYTHON": sys.executable,
           "PYTHONPATH": str(REPO)}  # fmt: skip
    ran = subprocess.run([str(run)], capture_output=True, text=True, env=env, timeout=300)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    results = json.loads((autograder / "results" / "results.json").read_text(encoding="utf-8"))
    _check_gradescope_shape(results)
    assert (
        results["score"]
        == results["max_score"]
        == ROWS_11_2 - sum(t["max_score"] == 0 for t in results["tests"])
    )


#: Labs whose hand-in steps live in the course-start notebook (issue 32), linked from the lab's
#: first cell instead of a handing-in cell at its end.
HAND_IN_AT_COURSE_START = {"11.1", "11.2", "11.3", "11.4", "11.5"}


def test_handing_in_cell_ends_every_lab_in_both_languages() -> None:
    for lab in gc.LABS:
        for language, words in (("en", ("JupyterLite", "File → Download", ".ipynb")),
                                ("zh", ("JupyterLite", "下载", ".ipynb"))):  # fmt: skip
            cells = gc.notebook(lab, language, None)["cells"]
            if lab in HAND_IN_AT_COURSE_START:
                assert not any(c["id"].endswith("-h01") for c in cells), (lab, language)
                opening = "".join("".join(c["source"]) for c in cells[:2])  # the title, or next
                assert "(00-course-start.ipynb)" in opening, (lab, language)
                continue
            last = cells[-1]
            assert last["cell_type"] == "markdown" and last["id"].endswith("-h01")
            assert all(word in last["source"] for word in words), (lab, language)


def test_build_it_cells_are_tagged_and_found_in_every_edition() -> None:
    for lab in gc.LABS:
        for language in ("en", "zh"):
            data = gc.notebook(lab, language, None)
            tagged = [
                c for c in data["cells"] if "ctxlab-build-it" in c["metadata"].get("tags", [])
            ]
            assert len(tagged) == 1 and f"ctxlab-lab-{lab}" in tagged[0]["metadata"]["tags"]
            assert f"def {KEYWORDS[lab]}(" in tagged[0]["source"]


def test_keywords_are_the_engines() -> None:
    from ctxlab.lab.grading import lab_keyword

    assert {lab: lab_keyword(lab) for lab in KEYWORDS} == KEYWORDS


def test_an_untagged_notebook_is_read_by_cell_id_and_magics_are_kept_as_comments(
    tmp_path: Path,
) -> None:
    data = gc.notebook("11.2", "en", "%time 1\n" + gc.solution("11.2"))
    for cell in data["cells"]:
        cell["metadata"].pop("tags", None)
    path = gc.write_notebook(tmp_path / "old.ipynb", data)
    (source,) = lab_sources(Submission("old", path))
    assert source.lab == "11.2" and not source.problem
    assert "# (IPython) %time 1" in source.code


def test_progress_bar_redraws_on_a_terminal_and_writes_lines_otherwise() -> None:
    plain = io.StringIO()
    progress = Progress(20, plain)
    for _ in range(20):
        progress.step()
    assert len(plain.getvalue().splitlines()) == 11 and "\r" not in plain.getvalue()

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty = Terminal()
    bar = Progress(3, tty)
    for _ in range(3):
        bar.step("alice 11.2")
    assert tty.getvalue().count("\r") == 3 and "3/3 graded" in tty.getvalue()


def _record(student: str, lab: str, failed: list[str], ids: list[str]) -> GradedLab:
    rows = [{"key": k, "source": "chapter", "passed": k not in failed, "behaviour_en": k,
             "behaviour_zh": f"规则 {k}", "detail_en": "", "detail_zh": "",
             "misconceptions": ids if k in failed else []} for k in ("a", "b", "c")]  # fmt: skip
    return GradedLab.from_json({"student": student, "lab": lab, "status": "ok", "reason": "",
            "file": "",
            "passed": not failed, "chapter_passed": 3 - len(failed), "chapter_total": 3,
            "extras_passed": 0, "extras_total": 0, "misconceptions": ids,
            "hint_en": "look at b" if failed else "", "hint_zh": "看 b" if failed else "",
            "function": "f", "rows": rows, "seconds": 0.1})  # fmt: skip


def test_report_heat_map_counts_students_per_misconception_and_lab() -> None:
    records = [
        _record("s1", "11.3", ["b"], ["system-cost"]),
        _record("s2", "11.3", ["b", "c"], ["system-cost", "split-group"]),
        _record("s3", "11.5", ["b"], ["system-cost"]),
        _record("s4", "11.5", [], []),
    ]
    page = render(records, "zh")
    assert 'data-misconception="system-cost" data-lab="11.3" data-count="2"' in page
    assert 'data-misconception="split-group" data-lab="11.5" data-count="0"' in page
    assert "看 b" in page and "谁卡在哪里" in page and 'lang="zh-CN"' in page
    assert "1/2 · 50%" in page  # row c fails for one of the two graded students of 11.3
    english = render(records, "en")
    assert "Who is stuck where" in english and "look at b" in english
    result = gradescope_result(records[1], "en")
    assert result["tests"][1]["tags"] == ["chapter", "system-cost", "split-group"]


def test_the_report_without_jinja2_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jinja2", None)  # as if it were not installed
    with pytest.raises(GradingUsageError, match=r"pip install jinja2") as error:
        render([_record("s1", "11.3", [], [])], "en")
    assert error.value.subject == "jinja2" and "ctxlab[lab]" in str(error.value)


def test_a_record_reads_a_report_of_today(tmp_path: Path) -> None:
    rows = (
        CheckResult("a", True, "rule a", "规则 a"),
        CheckResult("b", False, "rule b", "规则 b", "x"),
    )
    report = LabReport("11.2", "group_interactions", rows)
    source = LabSource("ann", "11.2", tmp_path / "ann.py", "code")
    record = GradedLab.of(source, GradeOutcome("11.2", "ok", "", report, 0.5, 0.25))
    assert [row.source for row in record.rows] == ["chapter", "chapter"]
    assert (record.chapter_passed, record.chapter_total, record.extras_total) == (1, 2, 0)
    assert record.passed is False and record.lead == "b"
    assert "rule b" in record.hint_en and "规则 b" in record.hint_zh


def test_harvest_does_not_carry_the_build_it_tags_into_the_source(tmp_path: Path) -> None:
    nbsource = gc._nbsource()
    source = next(s for s in nbsource.load_sources() if s.lab == "11.2")
    copy = tmp_path / "notebooks" / "_src" / source.path.name
    copy.parent.mkdir(parents=True)
    copy.write_text(source.path.read_text(encoding="utf-8"), encoding="utf-8")
    built = gc.notebook("11.2", "zh", None)
    assert any("ctxlab-build-it" in c["metadata"].get("tags", []) for c in built["cells"])
    edition = gc.write_notebook(tmp_path / "edition.ipynb", built)
    assert nbsource.harvest(edition, repo=tmp_path) == []
    assert "ctxlab-build-it" not in copy.read_text(encoding="utf-8")


def test_a_lab_handed_in_twice_is_graded_once_from_the_newer_file(tmp_path: Path) -> None:
    folder = tmp_path / "class" / "ivan"
    old = gc.write_notebook(folder / "11.2.ipynb", gc.notebook("11.2", "en", gc.wrong("11.2")))
    new = gc.write_notebook(
        folder / "11.2 (1).ipynb", gc.notebook("11.2", "zh", gc.solution("11.2"))
    )
    os.utime(old, (1_000_000, 1_000_000))
    os.utime(new, (2_000_000, 2_000_000))
    done = grade(tmp_path / "class", "--out", tmp_path / "out", "--jobs", "1")
    assert "11.2.ipynb not graded: 11.2 (1).ipynb holds the same lab" in done.stdout, done.stdout
    with (tmp_path / "out" / "grades.csv").open(encoding="utf-8", newline="") as stream:
        (line,) = list(csv.DictReader(stream))
    assert (line["student"], line["passed"]) == ("ivan", "true")
