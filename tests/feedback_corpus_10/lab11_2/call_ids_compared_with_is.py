"""Matches a result's toolCallId to the declared calls with `is`: ids read from JSON never match.

The student ported `Object.keys(declared).some(c => c === cid)` with `is` for `===`. Call ids
that are equal strings but distinct objects -- as on a path read back from a JSONL file --
never match, and every tool result is refused as "not in its group".

The chapter's rule it breaks (§ 两个 tool result 仍属于 u3 开始的同一组):
「组内的工具事实靠 id 核对。」「每条 result 的 toolCallId 都能在组内找到对应 call」
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
            if not any(c is cid for c in declared):  # .some(c => c === cid)
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


# --- the input on which this function and ctxlab's reference differ ---


def WITNESS():
    """The opening path written to JSON and parsed back, as a JSONL store reopens it."""
    import json

    from ctxlab import fixtures, parse_session_entry

    path = [
        parse_session_entry(json.loads(json.dumps(entry.to_json())))
        for entry in fixtures.opening_path()
    ]
    return (path,), {}
