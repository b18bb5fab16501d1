"""Checks budget numbers are >= 0 but not finite, so max_tokens=float('inf') is accepted.

The student wants to allow "no limit" and, testing each option with isinstance and `>= 0`, lets
infinity through: every group fits and the ledger reports an infinite window.

The chapter's rule (§「31 个 token 怎样留下第二、三组」): 「四个配置数值和估算器的每次返回值都要是非
负有限数」 — finite, not only non-negative.
"""

import math

from ctxlab import ContextResult, ContextTokens, current_system_message, group_interactions


def finite_number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return not isinstance(value, float) or math.isfinite(value)


def build_context(active_path, *, max_tokens, reserved_output, safety_margin, estimate_tokens):
    for option in (max_tokens, reserved_output, safety_margin):
        if isinstance(option, bool) or not isinstance(option, (int, float)) or option < 0:
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
    elif len(kept) == len(groups):
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
        max_tokens=float("inf"),
        reserved_output=4,
        safety_margin=2,
        estimate_tokens=fixtures.opening_estimator,
    )
    return (fixtures.opening_path(),), kwargs
