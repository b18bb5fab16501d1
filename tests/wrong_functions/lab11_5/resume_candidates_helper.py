"""Lab 11.5, wrong: finds the resumed suffix with ctxlab.context.resume_candidates, a helper
of ctxlab's own solution of this lab.

fails: uses ctxlab's solution (the report's notice; not passed)
"""

from ctxlab import (
    ContextResult,
    ContextTokens,
    TextContent,
    UserMessage,
    current_system_message,
    group_interactions,
    render_summary,
)
from ctxlab.context import resume_candidates


def build_context(active_path, *, max_tokens, reserved_output, safety_margin, estimate_tokens):
    messages = [entry for entry in active_path if entry.type == "message"]
    system = current_system_message([entry.message for entry in messages])
    system_cost = 0 if system is None else estimate_tokens(system)
    available = max(0, max_tokens - system_cost - reserved_output - safety_margin)
    compaction, candidates = resume_candidates(active_path)
    summary, summary_cost = None, 0
    if compaction is not None:
        summary = UserMessage(
            (TextContent(render_summary(compaction.summary)),), compaction.timestamp
        )
        summary_cost = estimate_tokens(summary)
    budget = max(0, available - summary_cost)
    kept, used, overflow = [], 0, False
    groups = group_interactions(candidates)
    for group in reversed(groups):
        cost = sum(estimate_tokens(entry.message) for entry in group.entries)
        if used + cost <= budget:
            kept.insert(0, group)
            used += cost
        else:
            if not kept:
                kept, used, overflow = [group], cost, True
            break
    reason = (
        "single_group_overflow"
        if overflow
        else "within_budget"
        if len(kept) == len(groups)
        else "trimmed"
    )
    entries = [entry for group in kept for entry in group.entries]
    head = tuple(m for m in (system, summary) if m is not None)
    return ContextResult(
        messages=head + tuple(entry.message for entry in entries),
        kept_entry_ids=tuple(entry.id for entry in entries),
        reason=reason,
        tokens=ContextTokens(
            max_tokens=max_tokens,
            system=system_cost,
            messages=summary_cost + used,
            reserved_output=reserved_output,
            safety_margin=safety_margin,
            available_for_messages=available,
            total=system_cost + summary_cost + used + reserved_output + safety_margin,
        ),
    )
