"""Lab 11.5, written from the chapter alone, taking every choice it leaves open the other way
from ctxlab: plain ValueErrors, the estimator neither checked before the call nor wrapped,
a compaction's firstKeptEntryId trusted as it was created (the chapter checks it in
createCompactionEntry(); resuming from an unknown one keeps what follows the compaction),
and the ledger's allowance reported after the summary took its share (what is left for the
groups, not clamped at 0), the summary message stamped with the leaf's timestamp.
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
            (TextContent(render_summary(compaction.summary)),), active_path[-1].timestamp
        )
        summary_cost = price(summary)

    budget = available - summary_cost
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
            system=system_cost,
            messages=summary_cost + used,
            reserved_output=reserved_output,
            safety_margin=safety_margin,
            available_for_messages=max(0, budget),
            total=system_cost + summary_cost + used + reserved_output + safety_margin,
        ),
    )
