"""Pairs calls and results by position (first result with first call), not by toolCallId.

A student checked the four id relations as the chapter lists them, then built the group's
tool pairs by zipping the declared calls with the results in the order they came, taking
for granted that results come back in the order the calls went out. In the opening group
they do not: test-1 finishes first, so read-1 is paired with r-test and test-1 with r-read.

The chapter's rule (§ 同一段历史会产生一份更短的模型输入): 「测试先完成，所以 r-test 在路径中排在
r-read 前面。每个 result 仍可通过 toolCallId 找回自己的 call。」; and (§ 损坏记录在进入预算前就会被
拒绝): 「result 的数组位置、toolName 与终态 assistant 不参与这次配对」.
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
        entries=tuple(group), tool_pairs=tuple(zip(calls, results.values(), strict=True))
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

    path = fixtures.opening_path(language="en")
    return (path,), {}
