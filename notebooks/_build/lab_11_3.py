"""Generator of notebooks/11.3-budgeted-context.ipynb (run from the repository root)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from nbgen import code, lab_tests, md, notes, widget, write  # noqa: E402

CELLS = [
    md(
        """
# Lab 11.3 — 31 个 token 怎样留下第二、三组
## How 31 tokens keep groups 2 and 3

**Learning goals.** After this lab you can

1. compute `available_for_messages` from `max_tokens`, the replayed system message,
   `reserved_output` and `safety_margin`;
2. follow `build_context` as it keeps groups newest first and stops at the first that does not fit;
3. explain `reason`: `within_budget`, `trimmed`, `single_group_overflow`;
4. predict how the context changes as the budget grows.
""",
        "slide",
    ),
    code(
        """
%matplotlib inline
import ctxlab
from ctxlab import fixtures
from ctxlab.estimators import chars_per_token
from ctxlab.lab import exercises, plots, setup_notebook, tables, widgets

setup_notebook()
path = fixtures.opening_path()
"""
    ),
    md(
        """
## § The call

`build_context(active_path, max_tokens=31, reserved_output=4, safety_margin=2, estimate_tokens=...)`.
There is no prompt option: the system message is replayed from the path itself.

**Predict, then run.** Which entry ids are kept, and what is `reason`?
""",
        "slide",
    ),
    code(
        """
result = ctxlab.build_context(
    path,
    max_tokens=31,
    reserved_output=4,
    safety_margin=2,
    estimate_tokens=fixtures.opening_estimator,
)
print("kept:", ", ".join(result.kept_entry_ids))
print("reason:", result.reason)
print(result.to_json()["tokens"])
"""
    ),
    md(
        """
## § The ledger — 31 − 3 − 4 − 2 = 22

Group 3 (15) fits: running total 15. Group 2 (7) fits: 22. Group 1 (7) would make 29 > 22,
so the choice stops at `u2`.
""",
        "slide",
    ),
    code(
        """
tables.ledger_styler(path, max_tokens=31, reserved_output=4, safety_margin=2)
"""
    ),
    notes(
        "Every number in this table comes from build_context's result and the estimator; "
        "the table does not redo the selection."
    ),
    md(
        """
### The same budget as a picture

Fixed costs first, then each group newest first. Solid = kept, hatched = dropped.
""",
        "subslide",
    ),
    code(
        """
fig = plots.budget_figure(path, max_tokens=31, reserved_output=4, safety_margin=2)
fig
"""
    ),
    md(
        """
## § Too big on its own — `single_group_overflow`

Suppose only 10 tokens are left for messages (`max_tokens=19`: 19 − 3 − 4 − 2 = 10).

**Predict, then run.** Group 3 costs 15. Is it dropped, cut, or returned whole?
""",
        "slide",
    ),
    code(
        """
overflow = ctxlab.build_context(
    path, max_tokens=19, reserved_output=4, safety_margin=2,
    estimate_tokens=fixtures.opening_estimator,
)
print("available:", overflow.tokens.available_for_messages, "| reason:", overflow.reason)
print("kept:", ", ".join(overflow.kept_entry_ids), "| total:", overflow.tokens.total)
"""
    ),
    md(
        """
The group comes back whole and `total` (24) exceeds `max_tokens` (19): the function cannot
safely cut a call, a result or the final answer out of a group. The caller decides what
to do next (summarise, shorten tool output, switch model).
""",
        "fragment",
    ),
    md(
        """
## § Sweeping the budget

**Predict, then run.** From which `max_tokens` on are all three groups kept?
Below which value does the newest group overflow?
""",
        "slide",
    ),
    code(
        """
fig = plots.sweep_figure(path, reserved_output=4, safety_margin=2)
fig
"""
    ),
    code(
        """
sweep = tables.sweep_table(path, reserved_output=4, safety_margin=2)
sweep.groupby("reason", sort=False)["max_tokens"].agg(["min", "max"])
""",
        "fragment",
    ),
    md(
        """
### Another estimator: four characters per token

The chapter's table is a test estimator. A real agent uses a rule of thumb such as
`ceil(characters / 4)`. Same path, same budget, different prices.
""",
        "subslide",
    ),
    code(
        """
quarter = chars_per_token(4)
tables.path_table(path, estimate=quarter)[["id", "role", "text", "cost"]].assign(
    table=[fixtures.opening_estimator(e.message) for e in path]
)
"""
    ),
    md(
        """
## Widget — three sliders

The checked cell shows the widget's pure view at its initial values (31 / 4 / 2).
""",
        "slide",
    ),
    code(
        """
view = widgets.budget_view(31, 4, 2)
print(view.reason)
print(view.kept)
"""
    ),
    widget(
        """
widgets.build_budget_widget()
"""
    ),
    md(
        """
## Exercise A — another budget

With `max_tokens=40`, `reserved_output=4`, `safety_margin=2`: what is
`available_for_messages`? Work it out by hand first.
""",
        "slide",
    ),
    code(
        """
available_at_40 = ...
exercises.check_available(available_at_40, max_tokens=40, reserved_output=4, safety_margin=2)
"""
    ),
    md(
        """
## Exercise B — what survives 20 tokens?

With `max_tokens=20` (reserved 4, safety 2), list `kept_entry_ids`.
""",
        "subslide",
    ),
    code(
        """
kept_at_20 = ...  # a list of entry ids
exercises.check_kept_ids(kept_at_20, max_tokens=20, reserved_output=4, safety_margin=2)
"""
    ),
    md(
        """
## Exercise C — the smallest budget that keeps everything

What is the smallest `max_tokens` (reserved 4, safety 2) whose `reason` is `within_budget`?
""",
        "subslide",
    ),
    code(
        """
smallest = ...
exercises.check_smallest_budget_for_all(smallest)
"""
    ),
    md(
        """
## Check your lab — Lab 11.3 tests
""",
        "slide",
    ),
    lab_tests(
        """
report = ctxlab.lab.run_lab_tests("11.3")
"""
    ),
]

if __name__ == "__main__":
    print(write("11.3-budgeted-context", CELLS))
