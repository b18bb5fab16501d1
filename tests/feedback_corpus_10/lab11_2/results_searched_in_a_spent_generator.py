"""Searches one shared generator for each call's result, so results out of call order are missed.

The student ported `const answers = group.filter(isResult)` as a generator expression and
`answers.find(r => r.toolCallId === cid)` as `next(..., None)` over it. A JavaScript array is
searched from the start each time; the generator is not: finding read-1's result (r-read)
uses up r-test, so test-1 is reported as having no result.

The chapter's rule it breaks (§ 两个 tool result 仍属于 u3 开始的同一组):
「处理 calls 时，函数记录 read-1 和 test-1；处理 r-test、r-read 时，它读取各自的
toolCallId。所以结果反序出现仍然合法」
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
    answers = (e for e in group if e.message.role == "toolResult")  # group.filter(...)
    for cid in calls:
        if next((e for e in answers if e.message.tool_call_id == cid), None) is None:
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
    """The chapter's opening path (sys, then three interactions)."""
    from ctxlab import fixtures

    return (fixtures.opening_path(),), {}
