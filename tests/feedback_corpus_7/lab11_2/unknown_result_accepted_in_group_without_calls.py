"""Checks a result's toolCallId only in groups with calls: a result in a call-less group passes.

The student guards the lookup with "if declared and cid not in declared", thinking a group
without calls has nothing to check. A tool result in group 1 (which has no call at all)
therefore passes, though it answers no call of its group.

Chapter, §两个 tool result 仍属于 u3 开始的同一组:
  「每条 result 的 toolCallId 都能在组内找到对应 call；」
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
            if declared and cid not in declared:
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
    """The opening path with a tool result for ghost-1 after a1 (group 1 has no call)."""
    from ctxlab import MessageSessionEntry, TextContent, ToolResultMessage, fixtures

    path = fixtures.opening_path()
    result = ToolResultMessage("ghost-1", "read", (TextContent("stray"),), False, 3)
    i = next(i for i, e in enumerate(path) if e.id == "a1")
    path.insert(i + 1, MessageSessionEntry("r-ghost", "a1", 3, result))
    return (path,), {}
