"""Counts fitting groups with enumerate(start=1) and keeps its counter after `break`: one too many.

The student let `enumerate(..., start=1)` count the groups walked from the newest and used
the counter after the loop as the number that fit. When the loop breaks, the counter already
counts the group that did not fit, so that group is kept too (its cost left out of
tokens.messages): with 15 tokens for messages, group 2 is kept beside group 3.

The chapter's rule it breaks (§ 31 个 token 怎样留下第二、三组):
「剩下的 22 从最新组向前使用。第三组成本 15，放得下；加上第二组正好是 22；再加第一
组会变成 29，于是选择停在 u2。」
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
    fitting = 0
    used = 0
    for fitting, cost in enumerate(reversed(costs), start=1):  # noqa: B007
        if used + cost > available:
            break
        used += cost
    chosen = groups[len(groups) - fitting :]
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
            available_for_messages=available,
            total=system_cost + used + reserved_output + safety_margin,
        ),
    )


# --- the input on which this function and ctxlab's reference differ ---


def WITNESS():
    """max_tokens = 24: 15 tokens for messages, only the newest group (15) fits."""
    from ctxlab import fixtures

    path = fixtures.opening_path()
    options = dict(
        max_tokens=24,
        reserved_output=4,
        safety_margin=2,
        estimate_tokens=fixtures.opening_estimator,
    )
    return (path,), options
