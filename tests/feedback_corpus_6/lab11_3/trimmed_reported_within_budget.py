"""Reports within_budget whenever the kept groups fit, so a trimmed result says within_budget.

The student reads within_budget as "the result stays within the budget" and tests the cost of what
was kept against the allowance, not whether every group was kept.

The chapter's rule (§「同一段历史会产生一份更短的模型输入」): for the 31-token example that keeps
only groups 2 and 3, 「reason: "trimmed"」 — 「u1 和 a1 仍在 session 中，只是没有进入这次模型请求」:
a group was left out.
"""

import math

from ctxlab import ContextResult, ContextTokens, current_system_message, group_interactions


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

    entries = [entry for entry in active_path if entry.type == "message"]
    system = current_system_message([entry.message for entry in entries])
    system_cost = 0 if system is None else price(system)
    available = max(0, max_tokens - system_cost - reserved_output - safety_margin)
    groups = group_interactions(entries)
    kept, used, overflow = [], 0, False
    for group in reversed(groups):
        cost = sum(price(entry.message) for entry in group.entries)
        if used + cost <= available:
            kept.insert(0, group)
            used += cost
        else:
            if not kept:
                kept, used, overflow = [group], cost, True
            break
    if overflow:
        reason = "single_group_overflow"
    elif used <= available:
        reason = "within_budget"
    else:
        reason = "trimmed"
    kept_entries = [entry for group in kept for entry in group.entries]
    return ContextResult(
        messages=((system,) if system is not None else ())
        + tuple(entry.message for entry in kept_entries),
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


def WITNESS():
    from ctxlab import fixtures

    kwargs = dict(
        max_tokens=31,
        reserved_output=4,
        safety_margin=2,
        estimate_tokens=fixtures.opening_estimator,
    )
    return (fixtures.opening_path(),), kwargs
