"""Skips the first entry unread, taking it for the system message, even when it is a user message.

The chapter's opening path starts with sys, so the student starts the walk at entries[1:]
(and still skips later system messages by role); on a path without a system message the
first user message is lost and the assistant answer after it stands before any user.

The chapter, § 两个 tool result 仍属于 u3 开始的同一组: 「它先遇到 sys：system message 记录的是
prompt 状态，不属于对话中的任何一组，函数直接跳过。随后它遇到 u1 时创建第一组」 — a message is
skipped for being a system message, not for standing first; groups start at user messages
(§ 同一段历史会产生一份更短的模型输入: 「groupInteractions() 跳过 sys，以 user 消息为起点」).
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
    for entry in entries[1:]:
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
    from ctxlab import fixtures

    path = [e for e in fixtures.opening_path() if e.id != "sys"]
    return (path,), {}
