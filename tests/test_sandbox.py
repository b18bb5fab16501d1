"""The sandboxed runner's parts (issue 25): the child's ctxlab without the solution, the
fingerprint of the grader's files, escaping, the outcome of each kind of submission.

The hostile submissions themselves are in tests/test_hostile.py (marker ``hostile``).
"""

from __future__ import annotations

import importlib.util
import itertools
import marshal
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ctxlab.lab.grading import behaviour_keys, lab_keyword, sandbox
from ctxlab.lab.grading.child import ChildGone, InChild, escape
from ctxlab.lab.grading.confine import missing_protections
from ctxlab.lab.grading.engine import run_rows
from ctxlab.lab.grading.labs import load
from ctxlab.lab.grading.runner import clock
from ctxlab.lab.grading.sandbox import (
    GradeOutcome,
    _compiled_from_source,
    _touched,
    child_tree,
    fingerprint,
    grade_file,
    stubs,
)

pytestmark = pytest.mark.teaching

ROOT = Path(__file__).resolve().parent.parent
STUDENTS = ROOT / "tests" / "students"


@pytest.mark.parametrize("lab", [f"11.{n}" for n in range(1, 6)])
def test_the_childs_ctxlab_holds_no_solution_of_the_lab_but_the_earlier_labs(lab: str) -> None:
    lib = child_tree(lab)
    keyword = lab_keyword(lab)
    probe = (
        "import inspect, sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "import ctxlab, ctxlab.lab.grading.lab11_1 as g\n"
        "from ctxlab.errors import CtxlabError\n"
        "target = g.parse_compaction_entry if sys.argv[2] == '11.1' else"
        f" getattr(ctxlab, {keyword!r})\n"
        "params = inspect.signature(target).parameters.values()\n"
        "args = [None for p in params if p.kind == p.POSITIONAL_OR_KEYWORD]\n"
        "kwargs = {p.name: None for p in params if p.kind == p.KEYWORD_ONLY}\n"
        "try:\n    target(*args, **kwargs)\nexcept CtxlabError as e:\n    print('STUB', e)\n"
        "except Exception as e:\n    print('RAN', type(e).__name__)\n"
        "print('GROUPS', ctxlab.group_interactions([]) == [] if sys.argv[2] != '11.2' else '-')\n"
    )
    run = subprocess.run(
        [sys.executable, "-I", "-S", "-c", probe, str(lib), lab],
        capture_output=True,
        text=True,
        check=True,
    )
    assert f"STUB ctxlab's {keyword} is not available while Lab {lab} is graded" in run.stdout
    if lab != "11.2":  # Lab 11.2's reference stays for the labs after it
        assert "GROUPS True" in run.stdout, run.stdout
    for module in stubs(lab):  # no pyc of the original, no source of the solution
        text = (lib / "ctxlab" / module).read_text(encoding="utf-8")
        assert "is not available while Lab" in text


def test_escape_shows_control_characters_and_keeps_text() -> None:
    assert escape("a\x1b[2Jb\x07\u202ec") == "a\\x1b[2Jb\\x07\\u202ec"
    assert escape("line\nnext") == "line\nnext"
    assert escape("line\nnext", newlines=True) == "line\\nnext"
    assert escape("中文 ✔") == "中文 ✔"


def test_a_forged_pyc_with_the_sources_mtime_and_size_is_a_change(tmp_path: Path) -> None:
    source = tmp_path / "mod.py"
    source.write_text("x = 1\n", encoding="utf-8")
    cache = Path(importlib.util.cache_from_source(str(source)))
    before = fingerprint()
    subprocess.run(
        [sys.executable, "-c", f"import py_compile; py_compile.compile({str(source)!r})"],
        check=True,
    )
    assert _compiled_from_source(str(cache))  # what Python itself writes: no change
    st = source.stat()
    data = cache.read_bytes()
    forged = data[:16] + marshal.dumps(compile("x = 2\n", str(source), "exec"))
    cache.write_bytes(forged)
    os.utime(cache, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert not _compiled_from_source(str(cache))
    # _touched names new and changed files, not a folder's own times
    folder = str(tmp_path)
    before = {**before, folder: (1, 1, 1, 1, 0o40755)}
    after = {**before, str(cache): (1, 2, 3, 4, 0o100644), folder: (2, 2, 2, 2, 0o40755)}
    assert _touched(before, after) == [str(cache)]
    assert _touched(before, {**after, folder + "/new": (0, 0, 0, 0, 0o40755)}) == sorted(
        [str(cache), folder + "/new"]
    )


def test_every_kind_of_submission_has_an_outcome(tmp_path: Path) -> None:
    def grade(code: str) -> GradeOutcome:
        path = tmp_path / f"s{time.monotonic_ns()}.py"
        path.write_text(code, encoding="utf-8")
        return grade_file(path, "11.2", time_limit=2)

    right = grade_file(STUDENTS / "right" / "lab11_2.py", "11.2")
    assert right.status == "ok" and right.reason == "" and right.report is not None
    assert right.report.passed and len(right.report.results) == len(behaviour_keys("11.2"))
    assert right.cpu_seconds > 0 and right.seconds > 0
    wrong = grade_file(STUDENTS / "wrong" / "lab11_2.py", "11.2")
    assert wrong.status == "ok" and wrong.report is not None and not wrong.report.passed
    assert grade("def group_interactions(:\n").status == "invalid"
    missing = grade("x = 1\n")
    assert missing.status == "invalid" and "defines no function group_interactions()" in (
        missing.reason
    )
    hang = grade("def group_interactions(entries):\n    while True:\n        pass\n")
    assert hang.status == "timeout" and hang.report is not None
    assert 2 <= hang.seconds < 2 + 10  # ended by the clock, not after every row's 2 s
    dies = grade("import os\ndef group_interactions(entries):\n    os._exit(3)\n")
    assert dies.status == "crashed" and "exited with code 3" in dies.reason
    # one time limit for all the checks lost, not 2 s each (the sharing itself is
    # test_checks_lost_to_a_dying_child_share_one_time_limit; a loaded CI machine starts
    # each new child slowly, so the clock here gets room)
    assert dies.seconds < 2 + 10
    noisy = grade("def group_interactions(entries):\n    print('\\x1b[2J')\n    return []\n")
    assert noisy.report is not None and "\\x1b[2J" in noisy.report.results[0].output
    assert "\x1b" not in noisy.report.results[0].output
    assert grade_file(tmp_path / "nothing.py", "11.2").status == "invalid"


def test_checks_lost_to_a_dying_child_share_one_time_limit() -> None:
    asked: list[float] = []

    class Child:  # a child that dies 0.3 s into each call
        arg_names = ("entries",)
        forked = started = False
        how = None

        def alive(self) -> bool:
            return True

        def call(self, args: object, kwargs: object, deadline: float) -> object:
            asked.append(deadline - clock())
            time.sleep(0.3)
            raise ChildGone("it exited")

        def stop(self, **how: object) -> None:
            return None

        def stderr_text(self) -> str:
            return ""

    caller = InChild(Child())  # type: ignore[arg-type]
    steps = load("11.2").steps
    results, _ = run_rows(steps, caller, 1.0)
    assert caller.status == "crashed" and 1 <= len(asked) <= 4  # 0.3 s each, 1 s in all
    assert all(later < earlier for earlier, later in itertools.pairwise(asked))
    assert 0.9 < asked[0] <= 1.0 and all(limit > 0 for limit in asked)
    lost = [r for r in results[len(asked) :] if not r.passed]
    assert len(lost) == len(steps) - len(asked)
    assert all("kept dying" in r.detail_en for r in lost)


BUSY = (
    "import time\n"
    "def group_interactions(entries):\n"
    "    end = time.process_time() + {seconds}\n"
    "    while time.process_time() < end:\n"
    "        pass\n"
    "    return []\n"
)


def test_checks_that_each_take_cpu_time_within_the_limit_are_not_killed(tmp_path: Path) -> None:
    # 0.4 s of CPU in each of the 17 checks, 3 s per check (room for a loaded machine, where
    # 0.4 s of CPU takes seconds): the child's CPU time adds up over the lab to more than one
    # check's limit and must not end it (CI once read it a crash)
    path = tmp_path / "slow.py"
    path.write_text(BUSY.format(seconds=0.4), encoding="utf-8")
    outcome = grade_file(path, "11.2", time_limit=3)
    assert outcome.status == "ok", outcome.reason
    assert outcome.report is not None and outcome.cpu_seconds > 3 + 1


def test_a_child_out_of_cpu_time_is_a_timeout_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not hasattr(signal, "SIGXCPU"):
        pytest.skip("no CPU-time limit on this platform (said at the top)")
    monkeypatch.setattr(sandbox, "_cpu_budget", lambda limit, checks: 1)
    path = tmp_path / "spin.py"
    path.write_text(BUSY.format(seconds=30), encoding="utf-8")
    outcome = grade_file(path, "11.2", time_limit=20)
    assert outcome.status == "timeout", outcome.reason
    assert outcome.seconds < 10  # ended by the CPU limit (1 s), not by the clock (20 s)
    assert outcome.report is not None
    first = outcome.report.results[0]
    assert "used up its CPU time (1 s for the whole lab" in first.detail_en
    assert "用完了它的 CPU 时间" in first.detail_zh
    assert all("not run" in r.detail_en for r in outcome.report.results[1:])


def test_missing_protections_are_plain_lines_naming_how_to_get_them() -> None:
    lines = missing_protections()
    assert all(isinstance(line, str) and "\n" not in line for line in lines)
    for line in lines:
        if "bubblewrap" in line and "install" in line:
            assert "apt-get install bubblewrap" in line and "container" in line


def test_a_fork_bomb_meets_the_process_limit(tmp_path: Path) -> None:
    if any("process-count limit does not hold" in line for line in missing_protections()):
        pytest.skip("this platform has no process-count limit for the child (said at the top)")
    path = tmp_path / "bomb.py"
    path.write_text(
        "import os, time\n"
        "def group_interactions(entries):\n"
        "    n = 0\n"
        "    for _ in range(300):\n"
        "        try:\n"
        "            pid = os.fork()\n"
        "        except OSError:\n"
        "            break\n"
        "        if pid == 0:\n"
        "            time.sleep(30)\n"
        "            os._exit(0)\n"
        "        n += 1\n"
        "    raise ValueError(f'forked {n}')\n",
        encoding="utf-8",
    )
    outcome = grade_file(path, "11.2", time_limit=3)
    assert outcome.report is not None
    detail = outcome.report.results[0].detail_en
    forked = int(detail.rsplit("forked ", 1)[1].split()[0].strip(".'\""))
    assert forked < 100, detail


def test_a_sandbox_folder_goes_once_its_owner_is_gone_and_not_while_it_is_made(
    tmp_path: Path,
) -> None:
    # owner.lock: free and written, its owner is gone; empty, its owner is making it
    gone, made = tmp_path / "ctxlab-sandbox-gone", tmp_path / "ctxlab-sandbox-made"
    for folder, pid in ((gone, "12345"), (made, "")):
        (folder / "lib-11_2").mkdir(parents=True)
        (folder / "owner.lock").write_text(pid, encoding="ascii")
    code = "from ctxlab.lab.grading.confine import sandbox_folder; print(sandbox_folder())"
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    own = Path(run.stdout.strip())
    assert own.parent == tmp_path and not own.exists()  # removed at its exit
    assert not gone.exists() and (made / "lib-11_2").is_dir()
