"""Inputs the checks share: crafted messages and paths, a tag estimator.

Crafted messages carry their cost in their text as ``[n]`` tags, priced by
:func:`tag_estimator`, so a case shows its budget arithmetic (``user("u2", 5)`` costs 5);
:func:`path_of` writes a path of them in the chapter's ids (``"u1 calls[c-1] r-1->c-1 a1:2"``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ctxlab.entries import MessageSessionEntry, SessionEntry
from ctxlab.json_values import FrozenDict
from ctxlab.messages import (
    AgentMessage,
    AssistantMessage,
    SystemMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    text_of,
)


def rechain(entries: Sequence[SessionEntry]) -> list[SessionEntry]:
    """The same entries, each one's parent the entry before (the first one a root)."""
    chained: list[SessionEntry] = []
    parent: str | None = None
    for entry in entries:
        changed: Any = entry  # a compaction is never first: its parent is always a str
        chained.append(dataclasses.replace(changed, parent_id=parent))
        parent = entry.id
    return chained


def path_of(text: str) -> list[SessionEntry]:
    """Crafted message entries by id, each costing 1 or the ``:n`` after it (``u2:5``): ``u1``
    a user message, ``sys`` a system message, ``calls[read-1,test-1]`` an assistant message
    declaring those calls, ``r-read->read-1`` the tool result of call read-1, any other id a
    final assistant."""
    pairs: list[tuple[str, AgentMessage]] = []
    for word in text.split():
        word, _, tag = word.partition(":")
        cost = int(tag or 1)
        if "->" in word:
            entry_id, call = word.split("->")
            content = (TextContent(f"{entry_id} [{cost}]"),)
            pairs.append((entry_id, ToolResultMessage(call, "read", content, False, 0)))
        elif word.endswith("]"):
            entry_id, calls = word[:-1].split("[")
            pairs.append(assistant(entry_id, cost, *calls.split(",")))
        elif word.startswith("sys"):
            pairs.append(system(word, f"{word} [{cost}]"))
        else:
            pairs.append((user if re.fullmatch(r"u\d+", word) else assistant)(word, cost))
    return crafted(*pairs)


def messages(path: Sequence[SessionEntry]) -> list[SessionEntry]:
    """The message entries of a path (what ``group_interactions`` is given)."""
    return [entry for entry in path if isinstance(entry, MessageSessionEntry)]


def by_id(path: Sequence[SessionEntry]) -> dict[str, SessionEntry]:
    return {entry.id: entry for entry in path}


_TAG = re.compile(r"\[(\d+)\]")


def tag_estimator(message: object) -> int:
    """Prices a crafted message by the ``[n]`` tags in its text (a string too)."""
    if isinstance(message, str):
        text = message
    elif isinstance(message, (SystemMessage, UserMessage, AssistantMessage, ToolResultMessage)):
        text = text_of(message)
    else:
        raise TypeError(f"cannot price {type(message).__name__}")
    return sum(int(n) for n in _TAG.findall(text))


def user(entry_id: str, cost: int) -> tuple[str, AgentMessage]:
    return entry_id, UserMessage((TextContent(f"{entry_id} [{cost}]"),), 0)


def assistant(entry_id: str, cost: int, *calls: str) -> tuple[str, AgentMessage]:
    """An assistant message; with ``calls`` it asks for a ``read`` of each call id."""
    tool_calls = tuple(ToolCall(call, "read", FrozenDict({"path": call})) for call in calls)
    return entry_id, AssistantMessage(
        (TextContent(f"{entry_id} [{cost}]"), *tool_calls),
        "course",
        "course-model-1",
        Usage(1, 1, 2),
        "toolUse" if calls else "stop",
        0,
    )


def system(
    entry_id: str, content: str, sections: Mapping[str, str | None] | None = None
) -> tuple[str, AgentMessage]:
    frozen = None if sections is None else FrozenDict[str | None](dict(sections))
    return entry_id, SystemMessage(content, 0, frozen)


def crafted(*pairs: tuple[str, AgentMessage]) -> list[SessionEntry]:
    """Message entries chained in order; timestamps 1, 2, 3, ... (message and entry)."""
    path: list[SessionEntry] = []
    parent: str | None = None
    for index, (entry_id, message) in enumerate(pairs, start=1):
        stamped = dataclasses.replace(message, timestamp=index)
        path.append(MessageSessionEntry(entry_id, parent, index, stamped))
        parent = entry_id
    return path
