"""Reuses one list for every group (clear, then refill): all groups end up as the last one.

The student splits first and checks afterwards: `raw.append(current)` then `current.clear()` and
`current.append(entry)` to start the next group. But `raw` holds the same list object each time;
clearing and refilling it rewrites the groups already stored, and at the end all three groups
are [u3, calls, r-test, r-read, a3].

Chapter rule (§「两个 tool result 仍属于 u3 开始的同一组」): 「遇到 u1 时创建第一组，遇到 u2
时结束第一组并创建第二组，遇到 u3 时做同样的事。 路径结尾 再结算第三组。」 Each group is its own
interaction.
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
    raw = []
    current = None
    for entry in entries:
        role = entry.message.role
        if role == "system":
            continue
        if role == "user":
            if current is not None:
                raw.append(current)
                current.clear()
                current.append(entry)
            else:
                current = [entry]
        elif current is None:
            raise InteractionError(
                f"entry {entry.id}: a {role} message before the first user message",
                entry_id=entry.id,
            )
        else:
            current.append(entry)
    if current is not None:
        raw.append(current)
    return [_close(group) for group in raw]


def WITNESS():
    from ctxlab.fixtures import opening_path

    return (opening_path(),), {}
