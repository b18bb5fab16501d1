"""Takes tool calls from a group's first assistant message only: a 2nd tool round is unknown.

The chapter's third group has one message declaring calls (calls: read-1, test-1); the student took
that as the shape of every interaction — one tool round — and stops collecting calls after the first
assistant message.

The chapter's rule (§「两个 tool result 仍属于 u3 开始的同一组」): 「以 user 消息为起点」 a group
runs to the next user message, and 「每条 result 的 toolCallId 都能在组内找到对应 call」 — any call
declared in the group counts, whichever assistant message declared it.
"""

from ctxlab import InteractionGroup


def group_interactions(entries):
    groups = []
    current = None
    for index in range(len(entries)):
        entry = entries[index]
        role = entry.message.role
        if role == "system":
            continue
        if role == "user":
            if current is not None:
                groups.append(close(current))
            current = [entry]
        elif current is not None:
            current.append(entry)
    if current is not None:
        groups.append(close(current))
    return groups


def close(group):
    calls = set()
    for entry in group:
        if entry.message.role == "assistant":
            for call in entry.message.tool_calls:
                if call.id in calls:
                    raise ValueError(f"call {call.id} is declared twice")
                calls.add(call.id)
            break
    answered = set()
    for entry in group:
        if entry.message.role == "toolResult":
            call_id = entry.message.tool_call_id
            if call_id not in calls:
                raise ValueError(f"no call {call_id} in this group")
            if call_id in answered:
                raise ValueError(f"call {call_id} has a second result")
            answered.add(call_id)
    for call_id in sorted(calls - answered):
        raise ValueError(f"call {call_id} has no result")
    return InteractionGroup(entries=tuple(group))


def WITNESS():
    from ctxlab import (
        AssistantMessage,
        MessageSessionEntry,
        TextContent,
        ToolCall,
        ToolResultMessage,
        Usage,
        UserMessage,
    )

    def assistant(text, timestamp, *calls):
        return AssistantMessage(
            content=(TextContent(text), *calls),
            provider="course",
            model="course-model-1",
            usage=Usage(900, 40, 940),
            stop_reason="toolUse" if calls else "stop",
            timestamp=timestamp,
        )

    def result(call_id, tool, text, timestamp):
        return ToolResultMessage(call_id, tool, (TextContent(text),), False, timestamp)

    # one interaction with two tool rounds: read first, then run the tests
    messages = [
        ("u1", UserMessage((TextContent("Fix the budget bug."),), 1)),
        ("a1", assistant("Reading.", 2, ToolCall("read-1", "read", {"path": "src/context.ts"}))),
        ("r1", result("read-1", "read", "export function buildContext", 3)),
        ("a2", assistant("Testing.", 4, ToolCall("test-1", "bash", {"command": "npm test"}))),
        ("r2", result("test-1", "bash", "1 failing", 5)),
        ("a3", assistant("Found it.", 6)),
    ]
    entries, parent = [], None
    for entry_id, message in messages:
        entries.append(MessageSessionEntry(entry_id, parent, message.timestamp, message))
        parent = entry_id
    return (entries,), {}
