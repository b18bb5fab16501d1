"""Does not count a result with isError = true as its call's result, so that call is "missing".

How a student gets here: a tool that failed seemed to the student not to have delivered its
result yet (the agent will retry), so only successful results answer a call. The opening path
with r-test marked as an error is then refused: test-1 "has no result".

The chapter's rule (§ 两个 tool result 仍属于 u3 开始的同一组): 「这些关系只依赖 id 集合」 — a
result answers the call its toolCallId names, whatever else it says; and (§ 15 项测试固定到哪里)
「groupInteractions() 以 user 边界和四个 call/result id 关系组成不可拆分组」.
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
        if message.role == "toolResult" and not message.is_error:
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

    path = fixtures.opening_path()
    r_test = path[7]  # r-test answers test-1: the test run failed
    path[7] = dataclasses.replace(
        r_test, message=dataclasses.replace(r_test.message, is_error=True)
    )
    return (path,), {}
