"""Counts back with enumerate(start=1) and still subtracts 1: the compaction's index is one short.

How a student gets here: the student searches for the newest compaction with
`enumerate(reversed(path), start=1)`, so that `back` reads "the n-th entry from the end",
and then converts it to an index the zero-based way, `len(path) - 1 - back` — one
correction too many. The compaction found is the right one, but its index is one short,
so the first kept entry is looked for only among the entries before the one just before
the compaction. When the compaction was made right after the user's message and keeps
from it (… a1 → u2 → compact-1 keeping u2), u2 is not found and the compaction is refused.

The chapter (§恢复时把最新摘要接在保留后缀前面): 「函数从活动路径末尾向前找到最新 compaction，然后
完成三件事」 and 「2. 从 u2 收集原消息」; (§compact-1 记录摘要与保留起点): firstKeptEntryId
「只能指向一组的首条 user message」 — u2, which starts the interaction still open at the leaf,
is such a head, and the resume starts there.
"""

import copy
import math

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
    for back, entry in enumerate(reversed(path), start=1):
        if entry.type == "compaction":
            compaction, compaction_index = entry, len(path) - 1 - back
            break
    summary_message = None
    summary_cost = 0
    start = 0
    if compaction_index is not None:
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
    from ctxlab import create_compaction_entry, fixtures

    # sys → u1 → a1 → u2, and compact-1 (keeps u2) appended right after the user's message.
    path = fixtures.opening_path()[:4]
    path.append(
        create_compaction_entry(
            path,
            id="compact-1",
            timestamp=100,
            summary=fixtures.compact1_summary(),
            first_kept_entry_id="u2",
            tokens_before=13,
        )
    )
    return (path,), {
        "max_tokens": 31,
        "reserved_output": 4,
        "safety_margin": 2,
        "estimate_tokens": fixtures.opening_estimator,
    }
