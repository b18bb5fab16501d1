"""Generator of notebooks/11.4-create-compaction.ipynb (run from the repository root)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from nbgen import code, lab_tests, md, notes, widget, write  # noqa: E402

CELLS = [
    md(
        """
# Lab 11.4 — compact-1 记录摘要与保留起点
## compact-1 records the summary and the kept start

**Learning goals.** After this lab you can

1. create `compact-1` with `create_compaction_entry` and say where its `parentId` comes from;
2. tell which entries can be `firstKeptEntryId` — and why `a2`, `calls`, `r-test` and a
   system patch cannot;
3. show that creating a compaction is **pure**: the path is unchanged and only an explicit
   `store.append` writes.
""",
        "slide",
    ),
    notes(
        "buildContext() only reads; it never writes a summary. Creating the compaction is a "
        "separate, pure step, and storing it is a third, explicit one. Three verbs: build, "
        "create, append."
    ),
    code(
        """
%matplotlib inline
import ctxlab
from ctxlab import fixtures
from ctxlab.lab import compaction_views as views
from ctxlab.lab import run_lab_tests, setup_notebook

setup_notebook()
"""
    ),
    md(
        """
## § compact-1 记录摘要与保留起点 — Creating compact-1

The caller prepares the structured summary, then calls the chapter's function:

```python
compact1 = create_compaction_entry(active_path, id="compact-1", timestamp=100,
                                   summary=summary, first_kept_entry_id="u2",
                                   tokens_before=29)
```

**Predict, then run.** The call has no `parent_id` argument. Which `parentId` will `compact-1` get?
""",
        "slide",
    ),
    code(
        """
path = fixtures.opening_path()
compact1 = ctxlab.create_compaction_entry(
    path,
    id="compact-1",
    timestamp=100,
    summary=fixtures.compact1_summary(),
    first_kept_entry_id="u2",
    tokens_before=29,
)
views.show(views.compaction_fields(compact1), "compact-1-fields", "compact-1, field by field")
"""
    ),
    md(
        """
### The parent comes from the path, never from the caller

`parentId` is read from `active_path[-1]`. Because the caller cannot pass it, there is no
way to append the record after `a3` while its field names another leaf — one answer, not two.
""",
        "subslide",
    ),
    code(
        """
print("parentId:", compact1.parent_id, "| last entry of the path:", path[-1].id)
try:
    ctxlab.create_compaction_entry(
        path, id="compact-1", timestamp=100, summary=fixtures.compact1_summary(),
        first_kept_entry_id="u2", tokens_before=29, parent_id="a1",
    )
except TypeError as error:
    print("TypeError:", error)
""",
        "fragment",
    ),
    md(
        """
## § 只能指向一组的首条 user message — Which entries can be the first kept one?

`firstKeptEntryId` is where a resume starts keeping original messages. It may only point at
the user message that **starts** an interaction group: cutting anywhere else would separate
a tool call from its result.

**Predict, then run.** Which of the ten entries does `create_compaction_entry` accept? What
does it say about `a2`, `calls` and `r-test`? (`u9` is not on the path at all.)
""",
        "slide",
    ),
    code(
        """
views.show(
    views.first_kept_table(path, extra_ids=["u9"]),
    "first-kept-opening",
    "create_compaction_entry(path, first_kept_entry_id=...) for every id",
)
"""
    ),
    md(
        """
### A system patch cannot be the first kept entry either

The chapter's last path has system patches: `patch-1` before `compact-1`, `patch-2` after it.
A system message belongs to no interaction (the system state is replayed from the whole
path), so it can never be a cut point.

**Predict, then run.** A second compaction `compact-2` on that path: which ids are valid now?
""",
        "subslide",
    ),
    code(
        """
views.show(
    views.first_kept_table(fixtures.system_patch_path(), compaction_id="compact-2"),
    "first-kept-system-patch",
    "compact-2 on the system-patch path",
)
"""
    ),
    notes(
        "Point at patch-2's row: the error says why, in the words of the chapter. "
        "compact-1 itself is not a message at all, so it cannot be kept either."
    ),
    md(
        """
## § 写入权仍由 Session Store 持有 — Purity: only `store.append` writes

`create_compaction_entry` receives no store. The caller can show the summary, log it or ask
for confirmation first, and then append it explicitly.

**Predict, then run.** How many entries does the store hold after `create_compaction_entry`?
And after `store.append(compact1)`? Is the path list changed?
""",
        "slide",
    ),
    code(
        """
path = fixtures.opening_path()
wire_before = [entry.to_json() for entry in path]
store = ctxlab.InMemorySessionStore(path)
print("store before:          ", len(store.entries()), "entries")

compact1 = ctxlab.create_compaction_entry(
    path, id="compact-1", timestamp=100, summary=fixtures.compact1_summary(),
    first_kept_entry_id="u2", tokens_before=29,
)
print("after create:          ", len(store.entries()), "entries")
print("path unchanged:        ", [entry.to_json() for entry in path] == wire_before, len(path))

store.append(compact1)
print("after store.append:    ", len(store.entries()), "entries, last:", store.entries()[-1].id)
"""
    ),
    md(
        """
## Exercises

**Exercise 1.** Replace `...` with the **set** of opening-path ids that
`create_compaction_entry` accepts as `first_kept_entry_id`, e.g. `{"u1", "a1"}`.
""",
        "slide",
    ),
    code(
        """
answer = ...
views.check_valid_first_kept(answer)
"""
    ),
    md(
        """
**Exercise 2.** Create the chapter's `compact-1` yourself: replace `...` by a call of
`ctxlab.create_compaction_entry(...)` on `fixtures.opening_path()`
(use `fixtures.compact1_summary()` as the summary).
""",
        "subslide",
    ),
    code(
        """
my_compact1 = ...
views.check_compact1(my_compact1)
"""
    ),
    md(
        """
**Exercise 3.** A store starts with the ten opening entries. How many entries does it hold
right after `create_compaction_entry(...)`, and after `store.append(...)`?
""",
        "subslide",
    ),
    code(
        """
after_create = ...
after_append = ...
views.check_store_count(after_create, after_append)
"""
    ),
    md(
        """
## Try it: choose the first kept entry

The dropdown calls `create_compaction_entry` with the id you pick and shows what happens.

**Predict, then run.** Pick `u3`: what would the summary then have to stand in for?

The first cell shows the dropdown's starting value (`u2`) without the widget.
""",
        "slide",
    ),
    code(
        """
print(views.render_first_kept(fixtures.opening_path(), "u2"))
"""
    ),
    widget(
        """
views.build_first_kept_widget()
"""
    ),
    md(
        """
## Lab 11.4 tests

The chapter's check for this lab (`pytest -m lab11_4`), run from here.
""",
        "slide",
    ),
    lab_tests(
        """
_ = run_lab_tests("11.4")
"""
    ),
]

if __name__ == "__main__":
    print(write("11.4-create-compaction", CELLS))
