"""Misconception 11.2/consecutive-users-merged: a user message right after another user message joins its group instead of opening one.

A student-style group_interactions with one mistake (the catalogue's evidence,
ctxlab/lab/grading/catalogue/lab11_2.json).
"""

from ctxlab import InteractionError, InteractionGroup


def group_interactions(entries):
    """Cut message entries into whole user interactions (§ 两个 tool result 仍属于 u3 开始的同一组).

    Raising InteractionError, and naming both the entry and the call id, is ctxlab's rule
    (ctxlab extension); the chapter asks for an error carrying the entry id or the call id.
    """
    groups = []
    current = None  # the entries of the group being collected

    for entry in entries:
        role = entry.message.role
        if role == "system":
            continue  # system messages belong to no group: they are replayed, not grouped
        if role == "user" and (current is None or current[-1].message.role != "user"):
            if current is not None:
                groups.append(close_group(current))
            current = [entry]
        elif current is None and not groups:  # ctxlab extension: nothing but system before the first user
            raise InteractionError(
                f"entry {entry.id} ({role}) comes before the first user message",
                entry_id=entry.id,
            )
        elif current is None:
            current = [entry]
        else:
            current.append(entry)
    if current is not None:
        groups.append(close_group(current))
    return groups


def close_group(group):
    """Pair calls and results of one group by id, whatever their order on the path."""
    calls = {}  # call id -> id of the assistant entry that declares it
    for entry in group:
        if entry.message.role == "assistant":
            for call in entry.message.tool_calls:
                if call.id in calls:
                    raise InteractionError(
                        f"tool call {call.id} is declared twice ({calls[call.id]}, {entry.id})",
                        entry_id=entry.id, call_id=call.id,
                    )
                calls[call.id] = entry.id
    results = {}  # call id -> id of the entry holding its result
    for entry in group:
        if entry.message.role == "toolResult":
            call_id = entry.message.tool_call_id
            if call_id not in calls:
                raise InteractionError(
                    f"{entry.id} answers {call_id}, which no call of this group declares",
                    entry_id=entry.id, call_id=call_id,
                )
            if call_id in results:
                raise InteractionError(
                    f"tool call {call_id} has two results ({results[call_id]}, {entry.id})",
                    entry_id=entry.id, call_id=call_id,
                )
            results[call_id] = entry.id
    for call_id, declared_in in calls.items():
        if call_id not in results:
            raise InteractionError(
                f"tool call {call_id} (declared in {declared_in}) has no result",
                entry_id=declared_in, call_id=call_id,
            )
    pairs = tuple((call_id, results[call_id]) for call_id in calls)  # in declaration order
    return InteractionGroup(entries=tuple(group), tool_pairs=pairs)
