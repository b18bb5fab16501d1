"""Reports availableForMessages as what is left after the chosen groups (22 - 22 = 0).

A student read "available for messages" as "still available": the room left once the chosen
groups are paid for. In the chapter's example the kept groups use exactly the allowance, so the
ledger shows availableForMessages 0 where the chapter shows 22.

The chapter's rule (§ 同一段历史会产生一份更短的模型输入): 「重放出的 system message 占 3，回答预留
4，安全余量占 2。消息还剩 22。」 and the ledger 「messages: 22, ... availableForMessages: 22,
total: 31」 — the allowance is what the fixed costs leave, before any group is chosen.
"""

import copy
import math

from ctxlab import (
    ContextOptionError,
    ContextResult,
    ContextTokens,
    EstimatorError,
    current_system_message,
    group_interactions,  # Lab 11.2's reference
)


def _ok_number(x):
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return False
    if isinstance(x, int):
        return x >= 0
    return math.isfinite(x) and x >= 0


def _price(estimate_tokens, message, subject):
    try:
        cost = estimate_tokens(message)
    except Exception as exc:
        raise EstimatorError(
            f"estimate_tokens failed on {subject}: {exc}", subject=subject
        ) from exc
    if not _ok_number(cost):
        raise EstimatorError(f"estimate_tokens returned {cost!r} for {subject}", subject=subject)
    return cost


def build_context(active_path, *, max_tokens, reserved_output, safety_margin, estimate_tokens):
    for name, v in (
        ("max_tokens", max_tokens),
        ("reserved_output", reserved_output),
        ("safety_margin", safety_margin),
    ):
        if not _ok_number(v):
            raise ContextOptionError(
                f"build_context: {name} must be a finite number >= 0", option=name
            )
    if not callable(estimate_tokens):
        raise ContextOptionError(
            "build_context: estimate_tokens must be callable", option="estimate_tokens"
        )
    path = list(active_path)
    message_entries = [e for e in path if e.type == "message"]
    system = current_system_message([e.message for e in message_entries])
    system_cost = 0 if system is None else _price(estimate_tokens, system, "the system message")
    available = max(0, max_tokens - system_cost - reserved_output - safety_margin)
    groups = group_interactions(message_entries)
    costs = [
        sum(_price(estimate_tokens, e.message, f"entry {e.id}") for e in g.entries) for g in groups
    ]
    chosen = []
    used = 0
    for group, cost in zip(reversed(groups), reversed(costs), strict=True):
        if used + cost > available:
            break
        chosen.insert(0, group)
        used += cost
    if groups and not chosen:
        chosen = [groups[-1]]
        used = costs[-1]
        reason = "single_group_overflow"
    elif len(chosen) < len(groups):
        reason = "trimmed"
    else:
        reason = "within_budget"
    kept = [e for g in chosen for e in g.entries]
    messages = ([system] if system is not None else []) + [e.message for e in kept]
    return ContextResult(
        messages=tuple(copy.deepcopy(messages)),
        kept_entry_ids=tuple(e.id for e in kept),
        reason=reason,
        tokens=ContextTokens(
            max_tokens=max_tokens,
            system=system_cost,
            messages=used,
            reserved_output=reserved_output,
            safety_margin=safety_margin,
            available_for_messages=available - used,
            total=system_cost + used + reserved_output + safety_margin,
        ),
    )


def WITNESS():
    from ctxlab import fixtures

    path = fixtures.opening_path(language="en")

    options = dict(
        max_tokens=31,
        reserved_output=4,
        safety_margin=2,
        estimate_tokens=fixtures.opening_estimator,
    )
    return (path,), options
