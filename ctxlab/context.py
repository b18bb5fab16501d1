"""The budgeted context projection (Labs 11.3 and 11.5, "31 个 token 怎样留下第二、三组",
"恢复时把最新摘要接在保留后缀前面").

``build_context`` never changes history. From one active path and a budget it derives a
fresh, finite message list for the next model call:

1. replay the system message from the WHOLE path and price it (``tokens.system``);
2. ``available_for_messages = max(0, max_tokens - system - reserved_output - safety_margin)``;
3. if the path has a compaction, only the newest counts: its summary becomes one synthetic
   user message (priced first), and the candidates start at its ``firstKeptEntryId``;
4. group the candidates into whole interactions and keep them newest-first until the first
   group that no longer fits -- a contiguous newest suffix, never split. A newest group
   that alone is too big is still returned whole (``single_group_overflow``).

Groups are priced lazily, newest first, and pricing stops at the first group that does not
fit: no older group is ever priced, and every message is priced at most once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from ctxlab.compaction import SummaryLanguage, first_kept_problem, render_summary
from ctxlab.entries import (
    CompactionSessionEntry,
    MessageSessionEntry,
    MetadataSessionEntry,
    SessionEntry,
)
from ctxlab.errors import CompactionError, ContextOptionError, EstimatorError, shown
from ctxlab.interactions import InteractionGroup, group_interactions
from ctxlab.messages import (
    AgentMessage,
    SystemMessage,
    TextContent,
    UserMessage,
    current_system_message,
)

__all__ = [
    "ContextReason",
    "ContextResult",
    "ContextTokens",
    "TokenEstimator",
    "build_context",
    "resume_candidates",
    "summary_message",
]

#: Prices one message (or a string) in tokens: a finite number >= 0.
TokenEstimator: TypeAlias = Callable[[Any], float]
ContextReason: TypeAlias = Literal["within_budget", "trimmed", "single_group_overflow"]


@dataclass(frozen=True)
class ContextTokens:
    """The token ledger of one build. ``messages`` = summary cost + kept group costs;
    ``total = system + messages + reserved_output + safety_margin``."""

    max_tokens: int | float
    system: int | float
    messages: int | float
    reserved_output: int | float
    safety_margin: int | float
    available_for_messages: int | float
    total: int | float

    def to_json(self) -> dict[str, int | float]:
        return {
            "maxTokens": self.max_tokens,
            "system": self.system,
            "messages": self.messages,
            "reservedOutput": self.reserved_output,
            "safetyMargin": self.safety_margin,
            "availableForMessages": self.available_for_messages,
            "total": self.total,
        }


@dataclass(frozen=True)
class ContextResult:
    """A context projection: what goes to the model, which entries it kept, and why.

    ``messages`` = [replayed system?, summary?, ...kept entries' messages];
    ``kept_entry_ids`` lists only kept original message entries (never the system
    message, never the synthetic summary).
    """

    messages: tuple[AgentMessage, ...]
    kept_entry_ids: tuple[str, ...]
    reason: ContextReason
    tokens: ContextTokens

    def to_json(self) -> dict[str, Any]:
        """The chapter's camelCase shape."""
        return {
            "messages": [message.to_json() for message in self.messages],
            "keptEntryIds": list(self.kept_entry_ids),
            "reason": self.reason,
            "tokens": self.tokens.to_json(),
        }


def _is_finite_number(value: object) -> bool:
    """A non-bool int (always finite, however long) or a finite float."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def _option(name: str, value: object) -> int | float:
    if not _is_finite_number(value):
        raise ContextOptionError(
            name, f"build_context: {name} must be a finite number >= 0, got {shown(value)}"
        )
    assert isinstance(value, (int, float))
    if value < 0:
        raise ContextOptionError(name, f"build_context: {name} must be >= 0, got {shown(value)}")
    return value


def _price(
    estimate_tokens: TokenEstimator,
    message: AgentMessage,
    subject: str,
    entry_id: str | None = None,
) -> int | float:
    try:
        cost = estimate_tokens(message)
    except Exception as exc:
        raise EstimatorError(
            subject, f"estimate_tokens failed on {subject}: {shown(exc)}", entry_id=entry_id
        ) from exc
    if not _is_finite_number(cost):
        raise EstimatorError(
            subject,
            f"estimate_tokens returned {shown(cost)} for {subject}; expected a finite number >= 0",
            entry_id=entry_id,
        )
    assert isinstance(cost, (int, float))
    if cost < 0:
        raise EstimatorError(
            subject,
            f"estimate_tokens returned {shown(cost)} for {subject}; expected a finite number >= 0",
            entry_id=entry_id,
        )
    return cost


def summary_message(
    compaction: CompactionSessionEntry, language: SummaryLanguage = "zh"
) -> UserMessage:
    """The synthetic user message that stands in for everything a compaction summarised,
    rendered in ``language`` (default ``"zh"``, the course's rendering)."""
    return UserMessage(
        (TextContent(render_summary(compaction.summary, language)),), compaction.timestamp
    )


def _latest_compaction(path: Sequence[SessionEntry]) -> tuple[int, CompactionSessionEntry] | None:
    for index in range(len(path) - 1, -1, -1):
        entry = path[index]
        if isinstance(entry, CompactionSessionEntry):
            return index, entry
    return None


def resume_candidates(
    path: Sequence[SessionEntry],
) -> tuple[CompactionSessionEntry | None, list[MessageSessionEntry]]:
    """The newest compaction (if any) and the message entries the budget may keep.

    Without a compaction: every message entry. With one ("恢复时把最新摘要接在保留后缀前面"):
    the message entries from its ``firstKeptEntryId`` to the end, which must be the user
    message starting an interaction earlier on the path. System messages stay among the
    candidates; grouping skips them, since they are replayed from the whole path.
    """
    found = _latest_compaction(path)
    if found is None:
        return None, [e for e in path if isinstance(e, MessageSessionEntry)]
    index, compaction = found
    first_kept = compaction.first_kept_entry_id
    start = next((i for i in range(index) if path[i].id == first_kept), None)
    if start is None:
        raise CompactionError(
            f"compaction {compaction.id}: firstKeptEntryId {first_kept} does not stand earlier"
            " on the active path than the compaction",
            entry_id=compaction.id,
        )
    head = path[start]
    if not (isinstance(head, MessageSessionEntry) and isinstance(head.message, UserMessage)):
        # Only the error text needs the grouping of the older path.
        problem = first_kept_problem(path[:index], first_kept)
        raise CompactionError(
            f"compaction {compaction.id}: firstKeptEntryId {problem}", entry_id=compaction.id
        )
    return compaction, [e for e in path[start:] if isinstance(e, MessageSessionEntry)]


def build_context(
    active_path: Sequence[SessionEntry],
    *,
    max_tokens: int | float,
    reserved_output: int | float,
    safety_margin: int | float,
    estimate_tokens: TokenEstimator,
    summary_language: SummaryLanguage = "zh",
) -> ContextResult:
    """Build the context projection of ``active_path`` under a token budget.

    See the module docstring for the rules. Errors: a budget option that is not a finite
    number >= 0 (``ContextOptionError`` naming it), an estimator that fails or returns a
    bad value (``EstimatorError`` naming the message), a latest compaction whose
    ``firstKeptEntryId`` is unusable, and interactions whose tool ids do not pair.

    ``summary_language`` renders a compaction's summary message: ``"zh"`` (the default)
    is the course's rendering (``【会话压缩摘要】``), so the result equals the course's
    ``buildContext`` on the same path, message for message and token for token; ``"en"``
    is the English one.
    """
    budget = check_options(max_tokens, reserved_output, safety_margin)
    if not callable(estimate_tokens):
        raise ContextOptionError(
            "estimate_tokens",
            f"build_context: estimate_tokens must be callable, got {estimate_tokens!r}",
        )
    check_language(summary_language)
    for index, entry in enumerate(active_path):
        if not isinstance(
            entry, (MessageSessionEntry, MetadataSessionEntry, CompactionSessionEntry)
        ):
            raise ContextOptionError(
                "active_path",
                f"build_context: active_path[{index}] is not a session entry"
                f" ({type(entry).__name__}); parse it with parse_session_entry first",
            )

    system = current_system_message(
        entry.message for entry in active_path if isinstance(entry, MessageSessionEntry)
    )
    system_cost = 0 if system is None else price_system(estimate_tokens, system)

    compaction, candidates = resume_candidates(active_path)
    summary: UserMessage | None = None
    summary_cost: int | float = 0
    if compaction is not None:
        summary = summary_message(compaction, summary_language)
        summary_cost = price_summary(estimate_tokens, summary, compaction)

    groups = group_interactions(candidates)
    group_budget = group_budget_of(budget, system_cost, summary_cost)
    kept_count, kept_cost, reason = select_newest_suffix(
        len(groups), lambda index: group_cost(groups[index], estimate_tokens), group_budget
    )
    kept_entries = [
        entry for group in groups[len(groups) - kept_count :] for entry in group.entries
    ]
    return assemble_result(
        budget, system, system_cost, summary, summary_cost, kept_entries, kept_cost, reason
    )


# --------------------------------------------------------------------------------------
# The steps of build_context, shared with ctxlab.window.ContextWindow so that both do the
# same checks in the same order and the same arithmetic (equal results, equal floats).


@dataclass(frozen=True)
class Budget:
    """The three checked budget options of one build."""

    max_tokens: int | float
    reserved_output: int | float
    safety_margin: int | float


def check_options(max_tokens: object, reserved_output: object, safety_margin: object) -> Budget:
    """Check the three budget numbers (in this order), naming the first bad one."""
    return Budget(
        _option("max_tokens", max_tokens),
        _option("reserved_output", reserved_output),
        _option("safety_margin", safety_margin),
    )


def check_language(summary_language: object) -> None:
    """``summary_language`` must be ``"en"`` or ``"zh"``."""
    if summary_language not in ("en", "zh"):
        raise ContextOptionError(
            "summary_language",
            f"build_context: summary_language must be 'en' or 'zh', got {summary_language!r}",
        )


def price_system(estimate_tokens: TokenEstimator, system: SystemMessage) -> int | float:
    """Price the replayed system message (``tokens.system``)."""
    return _price(estimate_tokens, system, "the replayed system message")


def price_summary(
    estimate_tokens: TokenEstimator, summary: UserMessage, compaction: CompactionSessionEntry
) -> int | float:
    """Price the synthetic summary message of ``compaction``."""
    return _price(
        estimate_tokens, summary, f"the summary of compaction {compaction.id}", compaction.id
    )


def price_entry(estimate_tokens: TokenEstimator, entry: MessageSessionEntry) -> int | float:
    """Price the message of one entry."""
    return _price(estimate_tokens, entry.message, f"entry {entry.id}", entry.id)


def group_budget_of(
    budget: Budget, system_cost: int | float, summary_cost: int | float
) -> int | float:
    """What is left for whole groups once the fixed costs are paid."""
    available = _available(budget, system_cost)
    return max(0, available - summary_cost)


def _available(budget: Budget, system_cost: int | float) -> int | float:
    return max(0, budget.max_tokens - system_cost - budget.reserved_output - budget.safety_margin)


def group_cost(group: InteractionGroup, estimate_tokens: TokenEstimator) -> int | float:
    """The cost of one group: the sum of its messages' prices, in path order."""
    return sum((price_entry(estimate_tokens, entry) for entry in group.entries), start=0)


def select_newest_suffix(
    count: int, cost_of: Callable[[int], int | float], budget: int | float
) -> tuple[int, int | float, ContextReason]:
    """Keep groups newest-first until the first one that does not fit.

    ``cost_of(index)`` prices group ``index`` (0 is the oldest of ``count``); it is called
    newest first and never for a group older than the first one that does not fit.
    Returns how many newest groups are kept, their cost and the reason.
    """
    kept = 0
    spent: int | float = 0
    for index in range(count - 1, -1, -1):
        cost = cost_of(index)
        if spent + cost <= budget:
            kept += 1
            spent += cost
            continue
        if kept == 0:  # the newest group alone is too big: return it whole
            return 1, cost, "single_group_overflow"
        break
    reason: ContextReason = "within_budget" if kept == count else "trimmed"
    return kept, spent, reason


def assemble_result(
    budget: Budget,
    system: SystemMessage | None,
    system_cost: int | float,
    summary: UserMessage | None,
    summary_cost: int | float,
    kept_entries: Sequence[MessageSessionEntry],
    kept_cost: int | float,
    reason: ContextReason,
) -> ContextResult:
    """The result: [system?, summary?, ...kept messages] and the token ledger."""
    messages_cost = summary_cost + kept_cost
    tokens = ContextTokens(
        max_tokens=budget.max_tokens,
        system=system_cost,
        messages=messages_cost,
        reserved_output=budget.reserved_output,
        safety_margin=budget.safety_margin,
        available_for_messages=_available(budget, system_cost),
        total=system_cost + messages_cost + budget.reserved_output + budget.safety_margin,
    )
    return ContextResult(
        messages=(
            *((system,) if system is not None else ()),
            *((summary,) if summary is not None else ()),
            *(entry.message for entry in kept_entries),
        ),
        kept_entry_ids=tuple(entry.id for entry in kept_entries),
        reason=reason,
        tokens=tokens,
    )
