"""Returns the groups newest first (group 3, 2, 1) instead of in path order.

The budget walks the groups from the newest backwards, so the student hands them over in that order
already, thinking buildContext() will want the newest group first.

The chapter's rule (§「同一段历史会产生一份更短的模型输入」): 「把其余九条记录分成三组：group 1 =
[u1, a1] group 2 = [u2, a2] group 3 = [u3, calls, r-test, r-read, a3]」 — the groups come in path
order; choosing from the newest is buildContext()'s job (「函数从最新一组向前选择」).
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
    return groups[::-1]


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

    return (fixtures.opening_path(),), {}
