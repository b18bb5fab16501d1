"""Prices the system message only when its content is non-empty, so a sections-only prompt costs 0.

The student ported `systemMessage?.content ? estimateTokens(systemMessage) : 0` as
`getattr(system, "content", None)`. A replayed system message whose content is "" but whose
sections hold the rules is still sent, yet it is charged nothing in tokens.system.

The chapter's rule it breaks (§ 31 个 token 怎样留下第二、三组):
「currentSystemMessage() 是第 03 章的重放函数：非空 content 依次追加，sections 按名字覆盖」
「估算器把这条重放出的消息当作一条普通消息计价，得到 3，记入 tokens.system。」
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
    system_cost = (
        _price(estimate_tokens, system, "the system message")
        if getattr(system, "content", None)  # systemMessage?.content
        else 0
    )
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
            available_for_messages=available,
            total=system_cost + used + reserved_output + safety_margin,
        ),
    )


# --- the input on which this function and ctxlab's reference differ ---


def WITNESS():
    """The opening path whose system message has no content, only sections.rules."""
    from ctxlab import MessageSessionEntry, SystemMessage, fixtures
    from ctxlab.json_values import FrozenDict

    path = fixtures.opening_path()
    rules = SystemMessage("", 1, FrozenDict({"rules": "RULE v2"}))
    path[0] = MessageSessionEntry("sys", None, 1, rules)
    estimate = fixtures.opening_estimator

    options = dict(
        max_tokens=31,
        reserved_output=4,
        safety_margin=2,
        estimate_tokens=estimate,
    )
    return (path,), options
