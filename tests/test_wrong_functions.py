"""Wrong functions a student could write from the chapter are caught (issue 24, item 3).

``tests/wrong_functions/lab11_N/<slug>.py`` is a plain student-style file: the lab's
instructor solution with one misconception (a ``null`` list read as empty, snake_case
aliases, ``int()`` around an estimate, ``.strip()`` on an id, metadata removed from the
caller's path in place, ctxlab's private ``_build`` called, ...), beside the neighbours a
student would write in the same class. Its docstring says what fails::

    fails: <behaviour key> (chapter)   -- the chapter's rule: the lab is not passed
    fails: <behaviour key> (ctxlab)    -- ctxlab's rule only: that extra row fails, the
                                          lab is still passed
    fails: uses ctxlab's solution      -- the report's notice; the lab is not passed

Every file runs through ``check_implementation``; a sample runs through the terminal route.
"""

from __future__ import annotations

import re
import runpy
from pathlib import Path
from typing import Any

import pytest

from ctxlab.lab import check_implementation
from ctxlab.lab import grading as g
from ctxlab.lab.grading.sandbox import grade_file

pytestmark = pytest.mark.teaching

FOLDER = Path(__file__).resolve().parent / "wrong_functions"
FAILS = re.compile(r"^fails: (?:(\w+) \((chapter|ctxlab)\)|(uses ctxlab's solution))", re.M)
FILES = sorted(FOLDER.glob("lab11_*/*.py"))


def _lab(path: Path) -> str:
    return path.parent.name.removeprefix("lab").replace("_", ".")


def _expected(path: Path) -> tuple[str | None, str]:
    """(the key that must fail, its kind) or (None, "reference")."""
    found = FAILS.search(path.read_text(encoding="utf-8"))
    assert found, f"{path.name}: no 'fails:' line in its docstring"
    key, kind, reference = found.groups()
    return (None, "reference") if reference else (key, kind)


def _function(path: Path) -> Any:
    return runpy.run_path(str(path))[g.lab_keyword(_lab(path))]


def test_every_class_of_the_issue_has_its_neighbours() -> None:
    by_lab: dict[str, int] = {}
    for path in FILES:
        by_lab[_lab(path)] = by_lab.get(_lab(path), 0) + 1
    assert by_lab.get("11.1", 0) >= 12 and by_lab.get("11.3", 0) >= 9, by_lab
    assert by_lab.get("11.4", 0) >= 3 and by_lab.get("11.5", 0) >= 3, by_lab
    names = {f"{_lab(path)}/{path.stem}" for path in FILES}
    for slug in (
        "11.1/null_list_as_empty",
        "11.1/snake_case_aliases",
        "11.1/tokens_overflow",
        "11.1/negative_timestamp_refused",
        "11.3/int_truncation",
        "11.3/empty_system_as_none",
        "11.3/metadata_removed_in_place",
        "11.4/strip_id",
        "11.5/private_build",
    ):
        assert slug in names, slug


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{_lab(p)}-{p.stem}")
def test_a_wrong_function_is_caught(path: Path) -> None:
    lab = _lab(path)
    key, kind = _expected(path)
    report = check_implementation(lab, **{g.lab_keyword(lab): _function(path)})
    failed = {result.key for result in report.failed}
    if kind == "reference":
        assert report.used_reference and not report.passed, str(report)
        assert str(report).startswith("⚠ Your build_context is, or calls,")
        return
    assert key in failed, f"{path.name}: {key} passed\n{report}"
    assert g.behaviour_source(lab, key) == kind
    if kind == "chapter":
        assert not report.passed, str(report)
    else:  # ctxlab's rule only: an extra fails, the lab is passed
        assert report.passed and not report.extras_passed, str(report)
    for result in report.failed:
        assert result.detail_en and result.detail_zh, result.key


#: One wrong function per lab and class, judged from the terminal (a child process).
TERMINAL_SAMPLE = [
    "lab11_1/null_list_as_empty.py",
    "lab11_1/tokens_overflow.py",
    "lab11_1/whitespace_goal_accepted.py",
    "lab11_2/input_walked_twice.py",  # an iterator crosses to the child process
    "lab11_3/int_truncation.py",
    "lab11_3/metadata_removed_in_place.py",
    "lab11_4/strip_id.py",
    "lab11_5/private_build.py",
]


@pytest.mark.parametrize("name", TERMINAL_SAMPLE)
def test_a_wrong_function_is_caught_from_the_terminal(name: str) -> None:
    path = FOLDER / name
    lab = _lab(path)
    key, kind = _expected(path)
    outcome = grade_file(path, lab)
    assert outcome.status == "ok" and outcome.report is not None, outcome.reason
    report = outcome.report
    if kind == "reference":
        # The sandbox's ctxlab holds no solution of the lab being graded (helpers included):
        # the call fails, and so does the lab.
        assert not report.passed, str(report)
        assert any("is not available while Lab" in r.detail_en for r in report.failed), report
        return
    rows = {row.key: row for row in report.results}
    assert not rows[key].passed if key else not report.passed, str(report)
