"""Reads each group's rest with takewhile, which eats the next user message, so that group is lost.

The student took a user message as the head and the messages after it with
`takewhile(role != "user")` from the same iterator; takewhile consumes the user message that
stops it, so the next loop turn starts at that user's answer (a2) and refuses it as a message
before the first user. Every path of two groups or more is refused.

The chapter's rule it breaks (§ 两个 tool result 仍属于 u3 开始的同一组):
「随后它遇到 u1 时创建第一组，遇到 u2 时结束第一组并创建第二组，遇到 u3 时做同样的事。
路径结尾 再结算第三组。」
"""

from itertools import takewhile

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
    messages = (entry for entry in entries if entry.message.role != "system")
    for head in messages:
        role = head.message.role
        if role != "user":
            raise InteractionError(
                f"entry {head.id}: a {role} message before the first user message",
                entry_id=head.id,
            )
        rest = takewhile(lambda entry: entry.message.role != "user", messages)
        groups.append(_close([head, *rest]))
    return groups


# --- the input on which this function and ctxlab's reference differ ---


def WITNESS():
    """The opening path's message entries: three groups."""
    from ctxlab import fixtures

    entries = [e for e in fixtures.opening_path() if e.type == "message"]
    return (entries,), {}
