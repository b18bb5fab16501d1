"""Wire fidelity: every optional field of the course's message types survives a read and a
write (spec section 1; issue 11).

A file the TypeScript course wrote must come back out of ctxlab as it went in: an
optional key that is present stays present -- a tool result's ``"details": null``
included -- and an absent key stays absent. Checked on ``parse_session_entry`` ->
``to_json()`` and through a JSONL store (read a course-style file, write the entries to a
new file, read that again). Values are compared as JSON values: ``1`` is not ``1.0`` and a
``null`` is not a missing key.

The other optional fields (system ``sections``, assistant ``errorMessage``, tool call
``rawArguments``) are an object or a string when present; a ``null`` there is not valid
and is refused, naming the field.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab import (
    ABSENT,
    ContextWindow,
    EntryParseError,
    JsonlSessionStore,
    MessageSessionEntry,
    TextContent,
    ToolResultMessage,
    build_context,
    parse_session_entry,
)
from ctxlab.store import encode_entry_line

pytestmark = pytest.mark.lab11_1


def canonical(value: Any) -> str:
    """JSON text with sorted keys: equal texts are equal JSON values (``1`` vs ``1.0``,
    ``null`` vs a missing key and ``0`` vs ``false`` all differ)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)


def _entry(entry_id: str, message: dict[str, Any]) -> dict[str, Any]:
    # The course's key order (id, parentId, timestamp, type, message).
    return {"id": entry_id, "parentId": None, "timestamp": 3, "type": "message", "message": message}


def _tool_result(entry_id: str, **details: Any) -> dict[str, Any]:
    message = {
        "role": "toolResult",
        "toolCallId": "call-1",
        "toolName": "bash",
        "content": [{"type": "text", "text": "ok"}],
        "isError": False,
        "timestamp": 3,
        **details,  # last, where the course writes it
    }
    return _entry(entry_id, message)


def _system(entry_id: str, **sections: Any) -> dict[str, Any]:
    return _entry(entry_id, {"role": "system", "content": "BASE", **sections, "timestamp": 3})


def _assistant(entry_id: str, error: dict[str, Any], call: dict[str, Any]) -> dict[str, Any]:
    message = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "t"},
            {"type": "toolCall", "id": "call-1", "name": "bash", "arguments": {}, **call},
        ],
        "provider": "scripted",
        "model": "scripted-v1",
        "usage": {"input": 0, "output": 0, "totalTokens": 0},
        "stopReason": "toolUse",
        **error,
        "timestamp": 3,
    }
    return _entry(entry_id, message)


# Present vs absent, null vs value, for every optional field; plus falsy values that a
# careless ``if value:`` would drop, and int vs float.
WIRES: dict[str, dict[str, Any]] = {
    "details-absent": _tool_result("r0"),
    "details-null": _tool_result("r1", details=None),
    "details-false": _tool_result("r2", details=False),
    "details-0": _tool_result("r3", details=0),
    "details-0.0": _tool_result("r4", details=0.0),
    "details-empty-string": _tool_result("r5", details=""),
    "details-empty-object": _tool_result("r6", details={}),
    "details-empty-array": _tool_result("r7", details=[]),
    "details-nulls-inside": _tool_result("r8", details={"a": None, "b": [None, 1.0, 1]}),
    "details-course": _tool_result("r9", details={"order": "PASS\n2 passed"}),
    "sections-absent": _system("s0"),
    "sections-empty": _system("s1", sections={}),
    "sections-null-value": _system("s2", sections={"rules": None}),
    "sections-mixed": _system("s3", sections={"rules": "v2", "old": None, "empty": ""}),
    "assistant-absent": _assistant("a0", {}, {}),
    "errorMessage-empty": _assistant("a1", {"errorMessage": ""}, {}),
    "errorMessage-text": _assistant("a2", {"errorMessage": "boom"}, {}),
    "rawArguments-empty": _assistant("a3", {}, {"rawArguments": ""}),
    "rawArguments-text": _assistant("a4", {}, {"rawArguments": '{"command": "ls",'}),
    "timestamp-float": {**_tool_result("t0"), "timestamp": 3.0},
    "metadata-null": {
        "id": "m0",
        "parentId": None,
        "timestamp": 3,
        "type": "metadata",
        "key": "label",
        "value": None,
    },
}


@pytest.mark.parametrize("wire", WIRES.values(), ids=WIRES.keys())
def test_parse_then_to_json_gives_back_the_wire(wire: dict[str, Any]) -> None:
    original = copy.deepcopy(wire)
    entry = parse_session_entry(wire)
    assert canonical(entry.to_json()) == canonical(original)
    assert parse_session_entry(entry.to_json()) == entry
    assert wire == original  # the input is not touched


def test_null_details_and_absent_details_are_different_values() -> None:
    absent = parse_session_entry(WIRES["details-absent"])
    null = parse_session_entry(WIRES["details-null"])
    assert isinstance(absent, MessageSessionEntry) and isinstance(null, MessageSessionEntry)
    assert isinstance(absent.message, ToolResultMessage)
    assert isinstance(null.message, ToolResultMessage)
    assert absent.message.details is ABSENT
    assert null.message.details is None
    assert absent != null
    assert "details" not in absent.message.to_json()
    assert null.message.to_json()["details"] is None


def test_a_tool_result_built_in_python_has_no_details_key_unless_given_one() -> None:
    blocks = (TextContent("ok"),)
    assert "details" not in ToolResultMessage("c", "bash", blocks, False, 1).to_json()
    with_null = ToolResultMessage("c", "bash", blocks, False, 1, details=None)
    assert with_null.to_json()["details"] is None
    assert repr(ABSENT) == "ABSENT"


@pytest.mark.parametrize(
    ("wire", "field"),
    [
        (_system("s", sections=None), "message.sections"),
        (_assistant("a", {"errorMessage": None}, {}), "message.errorMessage"),
        (_assistant("a", {}, {"rawArguments": None}), "message.content[1].rawArguments"),
    ],
    ids=["sections", "errorMessage", "rawArguments"],
)
def test_null_where_the_course_allows_no_null_is_refused(wire: dict[str, Any], field: str) -> None:
    with pytest.raises(EntryParseError) as caught:
        parse_session_entry(wire)
    assert caught.value.field == field
    assert caught.value.entry_id == wire["id"]


def test_a_course_style_file_survives_a_jsonl_read_and_write(tmp_path: Path) -> None:
    """Lines as the course writes them (compact JSON, its key order) -> store -> new file."""
    wires = list(WIRES.values())
    course_file = tmp_path / "course.jsonl"
    course_file.write_text(
        "".join(json.dumps(w, ensure_ascii=False, separators=(",", ":")) + "\n" for w in wires),
        encoding="utf-8",
    )
    read = JsonlSessionStore.open(course_file, durable=False).read()
    assert read.warnings == ()
    assert [canonical(e.to_json()) for e in read.entries] == [canonical(w) for w in wires]

    written = tmp_path / "written.jsonl"
    store = JsonlSessionStore.open(written, durable=False)
    for entry in read.entries:
        store.append(entry)
    lines = written.read_bytes().splitlines(keepends=True)
    assert lines == [encode_entry_line(e) for e in read.entries]
    assert [canonical(json.loads(line)) for line in lines] == [canonical(w) for w in wires]
    assert b'"details":null' in lines[1]
    assert JsonlSessionStore.open(written, durable=False).entries() == list(read.entries)


def _pair_with_null_details() -> list[dict[str, Any]]:
    user = _entry("u1", {"role": "user", "content": [{"type": "text", "text": "go"}]})
    user["message"]["timestamp"] = 1
    calls = _assistant("calls", {}, {})
    calls["parentId"] = "u1"
    result = _tool_result("r1", details=None)
    result["parentId"] = "calls"
    return [user, calls, result]


def test_null_details_reach_the_context_messages() -> None:
    """The projection sends the stored message as it is (the course's messages keep it)."""
    path = [parse_session_entry(w) for w in _pair_with_null_details()]
    options: dict[str, Any] = {"max_tokens": 100, "reserved_output": 0, "safety_margin": 0}
    result = build_context(path, estimate_tokens=lambda _: 1, **options)
    assert result.to_json()["messages"][-1]["details"] is None
    window = ContextWindow.from_entries(path, estimate_tokens=lambda _: 1)
    assert window.build(**options) == result
