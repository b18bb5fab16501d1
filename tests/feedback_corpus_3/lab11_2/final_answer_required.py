"""Requires every group to end with an assistant message, refusing a user message not yet answered.

How a student gets here: in the chapter's example every group ends with an assistant answer
(a1, a2, a3), so the student added a fifth check on closing a group: its last entry must be an
assistant message. The path the agent has right after the user speaks (the opening path, then
u4 with no answer yet) is then refused.

The chapter's rule (§ 损坏记录在进入预算前就会被拒绝): 「它先用 user 划定 interaction，再核对上
一节的四个 id 关系；result 的数组位置、toolName 与终态 assistant 不参与这次配对」 — four
relations, no fifth; 「a3 是这个 fixture 的终态回答」 (§ 两个 tool result 仍属于 u3 开始的同一组).
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
    if group[-1].message.role != "assistant":
        raise InteractionError(
            f"entry {group[-1].id}: the interaction has no final assistant answer",
            entry_id=group[-1].id,
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
    from ctxlab import MessageSessionEntry, TextContent, UserMessage, fixtures

    path = fixtures.opening_path()
    u4 = UserMessage((TextContent("Add a test for a group that is too big on its own."),), 11)
    path.append(MessageSessionEntry("u4", "a3", 11, u4))  # not answered yet
    return (path,), {}
