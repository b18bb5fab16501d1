"""Takes the kept groups as `groups[-n:]`; when none fits, n is 0 and `groups[-0:]` is every group.

The student counted how many newest groups fit and sliced them off the end of the list. When
even the newest group does not fit the count is 0, and `groups[-0:]` is `groups[0:]`, the
whole list: the overflow case sends every group, reported as within_budget with 0 tokens of
messages, instead of the newest group alone as single_group_overflow.

The chapter's rule it breaks (§ 31 个 token 怎样留下第二、三组):
「假设消息额度只有 10，而第三组单独需要 15，函数仍返回 完整的 [u3, calls, r-test, r-read,
a3]，并把 reason 设为 single_group_overflow。」
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
    for cost in reversed(costs):
        if used + cost > available:
            break
        fitting += 1
        used += cost
    chosen = groups[-fitting:]
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
    """max_tokens = 19: 10 tokens for messages, the newest group costs 15."""
    from ctxlab import fixtures

    path = fixtures.opening_path()
    options = dict(
        max_tokens=19,
        reserved_output=4,
        safety_margin=2,
        estimate_tokens=fixtures.opening_estimator,
    )
    return (path,), options
