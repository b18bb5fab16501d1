"""Resets the declared calls at each assistant message, forgetting earlier calls of the same group.

The student collects each assistant message's calls into a fresh dict, meaning to check
duplicates per message, and so keeps only the last assistant message's calls for pairing.

The chapter, §两个 tool result 仍属于 u3 开始的同一组: 「每条 result 的 toolCallId
都能在组内找到对应 call」 — the calls of the whole group.
"""

from ctxlab import InteractionError, InteractionGroup


def _close(group):
    calls = []  # call ids, in declaration order
    declared = {}
    results = {}
    for entry in group:
        message = entry.message
        if message.role == "assistant":
            declared = {}
            calls = []
            for block in message.content:
                if block.type == "toolCall":
                    if block.id in declared:
                        raise InteractionError(
                            f"entry {entry.id}: call {block.id} is declared twice",
                            entry_id=entry.id,
                            call_id=block.id,
                        )
                    declared[block.id] = entry.id
                    calls.append(block.id)
    for entry in group:
        message = entry.message
        if message.role == "toolResult":
            cid = message.tool_call_id
            if cid not in declared:
                raise InteractionError(
                    f"entry {entry.id}: result for call {cid}, which is not in its group",
                    entry_id=entry.id,
                    call_id=cid,
                )
            if cid in results:
                raise InteractionError(
                    f"entry {entry.id}: second result for call {cid}",
                    entry_id=entry.id,
                    call_id=cid,
                )
            results[cid] = entry.id
    for cid in calls:
        if cid not in results:
            raise InteractionError(
                f"entry {declared[cid]}: call {cid} has no result",
                entry_id=declared[cid],
                call_id=cid,
            )
    return InteractionGroup(
        entries=tuple(group), tool_pairs=tuple((cid, results[cid]) for cid in calls)
    )


def group_interactions(entries):
    groups = []
    current = None
    for entry in entries:
        role = entry.message.role
        if role == "system":
            continue
        if role == "user":
            if current is not None:
                groups.append(_close(current))
            current = [entry]
        elif current is None:
            raise InteractionError(
                f"entry {entry.id}: a {role} message before the first user message",
                entry_id=entry.id,
            )
        else:
            current.append(entry)
    if current is not None:
        groups.append(_close(current))
    return groups


def _msg_entries(*pairs):
    from ctxlab import (
        AssistantMessage,
        MessageSessionEntry,
        TextContent,
        ToolCall,
        ToolResultMessage,
        Usage,
        UserMessage,
    )

    out, parent = [], None
    for i, (eid, kind, arg) in enumerate(pairs, start=1):
        if kind == "user":
            m = UserMessage((TextContent(arg),), i)
        elif kind == "assistant":
            calls = tuple(ToolCall(c, "read", {"path": c}) for c in arg)
            m = AssistantMessage(
                content=(TextContent("ok"), *calls),
                provider="course",
                model="course-model-1",
                usage=Usage(1, 1, 2),
                stop_reason="toolUse" if calls else "stop",
                timestamp=i,
            )
        else:
            m = ToolResultMessage(arg, "read", (TextContent("done"),), False, i)
        out.append(MessageSessionEntry(eid, parent, i, m))
        parent = eid
    return out


def WITNESS():
    path = _msg_entries(
        ("u1", "user", "go"),
        ("c1", "assistant", ["x-1"]),
        ("r1", "result", "x-1"),
        ("c2", "assistant", ["y-1"]),
        ("r2", "result", "y-1"),
        ("a1", "assistant", []),
    )
    return (path,), {}
