"""The lab checks can fail: a mutation suite for ``check_implementation`` (issue 10, item 4).

For each lab this module holds a student-style solution written from the chapter, without
calling ctxlab's function for that lab (11.1 wraps the strict parser, as the lab allows) --
it passes every check -- and at least four plausible wrong versions of it, each caught
with the broken behaviour named (the failing behaviour key is asserted, not just "failed").
The last part feeds the checker functions that raise, return the wrong type, change their
input or never return: each is a ✘ row with a plain message, never an exception.
"""

from __future__ import annotations

import dataclasses
import html
import math
import re
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from ctxlab import (
    AgentMessage,
    CompactionError,
    CompactionSessionEntry,
    CompactionSummary,
    ContextOptionError,
    ContextResult,
    ContextTokens,
    CtxlabError,
    EntryParseError,
    EstimatorError,
    InteractionError,
    InteractionGroup,
    MessageSessionEntry,
    SessionEntry,
    SystemMessage,
    TextContent,
    UserMessage,
    current_system_message,
    group_interactions,
    parse_session_entry,
    render_summary,
)
from ctxlab.lab import check_implementation, get_language, set_language
from ctxlab.lab import grading as g
from pytest_runs import pytest_command, pytest_env

pytestmark = pytest.mark.teaching


def _failed(report: g.LabReport) -> set[str]:
    return {result.key for result in report.results if not result.passed}


# ----------------------------------------------------------------------------------------
# Lab 11.1 -- parse_compaction_entry


_SUMMARY_KEYS = ("goal", "constraints", "completed", "decisions", "changedFiles", "unresolved")
_ENTRY_KEYS = ("type", "id", "parentId", "timestamp", "summary", "firstKeptEntryId")


def _instructor_parse() -> Callable[[Any], Any]:
    """The instructor solution of Lab 11.1 (the notebook's build-it cell): the mutants below
    wrap it, since wrapping ctxlab's own parser would be reported as using the reference."""
    from mutation_audit import solution

    namespace: dict[str, Any] = {}
    exec(solution("11.1")[1], namespace)
    function: Callable[[Any], Any] = namespace["parse_compaction_entry"]
    return function


_parse = _instructor_parse()


def parse_11_1(value: Any, variant: str = "") -> Any:
    """The compaction branch of the parser, written as in the notebook; ``variant`` breaks it."""
    if variant == "ignores_unknown_keys" and isinstance(value, Mapping):
        value = {k: v for k, v in value.items() if k in (*_ENTRY_KEYS, "tokensBefore")}
        if isinstance(value.get("summary"), Mapping):
            keys = (*_SUMMARY_KEYS, "next")
            value["summary"] = {k: v for k, v in value["summary"].items() if k in keys}
    tokens = value.get("tokensBefore") if isinstance(value, Mapping) else None
    if variant == "bool_tokens" and isinstance(value, Mapping) and isinstance(tokens, bool):
        value = {**value, "tokensBefore": int(tokens)}
    if variant == "null_parent" and isinstance(value, Mapping) and value.get("parentId") is None:
        entry = _parse({**value, "parentId": "placeholder"})
        return dataclasses.replace(entry, parent_id=None)  # type: ignore[arg-type]
    if variant == "any_type":
        return parse_session_entry(value)
    if variant == "vague_errors":
        try:
            return _parse(value)
        except CtxlabError:
            raise CtxlabError("this is not a valid compaction entry") from None
    if variant == "no_error_fields":  # the message is right, the attributes are missing
        try:
            return _parse(value)
        except CtxlabError as error:
            raise EntryParseError(str(error)) from None
    if variant == "list_field_for_item":  # summary.next instead of summary.next[1]
        try:
            return _parse(value)
        except EntryParseError as error:
            field = re.sub(r"\[\d+\]$", "", error.field or "")
            raise EntryParseError(str(error), entry_id=error.entry_id, field=field) from None
    if variant == "blank_is_empty_only" and isinstance(value, Mapping):  # "\n" passes as a goal
        summary = value.get("summary")
        if isinstance(summary, Mapping) and summary.get("goal") == "\n":
            value = {**value, "summary": {**summary, "goal": "x"}}
            return dataclasses.replace(
                _parse(value),
                summary=dataclasses.replace(_parse(value).summary, goal="\n"),
            )
    timestamp = value.get("timestamp") if isinstance(value, Mapping) else None
    if variant == "finite_tokens_only" and timestamp == math.inf:  # timestamp inf passes
        entry = _parse({**value, "timestamp": 0})
        return dataclasses.replace(entry, timestamp=math.inf)
    entry = _parse(value)
    if variant == "shares_lists" and isinstance(value, Mapping):
        s = value["summary"]
        summary = CompactionSummary(
            s["goal"],
            s["constraints"],
            s["completed"],
            s["decisions"],
            s["changedFiles"],
            s["unresolved"],
            s["next"],
        )
        return dataclasses.replace(entry, summary=summary)
    if variant == "truncates_tokens":
        return dataclasses.replace(entry, tokens_before=int(entry.tokens_before))
    if variant == "float_tokens":
        return dataclasses.replace(entry, tokens_before=float(entry.tokens_before))
    return entry


# ----------------------------------------------------------------------------------------
# Lab 11.2 -- group_interactions


def group_11_2(entries: Iterable[SessionEntry], variant: str = "") -> list[InteractionGroup]:
    """Cut message entries into user interactions and check the four id relations."""
    groups: list[InteractionGroup] = []
    current: list[MessageSessionEntry] | None = None
    every: list[MessageSessionEntry] = []
    for entry in entries:
        assert isinstance(entry, MessageSessionEntry)
        role = entry.message.role
        if role == "system":
            if variant == "system_joins_group" and current is not None:
                current.append(entry)
            continue
        every.append(entry)
        opens = role == "user" or (variant == "cuts_at_assistant" and role == "assistant")
        if opens:
            if current is not None:
                groups.append(_close(current, variant))
            current = [entry]
        elif current is None:
            if variant == "drops_leading":
                continue
            raise InteractionError(
                f"entry {entry.id} comes before the first user message", entry_id=entry.id
            )
        else:
            current.append(entry)
    if current is not None:
        groups.append(_close(current, variant))
    if variant == "whole_path_pairing":
        _close(every, "")
    return groups


def _close(group: list[MessageSessionEntry], variant: str) -> InteractionGroup:
    if variant == "whole_path_pairing":
        return InteractionGroup(tuple(group))
    try:
        return _pair(group, variant)
    except InteractionError as error:
        if variant == "call_id_only":  # names the call id, not the entry
            raise InteractionError(f"tool call {error.call_id} is broken") from None
        raise


def _pair(group: list[MessageSessionEntry], variant: str) -> InteractionGroup:
    calls: dict[str, str] = {}
    names: dict[str, str] = {}
    results: dict[str, str] = {}
    order: list[tuple[str, str]] = []
    for entry in group:
        message = entry.message
        if message.role == "assistant":
            for call in message.tool_calls:
                if call.id in calls:
                    raise InteractionError(
                        f"tool call {call.id} is declared twice ({entry.id})", call_id=call.id
                    )
                calls[call.id] = entry.id
                names[call.id] = call.name
        elif message.role == "toolResult":
            call_id = message.tool_call_id
            if call_id in results:
                raise InteractionError(
                    f"tool call {call_id} has a second result {entry.id}", call_id=call_id
                )
            results[call_id] = entry.id
            order.append((call_id, entry.id))
            if variant == "pairs_by_tool_name" and names.get(call_id, message.tool_name) != (
                message.tool_name
            ):
                raise InteractionError(f"result {entry.id} is not from tool {names[call_id]}")
    if variant == "pairs_by_position":
        for (call_id, result_id), declared in zip(order, calls, strict=False):
            if call_id != declared:
                raise InteractionError(
                    f"result {result_id} should answer {declared}", call_id=declared
                )
    for call_id, result_id in results.items():
        if call_id not in calls:
            raise InteractionError(
                f"result {result_id} answers unknown call {call_id}", call_id=call_id
            )
    if variant != "no_missing_check":
        for call_id, declared_in in calls.items():
            if call_id not in results:
                raise InteractionError(
                    f"call {call_id} ({declared_in}) has no result", call_id=call_id
                )
    if variant == "no_tool_pairs":
        return InteractionGroup(tuple(group))
    pairs = [(call_id, results[call_id]) for call_id in calls if call_id in results]
    if variant == "pairs_in_result_order":
        pairs = [(call_id, result_id) for call_id, result_id in order]
    return InteractionGroup(tuple(group), tuple(pairs))


# ----------------------------------------------------------------------------------------
# Labs 11.3 and 11.5 -- build_context


def _finite(value: object) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )


def build_11_5(
    active_path: Sequence[SessionEntry],
    *,
    max_tokens: float,
    reserved_output: float,
    safety_margin: float,
    estimate_tokens: Callable[[Any], float],
    variant: str = "",
) -> ContextResult:
    """The budgeted context with resume from the newest compaction (the chapter's rules)."""
    options = {
        "max_tokens": max_tokens,
        "reserved_output": reserved_output,
        "safety_margin": safety_margin,
    }
    for name, value in options.items():
        if variant != "no_option_check" and not _finite(value):
            raise ContextOptionError(
                f"{name} must be a finite number >= 0, got {value!r}",
                option="" if variant == "no_option_attribute" else name,
            )
    if variant != "calls_any_estimator" and not callable(estimate_tokens):
        raise ContextOptionError("estimate_tokens must be callable", option="estimate_tokens")

    def price(message: AgentMessage, who: str) -> float:
        try:
            cost = estimate_tokens(message)
        except Exception as error:
            problem = f"estimate_tokens failed on {who}: {error}"
            raise EstimatorError(problem, subject=who) from error
        if not _finite(cost) or (variant == "zero_is_bad" and cost == 0):
            raise EstimatorError(f"estimate_tokens returned {cost!r} for {who}", subject=who)
        return cost

    entries = [e for e in active_path if isinstance(e, MessageSessionEntry)]
    compactions = [
        (i, e) for i, e in enumerate(active_path) if isinstance(e, CompactionSessionEntry)
    ]
    if variant == "ignores_compaction":
        compactions = []
    chosen: list[CompactionSessionEntry] = []
    candidates = entries
    if compactions:
        index, compaction = compactions[0] if variant == "oldest_compaction" else compactions[-1]
        chosen = [c for _, c in compactions] if variant == "all_summaries" else [compaction]
        earlier = [e.id for e in active_path[:index]]
        first_kept = compaction.first_kept_entry_id
        if first_kept not in earlier:
            raise CompactionError(f"compaction {compaction.id}: {first_kept} is not earlier")
        start = earlier.index(first_kept)
        head = active_path[start]
        starts_group = isinstance(head, MessageSessionEntry) and head.message.role == "user"
        if not starts_group and variant != "accepts_any_first_kept":
            raise CompactionError(
                f"compaction {compaction.id}: {first_kept} does not start an interaction"
            )
        if variant == "candidates_after_compaction":
            start = index + 1
        tail = active_path[start:]
        if variant == "metadata_not_skipped":
            candidates = [e for e in tail if not isinstance(e, CompactionSessionEntry)]  # type: ignore[misc]
        else:
            candidates = [e for e in tail if isinstance(e, MessageSessionEntry)]

    replay_from = candidates if variant == "replay_from_suffix" else entries
    if variant == "first_system_only":
        first = next((e.message for e in entries if isinstance(e.message, SystemMessage)), None)
        system = first
    else:
        system = current_system_message(e.message for e in replay_from)
    system_cost: float = 0 if system is None else price(system, "the system message")
    if variant == "prices_system_parts":
        system_cost = sum(
            price(e.message, e.id) for e in entries if isinstance(e.message, SystemMessage)
        )
    available = max_tokens - system_cost - reserved_output - safety_margin
    if variant != "negative_allowance":
        available = max(0, available)
    base = max(0, max_tokens - reserved_output - safety_margin)
    budget_base = base if variant == "forgets_system_cost" else available

    summaries = [
        UserMessage((TextContent(render_summary(c.summary)),), c.timestamp) for c in chosen
    ]
    summary_cost = sum(
        price(m, "the summary" if variant == "summary_subject_vague" else f"the summary of {c.id}")
        for m, c in zip(summaries, chosen, strict=True)
    )
    budget = budget_base if variant == "summary_priced_last" else max(0, budget_base - summary_cost)
    if variant == "negative_group_budget":
        budget = budget_base - summary_cost

    groups = group_interactions(candidates)
    costs = [sum(price(e.message, f"entry {e.id}") for e in group.entries) for group in groups]
    kept, spent, overflow = _select(groups, costs, budget, variant)
    if variant == "splits_groups":
        flat = [e for group in groups for e in group.entries]
        kept_entries: list[MessageSessionEntry] = []
        spent = 0
        for entry in reversed(flat):
            cost = price(entry.message, entry.id)
            if spent + cost > budget:
                break
            kept_entries.insert(0, entry)
            spent += cost
        overflow = False
    else:
        kept_entries = [e for i in kept for e in groups[i].entries]
    if overflow:
        reason = "single_group_overflow"
    elif len(kept_entries) == sum(len(group.entries) for group in groups):
        reason = "trimmed" if variant == "always_trimmed" else "within_budget"
    else:
        reason = "trimmed"
    messages: list[AgentMessage] = [*([system] if system else [])]
    if variant != "summary_after_suffix":
        messages += summaries
    messages += [e.message for e in kept_entries]
    if variant == "summary_after_suffix":
        messages += summaries
    used = summary_cost + spent
    tokens = ContextTokens(
        max_tokens=max_tokens,
        system=system_cost,
        messages=used,
        reserved_output=reserved_output,
        safety_margin=safety_margin,
        available_for_messages=available,
        total=system_cost + used + reserved_output + safety_margin,
    )
    return ContextResult(tuple(messages), tuple(e.id for e in kept_entries), reason, tokens)  # type: ignore[arg-type]


def _select(
    groups: Sequence[InteractionGroup], costs: Sequence[float], budget: float, variant: str
) -> tuple[list[int], float, bool]:
    """Which groups to keep (indexes, oldest first), their cost, and whether it overflowed."""
    order = range(len(groups)) if variant == "oldest_first" else range(len(groups) - 1, -1, -1)
    kept: list[int] = []
    spent: float = 0
    for index in order:
        if spent + costs[index] <= budget:
            kept.append(index)
            spent += costs[index]
        elif not kept and variant != "no_overflow":
            return [index], costs[index], True
        elif variant != "non_contiguous":
            break
    return sorted(kept), spent, False


# ----------------------------------------------------------------------------------------
# Lab 11.4 -- create_compaction_entry


def create_11_4(
    active_path: list[SessionEntry],
    *,
    id: str,
    timestamp: float,
    summary: CompactionSummary | Mapping[str, Any],
    first_kept_entry_id: str,
    tokens_before: float,
    variant: str = "",
) -> CompactionSessionEntry:
    """Build compact-N after the leaf; the first kept entry must start a group."""
    if variant == "no_empty_check":
        assert active_path[-1].id  # IndexError on an empty path, not a CtxlabError
    elif not active_path:
        where = "compaction" if variant == "empty_error_unnamed" else f"compaction {id}"
        raise CompactionError(f"{where}: the active path is empty")
    if variant != "no_duplicate_check" and any(e.id == id for e in active_path):
        raise CompactionError(f"compaction {id}: id {id} is already on the path")
    messages = [e for e in active_path if isinstance(e, MessageSessionEntry)]
    heads = {group.entries[0].id for group in group_interactions(messages)}
    if variant == "accepts_any_message":
        heads = {e.id for e in messages}
    if variant == "accepts_system":
        heads |= {e.id for e in messages if isinstance(e.message, SystemMessage)}
    if first_kept_entry_id not in heads:
        raise CompactionError(
            f"compaction {id}: firstKeptEntryId {first_kept_entry_id} does not start a group"
        )
    parent = first_kept_entry_id if variant == "parent_is_first_kept" else active_path[-1].id
    if variant == "mapping_only":
        wire_summary = {key: summary[key] for key in (*_SUMMARY_KEYS, "next")}  # type: ignore[index]
    elif isinstance(summary, CompactionSummary):
        wire_summary = summary.to_json()
    else:
        wire_summary = dict(summary)
    if variant == "no_final_parse":
        s = wire_summary
        return CompactionSessionEntry(
            id,
            parent,
            timestamp,
            CompactionSummary(
                s["goal"],
                tuple(s["constraints"]),
                tuple(s["completed"]),
                tuple(s["decisions"]),
                tuple(s["changedFiles"]),
                tuple(s["unresolved"]),
                tuple(s["next"]),
            ),
            first_kept_entry_id,
            tokens_before,
        )
    if variant == "rounds_tokens":
        tokens_before = round(tokens_before)
    entry = parse_session_entry(
        {
            "type": "compaction",
            "id": id,
            "parentId": parent,
            "timestamp": timestamp,
            "summary": wire_summary,
            "firstKeptEntryId": first_kept_entry_id,
            "tokensBefore": tokens_before,
        }
    )
    assert isinstance(entry, CompactionSessionEntry)
    if variant == "appends_to_path":
        active_path.append(entry)
    return entry


# ----------------------------------------------------------------------------------------
# The solutions pass; every mutant is caught with its broken behaviour named


def _variant(function: Callable[..., Any], variant: str) -> Callable[..., Any]:
    def mutant(*args: Any, **kwargs: Any) -> Any:
        return function(*args, variant=variant, **kwargs)

    mutant.__name__ = f"{function.__name__}_{variant or 'solution'}"
    return mutant


SOLUTIONS = {
    "11.1": parse_11_1,
    "11.2": group_11_2,
    "11.3": build_11_5,
    "11.4": create_11_4,
    "11.5": build_11_5,
}

# lab, variant (what is wrong), the behaviour keys that must fail
MUTANTS: list[tuple[str, str, tuple[str, ...]]] = [
    ("11.1", "ignores_unknown_keys", ("rejects_draft_names", "rejects_unknown_keys")),
    ("11.1", "bool_tokens", ("rejects_bad_tokens_before",)),
    ("11.1", "shares_lists", ("no_shared_state", "accepts_compact_1")),
    ("11.1", "null_parent", ("rejects_blank_ids",)),
    ("11.1", "truncates_tokens", ("tokens_before_not_recomputed",)),
    ("11.1", "any_type", ("other_types_refused",)),
    ("11.1", "vague_errors", ("rejects_missing_fields", "rejects_draft_names")),
    ("11.1", "no_error_fields", ("errors_name_the_field",)),  # ctxlab's rule
    ("11.1", "list_field_for_item", ("errors_name_the_field",)),  # ctxlab's rule
    ("11.1", "blank_is_empty_only", ("rejects_whitespace_ids",)),  # ctxlab's rule
    ("11.1", "finite_tokens_only", ("rejects_bad_timestamp",)),
    ("11.1", "float_tokens", ("tokens_before_not_recomputed",)),
    ("11.2", "cuts_at_assistant", ("three_groups",)),
    ("11.2", "pairs_by_position", ("three_groups", "results_any_order")),
    ("11.2", "system_joins_group", ("system_skipped",)),
    ("11.2", "no_missing_check", ("missing_result_rejected",)),
    ("11.2", "whole_path_pairing", ("pairs_within_group",)),
    ("11.2", "pairs_by_tool_name", ("pairing_by_id_only",)),
    ("11.2", "drops_leading", ("message_before_first_user",)),
    # The chapter: "entry id 或 call id" -- naming the call id only is ctxlab's extra failing.
    ("11.2", "call_id_only", ("errors_name_entry_and_call",)),
    ("11.2", "no_tool_pairs", ("tool_pairs",)),
    ("11.2", "pairs_in_result_order", ("tool_pairs",)),
    ("11.3", "forgets_system_cost", ("fixed_costs_first",)),
    ("11.3", "non_contiguous", ("contiguous_newest_suffix",)),
    ("11.3", "oldest_first", ("worked_example_31",)),
    ("11.3", "splits_groups", ("whole_groups",)),
    ("11.3", "no_overflow", ("single_group_overflow",)),
    ("11.3", "first_system_only", ("system_replayed",)),
    ("11.3", "prices_system_parts", ("system_replayed",)),
    ("11.3", "negative_allowance", ("fixed_costs_first",)),
    ("11.3", "always_trimmed", ("within_budget",)),
    ("11.3", "no_option_check", ("options_checked",)),
    ("11.3", "no_option_attribute", ("options_named",)),
    ("11.3", "calls_any_estimator", ("options_named",)),
    ("11.3", "zero_is_bad", ("estimator_checked",)),
    ("11.4", "parent_is_first_kept", ("compact_1", "parent_is_last_entry")),
    ("11.4", "accepts_any_message", ("first_kept_starts_group",)),
    ("11.4", "accepts_system", ("first_kept_not_system",)),
    ("11.4", "no_duplicate_check", ("id_already_on_path",)),
    ("11.4", "appends_to_path", ("pure",)),
    ("11.4", "no_final_parse", ("parsed_result",)),
    ("11.4", "mapping_only", ("summary_forms",)),
    ("11.4", "no_empty_check", ("empty_path",)),
    ("11.4", "empty_error_unnamed", ("empty_path",)),
    ("11.4", "rounds_tokens", ("kept_as_given",)),
    ("11.5", "oldest_compaction", ("newest_compaction_only",)),
    ("11.5", "all_summaries", ("newest_compaction_only",)),
    ("11.5", "replay_from_suffix", ("system_replay_across_boundary",)),
    ("11.5", "summary_priced_last", ("summary_priced_first",)),
    ("11.5", "accepts_any_first_kept", ("first_kept_checked",)),
    ("11.5", "ignores_compaction", ("summary_after_system",)),
    ("11.5", "candidates_after_compaction", ("candidates_from_first_kept",)),
    ("11.5", "summary_after_suffix", ("summary_after_system",)),
    ("11.5", "metadata_not_skipped", ("metadata_skipped",)),
    ("11.5", "no_option_check", ("options_checked",)),
    ("11.5", "calls_any_estimator", ("options_named",)),
    ("11.5", "zero_is_bad", ("estimator_checked",)),
    ("11.5", "summary_subject_vague", ("estimator_errors_named",)),
    ("11.5", "negative_group_budget", ("course_ledger",)),
]


@pytest.mark.parametrize("lab", g.LABS)
def test_the_reference_passes_every_check(lab: str) -> None:
    report = check_implementation(lab, **g.reference_functions(lab))
    assert report.passed and report.extras_passed, str(report)
    assert len(report.results) == len(g.behaviour_keys(lab)) >= 10


@pytest.mark.parametrize("lab", g.LABS)
def test_a_solution_written_from_the_chapter_passes_every_check(lab: str) -> None:
    keyword = g.lab_keyword(lab)
    report = check_implementation(lab, **{keyword: _variant(SOLUTIONS[lab], "")})
    assert report.passed and report.extras_passed, str(report)


def test_every_lab_has_at_least_four_mutants() -> None:
    for lab in g.LABS:
        assert sum(1 for mutant_lab, _, _ in MUTANTS if mutant_lab == lab) >= 4, lab


@pytest.mark.parametrize(
    ("lab", "variant", "keys"), MUTANTS, ids=[f"{lab}-{variant}" for lab, variant, _ in MUTANTS]
)
def test_each_mutant_is_caught_with_its_behaviour_named(
    lab: str, variant: str, keys: tuple[str, ...]
) -> None:
    keyword = g.lab_keyword(lab)
    report = check_implementation(lab, **{keyword: _variant(SOLUTIONS[lab], variant)})
    failed = _failed(report)
    assert set(keys) <= failed, f"{variant}: failed {sorted(failed)}\n{report}"
    if any(g.behaviour_source(lab, key) == "chapter" for key in keys):
        assert not report.passed  # the chapter's rule: the lab is not passed
    else:  # ctxlab's rule only: an extra fails, the chapter's rows may all pass
        assert not report.extras_passed
    for result in report.results:
        if not result.passed:
            assert result.detail_en and result.detail_zh, result.key
            assert "Traceback" not in result.detail_en


def test_a_caller_passed_parent_id_is_caught() -> None:
    def create_compaction_entry(
        active_path: list[SessionEntry], *, parent_id: str | None = None, **options: Any
    ) -> CompactionSessionEntry:
        entry = create_11_4(active_path, **options)
        return entry if parent_id is None else dataclasses.replace(entry, parent_id=parent_id)

    report = check_implementation("11.4", create_compaction_entry=create_compaction_entry)
    assert _failed(report) == {"parent_is_last_entry"}, str(report)
    detail = next(r.detail_en for r in report.results if r.key == "parent_is_last_entry")
    assert "the caller cannot pass parentId" in detail


# ----------------------------------------------------------------------------------------
# Bad input: raising, wrong type, changing the input, never returning


def test_the_stub_says_not_written_yet_in_every_row() -> None:
    def group_interactions(entries: object) -> object:
        raise NotImplementedError

    report = check_implementation("11.2", group_interactions=group_interactions)
    assert not report.passed and not any(r.passed for r in report.results)
    for result in report.results:
        assert "not written yet: the stub still raises NotImplementedError" in result.detail_en
        assert "还没有写" in result.detail_zh


@pytest.mark.parametrize(
    "error",
    [
        KeyError("u2"),
        TypeError("unhashable"),
        RecursionError("maximum recursion depth exceeded"),
        SystemExit(3),
        KeyboardInterrupt(),
        ZeroDivisionError("division by zero"),
    ],
    ids=lambda error: type(error).__name__,
)
def test_any_exception_is_a_failed_row_naming_it(error: BaseException) -> None:
    def build_context(active_path: object, **options: object) -> object:
        raise error

    report = check_implementation("11.3", build_context=build_context)
    assert not report.passed
    worked = report.results[0]
    assert worked.key == "worked_example_31" and not worked.passed
    assert f"raised {type(error).__name__}" in worked.detail_en
    assert worked.detail_en.startswith("path sys..a3, budget 31/4/2: ")


def test_a_really_recursing_function_is_a_failed_row() -> None:
    def create_compaction_entry(active_path: object, **options: object) -> object:
        return create_compaction_entry(active_path, **options)

    report = check_implementation("11.4", create_compaction_entry=create_compaction_entry)
    assert not report.passed
    assert "raised RecursionError" in report.results[0].detail_en


@pytest.mark.parametrize(
    ("lab", "keyword", "value", "words"),
    [
        (
            "11.1",
            "parse_compaction_entry",
            {"id": "compact-1"},
            "expected a CompactionSessionEntry",
        ),
        ("11.2", "group_interactions", "u1,a1", "expected a list of InteractionGroup"),
        ("11.2", "group_interactions", [["u1", "a1"]], "expected an InteractionGroup"),
        ("11.3", "build_context", ["u2", "a2"], "expected a ContextResult"),
        ("11.4", "create_compaction_entry", None, "expected a CompactionSessionEntry"),
        ("11.5", "build_context", 31, "expected a ContextResult"),
    ],
)
def test_a_wrong_type_is_a_failed_row(lab: str, keyword: str, value: object, words: str) -> None:
    def function(*args: object, **kwargs: object) -> object:
        return value

    report = check_implementation(lab, **{keyword: function})
    first = report.results[0]
    assert not first.passed and words in first.detail_en, first.detail_en


def test_changing_the_input_is_named() -> None:
    def build_context(active_path: list[SessionEntry], **options: Any) -> ContextResult:
        result = build_11_5(active_path, **options)
        active_path.reverse()
        return result

    report = check_implementation("11.3", build_context=build_context)
    detail = report.results[0].detail_en
    assert "changed its input active_path during the call" in detail

    def parse_compaction_entry(value: dict[str, Any]) -> Any:
        value["summary"]["goal"] = value["summary"]["goal"].strip()
        return g.parse_compaction_entry(value)

    report = check_implementation("11.1", parse_compaction_entry=parse_compaction_entry)
    # stripping an already stripped goal changes nothing: fine; blank goals then fail
    assert report.results[0].passed

    def create_compaction_entry(active_path: list[SessionEntry], **options: Any) -> Any:
        summary = options["summary"]
        if isinstance(summary, dict):
            summary["goal"] = "overwritten"
        return create_11_4(active_path, **options)

    report = check_implementation("11.4", create_compaction_entry=create_compaction_entry)
    forms = next(r for r in report.results if r.key == "summary_forms")
    assert "changed its input summary during the call" in forms.detail_en


def test_a_function_that_never_returns_is_stopped_and_the_rest_not_run() -> None:
    previous = g.set_time_limit(0.5)
    try:

        def group_interactions(entries: object) -> object:
            while True:
                pass

        started = time.perf_counter()
        report = check_implementation("11.2", group_interactions=group_interactions)
        elapsed = time.perf_counter() - started
    finally:
        g.set_time_limit(previous)
    assert elapsed < 5
    first, *rest = report.results
    assert not first.passed and "did not return within 0.5 s" in first.detail_en
    assert first.detail_en.startswith("path sys..a3: ")
    assert rest and all(not r.passed and r.detail_en.startswith("not run") for r in rest)
    import threading

    def checks_left() -> list[threading.Thread]:
        # Running ones: after a kernel interrupt CPython may keep listing an ended thread.
        return [
            t for t in threading.enumerate() if t.name.startswith("ctxlab-check-") and t.is_alive()
        ]

    deadline = time.monotonic() + 5
    while checks_left() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not checks_left()


def test_a_slow_check_after_passing_ones_is_the_one_reported() -> None:
    previous = g.set_time_limit(0.5)
    try:

        def group_interactions(entries: list[SessionEntry]) -> object:
            if any(e.id == "r0" for e in entries):  # only the leading-message check hangs
                for _ in range(300):  # short sleeps: the stop request lands between them
                    time.sleep(0.1)
            return group_11_2(entries)

        report = check_implementation("11.2", group_interactions=group_interactions)
    finally:
        g.set_time_limit(previous)
    keys = [r.key for r in report.results]
    hung = keys.index("message_before_first_user")
    assert all(r.passed for r in report.results[:hung])
    assert "did not return within 0.5 s" in report.results[hung].detail_en
    assert all(r.detail_en.startswith("not run") for r in report.results[hung + 1 :])


def test_usage_errors_name_the_option() -> None:
    with pytest.raises(g.GradingUsageError, match=r"11\.6") as caught:
        check_implementation("11.6", build_context=build_11_5)
    assert caught.value.option == "lab"
    with pytest.raises(CtxlabError, match="needs your function") as missing:
        check_implementation("11.3")
    assert missing.value.option == "build_context"  # type: ignore[attr-defined]
    with pytest.raises(CtxlabError, match="group_interactions=") as extra:
        check_implementation("11.3", build_context=build_11_5, group_interactions=group_11_2)
    assert extra.value.option == "group_interactions"  # type: ignore[attr-defined]
    with pytest.raises(CtxlabError, match="must be a function, got int"):
        check_implementation("11.2", group_interactions=3)  # type: ignore[arg-type]
    with pytest.raises(CtxlabError, match="seconds"):
        g.set_time_limit(0)
    with pytest.raises(CtxlabError, match="seconds"):
        g.set_time_limit(True)


# ----------------------------------------------------------------------------------------
# Rendering: language, HTML, determinism


def _raising_with_an_address(entries: object) -> object:
    raise RuntimeError(f"<b>bad</b> {object()!r}")


def test_report_text_and_html_are_deterministic_escaped_and_bilingual() -> None:
    first = check_implementation("11.2", group_interactions=_raising_with_an_address)
    second = check_implementation("11.2", group_interactions=_raising_with_an_address)
    assert str(first) == str(second) and first._repr_html_() == second._repr_html_()
    text, page = str(first), first._repr_html_()
    assert " at 0x" not in text and " at 0x" not in page
    assert "&lt;b&gt;bad&lt;/b&gt;" in page and "<b>bad</b>" not in page
    chapter = len(first.chapter_results)
    assert text.splitlines()[0] == (
        f"Lab 11.2 · group_interactions (the chapter's checks): 0/{chapter} checks pass ✘"
    )
    assert f"ctxlab's extras (optional): 0/{len(first.extra_results)} pass" in text
    assert "<table" in page and page.count("<tr>") == 1 + len(first.results)
    assert page.count('<tr class="ctxlab-lab-report-extras">') == 1
    assert repr(first) == text
    printed: list[str] = []

    class Printer:
        def text(self, value: str) -> None:
            printed.append(value)

    first._repr_pretty_(Printer(), False)
    assert printed == [text]

    assert get_language() == "en"
    set_language("zh")
    try:
        zh = str(first)
        assert zh.splitlines()[0] == (
            f"实验 11.2 · group_interactions（本章的检查）：通过 0/{chapter} 项检查 ✘"
        )
        assert "groupInteractions() 跳过 sys" in zh
        assert "行为" in first._repr_html_()
        assert first.results[0].behaviour == first.results[0].behaviour_zh
    finally:
        set_language("en")
    with pytest.raises(CtxlabError, match="language"):
        set_language("fr")  # type: ignore[arg-type]
    assert get_language() == "en"


def test_a_passing_report_says_so() -> None:
    report = check_implementation("11.4", **g.reference_functions("11.4"))
    chapter, extras = len(report.chapter_results), len(report.extra_results)
    lines = str(report).splitlines()
    assert lines[0] == (
        f"Lab 11.4 · create_compaction_entry (the chapter's checks): {chapter}/{chapter}"
        " checks pass ✔"
    )
    assert f"ctxlab's extras (optional): {extras}/{extras} pass" in lines
    assert all(r.detail == "" and r.mark == "✔" for r in report.results)
    assert html.escape(report.results[0].behaviour) in report._repr_html_()


def test_behaviours_have_both_languages_and_unique_keys() -> None:
    for lab in g.LABS:
        keys = g.behaviour_keys(lab)
        assert len(set(keys)) == len(keys)
        report = check_implementation(lab, **g.reference_functions(lab))
        for result in report.results:
            assert result.behaviour_en.isascii() or "→" in result.behaviour_en
            assert any("\u4e00" <= ch <= "\u9fff" for ch in result.behaviour_zh), result.key


def test_the_chapters_chinese_words_are_used() -> None:
    texts = {
        lab: " ".join(
            r.behaviour_zh for r in check_implementation(lab, **g.reference_functions(lab)).results
        )
        for lab in g.LABS
    }
    assert "parser 返回新对象" in texts["11.1"]
    assert "toolName 与终态 assistant 不参与配对" in texts["11.2"]
    assert "single_group_overflow" in texts["11.3"]
    assert "u2 合法；a2、calls、r-test 都位于组内，不能成为切点" in texts["11.4"]
    assert "恢复只读取它" in texts["11.5"]


# ----------------------------------------------------------------------------------------
# From a terminal: pytest -m lab11_N --ctxlab-impl=PATH.py

ROOT = Path(__file__).resolve().parent.parent

WRONG_GROUPING = '''
from ctxlab import InteractionGroup

def group_interactions(entries):
    """Cuts at every user AND assistant message (wrong: a group is a whole interaction)."""
    groups, current = [], None
    for entry in entries:
        if entry.message.role == "system":
            continue
        if entry.message.role in ("user", "assistant") or current is None:
            if current:
                groups.append(InteractionGroup(tuple(current)))
            current = [entry]
        else:
            current.append(entry)
    if current:
        groups.append(InteractionGroup(tuple(current)))
    return groups
'''


def _pytest(*args: str) -> subprocess.CompletedProcess[str]:
    command = pytest_command(str(ROOT / "tests" / "test_lab_checks_chapter.py"), *args)
    env = pytest_env()
    return subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, encoding="utf-8", env=env, check=False
    )


def test_pytest_runs_one_labs_checks_against_a_students_file(tmp_path: Path) -> None:
    mine = tmp_path / "my_lab.py"
    mine.write_text(WRONG_GROUPING, encoding="utf-8")
    run = _pytest("-m", "lab11_2", f"--ctxlab-impl={mine}", "-rf")
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert "FAILED tests/test_lab_checks_chapter.py::test_chapter_behaviour[11.2-three_groups]" in (
        out
    )
    assert "expected [u1,a1] [u2,a2] [u3,calls,r-test,r-read,a3], got [u1] [a1]" in out
    ran = sum(int(n) for n in re.findall(r"(\d+) (?:failed|passed)", out.splitlines()[-1]))
    assert ran == len(g.behaviour_keys("11.2")), out  # exactly Lab 11.2's checks ran


def test_pytest_without_the_option_checks_the_reference() -> None:
    run = _pytest("-m", "lab11_4")
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"{len(g.behaviour_keys('11.4'))} passed" in run.stdout


def test_pytest_names_a_missing_function_or_file_as_a_usage_error(tmp_path: Path) -> None:
    mine = tmp_path / "my_lab.py"
    mine.write_text(WRONG_GROUPING, encoding="utf-8")
    run = _pytest("-m", "lab11_3", f"--ctxlab-impl={mine}")
    assert run.returncode == 4, run.stdout + run.stderr
    assert "defines no function build_context(), which Lab 11.3 checks" in run.stderr
    run = _pytest("-m", "lab11_3", f"--ctxlab-impl={tmp_path / 'nope.py'}")
    assert run.returncode == 4 and "no such file" in run.stderr
