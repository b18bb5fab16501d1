"""Misconception 11.5/trimmed-when-resumed: the reason is trimmed whenever a summary is sent.

A student-style build_context with one mistake (the catalogue's evidence,
ctxlab/lab/grading/catalogue/lab11_5.json).
"""

import math

from ctxlab import (
    CompactionError,
    ContextOptionError,
    ContextResult,
    ContextTokens,
    EstimatorError,
    TextContent,
    UserMessage,
    current_system_message,
    group_interactions,  # Lab 11.2's reference
    render_summary,
)


def build_context(active_path, *, max_tokens, reserved_output, safety_margin, estimate_tokens):
    """Lab 11.3's build, resumed from the newest compaction
    (§ 恢复时把最新摘要接在保留后缀前面, § system 状态跨过 compaction 边界)."""
    for name, option in (
        ("max_tokens", max_tokens),
        ("reserved_output", reserved_output),
        ("safety_margin", safety_margin),
    ):
        if (
            isinstance(option, bool)
            or not isinstance(option, (int, float))
            or not math.isfinite(option)
            or option < 0
        ):
            raise ContextOptionError(
                f"{name} must be a finite number >= 0, got {option!r}", option=name
            )
    if not callable(estimate_tokens):
        raise ContextOptionError("estimate_tokens must be a function", option="estimate_tokens")

    def price(message, who):
        try:
            cost = estimate_tokens(message)
        except Exception as error:
            raise EstimatorError(
                f"estimate_tokens failed on {who}: {error}", subject=who
            ) from error
        if (
            isinstance(cost, bool)
            or not isinstance(cost, (int, float))
            or not math.isfinite(cost)
            or cost < 0
        ):
            raise EstimatorError(f"estimate_tokens returned {cost!r} for {who}", subject=who)
        return cost

    # 1. The system message is replayed from the WHOLE path, across the compaction boundary.
    entries = [entry for entry in active_path if entry.type == "message"]
    system = current_system_message(entry.message for entry in entries)
    system_cost = 0 if system is None else price(system, "the system message")
    available = max(0, max_tokens - system_cost - reserved_output - safety_margin)

    # 2. Only the NEWEST compaction is read. Its summary becomes one user message, priced first.
    candidates, summary, summary_cost = entries, None, 0
    compactions = [i for i, entry in enumerate(active_path) if entry.type == "compaction"]
    if compactions:
        index = compactions[-1]
        compaction = active_path[index]
        first_kept = compaction.first_kept_entry_id
        earlier = [entry.id for entry in active_path[:index]]
        if first_kept not in earlier:
            raise CompactionError(
                f"compaction {compaction.id}: firstKeptEntryId {first_kept} is not earlier"
                " on the path"
            )
        start = earlier.index(first_kept)
        head = active_path[start]
        if head.type != "message" or head.message.role != "user":
            raise CompactionError(
                f"compaction {compaction.id}: firstKeptEntryId {first_kept} is not a user"
                " message that starts a group"
            )
        candidates = [entry for entry in active_path[start:] if entry.type == "message"]
        text = render_summary(compaction.summary)
        summary = UserMessage((TextContent(text),), compaction.timestamp)
        summary_cost = price(summary, f"the summary of {compaction.id}")

    # 3. Whole groups, newest first, from what the summary leaves.
    budget = max(0, available - summary_cost)
    groups = group_interactions(candidates)
    kept, used, overflow = [], 0, False
    for group in reversed(groups):
        cost = sum(price(entry.message, f"entry {entry.id}") for entry in group.entries)
        if used + cost <= budget:
            kept.insert(0, group)
            used += cost
        else:
            if not kept:
                kept, used, overflow = [group], cost, True
            break

    if overflow:
        reason = "single_group_overflow"
    elif len(kept) == len(groups) and summary is None:
        # Taken as: a summary stands for dropped messages, so resuming is always trimming.
        reason = "within_budget"  # the course's code: every group kept (not in the chapter's text)
    else:
        reason = "trimmed"
    kept_entries = [entry for group in kept for entry in group.entries]
    # [system?, summary?, ...the kept suffix]; keptEntryIds lists original entries only.
    head_messages = [m for m in (system, summary) if m is not None]
    return ContextResult(
        messages=tuple(head_messages) + tuple(entry.message for entry in kept_entries),
        kept_entry_ids=tuple(entry.id for entry in kept_entries),
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
