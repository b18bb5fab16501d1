"""Lab 11.2: ``group_interactions`` cuts message entries into whole user interactions.

Spec section 5; chapter "两个 tool result 仍属于 u3 开始的同一组".
"""

from __future__ import annotations

import pytest

from ctxlab import (
    AssistantMessage,
    InteractionError,
    MessageSessionEntry,
    MetadataSessionEntry,
    SessionEntry,
    SystemMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    group_interactions,
)
from ctxlab import fixtures as fx

pytestmark = pytest.mark.reference


def _user(entry_id: str) -> MessageSessionEntry:
    return MessageSessionEntry(entry_id, None, 0, UserMessage((TextContent(entry_id),), 0))


def _assistant(entry_id: str, *call_ids: str) -> MessageSessionEntry:
    message = AssistantMessage(
        tuple(ToolCall(call_id, "tool", None) for call_id in call_ids),
        "p",
        "m",
        Usage(0, 0, 0),
        "toolUse" if call_ids else "stop",
        0,
    )
    return MessageSessionEntry(entry_id, None, 0, message)


def _result(entry_id: str, call_id: str, tool: str = "tool") -> MessageSessionEntry:
    return MessageSessionEntry(entry_id, None, 0, ToolResultMessage(call_id, tool, (), False, 0))


def _system(entry_id: str) -> MessageSessionEntry:
    return MessageSessionEntry(entry_id, None, 0, SystemMessage(entry_id, 0))


def _ids(entries: list[MessageSessionEntry]) -> list[tuple[str, ...]]:
    return [group.entry_ids for group in group_interactions(entries)]


def _refused(entries: list[SessionEntry]) -> InteractionError:
    with pytest.raises(InteractionError) as caught:
        group_interactions(entries)
    return caught.value


def test_opening_path_gives_the_chapters_three_groups() -> None:
    entries = [e for e in fx.opening_path() if isinstance(e, MessageSessionEntry)]
    groups = group_interactions(entries)
    assert [g.entry_ids for g in groups] == [
        ("u1", "a1"),
        ("u2", "a2"),
        ("u3", "calls", "r-test", "r-read", "a3"),
    ]
    assert groups[2].entries == tuple(entries[5:])


def test_no_entries_no_groups() -> None:
    assert group_interactions([]) == []
    assert group_interactions([_system("s1"), _system("s2")]) == []


def test_system_messages_are_skipped_everywhere() -> None:
    entries = [
        _system("s0"),
        _user("u1"),
        _system("s1"),
        _assistant("a1"),
        _system("s2"),
        _user("u2"),
        _system("s3"),
    ]
    assert _ids(entries) == [("u1", "a1"), ("u2",)]


def test_each_user_message_opens_a_group() -> None:
    assert _ids([_user("u1"), _user("u2"), _assistant("a2"), _user("u3")]) == [
        ("u1",),
        ("u2", "a2"),
        ("u3",),
    ]


@pytest.mark.parametrize("first", ["assistant", "toolResult"])
def test_a_message_before_the_first_user_is_an_error_naming_it(first: str) -> None:
    early = _assistant("early") if first == "assistant" else _result("early", "c1")
    error = _refused([_system("s"), early, _user("u1")])
    assert error.entry_id == "early"
    assert "early" in str(error)
    assert first in str(error)


def test_non_message_entries_are_refused_naming_them() -> None:
    note = MetadataSessionEntry("note", None, 0, "k", 1)
    error = _refused([_user("u1"), note])
    assert error.entry_id == "note"
    assert "metadata" in str(error)


def test_results_may_come_in_any_order_even_before_their_call() -> None:
    entries = [
        _user("u"),
        _result("r2", "c2"),
        _assistant("calls", "c1", "c2", "c3"),
        _result("r3", "c3"),
        _result("r1", "c1"),
        _assistant("final"),
    ]
    (group,) = group_interactions(entries)
    assert group.entry_ids == ("u", "r2", "calls", "r3", "r1", "final")
    assert group.tool_pairs == (("c1", "r1"), ("c2", "r2"), ("c3", "r3"))


def test_tool_name_and_final_answer_do_not_take_part_in_pairing() -> None:
    entries = [_user("u"), _assistant("calls", "c1"), _result("r1", "c1", tool="other-name")]
    (group,) = group_interactions(entries)
    assert group.tool_pairs == (("c1", "r1"),)


def test_calls_over_several_turns_in_one_group() -> None:
    entries = [
        _user("u"),
        _assistant("t1", "c1"),
        _result("r1", "c1"),
        _assistant("t2", "c2"),
        _result("r2", "c2"),
        _assistant("done"),
    ]
    assert _ids(entries) == [("u", "t1", "r1", "t2", "r2", "done")]


def test_a_call_declared_twice_is_an_error_naming_both_entries() -> None:
    error = _refused([_user("u"), _assistant("t1", "c1"), _assistant("t2", "c1")])
    assert (error.entry_id, error.call_id) == ("t2", "c1")
    assert "t1" in str(error)
    assert "t2" in str(error)
    error = _refused([_user("u"), _assistant("t1", "c1", "c1"), _result("r", "c1")])
    assert (error.entry_id, error.call_id) == ("t1", "c1")


def test_a_result_without_a_call_in_its_group_is_an_error() -> None:
    error = _refused([_user("u"), _assistant("a"), _result("r", "ghost")])
    assert (error.entry_id, error.call_id) == ("r", "ghost")
    assert "interaction u" in str(error)


def test_a_result_cannot_answer_a_call_of_another_group() -> None:
    entries = [_user("u1"), _assistant("calls", "c1"), _user("u2"), _result("late", "c1")]
    error = _refused(entries)
    # The first group closes first: its call has no result there.
    assert (error.entry_id, error.call_id) == ("calls", "c1")
    assert "no tool result" in str(error)


def test_a_call_with_two_results_is_an_error() -> None:
    entries = [_user("u"), _assistant("calls", "c1"), _result("r1", "c1"), _result("r2", "c1")]
    error = _refused(entries)
    assert (error.entry_id, error.call_id) == ("r2", "c1")
    assert "r1" in str(error)


def test_a_call_without_result_is_an_error_when_the_group_closes() -> None:
    error = _refused([_user("u"), _assistant("calls", "c1", "c2"), _result("r1", "c1")])
    assert (error.entry_id, error.call_id) == ("calls", "c2")
    error = _refused([_user("u"), _assistant("calls", "c1"), _user("u2"), _result("r1", "c1")])
    assert (error.entry_id, error.call_id) == ("calls", "c1")


def test_chapter_corruptions_name_their_ids() -> None:
    def messages(path: list[SessionEntry]) -> list[SessionEntry]:
        return [e for e in path if isinstance(e, MessageSessionEntry)]

    error = _refused(messages(fx.unknown_call_path()))
    assert (error.entry_id, error.call_id) == ("r-test", "unknown-1")
    error = _refused(messages(fx.missing_result_path()))
    assert (error.entry_id, error.call_id) == ("calls", "read-1")
    error = _refused(messages(fx.duplicate_result_path()))
    assert (error.entry_id, error.call_id) == ("r-read", "test-1")
    error = _refused(messages(fx.duplicate_call_path()))
    assert (error.entry_id, error.call_id) == ("calls", "read-1")


def test_groups_are_new_values_and_the_input_is_untouched() -> None:
    entries = [e for e in fx.opening_path() if isinstance(e, MessageSessionEntry)]
    before = list(entries)
    groups = group_interactions(entries)
    groups[0] = groups[1]
    assert entries == before
    assert group_interactions(entries)[0].entry_ids == ("u1", "a1")
    assert group_interactions(iter(entries)) == group_interactions(entries)


def test_wire_dicts_are_refused_naming_their_position() -> None:
    entries: list[object] = [_user("u1"), fx.opening_path()[2].to_json()]
    with pytest.raises(InteractionError, match=r"entries\[1\] is not a session entry"):
        group_interactions(entries)  # type: ignore[arg-type]
