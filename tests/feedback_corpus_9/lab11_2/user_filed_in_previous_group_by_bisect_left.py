"""Files messages by bisect_left instead of bisect_right, so each user joins the group before.

The student listed the positions of the user messages and filed each message under the last
user position at or before it, `bisect(starts, i) - 1`, but wrote `bisect_left`: a user
message's own position then counts as after it, so u2 ends group 1, u3 ends group 2, and u1
(index -1) lands in the last group.

The chapter's rule it breaks (§ 两个 tool result 仍属于 u3 开始的同一组):
「随后它遇到 u1 时创建第一组，遇到 u2 时结束第一组并创建第二组，遇到 u3 时做同样的事。」；
（§ 同一段历史会产生一份更短的模型输入）「group 1 = [u1, a1] group 2 = [u2, a2]」
"""

from bisect import bisect_left

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
    messages = [entry for entry in entries if entry.message.role != "system"]
    starts = [i for i, entry in enumerate(messages) if entry.message.role == "user"]
    if messages and (not starts or starts[0] > 0):
        entry = messages[0]
        raise InteractionError(
            f"entry {entry.id}: a {entry.message.role} message before the first user message",
            entry_id=entry.id,
        )
    groups = [[] for _ in starts]
    for i, entry in enumerate(messages):
        groups[bisect_left(starts, i) - 1].append(entry)
    return [_close(group) for group in groups]


# --- the input on which this function and ctxlab's reference differ ---


def WITNESS():
    """The opening path's message entries: three groups."""
    from ctxlab import fixtures

    entries = [e for e in fixtures.opening_path() if e.type == "message"]
    return (entries,), {}
