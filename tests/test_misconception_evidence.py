"""The catalogue's evidence is what its buggy files answer (issue 33).

``ctxlab/lab/grading/catalogue/lab11_N.json`` stores, per misconception, a few inputs and
the answers ``tests/misconceptions/lab11_N/<slug>.py`` gives there; grading compares a
student's answers with them and runs no buggy code. This test writes the evidence again from
the files (``tests/misconception_evidence.py``) and fails when a file has drifted.
"""

from __future__ import annotations

import pytest

import misconception_evidence
from ctxlab.lab.grading import LABS
from ctxlab.lab.grading.labs import catalogue

pytestmark = [pytest.mark.teaching, pytest.mark.misconceptions]


@pytest.mark.parametrize("lab", LABS)
def test_the_stored_evidence_is_what_the_buggy_files_answer(lab: str) -> None:
    path = misconception_evidence._path(lab)
    assert path.read_text(encoding="utf-8") == misconception_evidence.written(lab), (
        f"{path.name} is stale: run python tests/misconception_evidence.py"
    )


@pytest.mark.parametrize("lab", LABS)
def test_every_misconception_has_evidence_that_differs_from_the_reference(lab: str) -> None:
    for item in catalogue(lab):
        assert 1 <= len(item.evidence) <= misconception_evidence.REFUSALS, item.id
