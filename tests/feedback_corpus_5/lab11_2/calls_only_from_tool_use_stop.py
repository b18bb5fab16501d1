"""Reads tool calls only from assistant messages stopped with "toolUse"; other calls are unknown.

A student took stopReason "toolUse" as the sign that an assistant message declares calls and
skipped the content of every other assistant message. A message that carries toolCall blocks
but stopped for another reason (here "stop") then declares nothing, and the results answering
its calls are refused as naming no call of their group.

The chapter's rule (§ 两个 tool result 仍属于 u3 开始的同一组): 「这些关系只依赖 id 集合」; and
(§ 损坏记录在进入预算前就会被拒绝): 「result 的数组位置、toolName 与终态 assistant 不参与这次配对」
— the calls are the toolCall ids the messages declare, whatever the message's stop reason.
"""

from ctxlab import InteractionError, InteractionGroup


def _close(group):
    calls = []  # call ids, in declaration order
    declared = {}
    results = {}
    for entry in group:
        message = entry.message
        if message.role == "assistant" and message.stop_reason == "toolUse":
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
    import dataclasses

    from ctxlab import fixtures

    path = fixtures.opening_path(language="en")
    at = [entry.id for entry in path].index("calls")
    calls = path[at]
    message = dataclasses.replace(calls.message, stop_reason="stop")
    path[at] = dataclasses.replace(calls, message=message)
    return (path,), {}
