"""Chooses the groups in a comprehension whose walrus adds every group's cost, kept or not.

The student wrote the newest-first walk as a comprehension filtered by
`(used := used + cost) <= available`. The choice is right (the running sum never comes back
under the allowance), but the walrus runs for every group, so `used` ends as the cost of all
groups: tokens.messages (and total) count the dropped group 1 too, 29 instead of 22.

The chapter's rule it breaks (§ 同一段历史会产生一份更短的模型输入):
「tokens: { maxTokens: 31, system: 3, messages: 22, reservedOutput: 4, safetyMargin: 2,
availableForMessages: 22, total: 31, }」
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
    used = 0
    newest_first = [
        group
        for group, cost in zip(reversed(groups), reversed(costs), strict=True)
        if (used := used + cost) <= available
    ]
    chosen = newest_first[::-1]
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
    """The chapter's example: max_tokens = 31 keeps groups 2 and 3 (22 tokens)."""
    from ctxlab import fixtures

    path = fixtures.opening_path()
    options = dict(
        max_tokens=31,
        reserved_output=4,
        safety_margin=2,
        estimate_tokens=fixtures.opening_estimator,
    )
    return (path,), options
