"""One way to run pytest in a child process, as a student runs the terminal route (tests
of ``--ctxlab-impl``): quiet, without nbval and the cache, this checkout's ctxlab first."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def pytest_command(*args: str) -> list[str]:
    """``python -m pytest`` with the flags every terminal-route test run shares."""
    return [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:nbval",  # (slow to import, and no notebook is run here)
        "-p",
        "no:langsmith_plugin",
        "-o",
        "addopts=",
        "--strict-markers",
        *args,
    ]


def pytest_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}
