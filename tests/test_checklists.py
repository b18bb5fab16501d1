"""Each build-it checklist item is tied to the checks that judge it (issue 17, item 1).

A lab's build-it cell (``11-N-b01``) lists the chapter's rules as ``- [ ] …`` items. Each item
ends with a hidden marker ``<!-- checks: key1 key2 -->`` naming the behaviour keys of
``ctxlab.lab.grading`` (the ``@LAB.check`` functions of ``lab11_N.py``) that check it. An HTML
comment is not shown in JupyterLab's rendered markdown nor in the slides.

The tests read the student editions, built in memory from the sources, in both languages.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from ctxlab.lab.grading import behaviour_keys
from nbsource_module import load_nbsource

pytestmark = pytest.mark.teaching

nbsource = load_nbsource()
LAB_SOURCES = [
    s for s in nbsource.load_sources() if s.lab in {"11.1", "11.2", "11.3", "11.4", "11.5"}
]
ITEM = re.compile(r"^- \[ \] ")
MARKER = re.compile(r"<!--\s*checks:\s*([^>]*?)\s*-->")

#: Behaviour keys no checklist item states: none. A new check without an item (or a marker)
#: fails the test until a checklist item names it.
UNLISTED: dict[str, set[str]] = {}


def checklist_items(text: str) -> list[str]:
    """The items of the markdown checklist in ``text``: each ``- [ ] `` line with the indented
    lines that continue it, joined."""
    items: list[str] = []
    current: list[str] | None = None
    for line in text.split("\n"):
        if ITEM.match(line):
            current = [line]
            items.append("")
        elif current is not None and line.startswith(" ") and line.strip():
            current.append(line.strip())
        else:
            current = None
            continue
        items[-1] = " ".join(current)
    return items


def item_keys(item: str) -> list[str] | None:
    """The keys an item's marker names (None without a marker)."""
    found = MARKER.findall(item)
    if len(found) != 1:
        return None
    return found[0].split()


def _build_it_text(source: Any, language: str) -> str:
    notebook = nbsource.build_notebook(source, nbsource.Edition(language, "student"))
    build_it = [c for c in notebook.cells if c.id == f"{source.lab.replace('.', '-')}-b01"]
    assert len(build_it) == 1, f"{source.name}: one build-it cell"
    return str(build_it[0].source)


@pytest.mark.parametrize("source", LAB_SOURCES, ids=lambda s: s.lab)
def test_every_checklist_item_names_the_checks_that_judge_it(source: Any) -> None:
    keys = set(behaviour_keys(source.lab))
    for language in source.languages:
        items = checklist_items(_build_it_text(source, language))
        assert len(items) >= 5, f"{source.lab} {language}: the build-it cell has a checklist"
        for item in items:
            named = item_keys(item)
            assert named, f"{source.lab} {language}: no <!-- checks: … --> marker on {item!r}"
            unknown = [key for key in named if key not in keys]
            assert not unknown, (
                f"{source.lab} {language}: {unknown} are no behaviour keys of Lab {source.lab} "
                f"(they are {sorted(keys)}); item {item[:60]!r}"
            )


@pytest.mark.parametrize("source", LAB_SOURCES, ids=lambda s: s.lab)
def test_every_check_of_the_lab_is_named_by_a_checklist_item(source: Any) -> None:
    named = {
        key
        for item in checklist_items(_build_it_text(source, "en"))
        for key in item_keys(item) or []
    }
    unnamed = {key for key in behaviour_keys(source.lab) if key not in named}
    assert unnamed == UNLISTED.get(source.lab, set()), (
        f"Lab {source.lab}: checks no checklist item names: {sorted(unnamed)} "
        f"(known gaps: {sorted(UNLISTED.get(source.lab, set()))}); add a marker or an item"
    )


@pytest.mark.parametrize("source", LAB_SOURCES, ids=lambda s: s.lab)
def test_both_languages_name_the_same_keys_in_the_same_order(source: Any) -> None:
    en, zh = (
        [item_keys(item) for item in checklist_items(_build_it_text(source, language))]
        for language in ("en", "zh")
    )
    assert en == zh, f"Lab {source.lab}: en {en} != zh {zh}"


def test_the_instructor_edition_has_the_same_checklist() -> None:
    for source in LAB_SOURCES:
        for language in source.languages:
            notebook = nbsource.build_notebook(source, nbsource.Edition(language, "instructor"))
            text = next(c.source for c in notebook.cells if c.id.endswith("-b01"))
            assert checklist_items(text) == checklist_items(_build_it_text(source, language))


def test_checklist_items_and_markers_are_read_as_meant() -> None:
    text = "\n".join(
        [
            "Rules:",
            "",
            "- [ ] one rule, over",
            "      two lines; <!-- checks: a b -->",
            "- [ ] no marker;",
            "- [ ] two markers <!-- checks: a --> <!-- checks: b -->",
            "",
            "    not an item",
        ]
    )
    items = checklist_items(text)
    assert items == [
        "- [ ] one rule, over two lines; <!-- checks: a b -->",
        "- [ ] no marker;",
        "- [ ] two markers <!-- checks: a --> <!-- checks: b -->",
    ]
    assert [item_keys(item) for item in items] == [["a", "b"], None, None]


#: Where a checklist's ctxlab extensions start, and where the course's code starts (both
#: languages); every item before the first is the chapter's.
_CTXLAB_HEADS = ("ctxlab extensions", "ctxlab 扩展")
_COURSE_HEADS = ("From the course's code", "来自课程代码")


def _items_by_kind(text: str) -> dict[str, list[str]]:
    kinds: dict[str, list[str]] = {"chapter": [], "ctxlab": []}
    kind = "chapter"
    lines: list[str] = []
    for line in text.split("\n"):
        if line.startswith(_CTXLAB_HEADS) or line.startswith(_COURSE_HEADS):
            kinds[kind] += checklist_items("\n".join(lines))
            kind = "ctxlab" if line.startswith(_CTXLAB_HEADS) else "chapter"
            lines = []
        else:
            lines.append(line)
    kinds[kind] += checklist_items("\n".join(lines))
    return kinds


@pytest.mark.parametrize("source", LAB_SOURCES, ids=lambda s: s.lab)
def test_the_student_checklist_shows_the_two_kinds_apart(source: Any) -> None:
    """The chapter's items (and the course's code) name only chapter rows; the items under
    "ctxlab extensions" name only ctxlab's rows, which the check table shows as optional
    extras."""
    from ctxlab.lab.grading import behaviour_source

    for language in source.languages:
        text = _build_it_text(source, language)
        assert any(head in text for head in _CTXLAB_HEADS), f"{source.lab} {language}"
        assert "ctxlab's extras" in text or "ctxlab 的扩展检查（选做）" in text
        for kind, items in _items_by_kind(text).items():
            assert items, f"{source.lab} {language}: no {kind} items"
            for item in items:
                for key in item_keys(item) or []:
                    assert behaviour_source(source.lab, key) == kind, (
                        f"{source.lab} {language}: {key} is a {behaviour_source(source.lab, key)}"
                        f" row, listed among the {kind} items: {item[:70]!r}"
                    )
