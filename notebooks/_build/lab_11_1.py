"""Generator of notebooks/11.1-summary-is-a-fact.ipynb (run from the repository root)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from nbgen import code, lab_tests, md, notes, widget, write  # noqa: E402

CELLS = [
    md(
        """
# Lab 11.1 — 摘要先成为 session 中的一条普通事实
## A summary is an ordinary fact in the session

**Learning goals.** After this lab you can

1. read the chapter's ten-entry opening path and say what each entry costs;
2. write `compact-1` and its **seven-field summary** in wire form;
3. explain why `parse_session_entry` rejects every early-draft record, and read its error;
4. append a compaction to **both stores**, reopen the JSONL file, and recover from a torn last line.
""",
        "slide",
    ),
    notes(
        "History never moves: a summary is appended, never written over old messages. "
        "Keep repeating that sentence; every later lab builds on it."
    ),
    code(
        """
%matplotlib inline
import shutil
from pathlib import Path

import ctxlab
from ctxlab import fixtures
from ctxlab.lab import exercises, setup_notebook, tables, widgets

setup_notebook()
"""
    ),
    md(
        """
## § 开篇路径 — The opening path

Ten message entries. Each `parentId` points to the entry before it; the cost is the
chapter's *test estimator* (`fixtures.opening_estimator`), not a real tokenizer.

**Predict, then run.** Which entries carry tool-call ids? How much does the whole path cost?
""",
        "slide",
    ),
    code(
        """
path = fixtures.opening_path()
tables.path_styler(path)
"""
    ),
    code(
        """
print("total cost of the path:", sum(fixtures.opening_estimator(e.message) for e in path))
""",
        "fragment",
    ),
    md(
        """
## § compact-1 — a new entry after the leaf `a3`

`compact-1` does not overwrite anything. It is **appended** after the current leaf `a3`
(`parentId: "a3"`), says the context restarts at `u2` (`firstKeptEntryId`) and records
the caller's estimate `tokensBefore: 29`, which the parser never recomputes.

**Predict, then run.** How many fields does the summary have, and what are their names on disk?
""",
        "slide",
    ),
    code(
        """
compact1 = fixtures.compact1(path)
print(tables.wire_json(compact1))
"""
    ),
    md(
        """
The seven fields: `goal` (non-blank) and six lists of strings — `constraints`,
`completed`, `decisions`, `changedFiles`, `unresolved`, `next`.
""",
        "fragment",
    ),
    md(
        """
## § The strict parser — `parse_session_entry`

The parser reads a JSON-shaped object field by field and returns a **new**, frozen entry.
Round trip: `parse_session_entry(e.to_json()) == e`.
""",
        "slide",
    ),
    code(
        """
entry = ctxlab.parse_session_entry(compact1.to_json())
print(type(entry).__name__, entry.id, "parent", entry.parent_id)
print("round trip equal:", entry == compact1)
"""
    ),
    md(
        """
### § 损坏记录在进入预算前就会被拒绝 — Corrupt records are refused at the boundary

The chapter's own corruption comes first: `summary.changedFiles` removed and the early-draft
`summary.files = ["context.ts"]` in its place.

**Predict, then run.** Will the parser accept `files` as an alias? What will the error name?
""",
        "subslide",
    ),
    code(
        """
tables.corruption_table()
"""
    ),
    notes(
        "Point at the first column of each error: the entry id (compact-1) and then the "
        "field path. Old records are migrated outside the parser (see 11.x), never accepted."
    ),
    md(
        """
### Widget — pick a corruption, see the verdict

The checked cell below calls the widget's pure function with its initial value; the
widget cell after it lets you try every case.
""",
        "subslide",
    ),
    code(
        """
print(widgets.parse_view(widgets.parse_cases()[0]))
print(widgets.parse_view(widgets.parse_cases()[1]))
"""
    ),
    widget(
        """
widgets.build_parse_widget()
"""
    ),
    md(
        """
## § Two stores, one parser

`InMemorySessionStore` and `JsonlSessionStore` both take their snapshot through
`parse_session_entry`; neither has compaction-specific code. We write the JSONL file into
a scratch folder next to this notebook.

**Predict, then run.** After appending the path and `compact-1`, how many lines does the file
have? Does the reopened store give back an equal `compact-1`?
""",
        "slide",
    ),
    code(
        """
memory = ctxlab.InMemorySessionStore()
for e in [*path, compact1]:
    memory.append(e)
print("in memory:", [e.id for e in memory.entries()])

scratch = Path("_scratch")
shutil.rmtree(scratch, ignore_errors=True)
session_file = scratch / "session.jsonl"
store = ctxlab.JsonlSessionStore.open(session_file)
for e in [*path, compact1]:
    store.append(e)
print("files:", sorted(p.name for p in scratch.iterdir()))
"""
    ),
    code(
        """
reopened = ctxlab.JsonlSessionStore.open(session_file)
print("entries:", len(reopened.entries()), "| compact-1 equal:", reopened.entries()[-1] == compact1)
lines = session_file.read_text(encoding="utf-8").splitlines()
print(len(lines), "lines; the last one:")
print(lines[-1])
""",
        "fragment",
    ),
    md(
        """
### A torn last line

A line counts only once its newline is written. We simulate a crash in the middle of a
write: the bytes of a new entry, without the newline.

**Predict, then run.** Will the store still open? Which line number will the warning name?
May we append?
""",
        "subslide",
    ),
    code(
        """
with open(session_file, "ab") as f:
    f.write(b'{"type": "message", "id": "u4", "parentId": "compact-1", "timest')

torn = ctxlab.JsonlSessionStore.open(session_file)
result = torn.read()
print("entries read:", len(result.entries))
for warning in result.warnings:
    print(warning.code, "at line", warning.line)
    print(warning.message)
"""
    ),
    code(
        """
u4 = ctxlab.MessageSessionEntry(
    "u4", "compact-1", 101, ctxlab.UserMessage((ctxlab.TextContent("Next step?"),), 101)
)
try:
    torn.append(u4)
except ctxlab.SessionStoreError as error:
    print("refused:", error)
""",
        "fragment",
    ),
    code(
        """
repair = ctxlab.JsonlSessionStore.repair(session_file)
print("moved", repair.bytes_moved, "bytes of line", repair.line, "to", repair.side_file.name)
repaired = ctxlab.JsonlSessionStore.open(session_file)
repaired.append(u4)
print("after repair:", [e.id for e in repaired.entries()][-3:])
print("files:", sorted(p.name for p in scratch.iterdir()))
shutil.rmtree(scratch)
""",
        "fragment",
    ),
    notes(
        "Repair never deletes a byte: the torn tail goes to a side file first. "
        "Ask: why must the store refuse to append after a torn line?"
    ),
    md(
        """
## Exercise A — migrate the chapter's corrupt record

`broken` is `compact-1` with `files` instead of `changedFiles`. Build `repaired`: a **new**
dict in the current shape (do not change `broken`). Replace `...` and run the check.
""",
        "slide",
    ),
    code(
        """
broken = fixtures.compaction_corruptions()["files instead of changedFiles"]
repaired = ...  # your migrated record (a dict)
exercises.check_repaired_compaction(repaired)
"""
    ),
    md(
        """
## Exercise B — write a summary of your own

Write a summary dict with exactly the seven fields (`goal` and six lists of strings) for a
session of your choice. The check puts it into `compact-1` and runs the parser.
""",
        "subslide",
    ),
    code(
        """
my_summary = ...  # {"goal": ..., "constraints": [...], ...}
exercises.check_my_summary(my_summary)
"""
    ),
    md(
        """
## Check your lab — Lab 11.1 tests

This runs `pytest -m lab11_1` on the repository's tests.
""",
        "slide",
    ),
    lab_tests(
        """
report = ctxlab.lab.run_lab_tests("11.1")
"""
    ),
]

if __name__ == "__main__":
    print(write("11.1-summary-is-a-fact", CELLS))
