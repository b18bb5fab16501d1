"""Functions written from the chapter alone pass their lab; ctxlab's solution passes every row
(issue 24, item 2).

``tests/chapter_only/lab11_N.py`` is, per lab, a plain student-style file defining the lab's
function that takes every choice the chapter leaves open the other way from ctxlab (plain
``ValueError``\\ s, errors naming only the call id, any number as timestamp, a white-space id
accepted, ...). Each passes its lab -- every chapter row -- on the notebook's route
(``check_implementation``) and on the terminal route (``pytest -m lab11_N --ctxlab-impl``),
and fails ctxlab's extras, which do not count. The instructor solution of each build-it cell
(``notebooks/_src``) passes every row, extras included.
"""

from __future__ import annotations

import runpy
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ctxlab.lab import check_implementation
from ctxlab.lab import grading as g
from ctxlab.lab.grading.sandbox import grade_file
from mutation_audit import solution
from pytest_runs import pytest_command, pytest_env

pytestmark = pytest.mark.teaching

ROOT = Path(__file__).resolve().parent.parent
CHAPTER_ONLY = ROOT / "tests" / "chapter_only"


def _file(lab: str) -> Path:
    return CHAPTER_ONLY / f"lab{lab.replace('.', '_')}.py"


def _function(lab: str) -> Any:
    return runpy.run_path(str(_file(lab)))[g.lab_keyword(lab)]


@pytest.mark.parametrize("lab", g.LABS)
def test_a_chapter_only_function_passes_its_lab_in_the_notebook(lab: str) -> None:
    report = check_implementation(lab, **{g.lab_keyword(lab): _function(lab)})
    assert report.passed, str(report)
    # It takes ctxlab's choices the other way: ctxlab's extras fail, and do not count.
    assert not report.extras_passed, str(report)
    assert report.extra_results and not any(r.passed for r in report.extra_results), str(report)
    lines = str(report).splitlines()
    assert report.headline() in lines and report.headline().endswith("checks pass ✔")
    # A hint, if any, is about ctxlab's optional extras, never about the lab failing.
    if report.hint:
        assert lines[0].startswith("💡 Hint on ctxlab's optional extras"), lines[0]


@pytest.mark.parametrize("lab", g.LABS)
def test_a_chapter_only_function_passes_its_lab_from_the_terminal(lab: str) -> None:
    outcome = grade_file(_file(lab), lab)
    assert outcome.status == "ok" and outcome.report is not None, outcome.reason
    assert outcome.report.passed, str(outcome.report)
    for row in outcome.report.results:
        assert row.source == g.behaviour_source(lab, row.key)
        if row.source == "chapter":
            assert row.passed, row.detail_en
        else:
            assert not row.passed, f"{row.key}: the chapter-only file passes ctxlab's extra"


def test_the_pytest_route_reports_extras_apart_and_passes_a_chapter_only_file() -> None:
    run = subprocess.run(
        pytest_command(
            str(ROOT / "tests" / "test_lab_checks_chapter.py"),
            "-m",
            "lab11_2",
            f"--ctxlab-impl={_file('11.2')}",
        ),
        cwd=ROOT,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=pytest_env(),
        check=False,
        timeout=300,
    )
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    extras = sum(g.behaviour_source("11.2", key) == "ctxlab" for key in g.behaviour_keys("11.2"))
    assert f"{len(g.behaviour_keys('11.2'))} passed" in out, out
    assert "ctxlab's extras (optional) / ctxlab 的扩展检查（选做）" in out
    assert f"Lab 11.2: 0/{extras} pass (they do not decide the lab)" in out
    assert f"实验 11.2：通过 0/{extras} 项（不影响本实验是否通过）" in out
    assert "✘ errors_name_entry_and_call: the chapter's path with r-test(unknown-1)" in out
    assert "CtxlabExtraWarning" in out


@pytest.mark.parametrize("lab", g.LABS)
def test_the_instructor_solution_passes_every_row_extras_included(lab: str) -> None:
    namespace: dict[str, Any] = {}
    exec(solution(lab)[1], namespace)
    keyword = g.lab_keyword(lab)
    report = check_implementation(lab, **{keyword: namespace[keyword]})
    assert report.passed and report.extras_passed, str(report)
    reference = check_implementation(lab, **g.reference_functions(lab))
    assert reference.passed and reference.extras_passed, str(reference)


#: Choices the chapter leaves open once a summary is sent, each taken the other way in the
#: student-style correct version of round 1 (tests/feedback_corpus/correct/lab11_5.py).
_COURSE_CHOICES = {
    "allowance-after-summary": (
        "available_for_messages=available,",
        "available_for_messages=max(0, available - summary_cost),",
    ),
    "summary-stamped-with-the-leaf": ("compaction.timestamp", "active_path[-1].timestamp"),
    "summary-leaves-less-than-0": (
        "group_budget = max(0, available - summary_cost)",
        "group_budget = available - summary_cost",
    ),
}


@pytest.mark.parametrize("choice", sorted(_COURSE_CHOICES))
def test_what_the_chapter_leaves_open_on_resume_fails_only_ctxlabs_course_row(choice: str) -> None:
    """11.5's chapter rows do not decide what the chapter leaves open (the ledger's allowance
    before or after the summary, the summary's timestamp, a remainder below 0); the course's
    code decides it, and only ctxlab's ``course_ledger`` row asks."""
    old, new = _COURSE_CHOICES[choice]
    source = (ROOT / "tests" / "feedback_corpus" / "correct" / "lab11_5.py").read_text("utf-8")
    assert source.count(old) == 1
    namespace: dict[str, Any] = {}
    exec(compile(source.replace(old, new), choice, "exec"), namespace)
    report = check_implementation("11.5", build_context=namespace["build_context"])
    assert report.passed, str(report)
    assert [r.key for r in report.results if not r.passed] == ["course_ledger"], str(report)
