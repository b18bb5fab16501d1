"""``ctxlab grade``: grade a class's notebooks and files, write what a course can use.

``python -m ctxlab grade SUBMISSION... [--lab 11.N] [--out DIR] [--jobs N]`` (spec §11,
issue 26):

1. :func:`~ctxlab.lab.grading.submissions.collect` names the students and
   :func:`~ctxlab.lab.grading.submissions.lab_sources` finds each lab's code in each
   submission (a notebook's build-it cells by their tags, or a ``.py`` with ``--lab``);
2. every (student, lab) whose code was not graded before is graded by
   :func:`~ctxlab.lab.grading.sandbox.grade_file`, in ``--jobs`` grading processes of their own
   (``python -m ctxlab.lab.grading.batch --serve``; a student's file runs only in a child of
   one of them). A grading process that dies -- a hostile file can kill its parent -- costs
   that one submission (status ``crashed``) and is replaced; one that does not answer in
   time is killed (``timeout``). A progress bar on standard error follows the class;
3. the results go to ``--out`` (default ``grades/``): ``grades.csv``, ``rows.csv``,
   ``gradescope/<student>-<lab>.json`` and ``report.html`` (:mod:`.class_report`). Every
   text cell is made inert for a spreadsheet and bidi controls are shown escaped
   (:func:`~ctxlab.lab.grading.class_report.cell`); a submission that is or holds a symbolic
   link is ``refused``, never followed (:mod:`.submissions`).

A rerun grades only what changed: each result is cached in ``DIR/.ctxlab-grade-cache.json``
under the hash of the lab, the code graded, the time limit and the grader's own source.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import hashlib
import json
import os
import queue
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO

from ctxlab.lab.grading.class_report import Record, cell, shown
from ctxlab.lab.grading.drawn import is_random
from ctxlab.lab.grading.submissions import KEYWORDS, LabSource, collect, lab_sources
from ctxlab.lab.grading.usage import GradingUsageError

if TYPE_CHECKING:
    from ctxlab.lab.grading.misconceptions import Misconception
    from ctxlab.lab.grading.report import LabReport

__all__ = [
    "CACHE_NAME",
    "GRADES_COLUMNS",
    "ROWS_COLUMNS",
    "add_arguments",
    "gradescope_result",
    "run",
    "write_bundle",
]

#: The columns of ``grades.csv``, in order.
GRADES_COLUMNS: Final = (
    "student",
    "lab",
    "passed",
    "chapter_passed",
    "chapter_total",
    "extras_passed",
    "extras_total",
    "misconceptions",
    "seconds",
    "status",
    "reason",
    "file",
    "seed",
)
#: The columns of ``rows.csv``: one line per student × lab × row.
ROWS_COLUMNS: Final = (
    "student",
    "lab",
    "key",
    "source",
    "passed",
    "behaviour",
    "detail",
    "misconceptions",
)
#: The columns ctxlab writes as numbers of its own (never negative): not made inert.
NUMBER_COLUMNS: Final = frozenset(
    {"chapter_passed", "chapter_total", "extras_passed", "extras_total", "seconds"}
)
CACHE_NAME: Final = ".ctxlab-grade-cache.json"
STATUSES: Final = ("ok", "timeout", "crashed", "refused", "invalid")
EXIT_OK, EXIT_USAGE = 0, 2


# ----------------------------------------------------------------------------- arguments


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not >= 1")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number > 0")
    return value


def _seed(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= 0")
    return int(text)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``ctxlab grade`` (``ctxlab.cli`` builds its parser with these)."""
    parser.add_argument(
        "submissions",
        metavar="SUBMISSION",
        nargs="*",
        type=Path,
        help="notebooks (.ipynb), .py files (with --lab), or folders of them; a folder of"
        " folders is one folder per student",
    )
    parser.add_argument("--lab", metavar="11.N", help="grade only this lab (needed for .py)")
    parser.add_argument(
        "--out", metavar="DIR", type=Path, default=Path("grades"), help="default: grades/"
    )
    parser.add_argument(
        "--jobs",
        metavar="N",
        type=_positive_int,
        default=None,
        help=f"grading processes in parallel (default: the number of cores, here {_cores()})",
    )
    parser.add_argument(
        "--time-limit",
        metavar="SECONDS",
        type=_seconds,
        default=10.0,
        help="time limit of one check (default: 10)",
    )
    parser.add_argument(
        "--language",
        choices=("zh", "en"),
        default="zh",
        help="language of report.html, rows.csv and the Gradescope texts (default: zh, the"
        " course's)",
    )
    parser.add_argument(
        "--force", action="store_true", help="grade everything again (ignore the cache)"
    )
    parser.add_argument(
        "--seed",
        metavar="N",
        type=_seed,
        default=None,
        help="the seed of the random rows (default: a secret one drawn per run, written to"
        " grades.csv and report.html only); --seed N grades as that run did",
    )
    parser.add_argument(
        "--held-back",
        choices=("after_published", "hidden"),
        default="after_published",
        help="the Gradescope visibility of the random rows (default: after_published)",
    )
    parser.add_argument(
        "--gradescope-results",
        metavar="FILE",
        type=Path,
        help="also write ONE Gradescope results.json of everything graded (what the"
        " autograder bundle's run_autograder uses)",
    )
    parser.add_argument(
        "--gradescope-bundle",
        metavar="DIR",
        type=Path,
        help="write a Gradescope autograder bundle (setup.sh, run_autograder) into DIR"
        " and exit; with --lab, the bundle grades only that lab",
    )


# ----------------------------------------------------------------------------- records


def _record(source: LabSource, outcome: Any) -> Record:
    """A plain-JSON record of one graded (student, lab) from a sandbox GradeOutcome."""
    record: Record = _base(source, outcome.status, outcome.reason)
    record["seconds"] = round(float(outcome.seconds), 3)
    record["cpu_seconds"] = round(float(outcome.cpu_seconds), 3)
    report = outcome.report
    if report is None:
        return record
    record["seed"] = report.seed
    chapter, extras = report.chapter_results, report.extra_results
    matched = _matched(report)
    lead, folded = report.lead
    record.update(
        passed=bool(report.passed),
        chapter_passed=sum(r.passed for r in chapter),
        chapter_total=len(chapter),
        extras_passed=sum(r.passed for r in extras),
        extras_total=len(extras),
        misconceptions=list(report.misconceptions),
        hint_en=_hint(report, matched, "en"),
        hint_zh=_hint(report, matched, "zh"),
        lead=lead.key if lead is not None else "",
        function=report.function,
        rows=[
            {
                "key": r.key,
                "source": r.source,
                "passed": bool(r.passed),
                "behaviour_en": r.behaviour_en,
                "behaviour_zh": r.behaviour_zh,
                "detail_en": r.detail_en,
                "detail_zh": r.detail_zh,
                "misconceptions": []
                if r.passed
                else [item.id for item in matched if r.key in item.signature],
                "folded": any(row.key == r.key for row in folded),
            }
            for r in report.results
        ],
    )
    return record


def _matched(report: LabReport) -> list[Misconception]:
    """The catalogued misconceptions the report's failures match, most likely first."""
    by_id = {item.id: item for item in report.facts.catalogue}
    return [by_id[name] for name in report.misconceptions if name in by_id]


def _hint(report: LabReport, matched: list[Misconception], language: str) -> str:
    """The hint a student stuck on this report would see first, in ``language`` (``en`` or
    ``zh``): the most likely misconception's, else the behaviour of the failed row the
    table opens with; empty when nothing failed."""
    from ctxlab.lab.grading.misconceptions import hint_lines

    zh = language == "zh"
    if matched:
        text = hint_lines(matched[0], 1, passed=report.passed)  # as the notebook's first rung
        return text.zh if zh else text.en
    first = report.lead[0]
    if first is None:
        return ""
    return (
        f"先看这一条：{first.behaviour_zh}" if zh else f"Start with this rule: {first.behaviour_en}"
    )


def _base(source: LabSource, status: str, reason: str) -> Record:
    return {
        "student": source.student,
        "lab": source.lab,
        "file": str(source.path),
        "status": status,
        "reason": reason,
        "passed": False,
        "chapter_passed": 0,
        "chapter_total": 0,
        "extras_passed": 0,
        "extras_total": 0,
        "misconceptions": [],
        "hint_en": "",
        "hint_zh": "",
        "lead": "",
        "function": KEYWORDS.get(source.lab, ""),
        "rows": [],
        "seconds": 0.0,
        "cpu_seconds": 0.0,
    }


# ----------------------------------------------------------------------------- serving


def _serve() -> int:
    """``python -m ctxlab.lab.grading.batch --serve``: grade the jobs read from stdin.

    One JSON job per line (``lab``, ``code``, ``time_limit``, ``student``, ``file``); one
    JSON record per line back. The channel is kept private: fd 1 points at stderr, so
    nothing printed by this process or its children mixes with a record.
    """
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    from ctxlab.lab.grading.sandbox import grade_file

    for line in sys.stdin:
        job = json.loads(line)
        source = LabSource(job["student"], job["lab"], Path(job["file"]), job["code"])
        with tempfile.TemporaryDirectory(prefix="ctxlab-grade-") as folder:
            path = Path(folder) / "submission.py"
            path.write_text(source.code, encoding="utf-8")
            try:
                outcome = grade_file(
                    path, source.lab, time_limit=job["time_limit"], seed=job["seed"]
                )
                record = _record(source, outcome)
            except Exception as error:  # the grader's own failure: this job, not the batch
                record = _base(source, "crashed", f"the grader failed: {error!r}")
        record["reason"] = _plain_reason(str(record["reason"]), str(path), source.path.name)
        replies.write(json.dumps(record, ensure_ascii=True) + "\n")
    return 0


def _plain_reason(reason: str, temporary: str, name: str) -> str:
    """A reason as the lecturer reads it: the submission's own file name, not the temporary
    file graded, and without the terminal route's option name."""
    for prefix in ("--ctxlab-impl: ", "--ctxlab-impl "):
        reason = reason.removeprefix(prefix)
    return reason.replace(temporary, name)


class _Slot:
    """One grading process (``--serve``), replaced when it dies or is killed."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[str] | None = None
        self.replies: queue.Queue[str | None] = queue.Queue()

    def _spawn(self) -> subprocess.Popen[str]:
        import ctxlab

        root = str(Path(ctxlab.__file__).resolve().parent.parent)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [root, *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
        )
        env["PYTHONIOENCODING"] = "utf-8"
        options: dict[str, Any] = {"start_new_session": True} if os.name == "posix" else {}
        process = subprocess.Popen(
            [sys.executable, "-m", "ctxlab.lab.grading.batch", "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
            env=env,
            **options,
        )
        self.replies = queue.Queue()
        threading.Thread(
            target=self._read, args=(process, self.replies), daemon=True, name="ctxlab-grade"
        ).start()
        return process

    @staticmethod
    def _read(process: subprocess.Popen[str], replies: queue.Queue[str | None]) -> None:
        assert process.stdout is not None
        with contextlib.suppress(OSError, ValueError):
            for line in process.stdout:
                replies.put(line)
        replies.put(None)

    def grade(self, source: LabSource, time_limit: float, deadline: float, seed: int) -> Record:
        if self.process is None or self.process.poll() is not None:
            self.process = self._spawn()
        job = {
            "student": source.student,
            "lab": source.lab,
            "file": str(source.path),
            "code": source.code,
            "time_limit": time_limit,
            "seed": seed,
        }
        began = time.perf_counter()
        try:
            assert self.process.stdin is not None
            self.process.stdin.write(json.dumps(job) + "\n")
            self.process.stdin.flush()
            line = self.replies.get(timeout=deadline)
        except (OSError, ValueError):
            line = None
        except queue.Empty:
            self.kill()
            record = _base(source, "timeout", f"grading did not finish within {deadline:g} s")
            record["seconds"] = round(time.perf_counter() - began, 3)
            return record
        if line is None:
            self.kill()
            record = _base(
                source, "crashed", "the grading process was killed while it ran this file"
            )
            record["seconds"] = round(time.perf_counter() - began, 3)
            return record
        reply: Record = json.loads(line)
        return reply

    def kill(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        with contextlib.suppress(OSError):
            if os.name == "posix":
                os.killpg(process.pid, signal.SIGKILL)
            else:  # pragma: no cover
                process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(5)

    def close(self) -> None:
        process = self.process
        if process is not None and process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                self.kill()
        self.process = None


def _grade_all(
    sources: list[LabSource], jobs: int, time_limit: float, seed: int
) -> Iterator[tuple[LabSource, Record]]:
    """Grade ``sources`` in ``jobs`` grading processes; yield each as it is done."""
    todo: queue.Queue[LabSource | None] = queue.Queue()
    done: queue.Queue[tuple[LabSource, Record]] = queue.Queue()
    for source in sources:
        todo.put(source)
    deadline = max(120.0, time_limit * 4 + 60.0)

    slots: list[_Slot] = []

    def work() -> None:
        slot = _Slot()
        slots.append(slot)
        try:
            while True:
                try:
                    source = todo.get_nowait()
                except queue.Empty:
                    return
                if source is None:
                    return
                try:
                    record = slot.grade(source, time_limit, deadline, seed)
                except Exception as error:  # the grader's own failure: this job only
                    slot.kill()
                    record = _base(source, "crashed", f"the grader failed: {error!r}")
                done.put((source, record))
        finally:
            slot.close()

    threads = [
        threading.Thread(target=work, daemon=True, name=f"ctxlab-grade-{n}")
        for n in range(min(jobs, len(sources)))
    ]
    for thread in threads:
        thread.start()
    finished = False
    try:
        for _ in sources:
            yield done.get()
        finished = True
    finally:
        if not finished:  # interrupted: nothing more is graded
            while not todo.empty():
                with contextlib.suppress(queue.Empty):
                    todo.get_nowait()
            for slot in list(slots):
                slot.kill()
    for thread in threads:
        thread.join()


# ----------------------------------------------------------------------------- progress


class Progress:
    """A progress bar over the class on ``stream``: redrawn in place on a terminal, plain
    lines (every tenth of the class) otherwise."""

    def __init__(self, total: int, stream: TextIO, *, width: int = 30) -> None:
        self.total, self.stream, self.width = total, stream, width
        self.done = 0
        self.began = time.perf_counter()
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self._said = -1

    def step(self, label: str = "") -> None:
        self.done += 1
        elapsed = time.perf_counter() - self.began
        left = elapsed / self.done * (self.total - self.done) if self.done else 0.0
        if self.tty:
            filled = round(self.width * self.done / max(1, self.total))
            bar = "█" * filled + "·" * (self.width - filled)
            self.stream.write(
                f"\r{bar} {self.done}/{self.total} graded · {elapsed:.0f} s,"
                f" ~{left:.0f} s left {label[:30]:<30}"
            )
            if self.done == self.total:
                self.stream.write("\n")
        else:
            tenth = self.done * 10 // max(1, self.total)
            if tenth != self._said or self.done == self.total:
                self._said = tenth
                self.stream.write(
                    f"ctxlab grade: {self.done}/{self.total} graded ({elapsed:.1f} s)\n"
                )
        self.stream.flush()


# ----------------------------------------------------------------------------- cache


def _grader_fingerprint(time_limit: float) -> str:
    """The grader's version: ctxlab's, the grading package's source and catalogue, the time
    limit."""
    import ctxlab

    digest = hashlib.sha256(f"{ctxlab.__version__}\0{time_limit!r}".encode())
    here = Path(__file__).resolve().parent
    for path in sorted([*here.glob("*.py"), *here.glob("catalogue/*.json")]):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _cache_key(source: LabSource, fingerprint: str) -> str:
    return hashlib.sha256(f"{fingerprint}\0{source.digest}".encode()).hexdigest()


def _load_cache(path: Path) -> dict[str, Record]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    records = data.get("records") if isinstance(data, dict) else None
    return records if isinstance(records, dict) else {}


def _save_cache(path: Path, records: dict[str, Record]) -> None:
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps({"records": records}, ensure_ascii=False), encoding="utf-8")
    temporary.replace(path)


# ----------------------------------------------------------------------------- writing


def _text(record_or_row: Record, field: str, language: str) -> str:
    return str(record_or_row.get(f"{field}_{language}") or record_or_row.get(f"{field}_en", ""))


def _write_csv(path: Path, columns: Sequence[str], rows: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=list(columns), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(
            {k: v if k in NUMBER_COLUMNS else cell(str(v)) for k, v in row.items() if k in columns}
            for row in rows
        )


def _grades_line(record: Record) -> dict[str, Any]:
    return {
        **record,
        "passed": "true" if record["passed"] else "false",
        "misconceptions": ";".join(record["misconceptions"]),
        "seconds": f"{float(record['seconds']):.2f}",
    }


def _rows_lines(record: Record, language: str) -> list[dict[str, Any]]:
    return [
        {
            "student": record["student"],
            "lab": record["lab"],
            "key": row["key"],
            "source": row["source"],
            "passed": "true" if row["passed"] else "false",
            "behaviour": _text(row, "behaviour", language),
            "detail": _text(row, "detail", language),
            "misconceptions": ";".join(row["misconceptions"]),
        }
        for row in record["rows"]
    ]


_UNSAFE = re.compile(r"[^\w.\-]+")


def safe_name(text: str) -> str:
    """``text`` as part of a file name (letters of any script, digits, ``.-_`` kept)."""
    cleaned = _UNSAFE.sub("_", text).strip("._") or "_"
    return cleaned[:100]


_WORDS: Final = {
    "en": {
        "lab": "Lab",
        "passed": "passed",
        "failed": "not passed",
        "chapter": "the chapter's rules",
        "extras": "ctxlab's extras (no points)",
        "hint": "Hint",
        "status": "The submission could not be graded",
        "folded": "Fails together with the first failed test above: fix that one first.",
        "held_back": "A held-back check failed: run the lab's check with several seeds"
        " (check_implementation(..., seed=N)).",
    },
    "zh": {
        "lab": "实验",
        "passed": "通过",
        "failed": "未通过",
        "chapter": "本章的规则",
        "extras": "ctxlab 的扩展（不计分）",
        "hint": "提示",
        "status": "这份提交无法评分",
        "folded": "与上面第一项未通过的测试一起失败：先改好那一项。",
        "held_back": "一项暂不公开的检查没有通过：用几个不同的种子运行本实验的检查"
        "（check_implementation(..., seed=N)）。",
    },
}


def gradescope_result(
    record: Record, language: str = "zh", held_back: str = "after_published"
) -> dict[str, Any]:
    """One (student, lab) in Gradescope's autograder ``results.json`` format: a test per
    row (a chapter row is worth 1 point, a ctxlab row 0), tagged with the row's source and
    misconception ids. A random row is held back from the student (``held_back``: its
    Gradescope visibility); when one failed, the output says what to do."""
    words = _WORDS[language]
    lab = record["lab"]
    tests = []
    rows = list(enumerate(record["rows"], start=1))  # the row the table opens with first
    rows.sort(key=lambda pair: pair[1]["key"] != record.get("lead"))
    for number, row in rows:
        chapter = row["source"] == "chapter"
        points = 1.0 if chapter else 0.0
        output = _text(row, "detail", language)
        if row.get("folded") and not is_random(record.get("lead", "")):
            # one mistake, one message: said at the leading row (when the student sees it)
            output = words["folded"]
        tests.append(
            {
                "name": shown(f"{words['lab']} {lab} · {_text(row, 'behaviour', language)}"),
                "number": f"{lab}.{number}",
                "score": points if row["passed"] else 0.0,
                "max_score": points,
                "status": "passed" if row["passed"] else "failed",
                "output": shown(output),
                "tags": [row["source"], *row["misconceptions"]],
                "visibility": held_back if is_random(row["key"]) else "visible",
            }
        )
    verdict = words["passed"] if record["passed"] else words["failed"]
    lines = [
        f"{words['lab']} {lab} · {record['function']}: {verdict}"
        f" — {words['chapter']} {record['chapter_passed']}/{record['chapter_total']},"
        f" {words['extras']} {record['extras_passed']}/{record['extras_total']}"
    ]
    if record["status"] != "ok":
        lines.append(f"{words['status']} ({record['status']}): {record['reason']}")
    hint = _text(record, "hint", language)
    if hint:
        lines.append(f"{words['hint']}: {hint}")
    if any(is_random(row["key"]) and not row["passed"] for row in record["rows"]):
        lines.append(words["held_back"])
    return {
        "score": float(record["chapter_passed"]),
        "max_score": float(record["chapter_total"]),
        "execution_time": round(float(record["seconds"]), 2),
        "output": shown("\n".join(lines)),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {
            "student": shown(record["student"]),
            "lab": shown(lab),
            "status": record["status"],
            "passed": record["passed"],
            "misconceptions": record["misconceptions"],
        },
    }


def _combined(results: list[dict[str, Any]], empty: str) -> dict[str, Any]:
    if not results:
        return {"score": 0.0, "output": empty, "tests": []}
    return {
        "score": sum(r["score"] for r in results),
        "max_score": sum(r["max_score"] for r in results),
        "execution_time": round(sum(r["execution_time"] for r in results), 2),
        "output": "\n\n".join(r["output"] for r in results),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [test for r in results for test in r["tests"]],
        "extra_data": {"labs": [r["extra_data"] for r in results]},
    }


def _write_json(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


# ----------------------------------------------------------------------------- bundle

_BUNDLE_FILES: Final = ("setup.sh", "run_autograder", "README.md")


def write_bundle(folder: Path, lab: str | None, language: str) -> list[Path]:
    """Write the Gradescope autograder bundle (zip ``folder``'s files, not the folder)."""
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


# ----------------------------------------------------------------------------- the run


@dataclass(frozen=True)
class Summary:
    graded: int
    cached: int
    statuses: dict[str, int]
    seconds: float


def _line(record: Record) -> str:
    if record["status"] != "ok" and not record["rows"]:
        outcome = f"{record['status']}: {record['reason']}"
    else:
        verdict = "passed" if record["passed"] else "failed"
        outcome = (
            f"{verdict}  chapter {record['chapter_passed']}/{record['chapter_total']}"
            f"  ctxlab {record['extras_passed']}/{record['extras_total']}"
            f"  {float(record['seconds']):.1f} s  {record['status']}"
        )
        if record["status"] != "ok":
            outcome += f": {record['reason']}"
    return shown(f"{record['student']}  {record['lab']}  {outcome}")


def _newest(sources: list[LabSource], out: TextIO) -> list[LabSource]:
    """One source per student and lab: when a student handed in a lab twice (``11.3.ipynb``
    and ``11.3 (1).ipynb``), the file changed last is graded and the line says so."""
    best: dict[tuple[str, str], LabSource] = {}
    for source in sources:
        if source.problem:
            continue
        key = (source.student, source.lab)
        other = best.get(key)
        if other is None or _mtime(source.path) > _mtime(other.path):
            best[key] = source
    kept = []
    for source in sources:
        chosen = best.get((source.student, source.lab))
        if source.problem or chosen is source:
            kept.append(source)
        elif chosen is not None:
            out.write(
                shown(
                    f"{source.student}  {source.lab}  {source.path.name} not graded:"
                    f" {chosen.path.name} holds the same lab and changed later\n"
                )
            )
    return kept


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def run(args: argparse.Namespace, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Run ``ctxlab grade`` with parsed ``args``; return the exit code."""
    lab: str | None = args.lab
    if lab is not None and lab not in KEYWORDS:
        raise GradingUsageError(
            f"--lab: unknown lab {lab!r}; the labs are {', '.join(KEYWORDS)}", option="--lab"
        )
    if args.gradescope_bundle is not None:
        for path in write_bundle(args.gradescope_bundle, lab, args.language):
            out.write(f"wrote {path}\n")
        return EXIT_OK
    if not args.submissions:
        raise GradingUsageError(
            "give at least one SUBMISSION (a notebook, a .py or a folder)", option="SUBMISSION"
        )
    began = time.perf_counter()
    seed: int = random.SystemRandom().randrange(1_000_000) if args.seed is None else args.seed
    try:
        submissions = collect(args.submissions)
    except FileNotFoundError as error:
        raise GradingUsageError(str(error), option="SUBMISSION") from None
    outdir: Path = args.out
    if not submissions:
        if args.gradescope_results is not None:
            args.gradescope_results.parent.mkdir(parents=True, exist_ok=True)
            _write_json(
                args.gradescope_results,
                _combined([], "No .ipynb or .py file was found in the submission."),
            )
        raise GradingUsageError(
            "no .ipynb or .py file found in the SUBMISSION(s) given", option="SUBMISSION"
        )
    sources = _newest([s for sub in submissions for s in lab_sources(sub, lab)], out)
    outdir.mkdir(parents=True, exist_ok=True)
    cache_path = outdir / CACHE_NAME
    cache = {} if args.force else _load_cache(cache_path)
    fingerprint = _grader_fingerprint(args.time_limit)
    records: list[Record | None] = [None] * len(sources)
    todo: list[tuple[int, LabSource]] = []
    cached = 0
    for index, source in enumerate(sources):
        if source.problem:
            records[index] = _base(source, source.status, source.problem)
            continue
        hit = cache.get(_cache_key(source, fingerprint))
        if hit is not None:
            records[index] = {
                **hit,
                "student": source.student,
                "file": str(source.path),
                "cached": True,
            }
            cached += 1
            continue
        todo.append((index, source))
    for record in records:
        if record is not None:
            out.write(
                _line(record)
                + ("  (unchanged, not graded again)" if record.get("cached") else "")
                + "\n"
            )
    jobs = args.jobs or _cores()
    progress = Progress(len(todo), err)
    where = {id(source): index for index, source in todo}
    try:
        for source, record in _grade_all([s for _, s in todo], jobs, args.time_limit, seed):
            records[where[id(source)]] = record
            cache[_cache_key(source, fingerprint)] = record  # a hostile file too: once
            out.write(_line(record) + "\n")
            out.flush()
            progress.step(shown(f"{source.student} {source.lab}"))
    finally:
        _save_cache(cache_path, cache)
    final = [r for r in records if r is not None]
    _write_outputs(outdir, final, args.language, args.gradescope_results, args.held_back)
    statuses = {status: sum(r["status"] == status for r in final) for status in STATUSES}
    seconds = time.perf_counter() - began
    passed = sum(bool(r["passed"]) for r in final)
    out.write(
        f"ctxlab grade: {len(final)} student·lab pairs ({len(todo)} graded, {cached} unchanged),"
        f" {passed} passed; "
        + ", ".join(f"{n} {s}" for s, n in statuses.items() if n)
        + f"; {seconds:.1f} s; seed {seed}; results in {outdir}/\n"
    )
    return EXIT_OK


def _write_outputs(
    outdir: Path,
    records: list[Record],
    language: str,
    combined: Path | None,
    held_back: str = "after_published",
) -> None:
    from ctxlab.lab.grading.class_report import render

    _write_csv(outdir / "grades.csv", GRADES_COLUMNS, [_grades_line(r) for r in records])
    _write_csv(
        outdir / "rows.csv",
        ROWS_COLUMNS,
        [line for r in records for line in _rows_lines(r, language)],
    )
    gradescope = outdir / "gradescope"
    if gradescope.exists():
        shutil.rmtree(gradescope)
    gradescope.mkdir()
    results = []
    for record in records:
        result = gradescope_result(record, language, held_back)
        results.append(result)
        name = f"{safe_name(record['student'])}-{safe_name(record['lab'])}.json"
        _write_json(gradescope / name, result)
    if combined is not None:
        combined.parent.mkdir(parents=True, exist_ok=True)
        _write_json(combined, _combined(results, "No lab was found in the submission."))
    (outdir / "report.html").write_text(render(records, language), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m ctxlab.lab.grading.batch`` (``--serve``: a grading process)."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments == ["--serve"]:
        return _serve()
    parser = argparse.ArgumentParser(
        prog="ctxlab grade",
        description="Grade a class's lab notebooks (as downloaded from JupyterLab or"
        " JupyterLite) and .py files, each in a process of its own; write grades.csv,"
        " rows.csv, Gradescope results and report.html into --out.",
    )
    add_arguments(parser)
    try:
        return run(parser.parse_args(arguments))
    except GradingUsageError as error:
        sys.stderr.write(f"ctxlab: {error}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write("ctxlab: interrupted (what was graded is kept for the next run)\n")
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
