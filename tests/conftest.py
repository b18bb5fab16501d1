"""Shared pytest setup: Hypothesis profiles, the markers, and ``--ctxlab-impl``.

Markers (registered in pyproject.toml; ``pytest --markers`` lists them):

* ``lab11_1`` ... ``lab11_5`` -- exactly the chapter's checks of one lab
  (tests/test_lab_checks_chapter.py), the twin of the course's
  ``node --test --test-name-pattern="Lab 11.N"``. ``pytest -m lab11_3`` runs them against
  ctxlab's reference; ``pytest -m lab11_3 --ctxlab-impl=my_lab.py`` runs them against the
  functions defined in ``my_lab.py`` (a student's own code). That file is imported and
  called only in a sandboxed child process, one per lab
  (:func:`ctxlab.lab.grading.sandbox.grade_file`): only plain JSON comes back, and every
  verdict is made in this process, where the student's code never ran.
* ``reference``, ``window``, ``store``, ``fuzz``, ``cli``, ``teaching``, ``interop``,
  ``packaging`` -- ctxlab's other tests.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# Students' laptops and CI machines are slow or shared (CI has 2 cores): timing is not
# what these tests check, so there is no per-example deadline and no "input generation
# is slow" health check (it fired on a loaded machine). CI also prints the reproduction
# blob of any failing example so it can be replayed locally.
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", settings.get_profile("dev"), print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

_IMPL_KEY = pytest.StashKey[Path]()
_WORKERS_KEY = pytest.StashKey[dict[str, Any]]()  # lab -> sandbox.GradeOutcome
_LAB_MARKERS = {f"lab11_{n}": f"11.{n}" for n in range(1, 6)}
_CHAPTER_CHECKS = Path(__file__).resolve().parent / "test_lab_checks_chapter.py"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--ctxlab-impl",
        metavar="PATH.py",
        default=None,
        help="run the chapter checks (-m lab11_N) against the functions defined in this "
        "Python file instead of ctxlab's reference; the file is imported and run only in a "
        "separate process (only the chapter's checks are collected)",
    )
    parser.addoption(
        "--ctxlab-time-limit",
        metavar="SECONDS",
        type=float,
        default=None,
        help="with --ctxlab-impl: the time limit of one check (default 10)",
    )


def pytest_configure(config: pytest.Config) -> None:
    option = config.getoption("--ctxlab-impl")
    if option:
        # Only checked here: the file is imported in a child process (ctxlab.lab.grading
        # .worker), never in this one, so nothing in it can touch the checks or verdicts.
        path = Path(option).expanduser().resolve()
        if not path.is_file():
            raise pytest.UsageError(f"--ctxlab-impl: no such file: {path}")
        config.stash[_IMPL_KEY] = path
        config.stash[_WORKERS_KEY] = {}
        if config.args_source == pytest.Config.ArgsSource.TESTPATHS:
            # No path given (the README's command): collect only the chapter's checks, not
            # the rest of tests/ and notebooks/ (the hook below cannot see notebooks/).
            config.args[:] = [str(_CHAPTER_CHECKS)]


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """With ``--ctxlab-impl`` only the chapter's checks are collected (fast, and nothing
    else of the repository needs to import)."""
    if config.stash.get(_IMPL_KEY, None) is None:
        return None
    path = collection_path.resolve()
    if path == _CHAPTER_CHECKS or path in _CHAPTER_CHECKS.parents:
        return None
    return True


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """After ``-m`` deselection: grade the file once per lab left to check, in the sandbox
    (:func:`ctxlab.lab.grading.sandbox.grade_file`); each test then shows its row. A file
    that does not import or define the lab's function is a usage error, and so is one that
    changed the grader's files (grading stops there)."""
    path = config.stash.get(_IMPL_KEY, None)
    if path is None:
        return
    from ctxlab.lab.grading.sandbox import grade_file, missing_protections

    # First of all, even with -q: what the sandbox of this platform lacks.
    missing = missing_protections()
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    lines = (
        ["ctxlab sandbox: MISSING PROTECTIONS (a submission is untrusted code):"]
        + [f"  - {line}" for line in missing]
        if missing
        else ["ctxlab sandbox: every protection is in place (bubblewrap, limits)"]
    )
    for line in lines:
        if reporter is not None:
            reporter.write_line(line, yellow=bool(missing))
        else:  # pragma: no cover - no terminal reporter (-p no:terminal)
            print(line)
    limit = config.getoption("--ctxlab-time-limit")
    outcomes = config.stash[_WORKERS_KEY]
    for lab in sorted(
        {
            lab
            for item in items
            for marker, lab in _LAB_MARKERS.items()
            if item.get_closest_marker(marker) is not None
        }
    ):
        outcome = outcomes[lab] = grade_file(path, lab, time_limit=limit)
        if outcome.status in ("invalid", "refused"):
            raise pytest.UsageError(f"--ctxlab-impl: Lab {lab}: {outcome.status}: {outcome.reason}")


@pytest.fixture
def judge_behaviour(request: pytest.FixtureRequest) -> Callable[[str, str], tuple[bool, str]]:
    """``judge_behaviour("11.3", "worked_example_31")`` -> (passed, what to show).

    Without ``--ctxlab-impl``: ctxlab's reference, checked in this process. With it: the
    file's function, graded once per lab in the sandbox (grade_file); the verdict is made here.
    """
    from ctxlab.lab.grading import check_behaviour, reference_functions

    outcomes = request.config.stash.get(_WORKERS_KEY, None)

    def judge(lab: str, key: str) -> tuple[bool, str]:
        if outcomes is None:
            result = check_behaviour(lab, key, **reference_functions(lab))
            return result.passed, f"{result.behaviour_en}\n{result.detail_en}"
        report = outcomes[lab].report
        row = next(r for r in report.results if r.key == key)
        if row.output:  # what the student's function printed (escaped; pytest shows it)
            print(row.output, end="" if row.output.endswith("\n") else "\n")
        if row.passed:
            return True, row.behaviour_en
        return False, f"{row.behaviour_en}\n{row.detail_en}"

    return judge


@pytest.fixture
def zh() -> Iterator[None]:
    """The teaching layer speaks Chinese for one test, English again afterwards."""
    from ctxlab.lab.language import set_language

    set_language("zh")
    try:
        yield
    finally:
        set_language("en")
