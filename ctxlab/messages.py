"""Agent messages and the chapter 03 system-replay rule.

The four message roles of the course (``system``, ``user``, ``assistant``, ``toolResult``)
are frozen dataclasses with snake_case attributes; ``to_json()`` gives the course's
camelCase wire form. Strict parsing from the wire form lives in :mod:`ctxlab.entries`.

System replay (chapter 03, used again in chapter 11 "system 状态跨过 compaction 边界"):
the system prompt is not an option of ``build_context``; it is folded from every system
message on the active path by :func:`current_system_message`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final, Literal, TypeAlias

from ctxlab.errors import EntryParseError, malformed
from ctxlab.json_values import FrozenDict, JsonValue, thaw_json

__all__ = [
    "ABSENT",
    "Absent",
    "AgentMessage",
    "AssistantContent",
    "AssistantMessage",
    "StopReason",
    "SystemMessage",
    "SystemReplay",
    "TextContent",
    "ToolCall",
    "ToolResultMessage",
    "Usage",
    "UserMessage",
    "current_system_message",
    "current_system_prompt",
    "text_of",
]


class Absent(Enum):
    """The type of :data:`ABSENT` (a single value)."""

    ABSENT = "ABSENT"

    def __repr__(self) -> str:
        return "ABSENT"


#: An optional wire field that is not there at all -- not even ``null``. A tool result's
#: ``details`` defaults to it; ``details=None`` is a present ``"details": null``.
ABSENT: Final = Absent.ABSENT

StopReason: TypeAlias = Literal["stop", "length", "toolUse", "error", "aborted"]
STOP_REASONS: tuple[str, ...] = ("stop", "length", "toolUse", "error", "aborted")


@dataclass(frozen=True, slots=True)
class TextContent:
    """A text block: ``{"type": "text", "text": ...}``."""

    text: str
    type: Literal["text"] = "text"

    def to_json(self) -> dict[str, Any]:
        return {"type": "text", "text": self.text}


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call inside an assistant message. ``arguments`` is a frozen JSON value."""

    id: str
    name: str
    arguments: JsonValue
    raw_arguments: str | None = None
    type: Literal["toolCall"] = "toolCall"

    def to_json(self) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "type": "toolCall",
            "id": self.id,
            "name": self.name,
            "arguments": thaw_json(self.arguments),
        }
        if self.raw_arguments is not None:
            wire["rawArguments"] = self.raw_arguments
        return wire


AssistantContent: TypeAlias = TextContent | ToolCall


@dataclass(frozen=True, slots=True)
class Usage:
    """Provider-reported token usage of one assistant turn."""

    input: int | float
    output: int | float
    total_tokens: int | float

    def to_json(self) -> dict[str, Any]:
        return {"input": self.input, "output": self.output, "totalTokens": self.total_tokens}


@dataclass(frozen=True, slots=True)
class SystemMessage:
    """A system message. ``sections`` maps a section name to its text, or ``None`` to
    delete that section when replayed."""

    content: str
    timestamp: int | float
    sections: FrozenDict[str | None] | None = None
    role: Literal["system"] = "system"

    def to_json(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"role": "system", "content": self.content}
        if self.sections is not None:
            wire["sections"] = dict(self.sections)
        wire["timestamp"] = self.timestamp
        return wire


@dataclass(frozen=True, slots=True)
class UserMessage:
    """A user message: text blocks only."""

    content: tuple[TextContent, ...]
    timestamp: int | float
    role: Literal["user"] = "user"

    def to_json(self) -> dict[str, Any]:
        return {
            "role": "user",
            "content": [block.to_json() for block in self.content],
            "timestamp": self.timestamp,
        }


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    """An assistant message: text blocks and tool calls, plus provider bookkeeping."""

    content: tuple[AssistantContent, ...]
    provider: str
    model: str
    usage: Usage
    stop_reason: StopReason
    timestamp: int | float
    error_message: str | None = None
    role: Literal["assistant"] = "assistant"

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The tool calls of this message, in declaration order."""
        return tuple(block for block in self.content if isinstance(block, ToolCall))

    def to_json(self) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "role": "assistant",
            "content": [block.to_json() for block in self.content],
            "provider": self.provider,
            "model": self.model,
            "usage": self.usage.to_json(),
            "stopReason": self.stop_reason,
        }
        if self.error_message is not None:
            wire["errorMessage"] = self.error_message
        wire["timestamp"] = self.timestamp
        return wire


@dataclass(frozen=True, slots=True)
class ToolResultMessage:
    """The result of one tool call, paired to it by ``tool_call_id``.

    ``details`` is any JSON value, ``None`` (a present ``"details": null``) included, or
    :data:`ABSENT` (the default) when the wire form has no ``details`` key: a file the
    course wrote is written back as it was read (spec section 1).
    """

    tool_call_id: str
    tool_name: str
    content: tuple[TextContent, ...]
    is_error: bool
    timestamp: int | float
    details: JsonValue | Absent = ABSENT
    role: Literal["toolResult"] = "toolResult"

    def to_json(self) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": self.tool_call_id,
            "toolName": self.tool_name,
            "content": [block.to_json() for block in self.content],
        }
        if self.details is not ABSENT:
            wire["details"] = thaw_json(self.details)
        wire["isError"] = self.is_error
        wire["timestamp"] = self.timestamp
        return wire


AgentMessage: TypeAlias = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage


class SystemReplay:
    """Chapter 03's replay rule as a fold: :meth:`add` the system messages one at a time,
    in path order; :meth:`result` is the one system message in force after them.

    Non-empty ``content`` values are appended, joined by a blank line; ``sections`` set a
    named section and ``None`` deletes it; the result keeps the timestamp of the first
    system message. No system message at all gives ``None``; an empty sections map is
    left out of the result. :func:`current_system_message` runs the fold over a list;
    :class:`~ctxlab.window.ContextWindow` keeps one open as entries arrive.
    """

    __slots__ = ("_contents", "_first", "_result", "_sections")

    def __init__(self) -> None:
        self._first: SystemMessage | None = None
        self._contents: list[str] = []
        self._sections: dict[str, str] = {}
        self._result: SystemMessage | None = None  # cached until the next add

    def add(self, message: SystemMessage, *, where: str = "system message") -> None:
        """Replay one more system message on top of the ones before.

        A message built by hand whose ``content`` is not a str, or whose ``sections`` are
        not a mapping to str or None, is refused here (an
        :class:`~ctxlab.errors.EntryParseError`, ``where`` naming the message), not when
        the fold is rendered, when nobody knows any more which message it was.
        """
        content = message.content
        sections: Mapping[str, str | None] = message.sections or {}
        unreadable = _unreadable(content, sections)
        if unreadable is not None:
            field, problem = unreadable
            raise EntryParseError(f"{field} {problem}", where=where, field=field)
        if self._first is None:
            self._first = message
        if content:
            self._contents.append(content)
        for name, text in sections.items():
            if text is None:
                self._sections.pop(name, None)
            else:
                self._sections[name] = text
        self._result = None

    def result(self) -> SystemMessage | None:
        """The replayed system message (the same object until the next :meth:`add`)."""
        if self._first is not None and self._result is None:
            sections = self._sections
            self._result = SystemMessage(
                content="\n\n".join(self._contents),
                timestamp=self._first.timestamp,
                sections=FrozenDict[str | None](sections) if sections else None,
            )
        return self._result


def _unreadable(content: object, sections: object) -> tuple[str, str] | None:
    """What makes a hand-built system message unreadable by the fold (field, problem)."""
    if not isinstance(content, str):
        return "content", f"must be a str, got {type(content).__name__}"
    if not isinstance(sections, Mapping):
        return "sections", f"must be a mapping, got {type(sections).__name__}"
    for name, text in sections.items():
        if text is not None and not isinstance(text, str):
            return f"sections.{name}", f"must be a str or None, got {type(text).__name__}"
    return None


def current_system_message(messages: Iterable[AgentMessage]) -> SystemMessage | None:
    """Fold every system message, in order, into the one system message now in force
    (chapter 03's replay rule: see :class:`SystemReplay`)."""
    replay = SystemReplay()
    for index, message in enumerate(messages):
        if isinstance(message, SystemMessage):
            replay.add(message, where=f"messages[{index}]")
    return replay.result()


def _render_system(message: SystemMessage) -> str:
    parts = [message.content, *((message.sections or {}).values())]
    return "\n\n".join(part for part in parts if part)


def current_system_prompt(messages: Iterable[AgentMessage]) -> str:
    """The replayed system prompt as text: content, then each section, blank-line joined."""
    message = current_system_message(messages)
    return "" if message is None else _render_system(message)


def text_of(message: AgentMessage) -> str:
    """A message's text blocks joined by ``\\n``; a system message gives its rendered prompt."""
    try:
        if isinstance(message, SystemMessage):
            return _render_system(message)
        return "\n".join(block.text for block in message.content if isinstance(block, TextContent))
    except (AttributeError, TypeError) as exc:  # a message built by hand with a wrong field
        raise malformed(message, exc, where="text_of") from exc
