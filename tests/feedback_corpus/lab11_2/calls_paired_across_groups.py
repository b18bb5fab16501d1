"""Pairs calls and results over the whole path instead of inside each group.

The student cut the groups first and then checked the id relations once, for all
entries together, so a call in one group can be answered in the next.

The chapter's rule it breaks (§ 两个 tool result 仍属于 u3 开始的同一组):
「分组函数保留 r-test、r-read 的原路径顺序，同时在这个 user group 内核对四个对象
关系：每个 call.id 只声明一次；每条 result 的 toolCallId 都能在组内找到对应
call；一个 call 至多对应一条 result；group 结束时，所有 call 都已经配齐
result。」
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
    cut = []
    current = None
    for entry in entries:
        role = entry.message.role
        if role == "system":
            continue
        if role == "user":
            if current is not None:
                cut.append(current)
            current = [entry]
        elif current is None:
            raise InteractionError(
                f"entry {entry.id}: a {role} message before the first user message",
                entry_id=entry.id,
            )
        else:
            current.append(entry)
    if current is not None:
        cut.append(current)
    # check the call/result ids once, over all the groups
    pair_of = dict(_close([entry for group in cut for entry in group]).tool_pairs)
    groups = []
    for group in cut:
        calls = [
            block.id
            for entry in group
            if entry.message.role == "assistant"
            for block in entry.message.content
            if block.type == "toolCall"
        ]
        pairs = tuple((cid, pair_of[cid]) for cid in calls)
        groups.append(InteractionGroup(entries=tuple(group), tool_pairs=pairs))
    return groups


# --- the input on which this function and ctxlab's reference differ ---


def WITNESS():
    """A call c1 in group 1 whose result r1 stands in group 2."""

    from ctxlab import (
        AssistantMessage,
        MessageSessionEntry,
        TextContent,
        ToolCall,
        ToolResultMessage,
        Usage,
        UserMessage,
    )
    from ctxlab.json_values import FrozenDict

    def user(text):
        return UserMessage((TextContent(text),), 1)

    def assistant(text, *call_ids):
        calls = tuple(ToolCall(c, "read", FrozenDict({"path": "a.py"})) for c in call_ids)
        stop = "toolUse" if calls else "stop"
        return AssistantMessage((TextContent(text), *calls), "p", "m", Usage(0, 0, 0), stop, 1)

    def result(call_id):
        return ToolResultMessage(call_id, "read", (TextContent("ok"),), False, 1)

    def chain(*pairs):
        entries, parent = [], None
        for entry_id, message in pairs:
            entries.append(MessageSessionEntry(entry_id, parent, 1, message))
            parent = entry_id
        return entries

    entries = chain(
        ("u1", user("Read a.py")),
        ("a1", assistant("Reading it.", "c1")),
        ("u2", user("And?")),
        ("r1", result("c1")),
        ("a2", assistant("Done.")),
    )
    return (entries,), {}
