"""Lets a second result for the same call overwrite the first instead of refusing it.

The student stored results in a dict keyed by call id and never asked whether the key
was already there.

The chapter's rule it breaks (§ 两个 tool result 仍属于 u3 开始的同一组):
「每条 result 的 toolCallId 都能在组内找到对应 call； 一个 call 至多对应一条
result；」
"""

from ctxlab import InteractionError, InteractionGroup


def _close(group):
    calls = []  # call ids, in declaration order
    declared = {}
    results = {}
    for entry in group:
        message = entry.message
        if message.role == "assistant":
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


# --- the input on which this function and ctxlab's reference differ ---


def WITNESS():
    """One call c1 answered twice, by r1 and r2, in the same group."""

    from ctxlab import (
        AssistantMessage,
        MessageSessionEntry,
        TextContent,
        ToolCall,
        ToolResultMessage,
        Usage,
        UserMessage,
    )
    from ctxlab.json_values import FrozenDict

    def user(text):
        return UserMessage((TextContent(text),), 1)

    def assistant(text, *call_ids):
        calls = tuple(ToolCall(c, "read", FrozenDict({"path": "a.py"})) for c in call_ids)
        stop = "toolUse" if calls else "stop"
        return AssistantMessage((TextContent(text), *calls), "p", "m", Usage(0, 0, 0), stop, 1)

    def result(call_id):
        return ToolResultMessage(call_id, "read", (TextContent("ok"),), False, 1)

    def chain(*pairs):
        entries, parent = [], None
        for entry_id, message in pairs:
            entries.append(MessageSessionEntry(entry_id, parent, 1, message))
            parent = entry_id
        return entries

    entries = chain(
        ("u1", user("Read a.py")),
        ("a1", assistant("Reading it.", "c1")),
        ("r1", result("c1")),
        ("r2", result("c1")),
        ("a2", assistant("Done.")),
    )
    return (entries,), {}
