"""Keeps from the path's start when firstKeptEntryId is not on the path, instead of refusing.

The summary is sent with every group, as if the compaction kept everything.

The student gave the start index a default of 0, thinking a compaction that cannot be located
should not break the request.

The rule it breaks (§ 损坏记录在进入预算前就会被拒绝): a bad compaction record stops at the record,
「错误停在 compact-1，不会延后成预算差异」; firstKeptEntryId 「只能指向一组的首条 user message」
(§ compact-1 记录摘要与保留起点) that stands earlier on the path.
"""

import copy
import math

from ctxlab import (
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
    system = current_system_message([e.message for e in path if e.type == "message"])
    system_cost = 0 if system is None else _price(estimate_tokens, system, "the system message")
    available = max(0, max_tokens - system_cost - reserved_output - safety_margin)

    compaction_index = None
    for i in range(len(path) - 1, -1, -1):
        if path[i].type == "compaction":
            compaction_index = i
            break
    summary_message = None
    summary_cost = 0
    start = 0
    if compaction_index is not None:
        compaction = path[compaction_index]
        first_kept = compaction.first_kept_entry_id
        start = None
        for i in range(compaction_index):
            e = path[i]
            if e.id == first_kept:
                if e.type == "message" and e.message.role == "user":
                    start = i
                break
        if start is None:
            start = 0
        summary_message = UserMessage(
            (TextContent(render_summary(compaction.summary)),), compaction.timestamp
        )
        summary_cost = _price(
            estimate_tokens, summary_message, f"the summary of compaction {compaction.id}"
        )
    candidates = [e for e in path[start:] if e.type == "message" and e.message.role != "system"]
    group_budget = max(0, available - summary_cost)
    groups = group_interactions(candidates)
    costs = [
        sum(_price(estimate_tokens, e.message, f"entry {e.id}") for e in g.entries) for g in groups
    ]
    chosen = []
    used = 0
    for group, cost in zip(reversed(groups), reversed(costs), strict=True):
        if used + cost > group_budget:
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
    messages = (
        ([system] if system is not None else [])
        + ([summary_message] if summary_message is not None else [])
        + [e.message for e in kept]
    )
    spent = summary_cost + used
    return ContextResult(
        messages=tuple(copy.deepcopy(messages)),
        kept_entry_ids=tuple(e.id for e in kept),
        reason=reason,
        tokens=ContextTokens(
            max_tokens=max_tokens,
            system=system_cost,
            messages=spent,
            reserved_output=reserved_output,
            safety_margin=safety_margin,
            available_for_messages=available,
            total=system_cost + spent + reserved_output + safety_margin,
        ),
    )


def WITNESS():
    """The resumed path whose compact-1 keeps from "u9", an id not on the path."""
    from ctxlab import fixtures, parse_session_entry

    path = fixtures.resumed_path()
    i = next(i for i, e in enumerate(path) if e.id == "compact-1")
    path[i] = parse_session_entry({**path[i].to_json(), "firstKeptEntryId": "u9"})
    return (path,), dict(
        max_tokens=1000,
        reserved_output=4,
        safety_margin=2,
        estimate_tokens=fixtures.opening_estimator,
    )
