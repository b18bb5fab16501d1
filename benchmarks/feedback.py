"""How the check table answers one-mistake files (issue 33): caught, hint, folded rows, time.

    python benchmarks/feedback.py [DIR ...]     # default: tests/misconceptions
    python benchmarks/feedback.py tests/feedback_corpus   # the corpus written blind

Each ``DIR/lab11_N/<slug>.py`` defines the lab's function with one mistake. For each file,
in English and Chinese: is the lab not passed (caught), which misconception the report's hint
names, how many ✘ rows the table shows unfolded, and the time of one
``check_implementation`` (notebook route). A hint is right when it names the file's own slug
(the catalogue's own files) or, where ``DIR/labels.json`` labels the file
(``{"lab11_N/<slug>": {"ids": [...]}}``, written by someone who read the catalogue but not
the checks), one of the misconceptions its label names.
"""

from __future__ import annotations

import json
import runpy
import statistics
import sys
import time
from pathlib import Path

from ctxlab.lab import check_implementation, set_language
from ctxlab.lab.grading import LabReport, engine, lab_keyword

ROOT = Path(__file__).resolve().parent.parent


def _unfolded(report: LabReport) -> int:
    """The ✘ rows the lead's part of the table (the chapter's, or ctxlab's extras) shows
    apart: its failed rows but those folded under the lead. A chapter-only student's extras
    fail by choice, in their own part."""
    head, folded = report.lead
    return sum(r.source == head.source for r in report.failed) - len(folded) if head else 0


def main(folders: list[Path]) -> int:
    times: dict[str, list[float]] = {}
    for language in ("en", "zh"):
        set_language(language)
        files = caught = hints = right = small = 0
        for folder in folders:
            labels_file = folder / "labels.json"
            labels = json.loads(labels_file.read_text("utf-8")) if labels_file.is_file() else {}
            for path in sorted(folder.glob("lab11_*/*.py")):
                lab = "11." + path.parent.name.removeprefix("lab11_")
                function = runpy.run_path(str(path), run_name="feedback")[lab_keyword(lab)]
                engine._LADDER.clear()
                began = time.perf_counter()
                report = check_implementation(lab, **{lab_keyword(lab): function})
                times.setdefault(lab, []).append(time.perf_counter() - began)
                files += 1
                caught += not (report.passed and report.extras_passed)
                first = report.misconceptions[0] if report.misconceptions else ""
                shown = bool(report.hint)
                hints += shown
                label = labels.get(f"{path.parent.name}/{path.stem}")
                names = set(label["ids"]) if label is not None else {f"{lab}/{path.stem}"}
                right += shown and first in names
                small += _unfolded(report) <= 2
                if "-v" in sys.argv:
                    print(
                        f"{language} {lab}/{path.stem}: hint={first or '-'} "
                        f"unfolded={_unfolded(report)} failed={len(report.failed)}"
                    )
        print(
            f"[{language}] files {files}, caught {caught}, hints shown {hints}, "
            f"hint names the actual mistake {right}, at most 2 unfolded ✘ rows {small}"
        )
    for lab, spent in sorted(times.items()):
        print(
            f"lab {lab}: median check run {statistics.median(spent) * 1000:.0f} ms "
            f"(max {max(spent) * 1000:.0f} ms, {len(spent)} runs)"
        )
    return 0


if __name__ == "__main__":
    given = [Path(a) for a in sys.argv[1:] if not a.startswith("-")]
    sys.exit(main(given or [ROOT / "tests" / "misconceptions"]))
