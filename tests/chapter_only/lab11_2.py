"""Lab 11.2, written from the chapter alone, taking every choice it leaves open the other way
from ctxlab: errors are plain ValueErrors naming only the call id (the chapter: "错误信息携带
entry id 或 call id"), a message before the first user message is dropped, the groups
carry no tool_pairs, and the path is walked by index, as the chapter's array (an iterator is
not a path).
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
    return InteractionGroup(entries=tuple(group))
