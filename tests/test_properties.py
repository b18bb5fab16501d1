"""Property tests over generated sessions (:mod:`tests.strategies`).

The sessions mix parallel tool calls with out-of-order results, system patches anywhere,
metadata and several compactions; the estimators are deterministic and sometimes price a
role at 0. Example counts are kept small: the CI machine is shared.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import strategies as gen
from ctxlab import (
    CompactionSessionEntry,
    CtxlabError,
    MessageSessionEntry,
    SessionEntry,
    build_context,
    group_interactions,
    parse_session_entry,
)

pytestmark = pytest.mark.fuzz

FAST = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _candidate_groups(path: Sequence[SessionEntry]) -> list[tuple[str, ...]]:
    """The groups the budget chooses from, computed independently of build_context."""
    start = 0
    for index in range(len(path) - 1, -1, -1):
        entry = path[index]
        if isinstance(entry, CompactionSessionEntry):
            start = next(i for i, e in enumerate(path) if e.id == entry.first_kept_entry_id)
            break
    messages = [e for e in path[start:] if isinstance(e, MessageSessionEntry)]
    return [group.entry_ids for group in group_interactions(messages)]


@FAST
@given(gen.sessions(), gen.estimators(), gen.budgets())
def test_kept_groups_are_whole_and_a_contiguous_newest_suffix(
    path: list[SessionEntry], estimate: Any, budget: dict[str, float]
) -> None:
    result = build_context(path, estimate_tokens=estimate, **budget)
    groups = _candidate_groups(path)
    kept = result.kept_entry_ids
    suffixes = [tuple(i for g in groups[k:] for i in g) for k in range(len(groups) + 1)]
    assert kept in suffixes
    n_kept = suffixes.index(kept)
    if result.reason == "within_budget":
        assert n_kept == 0
    elif result.reason == "trimmed":
        assert 0 < n_kept < len(groups)
    else:
        assert result.reason == "single_group_overflow"
        assert n_kept == len(groups) - 1


@FAST
@given(gen.sessions(), gen.estimators(), gen.budgets())
def test_total_stays_within_max_tokens_unless_single_group_overflow(
    path: list[SessionEntry], estimate: Any, budget: dict[str, float]
) -> None:
    result = build_context(path, estimate_tokens=estimate, **budget)
    tokens = result.tokens
    assert tokens.total == pytest.approx(
        tokens.system + tokens.messages + tokens.reserved_output + tokens.safety_margin
    )
    fixed_window = budget["max_tokens"] - budget["reserved_output"] - budget["safety_margin"]
    assert tokens.available_for_messages == pytest.approx(max(0, fixed_window - tokens.system))
    by_id = {e.id: e for e in path if isinstance(e, MessageSessionEntry)}
    kept_cost = sum(estimate(by_id[i].message) for i in result.kept_entry_ids)
    summary_cost = tokens.messages - kept_cost  # 0 without a compaction
    assert summary_cost >= 0
    if not any(isinstance(e, CompactionSessionEntry) for e in path):
        assert summary_cost == 0
    fixed = tokens.system + tokens.reserved_output + tokens.safety_margin + summary_cost
    # Fixed costs alone may exceed a tiny window (nothing can be dropped from them); with
    # them inside the window, only the newest group on its own may push total past it.
    if result.reason != "single_group_overflow" and fixed <= budget["max_tokens"]:
        assert tokens.total <= budget["max_tokens"]


@FAST
@given(gen.sessions(), gen.estimators(), gen.budgets(), st.integers(1, 200))
def test_raising_max_tokens_never_drops_a_kept_group(
    path: list[SessionEntry], estimate: Any, budget: dict[str, float], extra: int
) -> None:
    smaller = build_context(path, estimate_tokens=estimate, **budget)
    larger = build_context(
        path, estimate_tokens=estimate, **{**budget, "max_tokens": budget["max_tokens"] + extra}
    )
    cut = len(larger.kept_entry_ids) - len(smaller.kept_entry_ids)
    assert cut >= 0
    assert larger.kept_entry_ids[cut:] == smaller.kept_entry_ids


@settings(max_examples=30, deadline=None)
@given(gen.sessions())
def test_every_entry_round_trips_through_its_wire_form(path: list[SessionEntry]) -> None:
    for entry in path:
        wire = entry.to_json()
        assert parse_session_entry(wire) == entry
        # ... also through real JSON text, as a JSONL store would write it
        text = json.dumps(wire, ensure_ascii=False, allow_nan=False)
        assert parse_session_entry(json.loads(text)) == entry


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gen.json_values(20) | gen.mutated_wires())
def test_any_value_parses_or_raises_a_ctxlab_error(value: Any) -> None:
    try:
        entry = parse_session_entry(value)
    except CtxlabError as exc:
        assert str(exc).startswith("session entry")
    else:
        assert parse_session_entry(entry.to_json()) == entry


@FAST
@given(gen.sessions(), gen.estimators(), gen.budgets(), st.sampled_from(["en", "zh"]))
def test_two_builds_are_equal_and_independent(
    path: list[SessionEntry], estimate: Any, budget: dict[str, float], language: str
) -> None:
    before = [e.to_json() for e in path]
    first = build_context(path, estimate_tokens=estimate, summary_language=language, **budget)
    wire = first.to_json()
    for message in wire["messages"]:
        message["timestamp"] = -1
        if isinstance(message.get("content"), list):
            message["content"].append({"type": "text", "text": "mutated"})
    wire["keptEntryIds"].append("mutated")
    second = build_context(path, estimate_tokens=estimate, summary_language=language, **budget)
    assert second == first
    assert (
        second.to_json()
        == build_context(
            path, estimate_tokens=estimate, summary_language=language, **budget
        ).to_json()
    )
    assert "mutated" not in json.dumps(second.to_json())
    assert [e.to_json() for e in path] == before
