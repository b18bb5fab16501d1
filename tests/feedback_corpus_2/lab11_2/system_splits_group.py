"""Closes the open group at a system message, so a system patch inside an interaction splits it.

The student reads 「system message 出现在两组之间」 as "system messages stand between
groups" and closes the group at one; on the opening path (sys first) and with patches
between groups this gives the right groups, but a patch that arrives in the middle of a
tool round trip splits it.

The chapter, § 两个 tool result 仍属于 u3 开始的同一组: 「system message 记录的是 prompt 状态，
不属于对话中的任何一组，函数直接跳过」 and 「system message 出现在两组之间时也一样跳过，不会切开
或混入哪一组」.
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
            if current is not None:
                groups.append(_close(current))
                current = None
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
    from ctxlab import MessageSessionEntry, SystemMessage, fixtures

    path = fixtures.opening_path()
    patch = MessageSessionEntry("patch-3", "calls", 7.5, SystemMessage("Prefer small diffs.", 7.5))
    at = [e.id for e in path].index("r-test")
    return ([*path[:at], patch, *path[at:]],), {}
