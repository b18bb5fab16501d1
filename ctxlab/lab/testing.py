"""Run one lab's tests from its notebook: ``run_lab_tests("11.3")``.

The last cell of every lab notebook calls this. It runs ``pytest -m "lab11_3 and not slow"``
(with the light Hypothesis profile of :mod:`ctxlab.lab.pytest_light`) on the
repository's ``tests/`` folder in a fresh interpreter (never the notebooks: nbval is switched
off, so the tests do not re-run the notebook that called them) and prints a summary that does
not change when tests are added: no counts, no timings, only the names of failing tests.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["LabTestReport", "lab_marker", "run_lab_tests", "tests_folder"]

_LAB = re.compile(r"11\.[1-5]")
_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.MULTILINE)


@dataclass(frozen=True)
class LabTestReport:
    """What :func:`run_lab_tests` found. ``summary`` is the line it printed."""

    lab: str
    passed: bool
    failed: tuple[str, ...] = ()
    summary: str = ""

    def __str__(self) -> str:
        return self.summary

    def __repr__(self) -> str:
        return self.summary


def lab_marker(lab: str) -> str:
    """``"11.3"`` -> ``"lab11_3"``; anything else is a ``ValueError`` naming the lab."""
    if not isinstance(lab, str) or not _LAB.fullmatch(lab):
        raise ValueError(f"lab must be one of '11.1' ... '11.5', got {lab!r}")
    return "lab" + lab.replace(".", "_")


def tests_folder() -> Path:
    """``<repo>/tests``, where the repository is the folder holding the ``ctxlab`` package."""
    return Path(__file__).resolve().parent.parent.parent / "tests"


def _summarise(lab: str, returncode: int, output: str) -> LabTestReport:
    failed = tuple(dict.fromkeys(_FAILED.findall(output)))
    if returncode == 0:
        return LabTestReport(lab, True, (), f"Lab {lab} tests: all passed ✔")
    if returncode == 5:
        summary = f"Lab {lab} tests: none are tagged {lab_marker(lab)} yet"
        return LabTestReport(lab, True, (), summary)
    if failed:
        lines = [f"Lab {lab} tests: {len(failed)} not passing yet ✘"]
        lines += [f"  - {name}" for name in failed]
        lines.append(f"Run them in a terminal for details: pytest -m {lab_marker(lab)} tests")
        return LabTestReport(lab, False, failed, "\n".join(lines))
    tail = "\n".join(output.strip().splitlines()[-5:])
    return LabTestReport(
        lab,
        False,
        (),
        f"Lab {lab} tests: pytest could not run them (exit code {returncode}) ✘\n{tail}",
    )


def run_lab_tests(lab: str, *, tests_dir: Path | None = None, quiet: bool = False) -> LabTestReport:
    """Run ``pytest -m lab11_N`` on the tests folder and print a stable summary.

    ``tests_dir`` defaults to :func:`tests_folder`. When that folder does not exist (ctxlab
    was installed without its repository) the report says where the tests live instead.
    """
    marker = lab_marker(lab)
    folder = tests_folder() if tests_dir is None else Path(tests_dir)
    if not folder.is_dir():
        report = LabTestReport(
            lab,
            False,
            (),
            f"Lab {lab} tests: the tests ship with the ctxlab repository, not with the "
            "installed package. Clone the repository and open the notebook from there "
            "to run them.",
        )
    else:
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-m",
            f"{marker} and not slow",
            "-q",
            "-rfE",
            "--no-header",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            "-p",
            "no:nbval",
            "-p",
            "ctxlab.lab.pytest_light",
            # The project's addopts switch nbval on; clear them for this run.
            "-o",
            "addopts=",
            "--strict-markers",
            str(folder),
        ]
        completed = subprocess.run(
            command,
            cwd=folder.parent,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            check=False,
        )
        report = _summarise(lab, completed.returncode, completed.stdout + completed.stderr)
    if not quiet:
        print(report.summary)
    return report
