"""Checks that a call id is declared once only within each assistant message, not within the group.

The student reads "每个 call.id 只声明一次" as a check on one assistant message's content, so
the set of seen ids is reset at every assistant message. A later assistant message of the
same group that declares read-1 again is accepted (its one result answers both).

Chapter, §两个 tool result 仍属于 u3 开始的同一组:
  「同时在这个 user group 内核对四个对象关系：每个 call.id 只声明一次；」
"""

from ctxlab import InteractionError, InteractionGroup


def _close(group):
    calls = []  # call ids, in declaration order
    declared = {}
    results = {}
    for entry in group:
        message = entry.message
        if message.role == "assistant":
            in_message = set()
            for block in message.content:
                if block.type == "toolCall":
                    if block.id in in_message:
                        raise InteractionError(
                            f"entry {entry.id}: call {block.id} is declared twice",
                            entry_id=entry.id,
                            call_id=block.id,
                        )
                    in_message.add(block.id)
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
    if current is not None:
        groups.append(_close(current))
    return groups


def WITNESS():
    """The opening path with a3 declaring read-1 again (no new result)."""
    import dataclasses

    from ctxlab import fixtures

    path = fixtures.opening_path()
    by_id = {entry.id: entry for entry in path}
    read_call = next(
        b for b in by_id["calls"].message.content if b.type == "toolCall" and b.id == "read-1"
    )
    a3 = by_id["a3"]
    message = dataclasses.replace(a3.message, content=(*a3.message.content, read_call))
    path[-1] = dataclasses.replace(a3, message=message)
    return ([e for e in path if e.type == "message"],), {}
