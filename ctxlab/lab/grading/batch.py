"""``ctxlab grade``: grade a class's notebooks and files, write what a course can use.

``python -m ctxlab grade SUBMISSION... [--lab 11.N] [--out DIR] [--jobs N]`` (spec §11):
:mod:`.submissions` finds each (student, lab)'s code; each is graded by
:func:`~ctxlab.lab.grading.sandbox.grade_file` in one of ``--jobs`` grading processes
(``--serve``; a dead one costs that submission, ``crashed``, and is replaced; a silent one is
killed, ``timeout``); the one record of each, :class:`~.graded.GradedLab`, is written to
``--out``. A rerun grades only what changed (``.ctxlab-grade-cache.json``, keyed by the lab,
the code, the time limit and the grader's own files).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, Final, TextIO

from ctxlab.lab.grading.graded import GradedLab, shown, write_bundle, write_combined, write_outputs
from ctxlab.lab.grading.submissions import KEYWORDS, LabSource, collect, lab_sources
from ctxlab.lab.grading.usage import GradingUsageError

CACHE_NAME: Final = ".ctxlab-grade-cache.json"
STATUSES: Final = ("ok", "timeout", "crashed", "refused", "invalid")


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _number(kind: str) -> Callable[[str], Any]:
    """An argparse type: ``jobs`` (a whole number >= 1), ``seconds`` (a finite number > 0)
    or ``seed`` (a whole number >= 0)."""

    def parse(text: str) -> Any:
        if kind == "seed" and not text.isdigit():
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= 0")
        try:
            value = float(text) if kind == "seconds" else int(text)
        except ValueError:
            wrong = "a number" if kind == "seconds" else "a whole number"
            raise argparse.ArgumentTypeError(f"{text!r} is not {wrong}") from None
        if kind == "jobs" and value < 1:
            raise argparse.ArgumentTypeError(f"{text!r} is not >= 1")
        if kind == "seconds" and not 0 < value < float("inf"):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number > 0")
        return value

    return parse


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ctxlab grade",
        description="Grade a class's lab notebooks (as downloaded from JupyterLab or"
        " JupyterLite) and .py files, each in a process of its own; write grades.csv,"
        " rows.csv, Gradescope results and report.html into --out.",
    )
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
        type=_number("jobs"),
        help=f"grading processes in parallel (default: the number of cores, here {_cores()})",
    )
    parser.add_argument(
        "--time-limit",
        metavar="SECONDS",
        type=_number("seconds"),
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
        type=_number("seed"),
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
    return parser


def _serve() -> int:
    """A grading process: one JSON job per line of stdin, one record per line back (on a
    private copy of fd 1; fd 1 itself goes to stderr, so nothing printed mixes in)."""
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    from ctxlab.lab.grading.sandbox import grade_file

    for line in sys.stdin:
        job = json.loads(line)
        source = LabSource(job["student"], job["lab"], Path(job["path"]), job["code"])
        with tempfile.TemporaryDirectory(prefix="ctxlab-grade-") as folder:
            path = Path(folder) / "submission.py"
            path.write_text(source.code, encoding="utf-8")
            try:
                outcome = grade_file(
                    path, source.lab, time_limit=job["time_limit"], seed=job["seed"]
                )
                record = GradedLab.of(source, outcome)
            except Exception as error:  # the grader's own failure: this job, not the batch
                record = GradedLab.ungraded(source, "crashed", f"the grader failed: {error!r}")
        reason = record.reason.replace(str(path), source.path.name)  # the file handed in
        replies.write(json.dumps(asdict(replace(record, reason=reason))) + "\n")
    return 0


def _spawn() -> subprocess.Popen[str]:
    """A grading process (``--serve``) of this ctxlab, in a session of its own (POSIX)."""
    import ctxlab

    root = str(Path(ctxlab.__file__).resolve().parent.parent)
    path = [root, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path), "PYTHONIOENCODING": "utf-8"}
    return subprocess.Popen(
        [sys.executable, "-m", "ctxlab.lab.grading.batch", "--serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        encoding="utf-8",
        env=env,
        start_new_session=True,  # ignored on Windows
    )


def _end(process: subprocess.Popen[str], *, graceful: bool = False) -> None:
    """End a grading process and everything it started; ``graceful`` (it is done): its input
    closed first, so it exits by itself and removes its sandbox folder."""
    if graceful:
        with contextlib.suppress(OSError, ValueError):
            if process.stdin is not None:
                process.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(2)
    with contextlib.suppress(OSError):
        if os.name == "posix":
            os.killpg(process.pid, signal.SIGKILL)
        else:  # pragma: no cover
            process.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(5)


def _grade_all(
    sources: list[LabSource], jobs: int, time_limit: float, seed: int
) -> Iterator[tuple[LabSource, GradedLab]]:
    """Grade ``sources`` in ``jobs`` grading processes; yield each as it is done (a dead or
    silent process: see the module)."""
    deadline = max(120.0, time_limit * 4 + 60.0)
    mine = threading.local()  # each thread's grading process
    running: list[subprocess.Popen[str]] = []

    def grade(source: LabSource) -> tuple[LabSource, GradedLab]:
        if getattr(mine, "process", None) is None or mine.process.poll() is not None:
            mine.process = _spawn()
            running.append(mine.process)
        process: subprocess.Popen[str] = mine.process
        job = {**vars(source), "path": str(source.path), "time_limit": time_limit, "seed": seed}
        began = time.perf_counter()
        timer = threading.Timer(deadline, _end, (process,))  # a silent one is killed
        timer.daemon = True
        timer.start()
        try:
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write(json.dumps(job) + "\n")
            process.stdin.flush()
            return source, GradedLab.from_json(json.loads(process.stdout.readline()))
        except Exception:  # no record came back (or half of one): the process ended
            _end(process)
        finally:
            timer.cancel()
        seconds = time.perf_counter() - began
        if seconds >= deadline:
            status, reason = "timeout", f"grading did not finish within {deadline:g} s"
        else:
            status, reason = "crashed", "the grading process was killed while it ran this file"
        record = GradedLab.ungraded(source, status, reason)
        return source, replace(record, seconds=round(seconds, 3))

    pool = ThreadPoolExecutor(max(1, min(jobs, len(sources))))
    futures = [pool.submit(grade, source) for source in sources]
    try:
        for future in as_completed(futures):
            yield future.result()
    finally:  # done, interrupted or closed early: nothing more is graded
        for future in futures:
            future.cancel()
        for process in running:
            _end(process, graceful=True)
        pool.shutdown()


class Progress:
    """A progress bar over the class on ``stream``: redrawn in place on a terminal, plain
    lines (every tenth of the class) otherwise."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total, self.stream = total, stream
        self.done = 0
        self.began = time.perf_counter()
        self.tty = stream.isatty()
        self._said = -1

    def step(self, label: str = "") -> None:
        self.done += 1
        elapsed = time.perf_counter() - self.began
        if self.tty:
            filled = round(30 * self.done / self.total)
            bar = "█" * filled + "·" * (30 - filled)
            left = elapsed / self.done * (self.total - self.done)
            self.stream.write(
                f"\r{bar} {self.done}/{self.total} graded · {elapsed:.0f} s,"
                f" ~{left:.0f} s left {label[:30]:<30}"
            )
            if self.done == self.total:
                self.stream.write("\n")
        else:
            tenth = self.done * 10 // self.total
            if tenth != self._said or self.done == self.total:
                self._said = tenth
                self.stream.write(
                    f"ctxlab grade: {self.done}/{self.total} graded ({elapsed:.1f} s)\n"
                )
        self.stream.flush()


def _grader_fingerprint(time_limit: float) -> str:
    """The grader's version: ctxlab's, the grading package's source, texts, catalogue and
    template, the time limit."""
    import ctxlab

    digest = hashlib.sha256(f"{ctxlab.__version__}\0{time_limit!r}".encode())
    here = Path(__file__).resolve().parent
    for path in sorted([*here.glob("*.py"), *here.glob("**/*.json"), *here.glob("templates/*")]):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _cache_key(source: LabSource, fingerprint: str) -> str:
    return hashlib.sha256(f"{fingerprint}\0{source.lab}\0{source.code}".encode()).hexdigest()


def _load_cache(path: Path) -> dict[str, GradedLab]:
    try:
        records = json.loads(path.read_text(encoding="utf-8"))["records"]
        return {key: GradedLab.from_json(record) for key, record in records.items()}
    except (OSError, ValueError, LookupError, TypeError, AttributeError):
        return {}


def _save_cache(path: Path, records: dict[str, GradedLab]) -> None:
    data = {"records": {key: asdict(record) for key, record in records.items()}}
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    temporary.replace(path)


def _line(r: GradedLab) -> str:
    outcome = r.status if r.status == "ok" else f"{r.status}: {r.reason}"
    if r.status == "ok" or r.rows:
        outcome = (
            f"{'passed' if r.passed else 'failed'}  chapter {r.chapter_passed}/{r.chapter_total}"
            f"  ctxlab {r.extras_passed}/{r.extras_total}  {r.seconds:.1f} s  {outcome}"
        )
    return shown(f"{r.student}  {r.lab}  {outcome}")


def _newest(sources: list[LabSource], out: TextIO) -> list[LabSource]:
    """One source per student and lab: when a student handed in a lab twice (``11.3.ipynb``
    and ``11.3 (1).ipynb``), the file changed last is graded and the line says so."""
    graded = [source for source in sources if not source.problem]
    best: dict[tuple[str, str], LabSource] = {}
    for source in sorted(graded, key=lambda source: _mtime(source.path), reverse=True):
        best.setdefault((source.student, source.lab), source)
    for source in graded:
        chosen = best[(source.student, source.lab)]
        if chosen is not source:
            out.write(
                shown(
                    f"{source.student}  {source.lab}  {source.path.name} not graded:"
                    f" {chosen.path.name} holds the same lab and changed later\n"
                )
            )
    return [s for s in sources if s.problem or best[(s.student, s.lab)] is s]


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
        return 0
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
            write_combined(args.gradescope_results, [])
        raise GradingUsageError(
            "no .ipynb or .py file found in the SUBMISSION(s) given", option="SUBMISSION"
        )
    sources = _newest([s for sub in submissions for s in lab_sources(sub, lab)], out)
    outdir.mkdir(parents=True, exist_ok=True)
    cache_path = outdir / CACHE_NAME
    cache = {} if args.force else _load_cache(cache_path)
    fingerprint = _grader_fingerprint(args.time_limit)
    records: dict[int, GradedLab] = {}  # by id(source)
    for source in sources:
        if source.problem:
            records[id(source)] = GradedLab.ungraded(source, source.status, source.problem)
            out.write(_line(records[id(source)]) + "\n")
        elif (hit := cache.get(_cache_key(source, fingerprint))) is not None:
            records[id(source)] = replace(hit, student=source.student, file=str(source.path))
            out.write(_line(records[id(source)]) + "  (unchanged, not graded again)\n")
    todo = [source for source in sources if id(source) not in records]
    cached = len(records) - sum(bool(source.problem) for source in sources)
    progress = Progress(len(todo), err)
    try:
        for source, record in _grade_all(todo, args.jobs or _cores(), args.time_limit, seed):
            records[id(source)] = record
            cache[_cache_key(source, fingerprint)] = record  # a hostile file too: once
            out.write(_line(record) + "\n")
            out.flush()
            progress.step(shown(f"{source.student} {source.lab}"))
    finally:
        _save_cache(cache_path, cache)
    final = [records[id(source)] for source in sources]
    write_outputs(outdir, final, args.language, args.gradescope_results, args.held_back)
    statuses = Counter(record.status for record in final)
    counts = ", ".join(f"{statuses[status]} {status}" for status in STATUSES if statuses[status])
    out.write(
        f"ctxlab grade: {len(final)} student·lab pairs ({len(todo)} graded, {cached} unchanged),"
        f" {sum(record.passed for record in final)} passed; {counts};"
        f" {time.perf_counter() - began:.1f} s; seed {seed}; results in {outdir}/\n"
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m ctxlab.lab.grading.batch`` (``--serve``: a grading process)."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments == ["--serve"]:
        return _serve()
    try:
        return run(_parser().parse_args(arguments))
    except GradingUsageError as error:
        sys.stderr.write(f"ctxlab: {error}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("ctxlab: interrupted (what was graded is kept for the next run)\n")
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
