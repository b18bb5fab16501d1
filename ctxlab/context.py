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

After a look from the end for the newest compaction, the path is read in ONE pass
(:meth:`~ctxlab.interactions.GroupBuilder.feed`): it replays the system messages and cuts
the candidates into groups, checking the tool ids of every one. Groups are then priced
lazily, newest first, and pricing stops at the first group that does not fit: no older
group is ever priced, and every message is priced at most once.
:class:`~ctxlab.window.ContextWindow` runs the same steps, one append at a time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from ctxlab.compaction import (
    SummaryLanguage,
    compaction_error,
    first_kept_problem,
    render_summary,
)
from ctxlab.entries import (
    CompactionSessionEntry,
    MessageSessionEntry,
    MetadataSessionEntry,
    SessionEntry,
    not_an_entry,
    raise_malformed,
    reading_entries,
)
from ctxlab.errors import ContextOptionError, CtxlabError, EstimatorError, shown
from ctxlab.interactions import GroupBuilder
from ctxlab.messages import (
    AgentMessage,
    SystemMessage,
    SystemReplay,
    TextContent,
    UserMessage,
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


def summary_message(
    compaction: CompactionSessionEntry, language: SummaryLanguage = "zh"
) -> UserMessage:
    """The synthetic user message that stands in for everything a compaction summarised,
    rendered in ``language`` (default ``"zh"``, the course's rendering)."""
    try:
        text = render_summary(compaction.summary, language)
    except CtxlabError as error:  # a compaction built by hand: name it and its field
        raise_malformed(error, (compaction,))
    return UserMessage((TextContent(text),), compaction.timestamp)


def _newest_compaction(path: Sequence[object]) -> CompactionSessionEntry | None:
    """The compaction nearest the end of ``path`` (only the newest counts), or None."""
    for entry in reversed(path):
        if isinstance(entry, CompactionSessionEntry):
            return entry
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
    compaction = _newest_compaction(path)
    if compaction is None:
        return None, [e for e in path if isinstance(e, MessageSessionEntry)]
    found = len(path) - 1 - next(i for i, e in enumerate(reversed(path)) if e is compaction)
    first_kept = compaction.first_kept_entry_id
    start = next((i for i in range(found) if path[i].id == first_kept), None)
    if start is None:
        raise compaction_error(
            compaction.id,
            f"firstKeptEntryId {first_kept} does not stand earlier on the active path than"
            " the compaction",
        )
    head = path[start]
    if not (isinstance(head, MessageSessionEntry) and isinstance(head.message, UserMessage)):
        # Only the error text needs the grouping of the older path.
        problem = first_kept_problem(path[:found], first_kept)
        raise compaction_error(compaction.id, f"firstKeptEntryId {problem}")
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
            f"estimate_tokens must be callable, got {estimate_tokens!r}",
            where="build_context",
            option="estimate_tokens",
        )
    check_language(summary_language)
    if not isinstance(active_path, Sequence):
        raise ContextOptionError(
            f"active_path must be a list of session entries, got {type(active_path).__name__}",
            where="build_context",
            option="active_path",
        )
    with reading_entries(active_path):  # an entry built by hand with a wrong field
        return _build(active_path, budget, estimate_tokens, summary_language)


def _build(
    active_path: Sequence[SessionEntry],
    budget: _Budget,
    estimate_tokens: TokenEstimator,
    summary_language: SummaryLanguage,
) -> ContextResult:
    """The steps of :func:`build_context` once its options are checked."""
    # The newest compaction, if any: the budget may keep only the interactions from its
    # first kept entry on, so only those are grouped and checked.
    compaction = _newest_compaction(active_path)
    first_kept = None if compaction is None else compaction.first_kept_entry_id

    # One pass over the whole path. The group builder cuts the messages into interaction
    # groups (from the first kept entry on) and hands back the rest: system messages
    # (replayed), metadata and compactions (skipped), anything that is not an entry
    # (refused), and the messages before the first kept entry (not candidates).
    replay = SystemReplay()
    groups = GroupBuilder()
    grouped_before_compaction = 0
    for index, entry in groups.feed(active_path, start=first_kept):
        if isinstance(entry, MessageSessionEntry):
            if isinstance(entry.message, SystemMessage):
                replay.add(entry.message)
        elif entry is compaction:
            grouped_before_compaction = len(groups.groups)
        elif not isinstance(entry, (MetadataSessionEntry, CompactionSessionEntry)):
            raise ContextOptionError(
                not_an_entry("active_path", index, entry),
                where="build_context",
                option="active_path",
            )

    # The system message, replayed from the WHOLE path, is paid first.
    system = replay.result()
    system_cost = 0 if system is None else price_system(estimate_tokens, system)

    # Resume from the newest compaction: its summary first, then the groups from its first
    # kept entry -- which must be the user message starting a group before the compaction.
    summary: UserMessage | None = None
    summary_cost: int | float = 0
    if compaction is not None:
        if grouped_before_compaction == 0:  # no such user message before the compaction
            resume_candidates(active_path)  # raises the error naming what is wrong
        summary = summary_message(compaction, summary_language)
        summary_cost = price_summary(estimate_tokens, summary, compaction)

    # Every candidate group must be whole: its tool calls and results pair up.
    problem = groups.problem(preamble=compaction is None)
    if problem is not None:
        raise problem

    # Keep whole groups, newest first, until the first one that no longer fits.
    candidates = groups.groups
    kept_count, kept_cost, reason = select_newest_suffix(
        len(candidates),
        lambda index: _group_cost(candidates[index], estimate_tokens),
        group_budget(budget, system_cost, summary_cost),
    )
    kept_entries = [
        entry for group in candidates[len(candidates) - kept_count :] for entry in group
    ]
    return assemble_result(
        budget, system, system_cost, summary, summary_cost, kept_entries, kept_cost, reason
    )


# --------------------------------------------------------------------------------------
# The steps of build_context, shared with ctxlab.window.ContextWindow so that both do the
# same checks in the same order and the same arithmetic (equal results, equal floats).


class _Budget:
    """The three checked budget options of one build. (A plain class, not a dataclass:
    nothing compares or prints it, and each dataclass costs ``import ctxlab`` ~0.5 ms.)"""

    __slots__ = ("max_tokens", "reserved_output", "safety_margin")

    def __init__(
        self, max_tokens: int | float, reserved_output: int | float, safety_margin: int | float
    ) -> None:
        self.max_tokens = max_tokens
        self.reserved_output = reserved_output
        self.safety_margin = safety_margin


def _option(name: str, value: object) -> int | float:
    if not _is_finite_number(value):
        raise ContextOptionError(
            f"{name} must be a finite number >= 0, got {shown(value)}",
            where="build_context",
            option=name,
        )
    assert isinstance(value, (int, float))
    if value < 0:
        raise ContextOptionError(
            f"{name} must be >= 0, got {shown(value)}", where="build_context", option=name
        )
    return value


def check_options(max_tokens: object, reserved_output: object, safety_margin: object) -> _Budget:
    """Check the three budget numbers (in this order), naming the first bad one."""
    return _Budget(
        _option("max_tokens", max_tokens),
        _option("reserved_output", reserved_output),
        _option("safety_margin", safety_margin),
    )


def check_language(summary_language: object) -> None:
    """``summary_language`` must be ``"en"`` or ``"zh"``."""
    if summary_language not in ("en", "zh"):
        raise ContextOptionError(
            f"summary_language must be 'en' or 'zh', got {summary_language!r}",
            where="build_context",
            option="summary_language",
        )


def _price(
    estimate_tokens: TokenEstimator,
    message: AgentMessage,
    subject: str,
    entry_id: str | None = None,
) -> int | float:
    """Price one message, naming ``subject`` when the estimator fails or returns a bad value."""
    try:
        cost = estimate_tokens(message)
    except Exception as exc:
        raise EstimatorError(
            f"estimate_tokens failed on {subject}: {shown(exc)}", subject=subject, entry_id=entry_id
        ) from exc
    if not _is_finite_number(cost) or cost < 0:
        raise EstimatorError(
            f"estimate_tokens returned {shown(cost)} for {subject}; expected a finite number >= 0",
            subject=subject,
            entry_id=entry_id,
        )
    return cost


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


def _group_cost(
    group: Sequence[MessageSessionEntry], estimate_tokens: TokenEstimator
) -> int | float:
    """The cost of one group: the sum of its messages' prices, in path order."""
    return sum((price_entry(estimate_tokens, entry) for entry in group), start=0)


def _available(budget: _Budget, system_cost: int | float) -> int | float:
    return max(0, budget.max_tokens - system_cost - budget.reserved_output - budget.safety_margin)


def group_budget(
    budget: _Budget, system_cost: int | float, summary_cost: int | float
) -> int | float:
    """What is left for whole groups once the fixed costs are paid."""
    return max(0, _available(budget, system_cost) - summary_cost)


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
    budget: _Budget,
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
