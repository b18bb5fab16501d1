"""Drops a group that holds only its user message (u4 not yet answered) instead of returning it.

The student thinks of an interaction as a question and its answer, so a group is kept only
when something follows its user message. A user message waiting at the leaf is lost from the
grouping, though the chapter opens a group at every user message.

Chapter, §两个 tool result 仍属于 u3 开始的同一组:
  「随后它遇到 u1 时创建第一组，遇到 u2 时结束第一组并创建第二组，遇到 u3 时做同样的事。
  路径结尾再结算第三组。」
and §同一段历史会产生一份更短的模型输入: 「以 user 消息为起点」.
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
            if current is not None and len(current) > 1:
                groups.append(_close(current))
            current = [entry]
        elif current is None:
            raise InteractionError(
                f"entry {entry.id}: a {role} message before the first user message",
                entry_id=entry.id,
            )
        else:
            current.append(entry)
    if current is not None and len(current) > 1:
        groups.append(_close(current))
    return groups


def WITNESS():
    """The opening path with u4 appended at the leaf, not yet answered."""
    from ctxlab import MessageSessionEntry, TextContent, UserMessage, fixtures

    path = fixtures.opening_path()
    u4 = UserMessage((TextContent("Now compact the session."),), 11)
    path.append(MessageSessionEntry("u4", "a3", 11, u4))
    return (path,), {}
