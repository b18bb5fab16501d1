"""``build_context`` is lazy and linear, and gives the full-pricing definition's results.

* Laziness: groups are priced newest first and pricing stops at the first group that
  does not fit. A counting estimator records exactly which messages were priced.
* Equivalence: :func:`reference_build` below is the obviously-correct definition --
  price EVERY group, then take the longest newest suffix that fits -- and a property
  test compares it with ``build_context`` on random sessions.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxlab
from ctxlab import (
    CompactionSessionEntry,
    ContextResult,
    ContextTokens,
    CtxlabError,
    InteractionGroup,
    MessageSessionEntry,
    SessionEntry,
    SystemMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    build_context,
    current_system_message,
    group_interactions,
    render_summary,
    text_of,
)
from ctxlab import fixtures as fx
from ctxlab.compaction import SummaryLanguage
from ctxlab.json_values import FrozenDict
from strategies import budgets, estimators, sessions

pytestmark = pytest.mark.reference

# -- the full-pricing definition ------------------------------------------------------------


def reference_build(
    path: Sequence[SessionEntry],
    *,
    max_tokens: float,
    reserved_output: float,
    safety_margin: float,
    estimate_tokens: Callable[[Any], float],
    summary_language: SummaryLanguage = "zh",
) -> ContextResult:
    """Price everything, then keep the longest newest suffix of groups that fits.

    The summary is rendered in the spec's default language (``"zh"``, the course's)
    unless ``summary_language`` says otherwise.

    (Integer costs make the order of additions irrelevant; the estimators used here
    return integers.)
    """
    messages = [e for e in path if isinstance(e, MessageSessionEntry)]
    system = current_system_message(e.message for e in messages)
    system_cost = estimate_tokens(system) if system is not None else 0
    available = max(0, max_tokens - system_cost - reserved_output - safety_margin)

    summary = None
    summary_cost = 0
    compactions = [e for e in path if isinstance(e, CompactionSessionEntry)]
    if compactions:
        text = render_summary(compactions[-1].summary, summary_language)
        summary = UserMessage((TextContent(text),), compactions[-1].timestamp)
        summary_cost = estimate_tokens(summary)
    budget = max(0, available - summary_cost)

    groups = candidate_groups(path)
    costs = [sum(estimate_tokens(e.message) for e in g.entries) for g in groups]
    kept = 0
    while kept < len(groups) and sum(costs[len(groups) - kept - 1 :]) <= budget:
        kept += 1
    if kept == len(groups):
        reason = "within_budget"
    elif kept == 0:
        kept, reason = 1, "single_group_overflow"
    else:
        reason = "trimmed"
    kept_groups = groups[len(groups) - kept :]
    kept_cost = sum(costs[len(groups) - kept :])
    entries = [e for g in kept_groups for e in g.entries]
    messages_cost = summary_cost + kept_cost
    return ContextResult(
        messages=(
            *([system] if system is not None else []),
            *([summary] if summary is not None else []),
            *(e.message for e in entries),
        ),
        kept_entry_ids=tuple(e.id for e in entries),
        reason=reason,  # type: ignore[arg-type]
        tokens=ContextTokens(
            max_tokens=max_tokens,
            system=system_cost,
            messages=messages_cost,
            reserved_output=reserved_output,
            safety_margin=safety_margin,
            available_for_messages=available,
            total=system_cost + messages_cost + reserved_output + safety_margin,
        ),
    )


def candidate_groups(path: Sequence[SessionEntry]) -> list[InteractionGroup]:
    """The groups of the message entries from the latest compaction's first kept entry."""
    messages = [e for e in path if isinstance(e, MessageSessionEntry)]
    compactions = [e for e in path if isinstance(e, CompactionSessionEntry)]
    if compactions:
        ids = [e.id for e in messages]
        messages = messages[ids.index(compactions[-1].first_kept_entry_id) :]
    return group_interactions(messages)


class Counting:
    """Wraps an estimator and records the text of every message it prices, in order."""

    def __init__(self, inner: Callable[[Any], float]) -> None:
        self.inner = inner
        self.priced: list[Any] = []

    def __call__(self, value: Any) -> float:
        self.priced.append(value)
        return self.inner(value)


def _ids_of(priced: list[Any], path: Sequence[SessionEntry]) -> list[str]:
    """Name each priced message by its entry id (or 'system' / 'summary')."""
    by_object = {id(e.message): e.id for e in path if isinstance(e, MessageSessionEntry)}
    names = []
    for message in priced:
        if id(message) in by_object:
            names.append(by_object[id(message)])
        elif isinstance(message, SystemMessage):
            names.append("system")
        else:
            names.append("summary")
    return names


# -- laziness, exactly ------------------------------------------------------------------------


def test_overflow_prices_only_the_newest_group() -> None:
    path = fx.opening_path()
    counting = Counting(fx.opening_estimator)
    result = build_context(
        path, max_tokens=19, reserved_output=4, safety_margin=2, estimate_tokens=counting
    )
    assert result.reason == "single_group_overflow"
    # system first, then the newest group in path order; u1, a1, u2, a2 never priced
    assert _ids_of(counting.priced, path) == [
        "system",
        "u3",
        "calls",
        "r-test",
        "r-read",
        "a3",
    ]


def _long_path(groups: int) -> list[SessionEntry]:
    """The opening path followed by ``groups`` more one-question interactions q<i> -> r<i>."""
    path = fx.opening_path()
    for i in range(groups):
        for role, entry_id in (("user", f"q{i}"), ("assistant", f"r{i}")):
            text = f"{entry_id} text"
            message: Any
            if role == "user":
                message = UserMessage((TextContent(text),), 100 + i)
            else:
                message = fx._assistant(text, 100 + i)
            path.append(MessageSessionEntry(entry_id, path[-1].id, 100 + i, message))
    return path


def _ten_per_group(value: Any) -> int:
    """The opening estimator for the opening path; 5 for every added message."""
    if isinstance(value, SystemMessage) or text_of(value) in {
        text_of(e.message) for e in fx.opening_path() if isinstance(e, MessageSessionEntry)
    }:
        return fx.opening_estimator(value)
    return 5


def test_trimming_prices_kept_groups_and_the_first_that_does_not_fit_and_nothing_older() -> None:
    path = _long_path(50)  # 53 groups: three from the chapter, then 50 of 10 tokens each
    counting = Counting(_ten_per_group)
    result = build_context(
        path, max_tokens=3 + 35, reserved_output=0, safety_margin=0, estimate_tokens=counting
    )
    assert result.reason == "trimmed"
    assert result.kept_entry_ids == ("q47", "r47", "q48", "r48", "q49", "r49")
    assert _ids_of(counting.priced, path) == [
        "system",
        "q49",
        "r49",
        "q48",
        "r48",
        "q47",
        "r47",
        "q46",  # the first group that does not fit is priced (to know it does not fit) ...
        "r46",
    ]  # ... and nothing older: 47 groups never priced


def test_after_a_compaction_the_summary_is_priced_once_and_old_groups_never() -> None:
    path = fx.resumed_path()
    counting = Counting(fx.opening_estimator)
    result = build_context(
        path, max_tokens=3 + 4 + 7, reserved_output=0, safety_margin=0, estimate_tokens=counting
    )
    # group budget 14 - system 3 - summary 4 = 7: [u4, a4] (7) fits, [u3 .. a3] (15) not
    assert result.kept_entry_ids == ("u4", "a4")
    assert _ids_of(counting.priced, path) == [
        "system",
        "summary",
        "u4",
        "a4",
        "u3",
        "calls",
        "r-test",
        "r-read",
        "a3",
    ]  # never u2, a2 (a candidate group older than the first that does not fit), u1, a1


def test_every_message_priced_at_most_once_per_build() -> None:
    path = _long_path(30)
    counting = Counting(_ten_per_group)
    build_context(
        path, max_tokens=10**6, reserved_output=0, safety_margin=0, estimate_tokens=counting
    )
    names = _ids_of(counting.priced, path)
    assert Counter(names).most_common(1)[0][1] == 1
    assert len(names) == 1 + 9 + 60  # everything fits: system + all 69 group messages


# -- one pass, no function call per message -----------------------------------------------------
#
# The single pass over the path (issue 13: <= 1 µs per entry at 100,000 entries, measured by
# `make bench`) stays cheap because a message costs a few bytecodes of one loop, never a
# Python function call; only a group's closing check is a call. Time depends on the machine;
# the number of Python calls does not, so that is what is asserted here.


def _tool_path(groups: int, calls_per_turn: int) -> list[SessionEntry]:
    """One system message, then ``groups`` interactions: a user message, an assistant turn
    calling ``calls_per_turn`` tools, their results (in reverse order), a final answer;
    then one short interaction without tools."""
    path: list[SessionEntry] = []

    def add(message: Any) -> None:
        parent = path[-1].id if path else None
        path.append(MessageSessionEntry(f"e{len(path)}", parent, len(path), message))

    add(SystemMessage("BASE", 0))
    for group in range(groups):
        add(UserMessage((TextContent(f"question {group}"),), group))
        calls = tuple(
            ToolCall(f"call-{group}-{n}", "read", FrozenDict({"n": n}))
            for n in range(calls_per_turn)
        )
        add(fx._assistant("reading", group, *calls))
        for call in reversed(calls):
            add(ToolResultMessage(call.id, "read", (TextContent("ok"),), False, group))
        add(fx._assistant("done", group))
    add(UserMessage((TextContent("thanks"),), groups))  # the newest group, priced: the same
    add(fx._assistant("you are welcome", groups))  # whatever calls_per_turn is
    return path


def _python_calls(path: Sequence[SessionEntry]) -> int:
    """Calls of ctxlab's Python functions (and generator resumptions) made by one build that
    keeps nothing: the pass, plus pricing the system message and the newest group. (Only
    ctxlab's own code is counted: a garbage-collector callback of another library may run
    at any time.)"""
    package = str(Path(ctxlab.__file__).parent)
    calls = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal calls
        if event == "call" and frame.f_code.co_filename.startswith(package):
            calls += 1

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        build_context(
            path, max_tokens=0, reserved_output=0, safety_margin=0, estimate_tokens=lambda _: 1
        )
    finally:
        sys.setprofile(previous)
    return calls


def test_the_pass_makes_no_python_call_per_message() -> None:
    few, many = _tool_path(200, calls_per_turn=1), _tool_path(200, calls_per_turn=6)
    assert len(many) - len(few) == 200 * 5  # five more tool calls and results a group
    assert _python_calls(many) == _python_calls(few)


def test_the_pass_makes_at_most_two_python_calls_per_group() -> None:
    small, large = _tool_path(200, calls_per_turn=2), _tool_path(400, calls_per_turn=2)
    assert _python_calls(large) - _python_calls(small) <= 2 * 200  # closing check of a group


# -- equivalence with the definition ----------------------------------------------------------


def _outcome(
    build: Callable[..., ContextResult], path: Sequence[SessionEntry], **options: Any
) -> ContextResult | type[BaseException]:
    try:
        return build(path, **options)
    except CtxlabError as exc:
        return type(exc)


@settings(max_examples=80)
@given(
    path=sessions(max_groups=8),
    estimate=estimators(),
    budget=budgets(),
    language=st.sampled_from(["en", "zh"]),
)
def test_lazy_build_equals_the_full_pricing_definition(
    path: list[SessionEntry],
    estimate: Callable[[Any], int],
    budget: dict[str, float],
    language: SummaryLanguage,
) -> None:
    lazy = Counting(estimate)
    result = build_context(path, estimate_tokens=lazy, summary_language=language, **budget)
    expected = reference_build(path, estimate_tokens=estimate, summary_language=language, **budget)
    assert result == expected
    assert result.to_json() == expected.to_json()

    # What was priced, in order: system?, summary?, then whole groups newest first -- the
    # kept ones and, when trimmed, exactly one more (the first that does not fit).
    groups = candidate_groups(path)
    kept_groups = len(_groups_kept(groups, result))
    walked = {"within_budget": len(groups), "trimmed": kept_groups + 1}.get(result.reason, 1)
    expected_names = (
        ["system"] * (current_system_message(e.message for e in path if _is_message(e)) is not None)
        + ["summary"] * any(isinstance(e, CompactionSessionEntry) for e in path)
        + [e.id for g in reversed(groups[len(groups) - walked :]) for e in g.entries]
    )
    assert _ids_of(lazy.priced, path) == expected_names


def _is_message(entry: SessionEntry) -> bool:
    return isinstance(entry, MessageSessionEntry)


def _groups_kept(groups: list[InteractionGroup], result: ContextResult) -> list[InteractionGroup]:
    kept = [g for g in groups if set(g.entry_ids) <= set(result.kept_entry_ids)]
    assert [e for g in kept for e in g.entry_ids] == list(result.kept_entry_ids)
    return kept


@settings(max_examples=40)
@given(path=sessions(max_groups=8), estimate=estimators(), budget=budgets())
def test_every_prefix_of_a_session_fails_or_succeeds_alike(
    path: list[SessionEntry], estimate: Callable[[Any], int], budget: dict[str, float]
) -> None:
    """Prefixes include interactions still waiting for a tool result (invalid paths)."""
    for end in range(len(path) + 1):
        prefix = path[:end]
        lazy = _outcome(build_context, prefix, estimate_tokens=estimate, **budget)
        full = _outcome(reference_build, prefix, estimate_tokens=estimate, **budget)
        assert lazy == full
