"""Opens a group at each user message but leaves that user message out of the group.

The student's if/elif/else puts `current.append(entry)` in the else branch only; the user branch
closes the old group and starts `current = []`, so the user entry that opens the interaction is
lost from every group (group 3 is [calls, r-test, r-read, a3]).

Chapter rule (§「两个 tool result 仍属于 u3 开始的同一组」 and the opening section):
「groupInteractions() 跳过 sys，以 user 消息为起点」, and the third group is 「[u3, calls,
r-test, r-read, a3]」 — the user message belongs to its group.
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
            continue
        if role == "user":
            if current is not None:
                groups.append(_close(current))
            current = []
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
    from ctxlab.fixtures import opening_path

    return (opening_path(),), {}
