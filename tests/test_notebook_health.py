"""The notebook route stays healthy after a hostile function (issue 25, item 4).

``check_implementation`` is formative and runs the student's function in the kernel itself
(README, "Which result to trust"). After each of these functions, the next right answer in
the same kernel still gets every ✔ at normal speed, or the report says in plain words
that the kernel must be restarted and why. Each case runs in its own interpreter (a
kernel), as a notebook would.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.teaching

ROOT = Path(__file__).resolve().parent.parent

KERNEL = r"""
import gc, json, sys, threading, time
from ctxlab.lab import check_implementation
from ctxlab.lab.grading import set_time_limit

set_time_limit(1)
namespace = {}
exec(open("tests/students/right/lab11_2.py", encoding="utf-8").read(), namespace)
right = namespace["group_interactions"]
CASE = sys.argv[1]


def frozen_clock(entries):
    time.monotonic = lambda: 0.0
    time.perf_counter = lambda: 0.0
    while True:
        pass


def switch_interval(entries):
    sys.setswitchinterval(1000)
    while True:
        pass


def outliving_thread(entries):
    def later():
        threading.Event().wait(0.3)
        for entry in list(entries):
            object.__setattr__(entry, "id", "changed-later")
    threading.Thread(target=later, daemon=True).start()
    return []


def swallowing_loop(entries):
    while True:
        try:
            time.sleep(0.01)
        except BaseException:
            pass


hostile = check_implementation("11.2", group_interactions=globals()[CASE])
time.sleep(0.5)
clock = time.monotonic
started = clock()
after = check_implementation("11.2", group_interactions=right)
print(json.dumps({
    "hostile_passed": hostile.passed,
    "passed": after.passed,
    "failed": [r.key for r in after.results if not r.passed],
    "seconds": clock() - started,
    "notices": list(after.notices),
    "interval": sys.getswitchinterval(),
    "clock_restored": time.monotonic is clock and time.monotonic() > 0,
}))
"""


def _kernel(case: str) -> dict[str, object]:
    run = subprocess.run(
        [sys.executable, "-c", KERNEL, case],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    result: dict[str, object] = json.loads(run.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize("case", ["frozen_clock", "switch_interval", "outliving_thread"])
def test_the_next_right_answer_gets_every_tick_at_normal_speed(case: str) -> None:
    result = _kernel(case)
    assert result["hostile_passed"] is False
    assert result["passed"] is True and result["failed"] == [], result
    assert float(result["seconds"]) < 5, result  # normal speed, not a time limit per check
    assert float(result["interval"]) <= 0.05 and result["clock_restored"] is True, result


def test_a_thread_that_cannot_be_stopped_is_told_with_restart_the_kernel() -> None:
    result = _kernel("swallowing_loop")
    assert result["hostile_passed"] is False
    assert result["passed"] is True and result["failed"] == [], result
    notices = " ".join(str(n) for n in result["notices"])  # type: ignore[attr-defined]
    assert "could not be stopped" in notices and "Restart the kernel" in notices, notices
