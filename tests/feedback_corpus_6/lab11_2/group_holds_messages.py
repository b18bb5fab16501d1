"""Fills each group with the entries' messages instead of the session entries themselves.

Grouping is about messages (user, assistant, toolResult), so the student puts `entry.message` into
the group, not the entry that carries it.

The chapter's rule (§「两个 tool result 仍属于 u3 开始的同一组」): 「groupInteractions() 接收活动路
径中的 message entries」 and 「返回的 entries 保持原路径顺序：[u3, calls, r-test, r-read, a3]」 — a
group holds the path's entries (with their ids, which 11.3's keptEntryIds and 11.4's first kept
entry rely on).
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
        groups.append(close(current))
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
    return InteractionGroup(entries=tuple(entry.message for entry in group))


def WITNESS():
    from ctxlab import fixtures

    return (fixtures.opening_path(),), {}
