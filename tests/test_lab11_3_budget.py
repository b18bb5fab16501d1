"""Lab 11.3: ``build_context`` under a token budget (spec section 6).

The worked 31-token example lives in ``test_worked_examples.py``; here are the rules
around it: option and estimator validation, pricing each message once, reasons, and
results that share no mutable state.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import pytest

from ctxlab import (
    AgentMessage,
    ContextOptionError,
    ContextResult,
    CtxlabError,
    MessageSessionEntry,
    MetadataSessionEntry,
    SessionEntry,
    SystemMessage,
    build_context,
    text_of,
)
from ctxlab import fixtures as fx
from ctxlab.errors import EstimatorError

pytestmark = pytest.mark.reference

OPTIONS = {"max_tokens": 31, "reserved_output": 4, "safety_margin": 2}


def _build(path: Sequence[SessionEntry], **changes: Any) -> ContextResult:
    options: dict[str, Any] = {**OPTIONS, "estimate_tokens": fx.opening_estimator, **changes}
    return build_context(path, **options)


class CountingEstimator:
    """Delegates to the chapter's estimator and remembers what it was asked to price."""

    def __init__(self) -> None:
        self.seen: list[AgentMessage] = []

    def __call__(self, message: AgentMessage) -> int:
        self.seen.append(message)
        return fx.opening_estimator(message)


@pytest.mark.parametrize("option", ["max_tokens", "reserved_output", "safety_margin"])
@pytest.mark.parametrize(
    "bad", [math.nan, math.inf, -math.inf, -1, -0.5, True, False, "31", None, [31]]
)
def test_bad_budget_options_are_errors_naming_the_option(option: str, bad: object) -> None:
    with pytest.raises(ContextOptionError) as caught:
        _build(fx.opening_path(), **{option: bad})
    assert caught.value.option == option
    assert option in str(caught.value)
    assert isinstance(caught.value, CtxlabError)


def test_huge_and_float_options_are_accepted() -> None:
    result = _build(fx.opening_path(), max_tokens=10**30, reserved_output=0.5, safety_margin=0.0)
    assert result.reason == "within_budget"
    assert result.tokens.total == 3 + 29 + 0.5


def test_estimate_tokens_must_be_callable() -> None:
    with pytest.raises(ContextOptionError, match="estimate_tokens") as caught:
        _build(fx.opening_path(), estimate_tokens=3)
    assert caught.value.option == "estimate_tokens"


def test_summary_language_must_be_en_or_zh() -> None:
    with pytest.raises(ContextOptionError, match="summary_language") as caught:
        _build(fx.resumed_path(), summary_language="fr")
    assert caught.value.option == "summary_language"


def test_active_path_items_must_be_entries() -> None:
    path: list[Any] = [*fx.opening_path(), fx.opening_path()[0].to_json()]
    with pytest.raises(ContextOptionError, match=r"active_path\[10\]"):
        _build(path)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -1, True, "3", None])
def test_a_bad_estimate_names_the_priced_message(bad: object) -> None:
    def estimate(message: AgentMessage) -> Any:
        if text_of(message).startswith("Read context.ts and run"):
            return bad
        return fx.opening_estimator(message)

    with pytest.raises(EstimatorError) as caught:
        _build(fx.opening_path(), max_tokens=1000, estimate_tokens=estimate)
    assert caught.value.entry_id == "u3"
    assert "entry u3" in str(caught.value)


def test_a_failing_estimator_is_chained_and_names_the_message() -> None:
    boom = RuntimeError("tokenizer offline")

    def estimate(message: AgentMessage) -> int:
        if isinstance(message, SystemMessage):
            raise boom
        return 1

    with pytest.raises(EstimatorError, match="the replayed system message") as caught:
        _build(fx.opening_path(), estimate_tokens=estimate)
    assert caught.value.__cause__ is boom
    assert "tokenizer offline" in str(caught.value)


def test_a_failing_estimator_on_the_summary_names_the_compaction() -> None:
    def estimate(message: AgentMessage) -> int:
        if text_of(message).startswith("【会话压缩摘要】"):
            raise KeyError("no price")
        return 1

    with pytest.raises(EstimatorError, match="compact-1") as caught:
        _build(fx.resumed_path(), estimate_tokens=estimate)
    assert isinstance(caught.value.__cause__, KeyError)
    assert caught.value.entry_id == "compact-1"


def test_each_message_is_priced_at_most_once() -> None:
    for max_tokens in (0, 19, 31, 1000):
        for path in (fx.opening_path(), fx.resumed_path(), fx.system_patch_path()):
            counting = CountingEstimator()
            _build(path, max_tokens=max_tokens, estimate_tokens=counting)
            ids = [id(message) for message in counting.seen]
            assert len(ids) == len(set(ids))
            assert len(counting.seen) <= len(path) + 2


def test_older_groups_are_not_priced_once_the_choice_stops() -> None:
    counting = CountingEstimator()
    _build(fx.opening_path(), estimate_tokens=counting)
    priced = [text_of(m) for m in counting.seen]
    by_id = {e.id: e for e in fx.opening_path() if isinstance(e, MessageSessionEntry)}
    # system once, group 3, group 2, then group 1 (which no longer fits) -- never again
    assert len(priced) == 1 + 5 + 2 + 2
    assert priced.count(text_of(by_id["u1"].message)) == 1


def test_the_replayed_system_message_is_priced_not_each_system_entry() -> None:
    counting = CountingEstimator()
    _build(fx.system_patch_path(), max_tokens=100, estimate_tokens=counting)
    systems = [m for m in counting.seen if isinstance(m, SystemMessage)]
    assert len(systems) == 1
    assert systems[0].content == "BASE\n\nPrefer small diffs."


def test_reason_within_budget_when_every_group_fits_or_there_are_none() -> None:
    assert _build(fx.opening_path(), max_tokens=38).reason == "within_budget"
    only_system = fx.opening_path()[:1]
    result = _build(only_system)
    assert result.reason == "within_budget"
    assert result.kept_entry_ids == ()
    assert result.messages == (SystemMessage("sys", 1),)
    assert result.tokens.to_json() == {
        "maxTokens": 31,
        "system": 3,
        "messages": 0,
        "reservedOutput": 4,
        "safetyMargin": 2,
        "availableForMessages": 22,
        "total": 9,
    }
    empty = build_context(
        [], max_tokens=0, reserved_output=0, safety_margin=0, estimate_tokens=fx.opening_estimator
    )
    assert (empty.messages, empty.kept_entry_ids, empty.reason) == ((), (), "within_budget")
    assert empty.tokens.total == 0


def test_metadata_entries_are_skipped() -> None:
    path: list[SessionEntry] = fx.opening_path()
    path.insert(4, MetadataSessionEntry("label", "u2", 4.5, "title", "context work"))
    result = _build(path)
    assert "label" not in result.kept_entry_ids
    assert result.kept_entry_ids == ("u2", "a2", "u3", "calls", "r-test", "r-read", "a3")


def test_a_free_group_never_overflows() -> None:
    result = _build(fx.opening_path(), max_tokens=0, estimate_tokens=lambda message: 0)
    assert result.reason == "within_budget"
    assert len(result.kept_entry_ids) == 9
    assert result.tokens.total == 6  # reserve and margin are still counted


def test_result_is_frozen_and_to_json_is_a_fresh_copy() -> None:
    result = _build(fx.opening_path())
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.reason = "trimmed"  # type: ignore[misc]
    assert isinstance(result.messages, tuple)
    assert isinstance(result.kept_entry_ids, tuple)
    wire = result.to_json()
    wire["tokens"]["total"] = -1
    wire["messages"].clear()
    assert result.to_json()["tokens"]["total"] == 31
    assert len(result.to_json()["messages"]) == 8


def test_same_inputs_give_equal_results_and_the_path_is_untouched() -> None:
    path = fx.opening_path()
    before = [e.to_json() for e in path]
    results = [_build(path, max_tokens=m) for m in (31, 31)]
    assert results[0] == results[1]
    assert results[0].to_json() == results[1].to_json()
    assert [e.to_json() for e in path] == before
    assert _build(tuple(path)) == results[0]


def test_to_json_has_the_chapters_camel_case_shape() -> None:
    wire = _build(fx.opening_path()).to_json()
    assert list(wire) == ["messages", "keptEntryIds", "reason", "tokens"]
    assert list(wire["tokens"]) == [
        "maxTokens",
        "system",
        "messages",
        "reservedOutput",
        "safetyMargin",
        "availableForMessages",
        "total",
    ]
    assert wire["messages"][0] == {"role": "system", "content": "sys", "timestamp": 1}
    assert wire["messages"][5]["toolCallId"] == "test-1"


def test_interaction_errors_stop_the_build() -> None:
    with pytest.raises(CtxlabError, match="read-1"):
        _build(fx.missing_result_path(), max_tokens=1000)
