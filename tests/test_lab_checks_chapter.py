"""The chapter's checks, one test per behaviour of each lab (spec §10).

``pytest -m lab11_3`` runs exactly Lab 11.3's behaviours against ctxlab's reference;
``pytest -m lab11_3 --ctxlab-impl=my_lab.py`` runs them against ``build_context`` as defined
in ``my_lab.py``, which is imported and called only in a sandboxed child process (the
conftest's ``judge_behaviour``; :func:`ctxlab.lab.grading.sandbox.grade_file`). The checks
themselves live in :mod:`ctxlab.lab.grading` (the notebook's ``check_implementation`` runs
the same ones).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ctxlab.lab.grading import LABS, behaviour_keys

CASES = [
    pytest.param(
        lab,
        key,
        marks=getattr(pytest.mark, "lab" + lab.replace(".", "_")),
        id=f"{lab}-{key}",
    )
    for lab in LABS
    for key in behaviour_keys(lab)
]


@pytest.mark.parametrize(("lab", "key"), CASES)
def test_chapter_behaviour(
    lab: str, key: str, judge_behaviour: Callable[[str, str], tuple[bool, str]]
) -> None:
    passed, message = judge_behaviour(lab, key)
    assert passed, message
