"""``ctxlab grade``'s ``report.html`` in headless Chromium, opened from disk with the network
refused (issue 26): it shows every section, its pictures have a size, and nothing is cut.

A small class is graded first (two labs; right, wrong, unwritten and broken notebooks), then
the page is opened in both languages; misconception ids are added to the records of the
wrong answers so that the heat map has cells (the catalogue of issue 24 is another branch).
Screenshots go to ``artifacts/browser/class-report-*.png``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from browser_support import REPO, screenshot

from ctxlab.lab.grading.graded import GradedLab

pytestmark = pytest.mark.browser

sys.path.insert(0, str(REPO / "tests"))
import grade_class as gc  # noqa: E402


def _graded_records(tmp: Path) -> list[GradedLab]:
    root = tmp / "class"
    students = {
        "李雷": ("11.3", "zh", gc.solution("11.3", "zh")),
        "韩梅梅": ("11.3", "zh", gc.wrong("11.3", "zh")),
        "alice": ("11.2", "en", gc.solution("11.2")),
        "bob": ("11.2", "en", gc.wrong("11.2")),
        "chen": ("11.2", "en", None),
        "dana": ("11.3", "en", "def build_context(:\n"),
    }
    for student, (lab, language, code) in students.items():
        path = root / student / gc.notebook_name(lab)
        gc.write_notebook(path, gc.notebook(lab, language, code))
    out = tmp / "out"
    done = subprocess.run(
        [sys.executable, "-m", "ctxlab", "grade", str(root), "--out", str(out), "--jobs", "2"],
        capture_output=True, text=True, cwd=REPO, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    cache = json.loads((out / ".ctxlab-grade-cache.json").read_text(encoding="utf-8"))
    records: list[dict[str, Any]] = list(cache["records"].values())
    names = {(r["lab"], r["function"]) for r in records}
    assert ("11.2", "group_interactions") in names
    for record in records:  # as the misconception catalogue would name them
        if record["student"] == "chen":
            record["misconceptions"] = ["stub-left", "system-in-a-group"]
        elif not record["passed"]:
            ids = ["forgets-system-cost"] if record["lab"] == "11.3" else ["system-in-a-group"]
            record["misconceptions"] = ids
    invalid = {"student": "dana", "lab": "11.3", "status": "invalid", "reason": "syntax error",
               "file": "dana.ipynb", "passed": False, "chapter_passed": 0, "chapter_total": 0,
               "extras_passed": 0, "extras_total": 0, "misconceptions": [], "hint_en": "",
               "hint_zh": "", "function": "build_context", "rows": [], "seconds": 0.0}  # fmt: skip
    return [GradedLab.from_json(record) for record in (*records, invalid)]


@pytest.mark.parametrize("language", ["zh", "en"])
def test_class_report_in_chromium(browser_context: Any, tmp_path: Path, language: str) -> None:
    from ctxlab.lab.grading.graded import render

    records = _graded_records(tmp_path)
    page_file = tmp_path / f"report-{language}.html"
    page_file.write_text(render(records, language), encoding="utf-8")
    requested: list[str] = []

    def refuse(route: Any) -> None:
        url = route.request.url
        if not url.startswith("file:"):
            requested.append(url)
            route.abort()
        else:
            route.continue_()

    browser_context.route("**/*", refuse)
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(page_file.as_uri())
    assert requested == [] and errors == []
    for section in ("#glance", "#heatmap", "#stuck", "#problems"):
        box = page.locator(section).bounding_box()
        assert box is not None and box["width"] > 100 and box["height"] > 40, section
    # the heat map: one cell per misconception × lab, the count as the cell says
    cell = page.locator('rect[data-misconception="forgets-system-cost"][data-lab="11.3"]')
    assert cell.get_attribute("data-count") == "1"
    assert page.locator("rect.heat-cell").count() == 3 * 2
    # the glance grid: a row per student, a column per lab
    assert page.locator("#glance tbody tr").count() == 6
    assert page.locator("#glance td.ok").count() == 2
    # nothing wider than the window: no horizontal scrolling
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], width
    stuck = page.locator("#stuck").inner_text()
    assert ("韩梅梅" in stuck) and ("bob" in stuck) and ("chen" in stuck)
    heading = "谁卡在哪里" if language == "zh" else "Who is stuck where"
    assert heading in page.locator("h2#s-stuck").inner_text()
    page.set_viewport_size({"width": 1200, "height": 900})
    shot = screenshot(page, f"class-report-{language}")
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
