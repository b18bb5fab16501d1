"""Generator of notebooks/11.2-interaction-groups.ipynb (run from the repository root)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from nbgen import code, lab_tests, md, notes, widget, write  # noqa: E402

CELLS = [
    md(
        """
# Lab 11.2 — 两个 tool result 仍属于 u3 开始的同一组
## Both tool results still belong to the group `u3` starts

**Learning goals.** After this lab you can

1. cut a path into whole user interactions with `group_interactions`, skipping system messages;
2. pair tool calls and results **by id**, whatever their order on the path;
3. say where a budget may cut the path (only between groups) and why;
4. read the errors for an unknown call id, a missing result and duplicates.
""",
        "slide",
    ),
    code(
        """
%matplotlib inline
import ctxlab
from ctxlab import fixtures
from ctxlab.lab import exercises, plots, setup_notebook, tables, widgets

setup_notebook()
path = fixtures.opening_path()
"""
    ),
    md(
        """
## § Groups — each user message opens one

`sys` records prompt state and belongs to **no** group. `u1`, `u2` and `u3` each open a group
that runs up to the next user message.

**Predict, then run.** How many groups? Which group holds `r-read`?
""",
        "slide",
    ),
    code(
        """
tables.grouping_styler(path)
"""
    ),
    md(
        """
## § Pairing by id, not by position

`calls` declares `read-1` then `test-1`; the test finished first, so `r-test` stands before
`r-read`. Pairing reads only ids.

**Predict, then run.** Which result answers `read-1`?
""",
        "slide",
    ),
    code(
        """
tables.pairing_matrix(path)
"""
    ),
    notes(
        "Four relations, checked when a group closes: each call id declared once; each result "
        "names a call of the same group; at most one result per call; every call answered."
    ),
    md(
        """
## § Where may the budget cut?

The budget keeps or drops whole groups, so a cut may only fall between two groups:
`a1|u2` and `a2|u3`. A cut inside group 3 (`calls|r-test`, `r-test|r-read`, `r-read|a3`)
would lose part of a tool round trip.

**Predict, then run.** How many legal cut points does the path have?
""",
        "slide",
    ),
    code(
        """
fig = plots.timeline_figure(path)
fig
"""
    ),
    code(
        """
for cut in tables.cut_points(path):
    print(f"{cut.label:15} {'legal ✔' if cut.legal else 'inside a group ✘'}")
""",
        "fragment",
    ),
    md(
        """
## § 损坏记录在进入预算前就会被拒绝 — Broken pairings are refused

The chapter changes `r-test.toolCallId` from `test-1` to `unknown-1`. We add a missing
result, a duplicate result, a duplicate call, and a reordering that is still valid.

**Predict, then run.** Which of the five cases are accepted? What does each error name?
""",
        "slide",
    ),
    code(
        """
tables.grouping_errors_table()
"""
    ),
    md(
        """
### Widget — reorder the results or corrupt an id

The checked cell shows the widget's pure view at its initial values.
""",
        "subslide",
    ),
    code(
        """
view = widgets.grouping_view(widgets.GROUPING_ORDERS[0], widgets.R_TEST_ANSWERS[0])
print(view.verdict)
print(view.pairing)
"""
    ),
    widget(
        """
widgets.build_grouping_widget()
"""
    ),
    md(
        """
## Exercise A — the group `u3` starts

Write the ids of the group that `u3` starts, **in path order**, as a list of strings.
""",
        "slide",
    ),
    code(
        """
group_of_u3 = ...  # e.g. ["u3", ...]
exercises.check_group_of_u3(group_of_u3)
"""
    ),
    md(
        """
## Exercise B — every legal cut

List every place where the budget may cut the opening path, each as `"x|y"`.
""",
        "subslide",
    ),
    code(
        """
legal_cuts = ...  # e.g. ["x|y", ...]
exercises.check_legal_cuts(legal_cuts)
"""
    ),
    md(
        """
## Exercise C — which entry does the error name?

In the chapter's corruption (`fixtures.unknown_call_path()`), which entry id does the
grouping error name? Give one id as a string.
""",
        "subslide",
    ),
    code(
        """
named_entry = ...
exercises.check_error_entry(named_entry)
"""
    ),
    md(
        """
## Check your lab — Lab 11.2 tests
""",
        "slide",
    ),
    lab_tests(
        """
report = ctxlab.lab.run_lab_tests("11.2")
"""
    ),
]

if __name__ == "__main__":
    print(write("11.2-interaction-groups", CELLS))
