"""Checks that a group has as many results as calls, not that each call has its own result.

The student reduces "each call gets its result" to a count: each result must name a known call, and
at the end the number of results must equal the number of calls.

The chapter's rule (§「两个 tool result 仍属于 u3 开始的同一组」): 「一个 call 至多对应一条 result；
group 结束时，所有 call 都已经配齐 result。这些关系只依赖 id 集合」 — the relations are on ids, not
on counts.
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
    results = 0
    for entry in group:
        if entry.message.role == "toolResult":
            call_id = entry.message.tool_call_id
            if call_id not in calls:
                raise ValueError(f"no call {call_id} in this group")
            results += 1
    if results != len(calls):
        raise ValueError(f"{len(calls)} calls but {results} results in this group")
    return InteractionGroup(entries=tuple(group))


def WITNESS():
    from ctxlab import fixtures

    # r-read answers test-1 too: test-1 has two results, read-1 none (2 calls, 2 results)
    return (fixtures.duplicate_result_path(),), {}
