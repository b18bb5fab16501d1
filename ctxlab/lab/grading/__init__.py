"""Judging a student's own code: ``check_implementation(lab, **functions)`` (spec §10).

In each lab of chapter 11 the student writes the chapter's function (``lab_keyword(lab)``:
11.1 ``parse_compaction_entry``, 11.2 ``group_interactions``, 11.3 and 11.5
``build_context``, 11.4 ``create_compaction_entry``) and the lab's rows judge it: the
chapter's rules (quoted) decide the verdict, ctxlab's extensions (with why) are optional
extras. A wrong, crashing, hanging or printing function is a failed row with a plain
message, never an exception; on Linux it runs in a forked child (:func:`set_isolation`),
each check within :func:`set_time_limit` (10 s). ``import ctxlab.lab.grading`` loads no lab.
A module's public names are those without a leading underscore; the package's, its ``__all__``.

===============================  =========================================================
:mod:`.lab11_1` ... ``lab11_5``  one lab: ``LAB`` and its rows; catalogue/lab11_N.json
:mod:`.declare`                  :class:`LabChecks`, how a lab's file declares its rows
:mod:`.labs`                     where each lab's file is; :func:`check_implementation`
:mod:`.engine`                   the one loop: each row run through a caller; time limit
:mod:`.inprocess`                the in-process caller; ctxlab's objects put back
:mod:`.runner`                   its clock (thread or trace hook); the switch
:mod:`.calls`                    calling the student's function under watch (``Trial``)
:mod:`.perform`                  one watched call, as a plain record
:mod:`.plain`                    a call's values as exact plain data, and back
:mod:`.sandbox`                  one student's file graded in a sandboxed child
:mod:`.child`                    the child-process caller (spawned or forked) and the
                                 child's side: import the file, answer calls
:mod:`.confine`                  the spawned child's walls (bubblewrap, rlimits)
:mod:`.report`                   :class:`LabReport` and :class:`CheckResult`
:mod:`.misconceptions`           the catalogue, its evidence, the hint ladder
:mod:`.cases`                    crafted inputs (messages and paths priced by tags)
:mod:`.expect`                   comparisons several labs share: the first difference, named
:mod:`.drawn`                    random rows: cases drawn from a seed, shrunk on failure
:mod:`.drawn_entries`            random compaction entries, and broken ones
:mod:`.text`                     bilingual text and plain descriptions of values
:mod:`.usage`                    :class:`GradingUsageError`, the one usage error
:mod:`.batch`                    ``ctxlab grade``: a class in grading processes; the cache
:mod:`.graded`                   :class:`~.graded.GradedLab`, one graded (student, lab), and
                                 every output: ``grades.csv``, ``rows.csv``, Gradescope,
                                 ``report.html`` (``templates/``)
:mod:`.submissions`              a class's submissions: students, each lab's code
===============================  =========================================================
"""

from __future__ import annotations

from typing import Any

import ctxlab.lab.grading.labs as labs
from ctxlab.lab.grading.engine import get_time_limit, set_time_limit
from ctxlab.lab.grading.labs import (
    LABS,
    behaviour_keys,
    behaviour_source,
    check_behaviour,
    check_implementation,
    lab_keyword,
    reference_functions,
)
from ctxlab.lab.grading.report import CheckResult, LabReport
from ctxlab.lab.grading.runner import get_isolation, set_isolation
from ctxlab.lab.grading.usage import GradingUsageError

__all__ = [
    "LABS",
    "CheckResult",
    "GradingUsageError",
    "LabReport",
    "behaviour_keys",
    "behaviour_source",
    "check_behaviour",
    "check_implementation",
    "get_isolation",
    "get_time_limit",
    "lab_keyword",
    "parse_compaction_entry",
    "reference_functions",
    "set_isolation",
    "set_time_limit",
]


def __getattr__(name: str) -> Any:
    """``parse_compaction_entry``: Lab 11.1's reference, loaded with its lab."""
    if name == "parse_compaction_entry":
        return labs.load("11.1").reference
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
