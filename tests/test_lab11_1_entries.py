"""Lab 11.1: entry and message types, the wire format and the strict parser (spec 1-2)."""

from __future__ import annotations

import copy
import dataclasses
import math
from typing import Any

import pytest

from ctxlab import (
    AssistantMessage,
    CompactionSessionEntry,
    CtxlabError,
    EntryParseError,
    MessageSessionEntry,
    MetadataSessionEntry,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    parse_session_entry,
)
from ctxlab import fixtures as fx

pytestmark = pytest.mark.reference


def _wire(entry_id: str) -> dict[str, Any]:
    path = {e.id: e for e in fx.resumed_path()}
    return path[entry_id].to_json()


def _refused(wire: object) -> EntryParseError:
    with pytest.raises(EntryParseError) as caught:
        parse_session_entry(wire)
    return caught.value


def _set(wire: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    *parents, last = dotted.split(".")
    target: Any = wire
    for key in parents:
        target = target[int(key)] if isinstance(target, list) else target[key]
    if isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value
    return wire


def _del(wire: dict[str, Any], dotted: str) -> dict[str, Any]:
    *parents, last = dotted.split(".")
    target: Any = wire
    for key in parents:
        target = target[int(key)] if isinstance(target, list) else target[key]
    del target[last]
    return wire


# -- the wire format ------------------------------------------------------------------------


def test_message_entries_use_camel_case_on_the_wire() -> None:
    calls = _wire("calls")
    assert calls == {
        "type": "message",
        "id": "calls",
        "parentId": "u3",
        "timestamp": 7,
        "message": {
            "role": "assistant",
            "content": [
                {
                    "type": "text",
                    "text": "I'll read context.ts and run the context tests in parallel.",
                },
                {
                    "type": "toolCall",
                    "id": "read-1",
                    "name": "read",
                    "arguments": {"path": "src/context.ts"},
                },
                {
                    "type": "toolCall",
                    "id": "test-1",
                    "name": "bash",
                    "arguments": {"command": "npm test -- context"},
                },
            ],
            "provider": "course",
            "model": "course-model-1",
            "usage": {"input": 900, "output": 40, "totalTokens": 940},
            "stopReason": "toolUse",
            "timestamp": 7,
        },
    }
    result = _wire("r-test")["message"]
    assert set(result) == {"role", "toolCallId", "toolName", "content", "isError", "timestamp"}
    assert result["toolCallId"] == "test-1"


@pytest.mark.parametrize("entry_id", ["sys", "u1", "calls", "r-read", "a3", "compact-1", "u4"])
def test_to_json_round_trips(entry_id: str) -> None:
    entry = {e.id: e for e in fx.resumed_path()}[entry_id]
    parsed = parse_session_entry(entry.to_json())
    assert parsed == entry
    assert type(parsed) is type(entry)
    assert parse_session_entry(entry) == entry


def test_optional_fields_round_trip() -> None:
    wire = {
        "type": "message",
        "id": "m",
        "parentId": None,
        "timestamp": 1.5,
        "message": {
            "role": "assistant",
            "content": [
                {"type": "toolCall", "id": "c", "name": "n", "arguments": [1, {"k": None}]},
            ],
            "provider": "p",
            "model": "m",
            "usage": {"input": 0, "output": 0.5, "totalTokens": 0.5},
            "stopReason": "error",
            "errorMessage": "boom",
            "timestamp": 1.5,
        },
    }
    wire["message"]["content"][0]["rawArguments"] = '[1, {"k": null}]'
    entry = parse_session_entry(wire)
    assert entry.to_json() == wire
    assert isinstance(entry, MessageSessionEntry)
    assert isinstance(entry.message, AssistantMessage)
    assert entry.message.error_message == "boom"
    assert entry.message.tool_calls[0].raw_arguments == '[1, {"k": null}]'
    result = {
        "type": "message",
        "id": "r",
        "parentId": "m",
        "timestamp": 2,
        "message": {
            "role": "toolResult",
            "toolCallId": "c",
            "toolName": "n",
            "content": [],
            "details": {"exitCode": 0, "lines": [1, 2]},
            "isError": True,
            "timestamp": 2,
        },
    }
    assert parse_session_entry(result).to_json() == result
    system = {
        "type": "message",
        "id": "s",
        "parentId": None,
        "timestamp": 0,
        "message": {"role": "system", "content": "", "sections": {"a": None}, "timestamp": 0},
    }
    assert parse_session_entry(system).to_json() == system
    metadata = {
        "type": "metadata",
        "id": "md",
        "parentId": None,
        "timestamp": 0,
        "key": "label",
        "value": {"nested": [True, None, 1.25, "x"]},
    }
    assert parse_session_entry(metadata).to_json() == metadata


def test_parsed_entries_are_frozen_and_share_nothing_with_input() -> None:
    wire = _wire("calls")
    original = copy.deepcopy(wire)
    entry = parse_session_entry(wire)
    assert isinstance(entry, MessageSessionEntry)
    wire["message"]["content"][1]["arguments"]["path"] = "other.ts"
    wire["message"]["content"].pop()
    assert entry.to_json() == original
    call = entry.message.content[1]
    assert isinstance(call, ToolCall)
    with pytest.raises(TypeError):
        call.arguments["path"] = "x"  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        entry.id = "x"  # type: ignore[misc]
    out = entry.to_json()
    out["message"]["content"][1]["arguments"]["path"] = "changed"
    assert entry.to_json() == original


# -- strictness -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry_id", "field"),
    [
        ("compact-1", "summary.files"),
        ("compact-1", "summary.nextSteps"),
        ("compact-1", "summary.invariants"),
        ("compact-1", "compactedEntryIds"),
        ("u1", "extra"),
        ("u1", "message.name"),
        ("calls", "message.content.1.extra"),
        ("calls", "message.usage.cached"),
        ("u1", "message.content.0.bold"),
    ],
)
def test_unknown_keys_are_refused(entry_id: str, field: str) -> None:
    error = _refused(_set(_wire(entry_id), field, ["x"]))
    assert error.entry_id == entry_id
    assert error.field == field.replace(".1.", "[1].").replace(".0.", "[0].")
    assert "is not a known field" in str(error)


@pytest.mark.parametrize("draft", ["files", "nextSteps", "invariants", "compactedEntryIds"])
def test_early_draft_names_point_at_migration(draft: str) -> None:
    wire = _wire("compact-1")
    target = wire if draft == "compactedEntryIds" else wire["summary"]
    target[draft] = []
    error = _refused(wire)
    # Only files is the chapter's early-draft name; the others are ctxlab's own old names.
    if draft == "files":
        assert "the chapter's early-draft name" in str(error)
    else:
        assert "early-draft" not in str(error)
        assert "an old name of ctxlab's migration exercise" in str(error)
    assert "migrate old records before parsing" in str(error)


@pytest.mark.parametrize(
    ("entry_id", "field"),
    [
        ("u1", "id"),
        ("u1", "parentId"),
        ("u1", "timestamp"),
        ("u1", "type"),
        ("u1", "message"),
        ("u1", "message.timestamp"),
        ("u1", "message.role"),
        ("calls", "message.usage"),
        ("calls", "message.usage.totalTokens"),
        ("calls", "message.stopReason"),
        ("calls", "message.provider"),
        ("r-test", "message.isError"),
        ("r-test", "message.toolCallId"),
        ("r-test", "message.toolName"),
        ("compact-1", "summary.next"),
        ("compact-1", "firstKeptEntryId"),
        ("compact-1", "tokensBefore"),
    ],
)
def test_missing_keys_are_refused(entry_id: str, field: str) -> None:
    error = _refused(_del(_wire(entry_id), field))
    assert error.field == field
    assert str(error).endswith(f"{field} is missing")
    if field != "id":
        assert error.entry_id == entry_id
    else:
        assert error.entry_id is None


def test_a_missing_call_field_is_named_with_its_index() -> None:
    wire = _wire("calls")
    del wire["message"]["content"][2]["arguments"]
    error = _refused(wire)
    assert error.field == "message.content[2].arguments"


@pytest.mark.parametrize(
    ("entry_id", "field"),
    [
        ("u1", "id"),
        ("u2", "parentId"),
        ("compact-1", "summary.goal"),
        ("compact-1", "firstKeptEntryId"),
        ("compact-1", "parentId"),
        ("r-test", "message.toolCallId"),
        ("r-test", "message.toolName"),
        ("calls", "message.content.1.id"),
    ],
)
@pytest.mark.parametrize("blank", ["", "   ", "\t\n"])
def test_blank_strings_are_refused(entry_id: str, field: str, blank: str) -> None:
    error = _refused(_set(_wire(entry_id), field, blank))
    assert ("must not be only white space" if blank else "must not be empty") in str(error)


def test_empty_text_and_empty_system_content_are_allowed() -> None:
    wire = _set(_wire("u1"), "message.content.0.text", "")
    assert parse_session_entry(wire).to_json() == wire
    system = _set(_wire("sys"), "message.content", "")
    assert parse_session_entry(system).to_json() == system


NUMBER_FIELDS = [
    ("u1", "timestamp"),
    ("u1", "message.timestamp"),
    ("calls", "message.usage.input"),
    ("calls", "message.usage.output"),
    ("calls", "message.usage.totalTokens"),
    ("compact-1", "tokensBefore"),
    ("compact-1", "timestamp"),
]


@pytest.mark.parametrize(("entry_id", "field"), NUMBER_FIELDS)
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, True, False, "1", None, [1]])
def test_numbers_must_be_finite_and_not_bool(entry_id: str, field: str, bad: object) -> None:
    error = _refused(_set(_wire(entry_id), field, bad))
    assert error.field == field
    assert error.entry_id == entry_id
    assert "finite number" in str(error)


@pytest.mark.parametrize(
    ("entry_id", "field"),
    [
        ("calls", "message.usage.input"),
        ("calls", "message.usage.output"),
        ("calls", "message.usage.totalTokens"),
        ("compact-1", "tokensBefore"),
    ],
)
def test_counts_must_not_be_negative(entry_id: str, field: str) -> None:
    error = _refused(_set(_wire(entry_id), field, -0.5))
    assert error.field == field
    assert ">= 0" in str(error)


def test_tokens_before_is_never_recomputed() -> None:
    wire = _set(_wire("compact-1"), "tokensBefore", 123456.5)
    entry = parse_session_entry(wire)
    assert isinstance(entry, CompactionSessionEntry)
    assert entry.tokens_before == 123456.5
    assert (
        parse_session_entry(_set(_wire("compact-1"), "tokensBefore", 0)).to_json()["tokensBefore"]
        == 0
    )


def test_timestamps_may_be_negative_finite_numbers() -> None:
    assert parse_session_entry(_set(_wire("u1"), "timestamp", -5)).timestamp == -5


@pytest.mark.parametrize(
    ("entry_id", "field", "bad", "expected"),
    [
        ("u1", "type", "note", "type must be one of"),
        ("u1", "message.role", "developer", "message.role must be one of"),
        ("calls", "message.stopReason", "done", "message.stopReason must be one of"),
        ("calls", "message.content.0.type", "image", "must be 'text' or 'toolCall'"),
        ("u1", "message.content.0.type", "toolCall", "must be 'text'"),
        ("r-test", "message.isError", 0, "must be true or false"),
        ("u1", "message.content", "hello", "must be an array"),
        ("u1", "message", "hello", "must be an object"),
        ("compact-1", "summary.decisions", ["ok", 3], "summary.decisions[1] must be a string"),
        ("compact-1", "summary", [], "summary must be an object"),
        ("sys", "message.sections", ["rules"], "message.sections must be an object"),
        ("sys", "message.sections", {"rules": 1}, "message.sections.rules must be a string"),
        ("u1", "parentId", 7, "parentId must be a string"),
        ("md", "key", "", "key must not be empty"),
        ("md", "key", " ", "key must not be only white space"),
    ],
)
def test_wrong_types_are_refused_naming_the_path(
    entry_id: str, field: str, bad: object, expected: str
) -> None:
    if entry_id == "md":
        wire: dict[str, Any] = {
            "type": "metadata",
            "id": "md",
            "parentId": None,
            "timestamp": 0,
            "key": "k",
            "value": 1,
        }
    else:
        wire = _wire(entry_id)
    error = _refused(_set(wire, field, bad))
    assert error.entry_id == entry_id
    assert expected in str(error)


def test_non_mappings_are_refused() -> None:
    for value in (None, 3, "entry", ["type", "message"], ()):
        error = _refused(value)
        assert error.entry_id is None
        assert "must be an object" in str(error)


@pytest.mark.parametrize(
    "bad",
    [
        math.nan,
        math.inf,
        {1: "non-string key"},
        {1.5: "float key"},
        object(),
        {"set": {1, 2}},
        b"bytes",
        [complex(1, 2)],
    ],
)
@pytest.mark.parametrize(
    ("entry_id", "field"),
    [("calls", "message.content.1.arguments"), ("md", "value"), ("r-test", "message.details")],
)
def test_non_json_values_are_refused(entry_id: str, field: str, bad: object) -> None:
    if entry_id == "md":
        wire: dict[str, Any] = {
            "type": "metadata",
            "id": "md",
            "parentId": None,
            "timestamp": 0,
            "key": "k",
            "value": None,
        }
    else:
        wire = _wire(entry_id)
    error = _refused(_set(wire, field, {"deep": [bad]}))
    assert error.entry_id == entry_id
    assert error.field.startswith(field.replace(".1.", "[1]."))


def test_cycles_are_refused() -> None:
    loop: dict[str, Any] = {"a": 1}
    loop["self"] = loop
    error = _refused(_set(_wire("calls"), "message.content.1.arguments", loop))
    assert "cycle" in str(error)
    assert error.field == "message.content[1].arguments.self"
    items: list[Any] = []
    items.append(items)
    metadata = {"type": "metadata", "id": "md", "parentId": None, "timestamp": 0, "key": "k"}
    error = _refused({**metadata, "value": items})
    assert "cycle" in str(error)
    assert error.entry_id == "md"


def test_shared_but_acyclic_values_are_fine() -> None:
    shared = {"x": 1}
    value = {"a": shared, "b": shared, "c": [shared, shared]}
    wire = {"type": "metadata", "id": "md", "parentId": None, "timestamp": 0, "key": "k"}
    entry = parse_session_entry({**wire, "value": value})
    assert isinstance(entry, MetadataSessionEntry)
    assert entry.to_json()["value"] == value


def test_over_deep_nesting_is_a_parse_error_not_a_recursion_error() -> None:
    deep: Any = "leaf"
    for _ in range(5000):
        deep = [deep]
    wire = {"type": "metadata", "id": "md", "parentId": None, "timestamp": 0, "key": "k"}
    error = _refused({**wire, "value": deep})
    assert "nested" in str(error)
    assert error.entry_id == "md"
    shallow: Any = "leaf"
    for _ in range(50):
        shallow = {"k": shallow}
    assert parse_session_entry({**wire, "value": shallow}).to_json()["value"] == shallow


def test_unhashable_type_or_role_values_are_parse_errors() -> None:
    error = _refused(_set(_wire("u1"), "type", ["message"]))
    assert error.field == "type"
    error = _refused(_set(_wire("u1"), "message.role", {"user": 1}))
    assert error.field == "message.role"
    error = _refused(_set(_wire("calls"), "message.stopReason", ["stop"]))
    assert error.field == "message.stopReason"


def test_every_error_is_a_ctxlab_value_error() -> None:
    error = _refused(_set(_wire("u1"), "timestamp", "now"))
    assert isinstance(error, CtxlabError)
    assert isinstance(error, ValueError)
    assert str(error) == "session entry u1: timestamp must be a finite number, got a string"


def test_compaction_parent_must_not_be_null_but_other_roots_may() -> None:
    error = _refused(_set(_wire("compact-1"), "parentId", None))
    assert error.field == "parentId"
    assert error.entry_id == "compact-1"
    root = parse_session_entry(_wire("sys"))
    assert root.parent_id is None


def test_message_classes_have_snake_case_attributes() -> None:
    by_id = {e.id: e for e in fx.opening_path() if isinstance(e, MessageSessionEntry)}
    result = by_id["r-test"].message
    assert isinstance(result, ToolResultMessage)
    assert (result.tool_call_id, result.tool_name, result.is_error) == ("test-1", "bash", False)
    calls = by_id["calls"].message
    assert isinstance(calls, AssistantMessage)
    assert calls.stop_reason == "toolUse"
    assert calls.usage.total_tokens == 940
    assert isinstance(by_id["u1"].message, UserMessage)
    assert isinstance(by_id["sys"].message, SystemMessage)
