"""Generator of notebooks/11.5-resume-from-summary.ipynb (run from the repository root)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from nbgen import code, lab_tests, md, notes, widget, write  # noqa: E402

CELLS = [
    md(
        """
# Lab 11.5 — 恢复时把最新摘要接在保留后缀前面
## Resume: the newest summary goes before the kept suffix; system state crosses the boundary

**Learning goals.** After this lab you can

1. rebuild the context after `compact-1`: replayed system, **one** summary message, then
   whole groups from `u2` on — and read its ledger, summary row included;
2. explain why a second compaction `compact-2` makes `compact-1`'s summary disappear from
   the context, although `compact-1` stays in the session;
3. replay the system message from the **whole** path, across the compaction boundary;
4. show that builds are deterministic and independent copies.
""",
        "slide",
    ),
    notes(
        "The running question of this lab: what does the model see after a compaction, and "
        "what stays in the session? Answer: the session keeps everything; the context is a "
        "fresh projection."
    ),
    code(
        """
%matplotlib inline
import dataclasses

import ctxlab
from ctxlab import fixtures
from ctxlab.lab import resume_views as views
from ctxlab.lab import run_lab_tests, setup_notebook
from ctxlab.lab.compaction_views import show

setup_notebook()


def build(path, max_tokens, language="en"):
    return ctxlab.build_context(
        path, max_tokens=max_tokens, reserved_output=4, safety_margin=2,
        estimate_tokens=fixtures.opening_estimator, summary_language=language,
    )
"""
    ),
    md(
        """
## § 恢复时把最新摘要接在保留后缀前面 — After compact-1, nothing is deleted

`compact-1` was appended after `a3`; then the conversation went on with `u4 → a4`.

**Predict, then run.** How many of the ten original messages are still in the session?
Which entries will the next context be able to keep?
""",
        "slide",
    ),
    code(
        """
path = fixtures.resumed_path()
print(" → ".join(entry.id for entry in path))
views.resume_diagram(path, title="compact-1 points back to u2")
"""
    ),
    notes(
        "Compare with the chapter's ASCII arrow: sys → … → a3 → compact-1, and the arrow "
        "from compact-1 back to u2. u1 and a1 are hatched: still stored, but summarised."
    ),
    md(
        """
### The summary becomes one synthetic user message

Seven fields in a fixed order; an empty list gets one placeholder line. The course renders
it in Chinese (byte for byte as in the chapter); ctxlab also has an English rendering.

**Predict, then run.** Which heading does the empty `unresolved` list get, and what stands under it?
""",
        "subslide",
    ),
    code(
        """
compact1 = views.latest_compaction(path)
print(ctxlab.render_summary(compact1.summary))
"""
    ),
    code(
        """
print(ctxlab.render_summary(compact1.summary, language="zh"))
""",
        "fragment",
    ),
    md(
        """
### The ledger with a summary row

Budget `max_tokens = 40`: the system message (3), `reserved_output` (4) and `safety_margin` (2)
leave 31. The summary is priced **first**; the groups then fill what is left, newest first.

**Predict, then run.** Which groups fit? Where does the choice stop?
""",
        "subslide",
    ),
    code(
        """
show(views.resume_ledger(path, max_tokens=40), "resume-ledger-40", "resumed path, max_tokens = 40")
"""
    ),
    code(
        """
result = build(path, 40)
show(views.context_messages(path, result), "resume-messages-40", "what the model receives")
""",
        "fragment",
    ),
    md(
        """
**Exercise 1.** Same path, but `max_tokens = 31` (the chapter's budget). Replace `...` with
the list of `kept_entry_ids` that `build_context` returns, in order.
""",
        "subslide",
    ),
    code(
        """
answer = ...
views.check_resume_kept(answer)
"""
    ),
    md(
        """
## § 第二次 compaction — A second compaction: only the newest summary is read

`compact-2` is created with the same function, appended after `a4`, and keeps from `u3`.

**Predict, then run.** How many summary messages will the next context contain, and whose?
""",
        "slide",
    ),
    code(
        """
path2 = fixtures.recompacted_path()
views.resume_diagram(path2, title="compact-2 keeps from u3; compact-1 is no longer read")
"""
    ),
    code(
        """
result2 = build(path2, 40)
show(views.context_messages(path2, result2), "recompacted-messages-40", "after compact-2")
"""
    ),
    code(
        """
texts = [ctxlab.text_of(message) for message in result2.messages]
print("summary messages sent:        ", sum(t.startswith("[Conversation summary]") for t in texts))
print("compact-2's summary is sent:  ", ctxlab.render_summary(fixtures.compact2_summary()) in texts)
print("compact-1's summary is sent:  ", ctxlab.render_summary(fixtures.compact1_summary()) in texts)
print("compact-1 is still stored:    ", any(entry.id == "compact-1" for entry in path2))
""",
        "fragment",
    ),
    md(
        """
**Exercise 2.** On `fixtures.recompacted_path()`, which compaction's summary reaches the
model? Replace `...` with its id (a string).
""",
        "subslide",
    ),
    code(
        """
answer = ...
views.check_newest_summary(answer)
"""
    ),
    md(
        """
## § system 状态跨过 compaction 边界 — System state crosses the compaction boundary

`sys` stands before `u2`, in the part `compact-1` summarised. If system messages were only
collected from the kept suffix, the resumed request would lose the base prompt. The
chapter's path makes this bigger:

```
sys      system: content "BASE", sections.rules = "RULE v1"
u1 → a1
patch-1  system: sections.rules = "RULE v2"
u2 → a2                                    ← firstKeptEntryId
compact-1
patch-2  system: content "Prefer small diffs."
u3 → a3
```

**Predict, then run.** What are the content, the sections and the timestamp after `patch-2`?
""",
        "slide",
    ),
    code(
        """
system_path = fixtures.system_patch_path()
show(views.system_replay_table(system_path), "system-replay", "the state after each system entry")
"""
    ),
    code(
        """
replayed = ctxlab.current_system_message(e.message for e in system_path if e.type == "message")
print("content:  ", repr(replayed.content))
print("sections: ", dict(replayed.sections))
print("timestamp:", replayed.timestamp)
""",
        "fragment",
    ),
    md(
        """
### The resumed context: replayed system, summary, then `u2 → a2 → u3 → a3`

`patch-2` is folded into the first message and does not appear again in the suffix.
""",
        "subslide",
    ),
    code(
        """
system_result = build(system_path, 40)
show(views.context_messages(system_path, system_result), "system-messages-40", "system-patch path")
"""
    ),
    md(
        """
**Exercise 3.** Write the **rendered** system prompt of the system-patch path as a Python
string (`current_system_prompt`: the content, then each section, joined by a blank line).
""",
        "subslide",
    ),
    code(
        """
answer = ...
views.check_replayed_prompt(answer)
"""
    ),
    md(
        """
## § 确定性与副本隔离 — Determinism and isolation

**Predict, then run.** Two builds of the same path with the same options: equal? If you edit
the wire form of the first one, does the second one change? Can you edit a message in place?
""",
        "slide",
    ),
    code(
        """
first, second = build(path, 40), build(path, 40)
print("two builds are equal:         ", first == second, first.to_json() == second.to_json())

wire = first.to_json()
wire["messages"][1]["content"][0]["text"] = "edited summary"
wire["messages"][-1]["content"][0]["text"] = "edited answer"
print("the second build is untouched:", second.to_json() == build(path, 40).to_json())
print("the first build is untouched: ", first.to_json() == second.to_json())
print("the session is untouched:     ", path == fixtures.resumed_path())
"""
    ),
    code(
        """
try:
    first.messages[0].content = "hacked"
except dataclasses.FrozenInstanceError as error:
    print(type(error).__name__ + ":", error)
""",
        "fragment",
    ),
    md(
        """
## Try it: with and without the compaction

The same conversation, built once with `compact-1` and once as if it had never been
compacted. Kept groups are solid; dropped ones hatched, beyond the total.

**Predict, then run.** At 31 tokens, which context sends more original messages? Is that
bad? Move the slider to 60: what does the compaction cost you there?

The table below the figure is the slider's starting value (31), checked without the widget.
""",
        "slide",
    ),
    code(
        """
views.resume_comparison_figure(31)
"""
    ),
    code(
        """
show(views.resume_comparison(31), "resume-comparison-31", "max_tokens = 31")
"""
    ),
    widget(
        """
views.build_resume_widget()
"""
    ),
    notes(
        "At 31 the compacted context sends fewer originals (the summary costs 4) but it still "
        "knows what group 1 decided; without the compaction, group 1 is simply gone. At 60 "
        "everything fits without the compaction: summarising too early trades detail for room."
    ),
    md(
        """
## Lab 11.5 tests

The chapter's check for this lab (`pytest -m lab11_5`), run from here.
""",
        "slide",
    ),
    lab_tests(
        """
_ = run_lab_tests("11.5")
"""
    ),
]

if __name__ == "__main__":
    print(write("11.5-resume-from-summary", CELLS))
