"""``ctxlab grade`` on a generated class (issue 26, item 4): run by ``make bench``.

A class of ``CTXLAB_BENCH_STUDENTS`` students (default 200) × the 5 labs, one notebook per
student and lab, as ``tests/grade_class.py`` makes them (the student edition of the lab, in
English or Chinese, its build-it cell filled in): mostly right and wrong answers, a few
unwritten stubs, broken notebooks and hostile files (one that kills the process grading it,
one that never returns, one that ends its process in a call). The class is graded twice
from nothing -- ``--jobs 1`` and ``--jobs`` = the number of cores -- and once more unchanged
(everything skipped by the cache). Recorded: the CPU cost per submission-lab (median of
the graded ones, as the grading process measured it: its own CPU and its children's),
the wall time of each run, and how many ended in each status.

Writes the section "Grading a class" of ``benchmarks/RESULTS.md`` (between its markers; the
rest of the file is ``benchmarks/run.py``'s). Usage: ``python -m benchmarks.grade_class``;
``CTXLAB_BENCH_STUDENTS=10`` for a quick run.
"""

from __future__ import annotations

import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from ctxlab.lab.grading.confine import missing_protections

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "RESULTS.md"
START, END = "<!-- grade-class:start -->", "<!-- grade-class:end -->"
TIME_LIMIT = 2.0

sys.path.insert(0, str(REPO / "tests"))
import grade_class as gc  # noqa: E402

#: What each student × lab hands in, with its weight (out of 1000).
MIX = (
    ("right", 600),
    ("wrong", 300),
    ("stub", 45),
    ("syntax", 15),
    ("malformed", 10),
    ("kills-parent", 10),
    ("spins", 10),
    ("exits", 10),
)


def _code(lab: str, language: str, kind: str) -> str | None:
    """The build-it code of one kind of submission (``None``: the stub as handed out)."""
    if kind == "right":
        return gc.solution(lab, language)
    if kind == "wrong":
        return gc.wrong(lab, language)
    if kind == "stub":
        return None
    if kind == "syntax":
        return gc.solution(lab, language).replace("):", ")", 1)
    return gc.hostile(kind)


def make_class(root: Path, students: int, seed: int = 26) -> Counter[str]:
    """Write the class into ``root`` (a folder per student); returns what was handed in."""
    chance = random.Random(seed)
    kinds = [kind for kind, weight in MIX for _ in range(weight)]
    made: Counter[str] = Counter()
    cache: dict[tuple[str, str, str], dict[str, Any]] = {}
    for number in range(students):
        student = f"s{number:03d}"
        language = "zh" if number % 2 else "en"
        for lab in gc.LABS:
            kind = chance.choice(kinds)
            made[kind] += 1
            path = root / student / gc.notebook_name(lab)
            if kind == "malformed":
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text('{"cells": [{"cell_type": ', encoding="utf-8")
                continue
            key = (lab, language, kind)
            if key not in cache:
                cache[key] = gc.notebook(lab, language, _code(lab, language, kind))
            gc.write_notebook(path, cache[key])
    return made


def grade(root: Path, out: Path, jobs: int) -> tuple[float, float, str]:
    """Run ``ctxlab grade``; (wall seconds, CPU seconds of it and its children, stdout)."""
    before = os.times()
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "ctxlab", "grade", str(root), "--out", str(out),
         "--jobs", str(jobs), "--time-limit", str(TIME_LIMIT)],
        capture_output=True, text=True, cwd=REPO, check=True,
    )  # fmt: skip
    wall = time.perf_counter() - began
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return wall, cpu, done.stdout


def _records(out: Path) -> list[dict[str, Any]]:
    import csv

    with (out / "grades.csv").open(encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream))


def _cached(out: Path) -> list[dict[str, Any]]:
    data = json.loads((out / ".ctxlab-grade-cache.json").read_text(encoding="utf-8"))
    return list(data["records"].values())


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover
        return os.cpu_count() or 1


def main() -> int:
    students = int(os.environ.get("CTXLAB_BENCH_STUDENTS", "200"))
    cores = _cores()
    with tempfile.TemporaryDirectory(prefix="ctxlab-bench-class-") as folder:
        root = Path(folder) / "class"
        made = make_class(root, students)
        pairs = students * len(gc.LABS)
        print(f"class: {students} students × 5 labs = {pairs} notebooks: {dict(made)}", flush=True)
        runs = {}
        for jobs in sorted({1, cores}):
            out = Path(folder) / f"out-{jobs}"
            runs[jobs] = grade(root, out, jobs)
            print(
                f"--jobs {jobs}: {runs[jobs][0]:.1f} s wall, {runs[jobs][1]:.1f} s CPU", flush=True
            )
        again = grade(root, Path(folder) / f"out-{cores}", cores)
        print(f"rerun, unchanged: {again[0]:.1f} s wall", flush=True)
        out1 = Path(folder) / "out-1"
        grades = _records(out1)
        statuses = Counter(row["status"] for row in grades)
        cached = [r for r in _cached(out1) if r["rows"]]  # the checks ran
        cpu = [float(r["cpu_seconds"]) for r in cached]
        by_lab = {
            lab: statistics.median(float(r["cpu_seconds"]) for r in cached if r["lab"] == lab)
            for lab in gc.LABS
            if any(r["lab"] == lab for r in cached)
        }
        hostile = [
            row
            for row in grades
            if row["student"] and row["status"] in ("timeout", "crashed", "refused")
        ]
        hostile_seconds = sum(float(row["seconds"]) for row in hostile)
    p90 = statistics.quantiles(cpu, n=10)[-1] if len(cpu) > 1 else cpu[0]
    date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    scaled = "" if students == 200 else " (scaled down: `CTXLAB_BENCH_STUDENTS`; the class is 200)"
    lines = [
        START,
        "## 7. Grading a class: `ctxlab grade` (issue 26)",
        "",
        f"`python -m benchmarks.grade_class` (`make bench`), {date},"
        f" Python {platform.python_version()}, {cores} cores (shared while measured).",
        f"Scale of this run: **{students} students × 5 labs = {pairs} notebooks**{scaled};"
        f" check time limit {TIME_LIMIT:g} s.",
        "Handed in: " + ", ".join(f"{kind} {made[kind]}" for kind, _ in MIX if made[kind]) + ".",
        "Each submission-lab runs in the sandbox (`grade_file`); protections missing here: "
        + ("; ".join(missing_protections()) or "none")
        + ".",
        "",
        "| measure | value |",
        "| --- | --- |",
        f"| CPU per submission-lab, median of the {len(cpu)} graded"
        f" | {statistics.median(cpu):.3f} s |",
        f"| CPU per submission-lab, 90th percentile | {p90:.3f} s |",
        *(
            f"| CPU per submission-lab, median, Lab {lab} | {v:.3f} s |"
            for lab, v in by_lab.items()
        ),
        *(
            f"| wall time, `--jobs {jobs}` | {wall:.1f} s ({wall / pairs * 1000:.0f} ms per"
            f" notebook); CPU of the whole run {cpu_all:.1f} s |"
            for jobs, (wall, cpu_all, _) in runs.items()
        ),
        f"| wall time of a rerun, nothing changed (`--jobs {cores}`) | {again[0]:.1f} s |",
        "| statuses | " + ", ".join(f"{s} {n}" for s, n in sorted(statuses.items())) + " |",
        f"| hostile and hung files (timeout/crashed/refused) | {len(hostile)},"
        f" {hostile_seconds:.1f} s of grading in all |",
        "",
        END,
    ]
    section = "\n".join(lines)
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else ""
    if START in text and END in text:
        head, _, rest = text.partition(START)
        _, _, tail = rest.partition(END)
        text = head + section + tail
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    RESULTS.write_text(text, encoding="utf-8")
    print(section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
