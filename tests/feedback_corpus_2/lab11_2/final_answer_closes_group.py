"""Closes a group at the final assistant answer (no tool calls), not at the next user message.

The student reads a3 as 「终态回答」 and takes the final answer for the end of the
interaction; whatever comes after it and before the next user message then stands outside
any group, and the calls of the closed group are checked too early.

The chapter, § 损坏记录在进入预算前就会被拒绝: 「它先用 user 划定 interaction，再核对上一节的四个
id 关系；result 的数组位置、toolName 与终态 assistant 不参与这次配对」; § 两个 tool result
仍属于 u3 开始的同一组: 「遇到 u2 时结束第一组并创建第二组」.
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
            if role == "assistant" and not entry.message.tool_calls:
                groups.append(_close(current))
                current = None
    if current is not None:
        groups.append(_close(current))
    return groups


def WITNESS():
    from ctxlab import fixtures

    path = fixtures.opening_path()
    by_id = {e.id: e for e in path}
    order = ["sys", "u1", "a1", "u2", "a2", "u3", "calls", "r-test", "a3", "r-read"]
    return ([by_id[i] for i in order],), {}
