"""The lab checks, one test per behaviour of each lab (spec §10).

``pytest -m lab11_3`` runs exactly Lab 11.3's behaviours against ctxlab's reference;
``pytest -m lab11_3 --ctxlab-impl=my_lab.py`` runs them against ``build_context`` as defined
in ``my_lab.py``, which is imported and called only in a sandboxed child process (the
conftest's ``judge_behaviour``; :func:`ctxlab.lab.grading.sandbox.grade_file`). The checks
themselves live in :mod:`ctxlab.lab.grading` (the notebook's ``check_implementation`` runs
the same ones).

Two kinds of rows, as in the notebook's table: the chapter's rows decide the lab
(``test_chapter_behaviour``: a failed one fails the run); ctxlab's rows are optional extras
(``test_ctxlab_extra``): on your file a failed one is a warning and a line of the
"ctxlab's extras (optional)" summary at the end, never a failure. On ctxlab's reference
both kinds must pass.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ctxlab.lab.grading import LABS, behaviour_keys, behaviour_source


def _cases(source: str) -> list[object]:
    return [
        pytest.param(
            lab,
            key,
            marks=getattr(pytest.mark, "lab" + lab.replace(".", "_")),
            id=f"{lab}-{key}",
        )
        for lab in LABS
        for key in behaviour_keys(lab)
        if behaviour_source(lab, key) == source
    ]


@pytest.mark.parametrize(("lab", "key"), _cases("chapter"))
def test_chapter_behaviour(
    lab: str, key: str, judge_behaviour: Callable[[str, str], tuple[bool, str]]
) -> None:
    passed, message = judge_behaviour(lab, key)
    assert passed, message


@pytest.mark.parametrize(("lab", "key"), _cases("ctxlab"))
def test_ctxlab_extra(
    lab: str,
    key: str,
    judge_behaviour: Callable[[str, str], tuple[bool, str]],
    report_extra: Callable[[str, str, bool, str], None],
) -> None:
    passed, message = judge_behaviour(lab, key)
    report_extra(lab, key, passed, message)
