"""Never checks that a result's toolCallId names a call of its group: an extra result is accepted.

How a student gets here: the student tried the chapter's corruption (r-test answering
unknown-1) and saw it refused by the last check anyway, since test-1 is then left without a
result; so the check "each result finds its call" looked redundant and was left out. A result
for unknown-1 added next to the two good ones then goes through.

The chapter's rule (§ 两个 tool result 仍属于 u3 开始的同一组): 「每条 result 的 toolCallId
都能在组内找到对应 call」, one of the four relations checked in each group.
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
    from ctxlab import MessageSessionEntry, TextContent, ToolResultMessage, fixtures

    path = fixtures.opening_path()
    extra = ToolResultMessage("unknown-1", "bash", (TextContent("1 passed"),), False, 9)
    path.insert(9, MessageSessionEntry("r-extra", "r-read", 9, extra))  # before a3
    return (path,), {}
