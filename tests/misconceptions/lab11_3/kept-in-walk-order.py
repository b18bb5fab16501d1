"""Misconception 11.3/kept-in-walk-order: the kept groups are returned in the order of the walk, newest first, not in path order.

A student-style build_context with one mistake (the catalogue's evidence,
ctxlab/lab/grading/catalogue/lab11_3.json).
"""

import math

from ctxlab import (
    ContextOptionError,
    ContextResult,
    ContextTokens,
    EstimatorError,
    current_system_message,
    group_interactions,  # Lab 11.2's reference
)


def build_context(active_path, *, max_tokens, reserved_output, safety_margin, estimate_tokens):
    """The context under a token budget, without compaction (§ 31 个 token 怎样留下第二、三组)."""
    # 1. The three budget numbers are finite and >= 0; the estimator is a function.
    for name, option in (("max_tokens", max_tokens), ("reserved_output", reserved_output),
                         ("safety_margin", safety_margin)):
        if (isinstance(option, bool) or not isinstance(option, (int, float))
                or not math.isfinite(option) or option < 0):
            raise ContextOptionError(f"{name} must be a finite number >= 0, got {option!r}", option=name)
    if not callable(estimate_tokens):
        raise ContextOptionError("estimate_tokens must be a function", option="estimate_tokens")

    def price(message, who):
        """One estimate, checked: a finite number >= 0, or an error naming the message."""
        try:
            cost = estimate_tokens(message)
        except Exception as error:
            raise EstimatorError(f"estimate_tokens failed on {who}: {error}", subject=who) from error
        if (isinstance(cost, bool) or not isinstance(cost, (int, float))
                or not math.isfinite(cost) or cost < 0):
            raise EstimatorError(f"estimate_tokens returned {cost!r} for {who}", subject=who)
        return cost

    # 2. The system message is replayed from the WHOLE path and priced once, as one message.
    entries = [entry for entry in active_path if entry.type == "message"]
    system = current_system_message(entry.message for entry in entries)
    system_cost = 0 if system is None else price(system, "the system message")

    # 3. Fixed costs first; the allowance for messages never goes below 0.
    available = max(0, max_tokens - system_cost - reserved_output - safety_margin)

    # 4. Whole groups, newest first; stop at the first group that does not fit.
    groups = group_interactions(entries)
    kept, used, overflow = [], 0, False
    for group in reversed(groups):
        cost = sum(price(entry.message, f"entry {entry.id}") for entry in group.entries)
        if used + cost <= available:
            kept.append(group)
            used += cost
        else:
            if not kept:  # the newest group alone is too big: return it whole anyway
                kept, used, overflow = [group], cost, True
            break

    if overflow:
        reason = "single_group_overflow"
    elif len(kept) == len(groups):
        reason = "within_budget"  # the course's code: every group kept (not in the chapter's text)
    else:
        reason = "trimmed"
    kept_entries = [entry for group in kept for entry in group.entries]
    return ContextResult(
        messages=tuple([system] if system is not None else []) + tuple(e.message for e in kept_entries),
        kept_entry_ids=tuple(entry.id for entry in kept_entries),
        reason=reason,
        tokens=ContextTokens(
            max_tokens=max_tokens,
            system=system_cost,
            messages=used,
            reserved_output=reserved_output,
            safety_margin=safety_margin,
            available_for_messages=available,
            total=system_cost + used + reserved_output + safety_margin,
        ),
    )
