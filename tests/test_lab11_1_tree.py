"""Lab 11.1 prerequisites: ``path_to`` (chapter 10) and system replay (chapter 03).

Spec sections 3 and 4.
"""

from __future__ import annotations

import pytest

from ctxlab import (
    MessageSessionEntry,
    MetadataSessionEntry,
    SessionEntry,
    SessionTreeError,
    SystemMessage,
    TextContent,
    ToolResultMessage,
    UserMessage,
    current_system_message,
    current_system_prompt,
    path_to,
    text_of,
)
from ctxlab import fixtures as fx
from ctxlab.json_values import FrozenDict

pytestmark = pytest.mark.reference


def _meta(entry_id: str, parent: str | None) -> MetadataSessionEntry:
    return MetadataSessionEntry(entry_id, parent, 0, "k", None)


def _system(content: str, timestamp: float, **sections: str | None) -> SystemMessage:
    return SystemMessage(content, timestamp, FrozenDict[str | None](sections) if sections else None)


# -- path_to ---------------------------------------------------------------------------------


def test_path_to_follows_parents_from_root_to_leaf() -> None:
    entries = fx.resumed_path()
    path = path_to(entries, "a4")
    assert path == entries
    assert [e.id for e in path_to(entries, "u2")] == ["sys", "u1", "a1", "u2"]
    assert [e.id for e in path_to(entries, "sys")] == ["sys"]


def test_path_to_ignores_other_branches_and_input_order() -> None:
    entries: list[SessionEntry] = [
        *fx.opening_path(),
        _meta("branch-1", "a2"),
        _meta("branch-2", "branch-1"),
        _meta("other-root", None),
    ]
    entries.reverse()
    path = path_to(entries, "branch-2")
    assert [e.id for e in path] == ["sys", "u1", "a1", "u2", "a2", "branch-1", "branch-2"]
    assert [e.id for e in path_to(entries, "a3")][-3:] == ["r-test", "r-read", "a3"]


def test_path_to_unknown_leaf() -> None:
    with pytest.raises(SessionTreeError, match="'nope'") as caught:
        path_to(fx.opening_path(), "nope")
    assert caught.value.entry_id == "nope"


def test_path_to_missing_parent_names_the_child_and_the_parent() -> None:
    entries = [e for e in fx.opening_path() if e.id != "u2"]
    with pytest.raises(SessionTreeError) as caught:
        path_to(entries, "a3")
    assert caught.value.entry_id == "a2"
    assert "'a2'" in str(caught.value)
    assert "'u2'" in str(caught.value)


def test_path_to_cycle_is_an_error() -> None:
    entries = [_meta("x", "y"), _meta("y", "z"), _meta("z", "x")]
    with pytest.raises(SessionTreeError, match="cycle") as caught:
        path_to(entries, "x")
    assert caught.value.entry_id == "x"
    with pytest.raises(SessionTreeError, match="cycle"):
        path_to([_meta("self", "self")], "self")


def test_path_to_duplicate_id_anywhere_is_an_error() -> None:
    entries: list[SessionEntry] = [*fx.opening_path(), _meta("elsewhere", None)]
    entries.append(_meta("elsewhere", None))  # not on the path to a3, still an error
    with pytest.raises(SessionTreeError, match="duplicate") as caught:
        path_to(entries, "a3")
    assert caught.value.entry_id == "elsewhere"


def test_path_to_accepts_any_iterable_once() -> None:
    path = path_to(iter(fx.opening_path()), "a1")
    assert [e.id for e in path] == ["sys", "u1", "a1"]


# -- system replay ----------------------------------------------------------------------------


def test_no_system_message_gives_none_and_an_empty_prompt() -> None:
    messages = [UserMessage((TextContent("hi"),), 1)]
    assert current_system_message(messages) is None
    assert current_system_message([]) is None
    assert current_system_prompt(messages) == ""


def test_a_single_system_message_replays_to_itself() -> None:
    sys = fx.opening_path()[0]
    assert isinstance(sys, MessageSessionEntry)
    assert current_system_message([sys.message]) == SystemMessage("sys", 1)


def test_contents_are_joined_by_a_blank_line_skipping_empty_ones() -> None:
    replayed = current_system_message(
        [_system("A", 5), _system("", 6), UserMessage((), 7), _system("B", 8)]
    )
    assert replayed == SystemMessage("A\n\nB", 5)


def test_sections_are_set_overwritten_and_deleted_in_order() -> None:
    replayed = current_system_message(
        [
            _system("BASE", 1, rules="v1", style="terse"),
            _system("", 2, rules="v2"),
            _system("", 3, style=None, project="ctxlab"),
            _system("", 4, gone=None),
        ]
    )
    assert replayed is not None
    assert replayed.content == "BASE"
    assert dict(replayed.sections or {}) == {"rules": "v2", "project": "ctxlab"}
    assert list(replayed.sections or {}) == ["rules", "project"]
    assert replayed.timestamp == 1


def test_sections_deleted_to_empty_are_left_out() -> None:
    replayed = current_system_message([_system("A", 1, rules="x"), _system("", 2, rules=None)])
    assert replayed == SystemMessage("A", 1)
    assert replayed is not None
    assert replayed.sections is None
    assert "sections" not in replayed.to_json()


def test_timestamp_is_that_of_the_first_system_message_even_if_empty() -> None:
    replayed = current_system_message([_system("", 3), _system("later", 9)])
    assert replayed == SystemMessage("later", 3)


def test_system_patch_path_replays_to_the_chapters_message() -> None:
    messages = [e.message for e in fx.system_patch_path() if isinstance(e, MessageSessionEntry)]
    replayed = current_system_message(messages)
    assert replayed is not None
    assert replayed.to_json() == {
        "role": "system",
        "content": "BASE\n\nPrefer small diffs.",
        "sections": {"rules": "RULE v2"},
        "timestamp": 1,
    }
    assert current_system_prompt(messages) == "BASE\n\nPrefer small diffs.\n\nRULE v2"


def test_prompt_renders_content_then_sections_skipping_empty_parts() -> None:
    messages = [_system("", 1, a="one", b="", c="three")]
    assert current_system_prompt(messages) == "one\n\nthree"
    assert current_system_prompt([_system("only", 1)]) == "only"


def test_text_of_joins_text_blocks_with_newlines() -> None:
    by_id = {e.id: e for e in fx.opening_path() if isinstance(e, MessageSessionEntry)}
    assert text_of(by_id["calls"].message) == (
        "I'll read context.ts and run the context tests in parallel."
    )
    user = UserMessage((TextContent("a"), TextContent(""), TextContent("b")), 1)
    assert text_of(user) == "a\n\nb"
    result = ToolResultMessage("c", "t", (TextContent("x"), TextContent("y")), False, 1)
    assert text_of(result) == "x\ny"
    assert text_of(UserMessage((), 1)) == ""
    assert text_of(_system("BASE", 1, rules="R")) == "BASE\n\nR"


def test_path_to_refuses_wire_dicts_and_non_string_leaves() -> None:
    wire = [e.to_json() for e in fx.opening_path()]
    with pytest.raises(SessionTreeError, match=r"entries\[0\] is not a session entry"):
        path_to(wire, "a3")  # type: ignore[arg-type]
    with pytest.raises(SessionTreeError, match="leaf id must be a string"):
        path_to(fx.opening_path(), ["a3"])  # type: ignore[arg-type]
