"""Closes a group by looking ahead for a user message, so a group a system message follows is lost.

The student walked the path in pairs (`pairwise`) and closed the open group when the next
entry is a user message or the end of the path; a user message then just starts a new list.
When a system message stands after a group (patch-1 after a1), the look-ahead sees a system
message, the group is never closed, and the next user message drops it.

The chapter's rule it breaks (§ 两个 tool result 仍属于 u3 开始的同一组):
「system message 出现在两组之间时也一样跳过，不会切开或混入哪一组。」
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
    groups = []
    current = None
    for entry, after in pairwise([*entries, None]):
        role = entry.message.role
        if role == "system":
            continue
        if role == "user":
            current = [entry]
        elif current is None:
            raise InteractionError(
                f"entry {entry.id}: a {role} message before the first user message",
                entry_id=entry.id,
            )
        else:
            current.append(entry)
        if after is None or after.message.role == "user":
            groups.append(_close(current))
    return groups


# --- the input on which this function and ctxlab's reference differ ---


def WITNESS():
    """The system-patch path's message entries: patch-1 and patch-2 stand between groups."""
    from ctxlab import fixtures

    entries = [e for e in fixtures.system_patch_path() if e.type == "message"]
    return (entries,), {}
