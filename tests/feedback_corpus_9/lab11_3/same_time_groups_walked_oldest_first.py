"""Orders the groups newest first by sorting on the head's timestamp; a tie keeps the older first.

The student sorted the groups by their user message's timestamp with `reverse=True` to walk
them from the newest. Python's sort is stable and `reverse=True` keeps equal keys in their
original order, so when two groups start at the same timestamp (a clock of whole seconds)
the older of the two is offered first and may be kept instead of the newer one.

The chapter's rule it breaks (§ 31 个 token 怎样留下第二、三组):
「剩下的 22 从最新组向前使用。」；（§ 同一段历史会产生一份更短的模型输入）
「所以 函数从最新一组向前选择」
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
    newest_first = sorted(
        zip(groups, costs, strict=True),
        key=lambda pair: pair[0].entries[0].timestamp,
        reverse=True,
    )
    for group, cost in newest_first:
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
            available_for_messages=available,
            total=system_cost + used + reserved_output + safety_margin,
        ),
    )


# --- the input on which this function and ctxlab's reference differ ---


def WITNESS():
    """max_tokens = 24 (15 for messages) on the opening path timed in whole seconds:
    sys, u1, a1 at 1, the rest at 2, so groups 2 and 3 start at the same timestamp."""
    import dataclasses

    from ctxlab import fixtures

    path = []
    for entry in fixtures.opening_path():
        second = 1 if entry.id in ("sys", "u1", "a1") else 2
        message = dataclasses.replace(entry.message, timestamp=second)
        path.append(dataclasses.replace(entry, timestamp=second, message=message))
    options = dict(
        max_tokens=24,
        reserved_output=4,
        safety_margin=2,
        estimate_tokens=fixtures.opening_estimator,
    )
    return (path,), options
