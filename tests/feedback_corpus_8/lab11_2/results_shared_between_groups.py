"""Gives _close a mutable default results={}: an earlier group's result answers a later call.

The student adds `results={}` as a parameter "to be filled in" by _close. Python creates that
dict once, when the function is defined: results recorded for group 1 are still there when group
2 is closed, so a call id reused in group 2 that never got its result is taken as answered (and
the state even leaks from one call of group_interactions to the next).

Chapter rule (§「两个 tool result 仍属于 u3 开始的同一组」): the ids are checked inside each
user group — 「同时在这个 user group 内核对四个对象 关系：……group 结束时，所有 call 都已经配齐
result。」
"""

from ctxlab import InteractionError, InteractionGroup


def _close(group, results={}):  # noqa: B006
    calls = []  # call ids, in declaration order
    declared = {}
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

    def entry(i, message, parent):
        return MessageSessionEntry(id=i, parent_id=parent, timestamp=len(i), message=message)

    def call(ts):
        return AssistantMessage(
            content=(ToolCall(id="c1", name="read", arguments={}),),
            provider="course",
            model="course-model-1",
            usage=Usage(900, 40, 940),
            stop_reason="toolUse",
            timestamp=ts,
        )

    path = [
        entry("u1", UserMessage((TextContent("one"),), 1), None),
        entry("a1", call(2), "u1"),
        entry("r1", ToolResultMessage("c1", "read", (TextContent("ok"),), False, 3), "a1"),
        entry("u2", UserMessage((TextContent("two"),), 4), "r1"),
        entry("a2", call(5), "u2"),
    ]
    return (path,), {}
