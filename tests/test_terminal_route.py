"""The terminal route, ``pytest -m lab11_N --ctxlab-impl=PATH.py``, is the one to trust.

Issue 17, items 6 and 7: the student's file is imported and called only in a child process
(ctxlab.lab.grading.child), only plain JSON comes back, and every verdict is made in the
pytest process, where the student's code never ran. So a file that patches the grader,
peeks at its frames or patches ``Trial`` at import still fails a wrong function; a hang
costs one time limit for the whole lab (the rest: "not run"); a child that dies is a plain
failure; a function that is, or calls, the lab's reference is told so; what the student's
code prints or reads never mixes with the channel.

Each test runs pytest in a subprocess, as a student would.
"""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest

from ctxlab.lab.grading import behaviour_keys, behaviour_source
from mutation_audit import solution
from pytest_runs import pytest_command, pytest_env

pytestmark = pytest.mark.teaching

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 4.0  # the time limit of one check in these runs (--ctxlab-time-limit)
LAB_11_2 = len(behaviour_keys("11.2"))
#: Lab 11.2's chapter rows (a failed one fails the run) and ctxlab's extras (on a student's
#: file a failed one is a warning and a line of the extras summary: its test passes).
CHAPTER_11_2 = sum(behaviour_source("11.2", key) == "chapter" for key in behaviour_keys("11.2"))
EXTRAS_11_2 = LAB_11_2 - CHAPTER_11_2


def _pytest(*args: str) -> tuple[subprocess.CompletedProcess[str], int]:
    """Run pytest as the README does (no path: testpaths); (the run, pytest's pid)."""
    command = pytest_command("-rf", f"--ctxlab-time-limit={LIMIT:g}", *args)
    env = pytest_env()
    with subprocess.Popen(
        command,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        env=env,
    ) as process:
        out, err = process.communicate(timeout=300)
    return subprocess.CompletedProcess(command, process.returncode, out, err), process.pid


def _counts(out: str) -> dict[str, int]:
    last = out.strip().splitlines()[-1]
    return {word: int(n) for n, word in re.findall(r"(\d+) (failed|passed|error)", last)}


def _student(tmp_path: Path, code: str, name: str = "my_lab.py") -> Path:
    path = tmp_path / name
    path.write_text(code, encoding="utf-8")
    return path


# A wrong group_interactions (cuts at every assistant message too), with every trick of a
# determined student at import: patch the grader's modules, its row maker, Trial, and peek
# at the caller's frames for the expected value. In the notebook these run in the grader's
# process; on the terminal route they run in the child and change nothing.
CHEAT = '''
import json, os, sys

import ctxlab.lab.grading.calls as calls
import ctxlab.lab.grading.engine as engine
import ctxlab.lab.grading.report as report
from ctxlab import InteractionGroup

print("imported in", os.getpid(), "under", os.getppid())

calls.Trial.returns = lambda self, label, *args, **kwargs: None
calls.Trial.rejects = lambda self, *args, **kwargs: None
calls.fail = lambda *args, **kwargs: None
_real = report.CheckResult
report.CheckResult = lambda key, passed, *rest: _real(key, True, *rest)
engine.CheckResult = report.CheckResult
engine._result = lambda check, *rest: check.row(True)


def _peek():
    """Look up the grader's frames for what the check expects (works in-process)."""
    frame = sys._getframe(1)
    while frame is not None:
        for name in ("expected", "want", "wanted"):
            if name in frame.f_locals:
                return frame.f_locals[name]
        frame = frame.f_back
    return None


def group_interactions(entries):
    expected = _peek()
    if expected is not None:
        return expected
    groups, current = [], None
    for entry in entries:
        if entry.message.role == "system":
            continue
        if entry.message.role in ("user", "assistant") or current is None:
            if current:
                groups.append(InteractionGroup(tuple(current)))
            current = [entry]
        else:
            current.append(entry)
    if current:
        groups.append(InteractionGroup(tuple(current)))
    return groups
'''


def test_the_students_file_runs_only_in_a_child_and_its_tricks_change_no_verdict(
    tmp_path: Path,
) -> None:
    mine = _student(tmp_path, CHEAT)
    run, _ = _pytest("-m", "lab11_2", f"--ctxlab-impl={mine}")
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert "test_chapter_behaviour[11.2-three_groups]" in out
    assert "expected [u1,a1] [u2,a2] [u3,calls,r-test,r-read,a3], got [u1] [a1]" in out
    assert _counts(run.stdout).get("failed", 0) >= 1 and "error" not in _counts(run.stdout)
    ran = sum(_counts(run.stdout).values())
    assert ran == LAB_11_2, out  # exactly Lab 11.2's checks, nothing else collected


HANG = """
def group_interactions(entries):
    print("thinking...")
    while True:
        pass
"""


def test_a_hang_costs_one_time_limit_and_the_rest_of_the_lab_is_not_run(
    tmp_path: Path,
) -> None:
    mine = _student(tmp_path, HANG)
    started = time.monotonic()
    run, _ = _pytest(
        "-m", "lab11_2", f"--ctxlab-impl={mine}", "--durations=0", "-rN"
    )  # no short summary: each detail counted once
    wall = time.monotonic() - started
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert _counts(run.stdout) == {"failed": CHAPTER_11_2, "passed": EXTRAS_11_2}, out
    assert out.count(f"did not return within {LIMIT:g} s") == 1, out
    not_run = "not run: an earlier call of this lab did not return in time"
    # each chapter row after the first once; each extra in its warning and in the summary
    assert out.count(not_run) == CHAPTER_11_2 - 1 + 2 * EXTRAS_11_2, out
    assert f"Lab 11.2: 0/{EXTRAS_11_2} pass (they do not decide the lab)" in out
    # The lab took one time limit in all (not one per test) ...
    assert LIMIT <= wall < 2 * LIMIT + 60, out  # (+ starting pytest on a loaded machine)
    # ... and the hanging child is gone.
    assert not _sandboxed_processes()


def _sandboxed_processes() -> list[int]:
    """Processes that carry a sandbox run's marker in their environment (Linux)."""
    from ctxlab.lab.grading.confine import MARKER

    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if f"{MARKER}=".encode() in environ:
            found.append(int(entry.name))
    return found


CRASH = """
import os


def group_interactions(entries):
    print("bye")
    os._exit(3)
"""


def test_a_child_that_dies_fails_its_check_plainly(tmp_path: Path) -> None:
    mine = _student(tmp_path, CRASH)
    run, _ = _pytest("-m", "lab11_2", f"--ctxlab-impl={mine}")
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    # a fresh child for each check; ctxlab's extras fail too, as warnings
    assert _counts(run.stdout) == {"failed": CHAPTER_11_2, "passed": EXTRAS_11_2}, out
    assert f"Lab 11.2: 0/{EXTRAS_11_2} pass (they do not decide the lab)" in out
    assert "the process running your file exited with code 3" in out
    assert "INTERNALERROR" not in out and "Traceback" not in run.stderr


REFERENCE = """
import ctxlab


def group_interactions(entries):
    return ctxlab.group_interactions(entries)
"""


def test_a_function_that_calls_the_reference_finds_none_to_call(tmp_path: Path) -> None:
    mine = _student(tmp_path, REFERENCE)
    run, _ = _pytest("-m", "lab11_2", f"--ctxlab-impl={mine}")
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    # The child's ctxlab holds no solution of the lab being graded: there is nothing to call.
    assert "ctxlab's group_interactions is not available while Lab 11.2 is graded" in out
    # no chapter row passes; ctxlab's extras are reported apart (0 of them pass)
    assert _counts(run.stdout) == {"failed": CHAPTER_11_2, "passed": EXTRAS_11_2}, out
    assert f"Lab 11.2: 0/{EXTRAS_11_2} pass (they do not decide the lab)" in out


NOISY = """
import os, sys

print('{"ready": true}')  # at import: a line that looks like the channel's
os.write(1, b'{"returned": null}\\n')
"""


def test_what_the_students_code_prints_or_reads_does_not_touch_the_channel(
    tmp_path: Path,
) -> None:
    noise = """

_right = group_interactions


def group_interactions(entries):
    print('{"returned": [], "changed": [], "output": "", "output_cut": 0, "reference": false}')
    print("x" * 100_000)
    sys.stderr.write("\\\\n")
    os.write(1, b'{"raised": null}\\\\n')
    sys.__stdout__.write('{"returned": 1}\\\\n')
    sys.__stdout__.flush()
    try:
        input()
    except EOFError:
        pass
    return _right(entries)
"""
    _, code = solution("11.2")
    mine = _student(tmp_path, NOISY + code + noise)
    run, _ = _pytest("-m", "lab11_2", f"--ctxlab-impl={mine}")
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert _counts(run.stdout) == {"passed": LAB_11_2}, out


def test_a_right_solution_passes_and_a_file_that_fails_to_import_is_a_usage_error(
    tmp_path: Path,
) -> None:
    _, code = solution("11.3")
    run, _ = _pytest("-m", "lab11_3", f"--ctxlab-impl={_student(tmp_path, code)}")
    assert run.returncode == 0, run.stdout + run.stderr
    assert _counts(run.stdout) == {"passed": len(behaviour_keys("11.3"))}
    broken = _student(tmp_path, "import no_such_module_here\n", "broken.py")
    run, _ = _pytest("-m", "lab11_3", f"--ctxlab-impl={broken}")
    assert run.returncode == 4, run.stdout + run.stderr
    assert f"importing {broken} failed: ModuleNotFoundError" in run.stderr


def test_a_reply_that_is_not_a_calls_record_is_refused() -> None:
    from ctxlab.lab.grading.child import ChildGone, read_record

    good = {"returned": 1, "changed": [], "output": "", "output_cut": 0, "reference": False}
    assert read_record(dict(good)) == good
    # the child's word on reference use is never taken, and what it printed is escaped
    told = read_record({**good, "reference": True, "output": "\x1b[2J"})
    assert told["reference"] is False and told["output"] == "\\x1b[2J"
    for bad in (
        {**good, "extra": 1},
        {**good, "raised": {"type": "E", "base": "Exception", "message": "m"}},  # two outcomes
        {"changed": [], "output": ""},  # no outcome
        {**good, "output": 3},
        {**good, "reference": "yes"},
        {**good, "changed": [1]},
        {"raised": {"type": "E"}},
        {"worker_error": "boom"},
    ):
        with pytest.raises(ChildGone):
            read_record(bad)


STUDENTS = ROOT / "tests" / "students"


@pytest.mark.parametrize("lab", [f"11.{n}" for n in range(1, 6)])
def test_every_labs_route_passes_a_right_student_file_and_fails_a_wrong_one(lab: str) -> None:
    """Issue 25 item 2: files written the way a student writes them (tests/students/),
    through the README's command; every check of the lab runs on each."""
    marker = f"lab{lab.replace('.', '_')}"
    checks = len(behaviour_keys(lab))
    right, _ = _pytest("-m", marker, f"--ctxlab-impl={STUDENTS / 'right' / (marker + '.py')}")
    assert right.returncode == 0, right.stdout + right.stderr
    assert _counts(right.stdout) == {"passed": checks}, right.stdout
    # what the sandbox lacks here comes first, even with -q
    assert right.stdout.lstrip().startswith("ctxlab sandbox: "), right.stdout
    wrong, _ = _pytest("-m", marker, f"--ctxlab-impl={STUDENTS / 'wrong' / (marker + '.py')}")
    assert wrong.returncode == 1, wrong.stdout + wrong.stderr
    counts = _counts(wrong.stdout)
    assert counts.get("failed", 0) >= 1 and sum(counts.values()) == checks, wrong.stdout
    assert "INTERNALERROR" not in wrong.stdout + wrong.stderr


def test_the_student_files_do_not_use_ctxlabs_solution_of_their_lab() -> None:
    from ctxlab.lab.grading import lab_keyword

    for kind in ("right", "wrong"):
        for n in range(1, 6):
            code = (STUDENTS / kind / f"lab11_{n}.py").read_text(encoding="utf-8")
            assert f"def {lab_keyword(f'11.{n}')}(" in code
            assert "ctxlab.lab" not in code and "import ctxlab\n" not in code
