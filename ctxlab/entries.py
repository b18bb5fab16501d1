"""Session entries and the strict parser (Lab 11.1, "摘要先成为 session 中的一条普通事实").

A session is an append-only list of entries linked by ``parentId``. Three entry types
exist: ``message`` (an :data:`~ctxlab.messages.AgentMessage`), ``metadata`` and
``compaction``. A compaction is an ordinary fact appended after the current leaf: a
seven-field :class:`CompactionSummary`, the id of the first kept message and the caller's
``tokensBefore`` estimate.

:func:`parse_session_entry` is the single boundary through which every entry enters a
store. It reads an external object field by field and returns a new, frozen entry:

* unknown keys are refused -- including the chapter's early-draft name ``files`` and the
  old names of ctxlab's migration exercise (a ctxlab extension, not in the chapter):
  ``nextSteps``, ``invariants`` and ``compactedEntryIds`` (migrate old records *outside* this
  boundary);
* missing keys, wrong types, blank ids, non-finite or negative numbers and ``bool`` where
  a number belongs are refused;
* JSON values must be real JSON (str keys, finite numbers, no cycles).

Each error names the entry id (when one could be read) and the field path, e.g.
``session entry compact-1: summary.changedFiles is missing``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal, NoReturn, TypeAlias, cast

from ctxlab.errors import EntryParseError, at_entry, entry_error, malformed, shown
from ctxlab.json_values import FrozenDict, JsonValue, freeze_json, thaw_json
from ctxlab.messages import (
    ABSENT,
    STOP_REASONS,
    AgentMessage,
    AssistantContent,
    AssistantMessage,
    StopReason,
    SystemMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

__all__ = [
    "ENTRY_CLASSES",
    "SUMMARY_FIELDS",
    "CompactionSessionEntry",
    "CompactionSummary",
    "MessageSessionEntry",
    "MetadataSessionEntry",
    "SessionEntry",
    "first_malformed_entry",
    "not_an_entry",
    "parse_agent_message",
    "parse_session_entry",
    "raise_malformed",
    "reading_entries",
]

#: The seven summary fields, in the chapter's fixed order (wire names).
SUMMARY_FIELDS: tuple[str, ...] = (
    "goal",
    "constraints",
    "completed",
    "decisions",
    "changedFiles",
    "unresolved",
    "next",
)

#: Old field names and what replaced them; refused with a pointer to migration. Only
#: ``files`` is the chapter's early-draft name; the others are the old shapes of ctxlab's own
#: migration exercise (a ctxlab extension).
_CHAPTER_DRAFT_NAMES = frozenset({"files"})
_DRAFT_NAMES = {
    "files": "changedFiles",
    "nextSteps": "next",
    "invariants": "constraints",
    "compactedEntryIds": "firstKeptEntryId",
}


@dataclass(frozen=True, slots=True)
class CompactionSummary:
    """The structured summary of a compaction: a goal and six lists of strings."""

    goal: str
    constraints: tuple[str, ...] = ()
    completed: tuple[str, ...] = ()
    decisions: tuple[str, ...] = ()
    changed_files: tuple[str, ...] = ()
    unresolved: tuple[str, ...] = ()
    next: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "goal": self.goal,
            "constraints": list(self.constraints),
            "completed": list(self.completed),
            "decisions": list(self.decisions),
            "changedFiles": list(self.changed_files),
            "unresolved": list(self.unresolved),
            "next": list(self.next),
        }


@dataclass(frozen=True, slots=True)
class MessageSessionEntry:
    """An entry that records one agent message."""

    id: str
    parent_id: str | None
    timestamp: int | float
    message: AgentMessage
    type: Literal["message"] = "message"

    def to_json(self) -> dict[str, Any]:
        return {**_base_json(self), "message": self.message.to_json()}


@dataclass(frozen=True, slots=True)
class MetadataSessionEntry:
    """An entry that records a key/value fact about the session (never sent to a model)."""

    id: str
    parent_id: str | None
    timestamp: int | float
    key: str
    value: JsonValue
    type: Literal["metadata"] = "metadata"

    def to_json(self) -> dict[str, Any]:
        return {**_base_json(self), "key": self.key, "value": thaw_json(self.value)}


@dataclass(frozen=True, slots=True)
class CompactionSessionEntry:
    """A compaction: the summary of what came before ``first_kept_entry_id``.

    It is appended after the current leaf and never edits or deletes older entries.
    ``tokens_before`` is the caller's estimate of the context size before compaction.
    """

    id: str
    parent_id: str
    timestamp: int | float
    summary: CompactionSummary
    first_kept_entry_id: str
    tokens_before: int | float
    type: Literal["compaction"] = "compaction"

    def to_json(self) -> dict[str, Any]:
        return {
            **_base_json(self),
            "summary": self.summary.to_json(),
            "firstKeptEntryId": self.first_kept_entry_id,
            "tokensBefore": self.tokens_before,
        }


_MESSAGE_CLASSES = (SystemMessage, UserMessage, AssistantMessage, ToolResultMessage)

SessionEntry: TypeAlias = MessageSessionEntry | MetadataSessionEntry | CompactionSessionEntry
#: The entry classes, for ``isinstance`` checks.
ENTRY_CLASSES = (MessageSessionEntry, MetadataSessionEntry, CompactionSessionEntry)


def not_an_entry(name: str, index: int, value: object) -> str:
    """The problem of a list of entries holding something else at ``name[index]``: the
    functions after the parser take parsed entries only."""
    return (
        f"{name}[{index}] is not a session entry ({type(value).__name__});"
        " parse it with parse_session_entry first"
    )


def _base_json(entry: SessionEntry) -> dict[str, Any]:
    return {
        "type": entry.type,
        "id": entry.id,
        "parentId": entry.parent_id,
        "timestamp": entry.timestamp,
    }


# --------------------------------------------------------------------------------------
# The strict reader. One small checker per field kind; each names the entry and the path.


class _Reader:
    """Reads one external object, remembering which entry the errors belong to."""

    __slots__ = ("entry_id",)

    def __init__(self, entry_id: str | None) -> None:
        self.entry_id = entry_id

    def fail(self, path: str, problem: str) -> NoReturn:
        raise entry_error(self.entry_id, path, problem)

    def obj(
        self, value: object, path: str, required: tuple[str, ...], optional: tuple[str, ...] = ()
    ) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            self.fail(path, f"must be an object, got {_kind(value)}")
        for key in value:
            if not isinstance(key, str):
                self.fail(path, f"has a non-string key {shown(key)}")
            if key not in required and key not in optional:
                where = f"{path}.{key}" if path else key
                hint = ""
                if key in _DRAFT_NAMES:
                    kind = (
                        "the chapter's early-draft name"
                        if key in _CHAPTER_DRAFT_NAMES
                        else "an old name of ctxlab's migration exercise"
                    )
                    hint = (
                        f" ({kind}; the current field is {_DRAFT_NAMES[key]}:"
                        " migrate old records before parsing)"
                    )
                self.fail(where, f"is not a known field{hint}")
        for key in required:
            if key not in value:
                self.fail(f"{path}.{key}" if path else key, "is missing")
        return value

    def string(self, value: object, path: str) -> str:
        if not isinstance(value, str):
            self.fail(path, f"must be a string, got {_kind(value)}")
        return value

    def nonblank(self, value: object, path: str) -> str:
        text = self.string(value, path)
        if not text.strip():  # ctxlab's rule: white space alone names nothing either
            self.fail(path, "must not be only white space" if text else "must not be empty")
        return text

    def number(self, value: object, path: str, *, minimum: float | None = None) -> int | float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(path, f"must be a finite number, got {_kind(value)}")
        if isinstance(value, float) and not math.isfinite(value):
            self.fail(path, f"must be a finite number, got {shown(value)}")
        if minimum is not None and value < minimum:
            self.fail(path, f"must be >= {minimum:g}, got {shown(value)}")
        return value

    def boolean(self, value: object, path: str) -> bool:
        if not isinstance(value, bool):
            self.fail(path, f"must be true or false, got {_kind(value)}")
        return value

    def array(self, value: object, path: str) -> list[Any] | tuple[Any, ...]:
        if not isinstance(value, (list, tuple)):
            self.fail(path, f"must be an array, got {_kind(value)}")
        return value

    def strings(self, value: object, path: str) -> tuple[str, ...]:
        items = self.array(value, path)
        return tuple(self.string(item, f"{path}[{i}]") for i, item in enumerate(items))

    def json(self, value: object, path: str) -> JsonValue:
        return freeze_json(value, entry_id=self.entry_id, path=path)

    def text_blocks(self, value: object, path: str) -> tuple[TextContent, ...]:
        blocks = self.array(value, path)
        return tuple(self.text_block(block, f"{path}[{i}]") for i, block in enumerate(blocks))

    def text_block(self, value: object, path: str) -> TextContent:
        block = self.obj(value, path, ("type", "text"))
        if block["type"] != "text":
            self.fail(f"{path}.type", f"must be 'text', got {shown(block['type'])}")
        return TextContent(self.string(block["text"], f"{path}.text"))


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {shown(value)}"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


_MESSAGE_KEYS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "system": (("role", "content", "timestamp"), ("sections",)),
    "user": (("role", "content", "timestamp"), ()),
    "assistant": (
        ("role", "content", "provider", "model", "usage", "stopReason", "timestamp"),
        ("errorMessage",),
    ),
    "toolResult": (
        ("role", "toolCallId", "toolName", "content", "isError", "timestamp"),
        ("details",),
    ),
}


def _read_message(r: _Reader, value: object, path: str) -> AgentMessage:
    if not isinstance(value, Mapping):
        r.fail(path, f"must be an object, got {_kind(value)}")
    role = value.get("role")
    if not isinstance(role, str) or role not in _MESSAGE_KEYS:
        if "role" not in value:
            r.fail(f"{path}.role", "is missing")
        r.fail(f"{path}.role", f"must be one of {', '.join(_MESSAGE_KEYS)}; got {shown(role)}")
    required, optional = _MESSAGE_KEYS[role]
    m = r.obj(value, path, required, optional)
    timestamp = r.number(m["timestamp"], f"{path}.timestamp")
    if role == "system":
        sections: FrozenDict[str | None] | None = None
        if "sections" in m:
            raw = m["sections"]
            if not isinstance(raw, Mapping):
                r.fail(f"{path}.sections", f"must be an object, got {_kind(raw)}")
            named: dict[str, str | None] = {}
            for name, text in raw.items():
                if not isinstance(name, str):
                    r.fail(f"{path}.sections", f"has a non-string key {shown(name)}")
                where = f"{path}.sections.{name}"
                named[name] = None if text is None else r.string(text, where)
            sections = FrozenDict[str | None](named)
        return SystemMessage(r.string(m["content"], f"{path}.content"), timestamp, sections)
    if role == "user":
        return UserMessage(r.text_blocks(m["content"], f"{path}.content"), timestamp)
    if role == "assistant":
        return AssistantMessage(
            content=_read_assistant_content(r, m["content"], f"{path}.content"),
            provider=r.string(m["provider"], f"{path}.provider"),
            model=r.string(m["model"], f"{path}.model"),
            usage=_read_usage(r, m["usage"], f"{path}.usage"),
            stop_reason=_read_stop_reason(r, m["stopReason"], f"{path}.stopReason"),
            timestamp=timestamp,
            error_message=(
                r.string(m["errorMessage"], f"{path}.errorMessage") if "errorMessage" in m else None
            ),
        )
    return ToolResultMessage(
        tool_call_id=r.nonblank(m["toolCallId"], f"{path}.toolCallId"),
        tool_name=r.nonblank(m["toolName"], f"{path}.toolName"),
        content=r.text_blocks(m["content"], f"{path}.content"),
        is_error=r.boolean(m["isError"], f"{path}.isError"),
        timestamp=timestamp,
        details=r.json(m["details"], f"{path}.details") if "details" in m else ABSENT,
    )


def _read_assistant_content(r: _Reader, value: object, path: str) -> tuple[AssistantContent, ...]:
    blocks: list[AssistantContent] = []
    for i, raw in enumerate(r.array(value, path)):
        where = f"{path}[{i}]"
        kind = raw.get("type") if isinstance(raw, Mapping) else None
        if kind == "toolCall":
            call = r.obj(raw, where, ("type", "id", "name", "arguments"), ("rawArguments",))
            blocks.append(
                ToolCall(
                    id=r.nonblank(call["id"], f"{where}.id"),
                    name=r.nonblank(call["name"], f"{where}.name"),
                    arguments=r.json(call["arguments"], f"{where}.arguments"),
                    raw_arguments=(
                        r.string(call["rawArguments"], f"{where}.rawArguments")
                        if "rawArguments" in call
                        else None
                    ),
                )
            )
        elif kind == "text" or not isinstance(raw, Mapping):
            blocks.append(r.text_block(raw, where))
        else:
            r.fail(f"{where}.type", f"must be 'text' or 'toolCall', got {shown(kind)}")
    return tuple(blocks)


def _read_usage(r: _Reader, value: object, path: str) -> Usage:
    u = r.obj(value, path, ("input", "output", "totalTokens"))
    return Usage(
        input=r.number(u["input"], f"{path}.input", minimum=0),
        output=r.number(u["output"], f"{path}.output", minimum=0),
        total_tokens=r.number(u["totalTokens"], f"{path}.totalTokens", minimum=0),
    )


def _read_stop_reason(r: _Reader, value: object, path: str) -> StopReason:
    if value not in STOP_REASONS:
        r.fail(path, f"must be one of {', '.join(STOP_REASONS)}; got {shown(value)}")
    reason: StopReason = value  # type: ignore[assignment]  # narrowed by the check above
    return reason


def _read_summary(r: _Reader, value: object, path: str) -> CompactionSummary:
    s = r.obj(value, path, SUMMARY_FIELDS)
    return CompactionSummary(
        goal=r.nonblank(s["goal"], f"{path}.goal"),
        constraints=r.strings(s["constraints"], f"{path}.constraints"),
        completed=r.strings(s["completed"], f"{path}.completed"),
        decisions=r.strings(s["decisions"], f"{path}.decisions"),
        changed_files=r.strings(s["changedFiles"], f"{path}.changedFiles"),
        unresolved=r.strings(s["unresolved"], f"{path}.unresolved"),
        next=r.strings(s["next"], f"{path}.next"),
    )


_BASE_KEYS = ("type", "id", "parentId", "timestamp")
_ENTRY_KEYS: dict[str, tuple[str, ...]] = {
    "message": (*_BASE_KEYS, "message"),
    "metadata": (*_BASE_KEYS, "key", "value"),
    "compaction": (*_BASE_KEYS, "summary", "firstKeptEntryId", "tokensBefore"),
}


def parse_session_entry(value: object) -> SessionEntry:
    """Check ``value`` field by field and return a new, frozen session entry.

    ``value`` is the wire form (a JSON-shaped mapping with camelCase keys) or an entry
    object, which is re-checked through its wire form. The result shares no mutable state
    with ``value``; :class:`~ctxlab.errors.EntryParseError` names the entry id and field.
    """
    if isinstance(value, ENTRY_CLASSES):
        value = _wire_of(value)
    if not isinstance(value, Mapping):
        raise entry_error(None, "", f"must be an object, got {_kind(value)}")
    raw_id = value.get("id")
    r = _Reader(raw_id if isinstance(raw_id, str) and raw_id.strip() else None)
    entry_type = value.get("type")
    if not isinstance(entry_type, str) or entry_type not in _ENTRY_KEYS:
        if "type" not in value:
            r.fail("type", "is missing")
        r.fail("type", f"must be one of message, metadata, compaction; got {shown(entry_type)}")
    e = r.obj(value, "", _ENTRY_KEYS[entry_type])
    entry_id = r.nonblank(e["id"], "id")
    timestamp = r.number(e["timestamp"], "timestamp")
    parent = e["parentId"]
    if entry_type == "compaction":
        if parent is None:
            r.fail("parentId", "must not be null: a compaction is appended after a leaf")
        parent_id = r.nonblank(parent, "parentId")
        return CompactionSessionEntry(
            id=entry_id,
            parent_id=parent_id,
            timestamp=timestamp,
            summary=_read_summary(r, e["summary"], "summary"),
            first_kept_entry_id=r.nonblank(e["firstKeptEntryId"], "firstKeptEntryId"),
            tokens_before=r.number(e["tokensBefore"], "tokensBefore", minimum=0),
        )
    root_or_parent = None if parent is None else r.nonblank(parent, "parentId")
    if entry_type == "metadata":
        return MetadataSessionEntry(
            id=entry_id,
            parent_id=root_or_parent,
            timestamp=timestamp,
            key=r.nonblank(e["key"], "key"),
            value=r.json(e["value"], "value"),
        )
    return MessageSessionEntry(
        id=entry_id,
        parent_id=root_or_parent,
        timestamp=timestamp,
        message=_read_message(r, e["message"], "message"),
    )


def _wire_of(value: SessionEntry | AgentMessage, entry_id: str | None = None) -> Any:
    """The wire form of an entry or message object, re-checked by the caller.

    An object built directly (not parsed) may hold anything; if it cannot even produce
    its wire form, that is reported like any other malformed entry, naming the part that
    fails (``message`` of a message entry, ``summary`` of a compaction) when it is one.
    """
    try:
        return value.to_json()
    except Exception as exc:
        failure: Exception = exc
    if entry_id is None:
        own_id = getattr(value, "id", None)
        entry_id = own_id if isinstance(own_id, str) else None
    field, part = "", cast("Any", value)  # a part of an object built by hand: anything
    if isinstance(value, MessageSessionEntry):
        field, part = "message", value.message
        if not isinstance(part, _MESSAGE_CLASSES):
            raise entry_error(
                entry_id, field, f"must be an agent message object, got {type(part).__name__}"
            ) from failure
    elif isinstance(value, CompactionSessionEntry):
        field, part = "summary", value.summary
    if part is not value:
        try:
            part.to_json()
            field, part = "", value  # the part is fine: the entry's own fields are not
        except Exception as exc:
            failure = exc
    raise malformed(
        part, failure, where=at_entry(entry_id), field=field, entry_id=entry_id
    ) from failure


def parse_agent_message(value: object, *, entry_id: str | None = None) -> AgentMessage:
    """Strictly read one message in wire form (or re-check a message object)."""
    if isinstance(value, _MESSAGE_CLASSES):
        value = _wire_of(value, entry_id)
    return _read_message(_Reader(entry_id), value, "message")


# --------------------------------------------------------------------------------------
# Entry objects built directly. The functions after the parser read entries without
# checking them again (that is what makes one pass over 100,000 entries cheap). An object
# built by hand with a wrong field makes such a read fail with an AttributeError or a
# TypeError; only then is the parser asked which entry and which field are wrong.


def first_malformed_entry(entries: Iterable[object]) -> EntryParseError | None:
    """The parser's error for the first entry object in ``entries`` that it refuses, or
    None when it accepts them all (anything that is not an entry object is skipped)."""
    for entry in entries:
        if isinstance(entry, ENTRY_CLASSES):
            try:
                parse_session_entry(entry)
            except EntryParseError as error:
                return error
    return None


def raise_malformed(exc: BaseException, entries: Iterable[object]) -> NoReturn:
    """Raise, instead of ``exc``, the parser's error for the first malformed entry of
    ``entries`` (chained to ``exc``); re-raise ``exc`` itself when there is none."""
    error = first_malformed_entry(entries)
    if error is None:
        raise exc
    raise error from exc


@contextmanager
def reading_entries(entries: Iterable[object]) -> Iterator[None]:
    """Run a block that reads ``entries`` (a list: it is read again on failure). An
    ``AttributeError`` or ``TypeError`` there, or an ``EntryParseError`` about an object
    that does not know its entry (a message or summary refused on its own), becomes the
    parser's error naming the malformed entry and field (:func:`raise_malformed`)."""
    try:
        yield
    except (AttributeError, TypeError) as exc:
        raise_malformed(exc, entries)
    except EntryParseError as error:
        if error.entry_id is not None:
            raise
        raise_malformed(error, entries)
