"""Shared pytest setup: Hypothesis profiles, the markers, and ``--ctxlab-impl``.

Markers (registered in pyproject.toml; ``pytest --markers`` lists them):

* ``lab11_1`` ... ``lab11_5`` -- exactly the checks of one lab
  (tests/test_lab_checks_chapter.py), the twin of the course's
  ``node --test --test-name-pattern="Lab 11.N"``: the chapter's rows, which decide the lab,
  and ctxlab's optional extras, which on a student's file are reported (a warning and a
  summary at the end), never failed. ``pytest -m lab11_3`` runs them against
  ctxlab's reference; ``pytest -m lab11_3 --ctxlab-impl=my_lab.py`` runs them against the
  functions defined in ``my_lab.py`` (a student's own code). That file is imported and
  called only in a sandboxed child process, one per lab
  (:func:`ctxlab.lab.grading.sandbox.grade_file`): only plain JSON comes back, and every
  verdict is made in this process, where the student's code never ran.
* ``misconceptions`` -- the misconception catalogue of each lab run against its buggy
  implementations in tests/misconceptions (tests/test_misconceptions.py).
* ``reference``, ``window``, ``store``, ``fuzz``, ``cli``, ``teaching``, ``interop``,
  ``packaging`` -- ctxlab's other tests.
"""

from __future__ import annotations

import os
import warnings
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
# The lab checks' random rows draw from one seed in every test (and every notebook kernel or
# child process a test starts) unless a test passes its own; with --ctxlab-impl (a student's
# file) a fresh one each run unless CTXLAB_SEED was set before.
_SEED_GIVEN = "CTXLAB_SEED" in os.environ
os.environ.setdefault("CTXLAB_SEED", "2026")

_IMPL_KEY = pytest.StashKey[Path]()
_WORKERS_KEY = pytest.StashKey[dict[str, Any]]()  # lab -> sandbox.GradeOutcome
#: ctxlab's extra rows judged on a student's file: (lab, key, passed, message).
_EXTRAS_KEY = pytest.StashKey[list[tuple[str, str, bool, str]]]()
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
        # .child), never in this one, so nothing in it can touch the checks or verdicts.
        path = Path(option).expanduser().resolve()
        if not path.is_file():
            raise pytest.UsageError(f"--ctxlab-impl: no such file: {path}")
        config.stash[_IMPL_KEY] = path
        config.stash[_WORKERS_KEY] = {}
        if not _SEED_GIVEN:
            os.environ.pop("CTXLAB_SEED", None)
        if config.args_source == pytest.Config.ArgsSource.TESTPATHS:
            # No path given (the README's command): collect only the chapter's checks, not
            # the rest of tests/ and notebooks/ (the hook below cannot see notebooks/).
            config.args[:] = [str(_CHAPTER_CHECKS)]


def _hint_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """With ``--ctxlab-impl``: per lab with a failed row, the hint of the misconception the
    function behaves like (the notebook's first rung; none without evidence), then the row
    to start with and the rows the same mistake explains, folded (issue 33), in both
    languages."""
    from ctxlab.lab.grading.misconceptions import hint_lines

    for lab, outcome in sorted(config.stash.get(_WORKERS_KEY, {}).items()):
        report = outcome.report
        head, folded = (None, ()) if report is None else report.lead
        if report is None or head is None:
            continue
        matched = report.matches()
        title = f"hint / 提示 ({matched[0].id})" if matched else "start here / 从这里开始"
        terminalreporter.write_sep("-", f"Lab {lab}: {title}")
        if matched:
            # Labelled as the notebook's: a hint on ctxlab's own rule says it is optional.
            text = hint_lines(matched[0], 1, passed=report.passed)
            terminalreporter.write_line(text.en)
            terminalreporter.write_line(text.zh)
        terminalreporter.write_line(f"Start with / 先看：{head.key} — {head.behaviour_en}")
        terminalreporter.write_line(f"  {head.behaviour_zh}")
        if folded:
            keys = ", ".join(row.key for row in folded)
            text = report.fold_text
            terminalreporter.write_line(f"{text.en} {keys}")
            terminalreporter.write_line(f"{text.zh} {keys}")


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
    from ctxlab.lab.grading.confine import missing_protections
    from ctxlab.lab.grading.sandbox import grade_file

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
        if outcome.report is not None and outcome.report.seed_line() and reporter is not None:
            reporter.write_line(f"Lab {lab}: {outcome.report.seed_line()}")


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
        # both languages: the terminal route is the one to trust, for every student
        return False, f"{row.behaviour_en}\n{row.detail_en}\n{row.behaviour_zh}\n{row.detail_zh}"

    return judge


class CtxlabExtraWarning(UserWarning):
    """One of ctxlab's optional extra rows did not pass on the student's file."""


@pytest.fixture
def report_extra(request: pytest.FixtureRequest) -> Callable[[str, str, bool, str], None]:
    """``report_extra(lab, key, passed, message)`` for one of ctxlab's extra rows.

    On ctxlab's reference (no ``--ctxlab-impl``) an extra row must pass like any test. On a
    student's file it never fails the run: a failed extra is a warning, and every extra
    row is counted in the "ctxlab's extras (optional)" summary at the end.
    """
    impl = request.config.stash.get(_IMPL_KEY, None)

    def report(lab: str, key: str, passed: bool, message: str) -> None:
        if impl is None:
            assert passed, message
            return
        request.config.stash.setdefault(_EXTRAS_KEY, []).append((lab, key, passed, message))
        if not passed:
            warnings.warn(
                CtxlabExtraWarning(
                    f"ctxlab's extra (optional) {lab} {key} did not pass; the lab is judged by"
                    f" the chapter's rows alone:\n{message}"
                ),
                stacklevel=2,
            )

    return report


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """After a run on a student's file: ctxlab's extra rows, per lab, with their own count,
    then one hint per lab whose failures match a catalogued misconception."""
    _extras_summary(terminalreporter, config)
    _hint_summary(terminalreporter, config)


def _extras_summary(terminalreporter: Any, config: pytest.Config) -> None:
    extras = config.stash.get(_EXTRAS_KEY, [])
    if not extras:
        return
    terminalreporter.write_sep("-", "ctxlab's extras (optional) / ctxlab 的扩展检查（选做）")
    for lab in sorted({row[0] for row in extras}):
        rows = [row for row in extras if row[0] == lab]
        done = sum(passed for _, _, passed, _ in rows)
        terminalreporter.write_line(
            f"Lab {lab}: {done}/{len(rows)} pass (they do not decide the lab)"
            f" / 实验 {lab}：通过 {done}/{len(rows)} 项（不影响本实验是否通过）"
        )
        for _, key, passed, message in rows:
            if not passed:
                first = message.splitlines()[1] if "\n" in message else message
                terminalreporter.write_line(f"  ✘ {key}: {first}")


@pytest.fixture
def zh() -> Iterator[None]:
    """The teaching layer speaks Chinese for one test, English again afterwards."""
    from ctxlab.lab.language import set_language

    set_language("zh")
    try:
        yield
    finally:
        set_language("en")
