"""Reports the summary message's cost in tokens.system instead of in tokens.messages.

The summary message stands at the head of the context next to the system message, so a
student files its cost with the system row of the ledger; the groups are still chosen from
what the summary leaves, and the total is still right, but the two rows are not.

The chapter's rule (§ 恢复时把最新摘要接在保留后缀前面): 「合成的摘要消息紧跟在重放出的 system
message 后面，它有自己的 token 成本。这个成本先从消息额度中扣除，余量才交给完整 groups」 —
it is spent from the message allowance; tokens.system is 「这条重放出的消息」's price
(§ 31 个 token 怎样留下第二、三组: 「得到 3，记入 tokens.system」).
"""

import math

from ctxlab import (
    ContextResult,
    ContextTokens,
    TextContent,
    UserMessage,
    current_system_message,
    group_interactions,
    render_summary,
)


def finite_number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return not isinstance(value, float) or math.isfinite(value)


def build_context(active_path, *, max_tokens, reserved_output, safety_margin, estimate_tokens):
    for option in (max_tokens, reserved_output, safety_margin):
        if not finite_number(option) or option < 0:
            raise ValueError(f"a budget number must be finite and >= 0, got {option!r}")

    def price(message):
        cost = estimate_tokens(message)
        if not finite_number(cost) or cost < 0:
            raise ValueError(f"the estimator returned {cost!r}")
        return cost

    messages = [entry for entry in active_path if entry.type == "message"]
    system = current_system_message([entry.message for entry in messages])
    system_cost = 0 if system is None else price(system)
    available = max(0, max_tokens - system_cost - reserved_output - safety_margin)

    candidates, summary, summary_cost = messages, None, 0
    newest = None
    for index, entry in enumerate(active_path):
        if entry.type == "compaction":
            newest = index
    if newest is not None:
        compaction = active_path[newest]
        ids = [entry.id for entry in active_path]
        start = (
            ids.index(compaction.first_kept_entry_id)
            if (compaction.first_kept_entry_id in ids[:newest])
            else newest
        )
        candidates = [entry for entry in active_path[start:] if entry.type == "message"]
        summary = UserMessage(
            (TextContent(render_summary(compaction.summary)),), compaction.timestamp
        )
        summary_cost = price(summary)

    budget = max(0, available - summary_cost)
    groups = group_interactions(candidates)
    kept, used, overflow = [], 0, False
    for group in reversed(groups):
        cost = sum(price(entry.message) for entry in group.entries)
        if used + cost <= budget:
            kept.insert(0, group)
            used += cost
        else:
            if not kept:
                kept, used, overflow = [group], cost, True
            break
    if overflow:
        reason = "single_group_overflow"
    elif len(kept) == len(groups):
        reason = "within_budget"
    else:
        reason = "trimmed"
    kept_entries = [entry for group in kept for entry in group.entries]
    head = tuple(m for m in (system, summary) if m is not None)
    return ContextResult(
        messages=head + tuple(entry.message for entry in kept_entries),
        kept_entry_ids=tuple(entry.id for entry in kept_entries),
        reason=reason,
        tokens=ContextTokens(
            max_tokens=max_tokens,
            system=system_cost + summary_cost,
            messages=used,
            reserved_output=reserved_output,
            safety_margin=safety_margin,
            available_for_messages=available,
            total=system_cost + summary_cost + used + reserved_output + safety_margin,
        ),
    )


def WITNESS():
    from ctxlab import fixtures

    return (fixtures.resumed_path(),), {
        "max_tokens": 40,
        "reserved_output": 4,
        "safety_margin": 2,
        "estimate_tokens": fixtures.opening_estimator,
    }
