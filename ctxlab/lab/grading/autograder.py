"""Gradescope from ``ctxlab grade`` (spec §11): each graded lab as ``results.json``
(:func:`gradescope_result`) and the bundle that runs ``ctxlab grade`` there
(:func:`write_bundle`, from the templates in ``gradescope/``)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from ctxlab.lab.grading.class_report import shown
from ctxlab.lab.grading.drawn import is_random
from ctxlab.lab.grading.graded import GradedLab

_UNSAFE = re.compile(r"[^\w.\-]+")

__all__ = ["gradescope_result", "write_bundle", "write_combined", "write_results"]

#: Gradescope's texts: (English, Chinese).
_WORDS: Final = {
    "lab": ("Lab", "实验"),
    "passed": ("passed", "通过"),
    "failed": ("not passed", "未通过"),
    "chapter": ("the chapter's rules", "本章的规则"),
    "extras": ("ctxlab's extras (no points)", "ctxlab 的扩展（不计分）"),
    "hint": ("Hint", "提示"),
    "status": ("The submission could not be graded", "这份提交无法评分"),
    "folded": (
        "Fails together with the first failed test above: fix that one first.",
        "与上面第一项未通过的测试一起失败：先改好那一项。",
    ),
    "held_back": (
        "A held-back check failed: run the lab's check with several seeds"
        " (check_implementation(..., seed=N)).",
        "一项暂不公开的检查没有通过：用几个不同的种子运行本实验的检查"
        "（check_implementation(..., seed=N)）。",
    ),
}


def gradescope_result(
    record: GradedLab, language: str = "zh", held_back: str = "after_published"
) -> dict[str, Any]:
    """One (student, lab) as Gradescope's ``results.json``: a test per row (a chapter row 1
    point, a ctxlab row 0) tagged with its source and misconception ids, the leading row
    first; a random row held back (``held_back``: its visibility)."""
    words = {key: pair[language == "zh"] for key, pair in _WORDS.items()}
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


def write_results(
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
