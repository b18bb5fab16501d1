"""A right and a wrong build-it cell of each lab, for the JupyterLite tests (issue 19).

The right cell is the instructor solution of the lab's build-it cell (``…-b02`` in
``notebooks/_src``); the wrong one is the first mutant of it (``tests/mutation_audit.py``'s
mutator, in its fixed order) that fails some rows on CPython and returns in time. The
Pyodide and browser tests run these same cells and expect the same ✔/✘ rows as CPython.
"""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

import mutation_audit  # noqa: E402

LABS = mutation_audit.LABS


def define(lab: str, code: str) -> Any:
    """Run a build-it cell in a fresh namespace; the lab's function it defines."""
    from ctxlab.lab.grading import lab_keyword

    namespace: dict[str, Any] = {"__name__": "__main__"}
    exec(compile(code, f"<lab {lab} build-it cell>", "exec"), namespace)
    return namespace[lab_keyword(lab)]


def rows(lab: str, code: str) -> list[tuple[str, bool]]:
    """(key, passed) of each row of ``check_implementation`` on the cell's function."""
    from ctxlab.lab import check_implementation
    from ctxlab.lab.grading import lab_keyword

    report = check_implementation(lab, **{lab_keyword(lab): define(lab, code)})
    return [(r.key, r.passed) for r in report.results]


def right(lab: str) -> str:
    return mutation_audit.solution(lab)[1]


@cache
def wrong(lab: str) -> str:
    """The first mutant of the solution that fails a row, with no row left unrun."""
    from ctxlab.lab import grading as g

    previous = g.set_time_limit(5)
    try:
        for mutant in mutation_audit.generate(right(lab), lab):
            try:
                got = rows(lab, mutant.source)
            except Exception:
                continue
            if not all(passed for _, passed in got) and any(passed for _, passed in got):
                return mutant.source
    finally:
        g.set_time_limit(previous)
    raise LookupError(f"lab {lab}: no mutant fails a check")  # pragma: no cover
