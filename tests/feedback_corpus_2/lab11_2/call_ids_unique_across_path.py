"""Requires call ids unique over the whole path, refusing an id an earlier group already used.

The student reads 「每个 call.id 只声明一次」 as a rule for the whole history and keeps one set
of the call ids seen so far across groups; a provider that numbers its calls per turn
(read-1 again in a later interaction) is then refused.

The chapter, § 两个 tool result 仍属于 u3 开始的同一组: 「同时在这个 user group 内核对四个对象
关系：每个 call.id 只声明一次」 — the four relations are checked inside each user group.
"""

from ctxlab import InteractionError, InteractionGroup


def _close(group, used_ids):
    calls = []  # call ids, in declaration order
    declared = {}
    results = {}
    for entry in group:
        message = entry.message
        if message.role == "assistant":
            for block in message.content:
                if block.type == "toolCall":
                    if block.id in declared or block.id in used_ids:
                        raise InteractionError(
                            f"entry {entry.id}: call {block.id} is declared twice",
                            entry_id=entry.id,
                            call_id=block.id,
                        )
                    declared[block.id] = entry.id
                    used_ids.add(block.id)
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
    used_ids = set()
    for entry in entries:
        role = entry.message.role
        if role == "system":
            continue
        if role == "user":
            if current is not None:
                groups.append(_close(current, used_ids))
            current = [entry]
        elif current is None:
            raise InteractionError(
                f"entry {entry.id}: a {role} message before the first user message",
                entry_id=entry.id,
            )
        else:
            current.append(entry)
    if current is not None:
        groups.append(_close(current, used_ids))
    return groups


def WITNESS():
    from ctxlab import MessageSessionEntry, fixtures

    path = fixtures.opening_path()
    by_id = {e.id: e for e in path}
    # a fourth interaction whose calls are numbered read-1, test-1 again, answered in it
    again = [
        ("u4", "u1"),
        ("calls-2", "calls"),
        ("r-test-2", "r-test"),
        ("r-read-2", "r-read"),
        ("a4", "a3"),
    ]
    parent = "a3"
    for stamp, (new_id, like) in enumerate(again, start=11):
        path.append(MessageSessionEntry(new_id, parent, stamp, by_id[like].message))
        parent = new_id
    return (path,), {}
