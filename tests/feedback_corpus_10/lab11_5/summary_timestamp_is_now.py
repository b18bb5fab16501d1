"""Stamps the synthetic summary message with the current time, not the compaction's timestamp.

A synthetic message in the student's TypeScript habit is created "now": `{ role: "user",
content, timestamp: Date.now() }`, ported as `int(time.time() * 1000)`. The summary message
then carries the clock of the build instead of compact-1's timestamp (100), and two builds of
the same path give different results.

The chapter's rule it breaks (§ 恢复时把最新摘要接在保留后缀前面):
「在确定性、无状态的估算器下，相同 active path 与 options 应得到深相等结果。」 -- the summary
message comes from the compaction entry alone, not from the time of the call.
"""

import copy
import math
import time

from ctxlab import (
    CompactionError,
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
            raise CompactionError(
                f"compaction {compaction.id}: firstKeptEntryId {first_kept!r} is not an earlier"
                " user message on the path"
            )
        summary_message = UserMessage(
            (TextContent(render_summary(compaction.summary)),), int(time.time() * 1000)
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


# --- the input on which this function and ctxlab's reference differ ---


def WITNESS():
    """The chapter's resumed path (compact-1, then u4 and a4) under the 31-token budget."""
    from ctxlab import fixtures

    return (fixtures.resumed_path(),), dict(
        max_tokens=31,
        reserved_output=4,
        safety_margin=2,
        estimate_tokens=fixtures.opening_estimator,
    )
