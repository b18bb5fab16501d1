"""Slices the groups between user messages with -1 as "the end", so the last entry is cut.

The student cut the messages between consecutive user positions with
`pairwise([*starts, -1])`, -1 standing for "to the end of the path"; but a slice up to -1
stops before the last item, so the last group loses its last entry (a3, the final answer).

The chapter's rule it breaks (§ 两个 tool result 仍属于 u3 开始的同一组):
「a3 是这个 fixture 的终态 回答，也按原位置留在组中。」；「路径结尾 再结算第三组。」
"""

from itertools import pairwise

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
    bounds = pairwise([*starts, -1])  # -1: up to the end of the path
    return [_close(messages[start:end]) for start, end in bounds]


# --- the input on which this function and ctxlab's reference differ ---


def WITNESS():
    """The opening path's message entries: three groups."""
    from ctxlab import fixtures

    entries = [e for e in fixtures.opening_path() if e.type == "message"]
    return (entries,), {}
