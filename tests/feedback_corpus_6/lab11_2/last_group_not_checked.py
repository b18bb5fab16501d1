"""Checks each group a user message closes, but not the last one, closed at the path's end.

The student put the four checks where a new user message ends the previous group, and at the end of
the loop simply appended what was left, so the interaction still open at the path's end is never
checked.

The chapter's rule (§「损坏记录在进入预算前就会被拒绝」): 「把 r-test.toolCallId 从 test-1 改成
unknown-1 … groupInteractions() 找不到 unknown-1 对应的 call → 第三组不进入预算选择」 — the last
group is checked like the others (「路径结尾再结算第三组」, §「两个 tool result 仍属于 u3 开始的同一
组」).
"""

from ctxlab import InteractionGroup


def group_interactions(entries):
    groups = []
    current = None
    for index in range(len(entries)):
        entry = entries[index]
        role = entry.message.role
        if role == "system":
            continue
        if role == "user":
            if current is not None:
                groups.append(close(current))
            current = [entry]
        elif current is not None:
            current.append(entry)
    if current is not None:
        groups.append(InteractionGroup(entries=tuple(current)))
    return groups


def close(group):
    calls = set()
    for entry in group:
        if entry.message.role == "assistant":
            for call in entry.message.tool_calls:
                if call.id in calls:
                    raise ValueError(f"call {call.id} is declared twice")
                calls.add(call.id)
    answered = set()
    for entry in group:
        if entry.message.role == "toolResult":
            call_id = entry.message.tool_call_id
            if call_id not in calls:
                raise ValueError(f"no call {call_id} in this group")
            if call_id in answered:
                raise ValueError(f"call {call_id} has a second result")
            answered.add(call_id)
    for call_id in sorted(calls - answered):
        raise ValueError(f"call {call_id} has no result")
    return InteractionGroup(entries=tuple(group))


def WITNESS():
    from ctxlab import fixtures

    # the chapter's corruption, in the last group: r-test answers unknown-1
    return (fixtures.unknown_call_path(),), {}
