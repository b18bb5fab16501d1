"""Judging a student's own code: ``check_implementation(lab, **functions)`` (spec §10).

In each lab of chapter 11 the student writes the chapter's function and the lab's checks
judge what the student wrote (the course's ``node --test --test-name-pattern="Lab 11.N"``):

=======  ==========================  ===================================================
lab      keyword                     the student's function
=======  ==========================  ===================================================
11.1     ``parse_compaction_entry``  ``(value)``: the compaction branch of the strict
                                     parser ("摘要先成为 session 中的一条普通事实")
11.2     ``group_interactions``      ``(entries)`` ("两个 tool result 仍属于 u3 开始的同一组")
11.3     ``build_context``           ``(active_path, *, max_tokens, reserved_output,
                                     safety_margin, estimate_tokens)`` without compaction
                                     ("31 个 token 怎样留下第二、三组")
11.4     ``create_compaction_entry`` ``(active_path, *, id, timestamp, summary,
                                     first_kept_entry_id, tokens_before)``
                                     ("compact-1 记录摘要与保留起点")
11.5     ``build_context``           as 11.3, with resume from the newest compaction and
                                     system replay across the boundary
                                     ("恢复时把最新摘要接在保留后缀前面",
                                     "system 状态跨过 compaction 边界")
=======  ==========================  ===================================================

Each lab has a list of *behaviours*, in English and Chinese, each declared with its kind
(``CheckResult.source``): the chapter's rule, with the chapter's sentence quoted (or the
course's code, as the notebook teaches it), or ctxlab's own extension, with why ctxlab
decides so. A lab is passed when every chapter row passes; ctxlab's rows are optional
extras, reported apart (``LabReport.extras_passed``).

A behaviour is checked on the chapter's worked examples -- their numbers are
written in the checks literally, they are the chapter's facts -- and on small crafted cases
whose expected result is the reference implementation's result for the same input, called
with the same arguments the student's function got.

A student's function may raise anything, return the wrong type, change its input, never
return, print, or rebind ctxlab's own functions. Each of these is a failed row with a plain
message, never an exception of the checker, and the next check in the same kernel judges
a right answer right: every check runs in a daemon thread with a time limit
(:func:`set_time_limit`, 10 s by default, read once per run) and sees ctxlab's modules as
grading found them. The report says first, in plain words, when the function is, wraps or
calls ctxlab's own solution of the lab (it is then not passed), and when earlier check
threads could not be stopped (restart the kernel); what the function printed is shown under
the row of the check that printed it. On Linux the function runs in a forked copy of the
kernel that answers each call, ended after the run or as soon as a call overruns
(:func:`set_isolation`), so nothing the function does there reaches the next check.

Every module of the package, one file per lab read by an engine that never imports a lab:

===============================  =========================================================
:mod:`.lab11_1` ... ``lab11_5``  everything of one lab: ``LAB = LabChecks(...)`` (the
                                 student's function, ctxlab's reference and solution),
                                 one ``@LAB.check(...)`` row per behaviour (kind, quote
                                 or why, and its check function); its misconception
                                 catalogue is data, ``catalogue/lab11_N.json``
:mod:`.declare`                  what a lab's file declares with (:class:`LabChecks`)
:mod:`.labs`                     where each lab's file is; :func:`check_implementation`
:mod:`.engine`                   the one loop: each row run through a *caller* (where the
                                 student's code runs), its result made, stop on a hang;
                                 the time limit
:mod:`.inprocess`                the in-process caller: ctxlab's names, objects and the
                                 switch interval put back before each row
:mod:`.runner`                   its clock: a check in a thread, or under a trace hook
                                 (Pyodide); stopping it; stuck threads; the one switch,
                                 :func:`set_isolation`, and :func:`~.runner.use_process`
:mod:`.calls`                    calling the student's function under watch (:class:`Trial`)
:mod:`.perform`                  one call of the student's function, as a plain record
:mod:`.plain`                    a call's values as exact plain data, and back
:mod:`.sandbox`                  one student's file, one lab, run in a sandboxed child
                                 process; the grader's files fingerprinted
:mod:`.child`                    the child-process caller: a child spawned on a file or
                                 forked from the kernel answers each call; the
                                 child's side: import the file, answer calls
:mod:`.confine`                  the spawned child's walls (bubblewrap, rlimits, a pids
                                 cgroup, nobody); what it left, ended; what is lacking
:mod:`.report`                   :class:`LabReport` and :class:`CheckResult` (text and table)
:mod:`.misconceptions`           a catalogue entry; matching a function to it on the
                                 entry's evidence (the check loop's last step); the ladder
:mod:`.cases`, :mod:`.compare`   crafted inputs; naming ids and the first difference
:mod:`.expect`                   what a lab expects of a student's result, shared by the
                                 labs (an entry, a ``ContextResult``, refusals)
:mod:`.drawn`                    the random rows' cases: drawn from a seed, shrunk on failure
:mod:`.drawn_entries`            compaction entries drawn and broken (Lab 11.1, 11.4)
:mod:`.text`                     bilingual text and plain descriptions of values
:mod:`.usage`                    :class:`GradingUsageError`, the one usage error
:mod:`.batch`                    ``ctxlab grade``: a class graded in grading processes;
                                 the cache
:mod:`.graded`                   :class:`~.graded.GradedLab`, one graded (student, lab),
                                 the record every output reads; the outputs:
                                 ``grades.csv``, ``rows.csv``, Gradescope's
                                 ``results.json`` and bundle, ``report.html``
                                 (``templates/``); every cell inert
:mod:`.submissions`              a class's submissions: students, each lab's code
===============================  =========================================================

A lab's file loads the first time that lab is checked; ``import ctxlab.lab.grading`` loads
none.
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
