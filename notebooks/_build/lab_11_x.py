"""Generator of notebooks/11.x-migration.ipynb (run from the repository root)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from nbgen import code, lab_tests, md, notes, write  # noqa: E402

CELLS = [
    md(
        """
# Lab 11.x — 可选迁移练习
## Optional migration exercise: early-draft records, migrated outside the parser

**Learning goals.** After this lab you can

1. say why `parse_session_entry` refuses every early-draft record — and why it must stay strict;
2. migrate a draft record **outside** the parser boundary, keeping a note of every change;
3. derive `firstKeptEntryId` from a draft's `compactedEntryIds`, or refuse when the draft
   gives two different answers;
4. migrate a whole JSONL session into a **new** file without touching the old one.
""",
        "slide",
    ),
    notes(
        "The chapter leaves this section empty on purpose. The rule it states elsewhere: "
        "旧记录需要先在边界外迁移成当前形状 — old records are migrated into the current shape "
        "outside the boundary, never accepted by it."
    ),
    code(
        """
import json
import shutil
from pathlib import Path

import ctxlab
from ctxlab import fixtures, migration
from ctxlab.lab import migration_views as views
from ctxlab.lab import run_lab_tests
from ctxlab.lab.compaction_views import show
"""
    ),
    md(
        """
## § 损坏记录在进入预算前就会被拒绝 — The parser refuses every draft

Early drafts of the course wrote `files`, `nextSteps` and `invariants` in the summary, and
`compactedEntryIds` on the entry. Here is the chapter's own case: `changedFiles` removed,
`files = ["context.ts"]` in its place.

**Predict, then run.** Which field does the error name?
""",
        "slide",
    ),
    code(
        """
drafts = fixtures.draft_records()
wire = drafts["files instead of changedFiles"]
print(json.dumps(wire["summary"], indent=2, ensure_ascii=False))
try:
    ctxlab.parse_session_entry(wire)
except ctxlab.CtxlabError as error:
    print(type(error).__name__ + ":", error)
"""
    ),
    md(
        """
## § 在边界外迁移 — Migrating outside the boundary

`migration.migrate_draft_entry(wire, earlier=...)` returns the migrated entry **and** a note
for every change. The result then goes through the same, unchanged parser.

**Predict, then run.** Is the migrated record equal to the chapter's `compact-1`?
""",
        "slide",
    ),
    code(
        """
result = migration.migrate_draft_entry(wire, earlier=fixtures.opening_path())
for change in result.changes:
    print(change)
print("equal to compact-1:", result.entry == fixtures.compact1())
print("input untouched:   ", "files" in wire["summary"])
"""
    ),
    md(
        """
### `compactedEntryIds` → `firstKeptEntryId`

A draft listed the ids the summary replaced. The current record names the **first kept**
entry instead: the user message that starts the interaction after the last compacted id
(system messages in between are skipped — they belong to no interaction).

**Predict, then run.** `compactedEntryIds = ["u1", "a1"]`: which `firstKeptEntryId`?
""",
        "subslide",
    ),
    code(
        """
draft = drafts["compactedEntryIds instead of firstKeptEntryId"]
print("draft:", {key: draft[key] for key in ("id", "parentId", "compactedEntryIds")})
result = migration.migrate_draft_entry(draft, earlier=fixtures.opening_path())
print("migrated firstKeptEntryId:", result.entry.first_kept_entry_id)
for change in result.changes:
    print(change)
"""
    ),
    md(
        """
### What a migration must refuse

A migration never guesses. Two different answers (`files` **and** a different
`changedFiles`), a cut inside an interaction, an unknown id — or a record the parser still
refuses after migrating — are reported as *not migratable*, naming the entry and the field.

**Predict, then run.** Which field does each refusal name?
""",
        "subslide",
    ),
    code(
        """
for name in sorted(fixtures.NOT_MIGRATABLE):
    try:
        migration.migrate_draft_entry(drafts[name], earlier=fixtures.opening_path())
    except migration.MigrationError as error:
        print(f"{name}\\n    field {error.field}: {error}")
"""
    ),
    md(
        """
### Every draft record at a glance
""",
        "subslide",
    ),
    code(
        """
show(views.draft_table(), "draft-records", "strict parser vs. migration")
"""
    ),
    md(
        """
## § 整个会话文件 — A whole session file

`migration.migrate_jsonl(src, dst)` reads the old file, migrates every line, checks the
links (unique ids, parents first) and only then writes the **new** file. It refuses to
overwrite anything.

**Predict, then run.** Which lines change? Is the old file still byte-for-byte the same?
""",
        "slide",
    ),
    code(
        """
scratch = Path("_scratch") / "migration"
shutil.rmtree(scratch, ignore_errors=True)
scratch.mkdir(parents=True)

old = scratch / "draft-session.jsonl"
records = [entry.to_json() for entry in fixtures.resumed_path()]
records[10] = drafts["every draft name at once"]          # line 11: compact-1, old shape
old.write_text("".join(json.dumps(r) + "\\n" for r in records), encoding="utf-8")
old_bytes = old.read_bytes()

report = migration.migrate_jsonl(old, scratch / "session.jsonl")
print("files:", sorted(p.name for p in scratch.iterdir()))
for change in report.changes:
    print(change)
print("old file unchanged:", old.read_bytes() == old_bytes)
migrated = ctxlab.JsonlSessionStore.open(scratch / "session.jsonl").entries()
print("new file == resumed path:", migrated == fixtures.resumed_path())
"""
    ),
    code(
        """
try:
    migration.migrate_jsonl(old, scratch / "session.jsonl")
except migration.MigrationError as error:
    print(type(error).__name__ + ":", error)
shutil.rmtree(Path("_scratch"))
""",
        "fragment",
    ),
    md(
        """
## Exercises

**Exercise 1.** Write `my_summary_migration(summary)`: it gets a draft summary dict and
returns a **new** dict with `files` → `changedFiles`, `nextSteps` → `next`,
`invariants` → `constraints`. Do not edit the dict you receive.
""",
        "slide",
    ),
    code(
        """
def my_summary_migration(summary):
    ...  # your code here: build and return a new dict


views.check_summary_renames(my_summary_migration)
"""
    ),
    md(
        """
**Exercise 2.** Write `my_migration(wire, earlier)` for whole records. Return a pair
`(migrated_wire_dict, change_notes)`, where `change_notes` lists the draft field paths you
changed (`"summary.files"`, `"compactedEntryIds"`, ...). Derive `firstKeptEntryId` from
`compactedEntryIds` using `earlier` (the entries stored before the record); raise
`migration.MigrationError(message, entry_id=..., field=...)` for records that cannot be
migrated. The checker runs your function on every draft record above.
""",
        "subslide",
    ),
    code(
        """
def my_migration(wire, earlier):
    ...  # your code here


views.check_migration(my_migration)
"""
    ),
    notes(
        "Hint for the room: ctxlab.path_to(earlier, wire['parentId']) gives the path the "
        "compaction follows; walk it after the last compacted id. The reference solution is "
        "ctxlab/migration.py."
    ),
    md(
        """
## Migration tests

The migration's tests are part of Lab 11.1 (strict parsing), so this runs `pytest -m lab11_1`.
""",
        "slide",
    ),
    lab_tests(
        """
_ = run_lab_tests("11.1")
"""
    ),
]

if __name__ == "__main__":
    print(write("11.x-migration", CELLS))
