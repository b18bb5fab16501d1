"""Lets a user message join the open group while a call there still waits for its result.

A student read 「group 结束时，所有 call 都已经配齐 result」 as the condition for ending a group:
while a call of the open group has no result yet, a user message does not close it but is
appended to it. So a user who writes while the tools of u3 are still running (before r-test
and r-read) ends up inside u3's group, and the group's missing results are never reported.

The chapter's rule (§ 两个 tool result 仍属于 u3 开始的同一组): 「遇到 u1 时创建第一组，遇到 u2 时
结束第一组并创建第二组，遇到 u3 时做同样的事」 — every user message closes the group before it,
and then 「group 结束时，所有 call 都已经配齐 result」 is checked, not waited for.
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


def _waiting(group):
    if group is None:
        return False
    calls = {
        block.id
        for entry in group
        if entry.message.role == "assistant"
        for block in entry.message.content
        if block.type == "toolCall"
    }
    answered = {entry.message.tool_call_id for entry in group if entry.message.role == "toolResult"}
    return bool(calls - answered)


def group_interactions(entries):
    groups = []
    current = None
    for entry in entries:
        role = entry.message.role
        if role == "system":
            continue
        if role == "user" and not _waiting(current):
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
    from ctxlab import MessageSessionEntry, TextContent, UserMessage, fixtures

    path = fixtures.opening_path(language="en")
    at = [entry.id for entry in path].index("calls")
    calls = path[at]
    interrupt = UserMessage((TextContent("Also check the README."),), calls.timestamp)
    path.insert(at + 1, MessageSessionEntry("u3b", "calls", calls.timestamp, interrupt))
    return (path,), {}
