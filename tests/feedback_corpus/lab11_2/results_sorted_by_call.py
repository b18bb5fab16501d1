"""Reorders a group's results into the order their calls were declared.

The student wanted each group to read call-by-call and sorted the results, losing the
path order.

The chapter's rule it breaks (§ 两个 tool result 仍属于 u3 开始的同一组):
「组内的工具事实靠 id 核对。处理 calls 时，函数记录 read-1 和 test-1；
处理 r-test、r-read 时，它读取各自的 toolCallId。所以结果反序出现仍然合法，
返回的 entries 保持原路径顺序：」[u3, calls, r-test, r-read, a3]
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
    answers = [e for e in group if e.message.role == "toolResult"]
    answers.sort(key=lambda e: calls.index(e.message.tool_call_id))
    in_call_order = iter(answers)
    ordered = [next(in_call_order) if e.message.role == "toolResult" else e for e in group]
    return InteractionGroup(
        entries=tuple(ordered), tool_pairs=tuple((cid, results[cid]) for cid in calls)
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
    """The opening path: group 3 must stay [u3, calls, r-test, r-read, a3]."""
    from ctxlab import fixtures

    entries = [e for e in fixtures.opening_path() if e.type == "message"]
    return (entries,), {}
