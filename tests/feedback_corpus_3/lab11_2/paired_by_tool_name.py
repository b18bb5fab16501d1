"""Pairs a result with the call of the same tool name (toolName) instead of by its toolCallId.

How a student gets here: a toolResult carries both toolCallId and toolName, and a call has an
id and a name; the student matched the result to "the call of its tool" by name. On the opening
path that gives the right pairs (read-1 is a read, test-1 a bash), but the chapter's corrupted
r-test, which answers unknown-1 and is still a bash result, is matched to test-1 and accepted.

The chapter's rules: 「组内的工具事实靠 id 核对」 (§ 两个 tool result 仍属于 u3 开始的同一组);
「result 的数组位置、toolName 与终态 assistant 不参与这次配对」 and the unknown-1 corruption
「groupInteractions() 找不到 unknown-1 对应的 call」 (§ 损坏记录在进入预算前就会被拒绝).
"""

from ctxlab import InteractionError, InteractionGroup


def _close(group):
    calls = []  # call ids, in declaration order
    declared = {}
    results = {}
    by_name = {}
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
                    by_name[block.name] = block.id
    for entry in group:
        message = entry.message
        if message.role == "toolResult":
            cid = by_name.get(message.tool_name)
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
    from ctxlab import fixtures

    return (fixtures.unknown_call_path(),), {}  # r-test answers unknown-1 (toolName bash)
