"""Sorts each group's entries by timestamp instead of keeping their order on the path.

The student wants "the order things happened" and sorts a group's entries with `sorted(group,
key=lambda e: e.timestamp)`. On the opening path the clocks grow along the path, so nothing
changes; but entries are ordered by their place on the path, not their clocks (a result stamped
by another process can carry an earlier time).

Chapter rule (§「两个 tool result 仍属于 u3 开始的同一组」): 「所以结果反序出现仍然合法，返回的
entries 保持原路径顺序： [u3, calls, r-test, r-read, a3]」 and 「分组函数保留 r-test、r-read
的原路径顺序」.
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
        entries=tuple(sorted(group, key=lambda e: e.timestamp)),
        tool_pairs=tuple((cid, results[cid]) for cid in calls),
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

    from ctxlab.fixtures import opening_path

    path = [
        dataclasses.replace(e, timestamp=6.5) if e.id == "r-read" else e for e in opening_path()
    ]
    return (path,), {}
