"""Lab 11.5, wrong: lets ctxlab.context.select_newest_suffix (its solution) choose the groups.

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
from ctxlab.context import select_newest_suffix


def build_context(active_path, *, max_tokens, reserved_output, safety_margin, estimate_tokens):
    messages = [entry for entry in active_path if entry.type == "message"]
    system = current_system_message([entry.message for entry in messages])
    system_cost = 0 if system is None else estimate_tokens(system)
    available = max(0, max_tokens - system_cost - reserved_output - safety_margin)
    candidates, summary, summary_cost = messages, None, 0
    compactions = [i for i, entry in enumerate(active_path) if entry.type == "compaction"]
    if compactions:
        compaction = active_path[compactions[-1]]
        ids = [entry.id for entry in active_path]
        start = ids.index(compaction.first_kept_entry_id)
        candidates = [entry for entry in active_path[start:] if entry.type == "message"]
        summary = UserMessage(
            (TextContent(render_summary(compaction.summary)),), compaction.timestamp
        )
        summary_cost = estimate_tokens(summary)
    groups = group_interactions(candidates)
    count, used, reason = select_newest_suffix(
        len(groups),
        lambda index: sum(estimate_tokens(e.message) for e in groups[index].entries),
        max(0, available - summary_cost),
    )
    kept = [entry for group in groups[len(groups) - count :] for entry in group.entries]
    head = tuple(m for m in (system, summary) if m is not None)
    return ContextResult(
        messages=head + tuple(entry.message for entry in kept),
        kept_entry_ids=tuple(entry.id for entry in kept),
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
