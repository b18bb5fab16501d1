"""Lists groupby's runs before reading them: each run's iterator is dead, every group is empty.

The student numbered the messages with `accumulate` (one more at each user message) and cut
them with `groupby` on that number, listing the runs first to look at the first one (a
message before the first user). Advancing groupby invalidates the runs already handed out:
read afterwards, each yields nothing, and the three groups come back with no entries.

The chapter's rule it breaks (§ 同一段历史会产生一份更短的模型输入):
「groupInteractions() 跳过 sys，以 user 消息为起点，把其余九条记录分成三组：
group 1 = [u1, a1] group 2 = [u2, a2] group 3 = [u3, calls, r-test, r-read, a3]」
"""

from itertools import accumulate, groupby
from operator import itemgetter

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
    messages = [entry for entry in entries if entry.message.role != "system"]
    numbers = accumulate(entry.message.role == "user" for entry in messages)
    runs = list(groupby(zip(numbers, messages, strict=True), key=itemgetter(0)))
    if runs and runs[0][0] == 0:
        entry = messages[0]
        raise InteractionError(
            f"entry {entry.id}: a {entry.message.role} message before the first user message",
            entry_id=entry.id,
        )
    return [_close([entry for _, entry in run]) for _, run in runs]


# --- the input on which this function and ctxlab's reference differ ---


def WITNESS():
    """The opening path's message entries: three groups."""
    from ctxlab import fixtures

    entries = [e for e in fixtures.opening_path() if e.type == "message"]
    return (entries,), {}
