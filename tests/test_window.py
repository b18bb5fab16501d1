"""``ContextWindow``: the incremental projection equals ``build_context`` on the same path.

* Equivalence: over random sessions (compactions, system patches, parallel tool calls,
  results out of order), the window is built after EVERY append and compared with
  ``build_context`` on the same prefix -- equal results, or the same error class and
  message (a prefix often ends inside an interaction still waiting for a tool result).
* Each message is priced once, ever, however many builds there are.
* Appends are checked: the entry (``parse_session_entry``) and its place on the path.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import (
    ContextOptionError,
    ContextResult,
    ContextWindow,
    CtxlabError,
    EntryParseError,
    EstimatorError,
    InteractionError,
    MessageSessionEntry,
    SessionEntry,
    SessionTreeError,
    TextContent,
    UserMessage,
    build_context,
    path_to,
)
from ctxlab import fixtures as fx
from ctxlab.compaction import SummaryLanguage
from ctxlab.estimators import chars_per_token
from strategies import budgets, estimators, sessions

pytestmark = pytest.mark.window


class Counting:
    """Wraps an estimator; counts how often each message (by identity) is priced."""

    def __init__(self, inner: Callable[[Any], float]) -> None:
        self.inner = inner
        self.calls: Counter[int] = Counter()
        self.keep: list[Any] = []  # keeps priced objects alive, so ids stay unique

    def __call__(self, value: Any) -> float:
        self.calls[id(value)] += 1
        self.keep.append(value)
        return self.inner(value)


def _outcome(
    build: Callable[..., ContextResult], *args: Any, **options: Any
) -> ContextResult | tuple[type[Exception], str]:
    try:
        return build(*args, **options)
    except CtxlabError as exc:
        return type(exc), str(exc)


def _relink(entries: Sequence[SessionEntry]) -> list[SessionEntry]:
    """The same messages with parentId chained in list order (for reordered fixtures)."""
    linked: list[SessionEntry] = []
    for entry in entries:
        assert isinstance(entry, MessageSessionEntry)
        parent = linked[-1].id if linked else None
        linked.append(MessageSessionEntry(entry.id, parent, entry.timestamp, entry.message))
    return linked


OPTIONS = {"reserved_output": 4, "safety_margin": 2}


# -- equivalence --------------------------------------------------------------------------------


@settings(max_examples=60)
@given(
    path=sessions(max_groups=8),
    estimate=estimators(),
    budget=budgets(),
    language=st.sampled_from(["en", "zh"]),
)
def test_window_equals_build_context_after_every_append(
    path: list[SessionEntry],
    estimate: Callable[[Any], int],
    budget: dict[str, float],
    language: SummaryLanguage,
) -> None:
    window = ContextWindow(estimate_tokens=estimate)
    assert _outcome(window.build, **budget) == _outcome(
        build_context, [], estimate_tokens=estimate, **budget
    )
    for end, entry in enumerate(path, start=1):
        window.append(entry)
        prefix = path[:end]
        incremental = _outcome(window.build, summary_language=language, **budget)
        batch = _outcome(
            build_context, prefix, estimate_tokens=estimate, summary_language=language, **budget
        )
        assert incremental == batch
    assert window.entries() == path
    assert len(window) == len(path)


@settings(max_examples=30)
@given(path=sessions(max_groups=8), estimate=estimators(), data=st.data())
def test_window_prices_each_message_once_ever(
    path: list[SessionEntry], estimate: Callable[[Any], int], data: st.DataObject
) -> None:
    counting = Counting(estimate)
    window = ContextWindow(estimate_tokens=counting)
    for entry in path:
        window.append(entry)
        for _ in range(data.draw(st.integers(0, 2))):
            budget = data.draw(budgets())
            language = data.draw(st.sampled_from(["en", "zh"]))
            # InteractionError: an interaction still waiting for its tool result
            with contextlib.suppress(InteractionError):
                window.build(summary_language=language, **budget)
    assert all(count == 1 for count in counting.calls.values()), counting.calls


def test_window_prices_only_what_a_build_needs_and_only_once() -> None:
    counting = Counting(fx.opening_estimator)
    window = ContextWindow.from_entries(fx.opening_path(), estimate_tokens=counting)
    assert counting.calls == Counter()  # appending prices nothing
    first = window.build(max_tokens=19, **OPTIONS)
    assert first.reason == "single_group_overflow"
    assert sum(counting.calls.values()) == 1 + 5  # the replayed system and u3's group
    for _ in range(3):
        assert window.build(max_tokens=19, **OPTIONS) == first
    assert sum(counting.calls.values()) == 6  # cached: nothing priced again
    window.build(max_tokens=31, **OPTIONS)  # now [u2, a2] and [u1, a1] are reached
    assert sum(counting.calls.values()) == 6 + 4
    assert max(counting.calls.values()) == 1


def test_a_new_turn_prices_only_the_new_message() -> None:
    counting = Counting(chars_per_token(4))
    window = ContextWindow(estimate_tokens=counting)
    path = fx.opening_path()
    for entry in path:
        window.append(entry)
    window.build(max_tokens=10**6, reserved_output=0, safety_margin=0)
    before = sum(counting.calls.values())
    for i in range(200):
        message = UserMessage((TextContent(f"question {i}"),), 100 + i)
        window.append(MessageSessionEntry(f"q{i}", window.entries()[-1].id, 100 + i, message))
        window.build(max_tokens=10**6, reserved_output=0, safety_margin=0)
        assert sum(counting.calls.values()) == before + i + 1


# -- the chapter's worked examples through the window -------------------------------------------


@pytest.mark.parametrize(
    "make_path",
    [fx.opening_path, fx.resumed_path, fx.recompacted_path, fx.system_patch_path],
    ids=["opening", "resumed", "recompacted", "system-patch"],
)
@pytest.mark.parametrize("max_tokens", [0, 10, 19, 31, 40, 100])
def test_worked_examples_through_the_window(
    make_path: Callable[[], list[SessionEntry]], max_tokens: int
) -> None:
    path = make_path()
    window = ContextWindow.from_entries(path, estimate_tokens=fx.opening_estimator)
    for language in ("en", "zh"):
        assert window.build(
            max_tokens=max_tokens, summary_language=language, **OPTIONS
        ) == build_context(
            path,
            max_tokens=max_tokens,
            estimate_tokens=fx.opening_estimator,
            summary_language=language,
            **OPTIONS,
        )


def test_the_summary_language_defaults_to_zh() -> None:
    window = ContextWindow.from_entries(fx.resumed_path(), estimate_tokens=fx.opening_estimator)
    result = window.build(max_tokens=100, **OPTIONS)
    summary = result.messages[1]
    assert isinstance(summary, UserMessage)
    assert summary.content[0].text.startswith("【会话压缩摘要】\n目标：")
    assert result == window.build(max_tokens=100, summary_language="zh", **OPTIONS)
    english = window.build(max_tokens=100, summary_language="en", **OPTIONS)
    assert english.messages[1] != summary
    assert isinstance(english.messages[1], UserMessage)
    assert english.messages[1].content[0].text.startswith("[Conversation summary]")


def test_the_chapters_31_token_ledger() -> None:
    window = ContextWindow.from_entries(fx.opening_path(), estimate_tokens=fx.opening_estimator)
    result = window.build(max_tokens=31, **OPTIONS)
    assert result.kept_entry_ids == ("u2", "a2", "u3", "calls", "r-test", "r-read", "a3")
    assert result.tokens.to_json() == {
        "maxTokens": 31,
        "system": 3,
        "messages": 22,
        "reservedOutput": 4,
        "safetyMargin": 2,
        "availableForMessages": 22,
        "total": 31,
    }


# -- invalid paths: the same error as build_context -------------------------------------------


@pytest.mark.parametrize(
    "make_path",
    [
        fx.unknown_call_path,
        fx.missing_result_path,
        fx.duplicate_result_path,
        fx.duplicate_call_path,
        fx.results_before_call_path,  # valid: pairing is by id only
    ],
)
def test_broken_interactions_raise_what_build_context_raises(
    make_path: Callable[[], list[SessionEntry]],
) -> None:
    path = _relink(make_path())
    window = ContextWindow.from_entries(path, estimate_tokens=fx.opening_estimator)
    for max_tokens in (19, 31, 100):
        assert _outcome(window.build, max_tokens=max_tokens, **OPTIONS) == _outcome(
            build_context,
            path,
            max_tokens=max_tokens,
            estimate_tokens=fx.opening_estimator,
            **OPTIONS,
        )


def test_a_message_before_the_first_user_message_raises_like_build_context() -> None:
    path = _relink([e for e in fx.opening_path() if e.id not in ("u1",)])
    window = ContextWindow.from_entries(path, estimate_tokens=fx.opening_estimator)
    incremental = _outcome(lambda: window.build(max_tokens=31, **OPTIONS))
    assert incremental == _outcome(
        lambda: build_context(path, max_tokens=31, estimate_tokens=fx.opening_estimator, **OPTIONS)
    )
    assert incremental[0] is InteractionError  # type: ignore[index]


@pytest.mark.parametrize("first_kept", ["a2", "calls", "sys", "nowhere", "patch-1"])
def test_an_unusable_first_kept_entry_raises_like_build_context(first_kept: str) -> None:
    path = fx.system_patch_path()
    compaction = path[6].to_json()
    assert compaction["type"] == "compaction"
    compaction["firstKeptEntryId"] = first_kept
    window = ContextWindow.from_entries(
        [*path[:6], compaction, *path[7:]], estimate_tokens=fx.opening_estimator
    )
    broken = window.entries()
    got = _outcome(lambda: window.build(max_tokens=31, **OPTIONS))
    assert got == _outcome(
        lambda: build_context(
            broken, max_tokens=31, estimate_tokens=fx.opening_estimator, **OPTIONS
        )
    )
    assert isinstance(got, tuple)
    assert got[0].__name__ == "CompactionError"
    assert first_kept in got[1]


def test_an_estimator_error_is_the_same_and_nothing_failed_is_cached() -> None:
    def fussy(value: Any) -> int:
        if isinstance(value, UserMessage) and "delete" in value.content[0].text:
            raise RuntimeError("cannot price this one")
        return fx.opening_estimator(value)

    path = fx.opening_path()
    window = ContextWindow.from_entries(path, estimate_tokens=fussy)
    assert window.build(max_tokens=19, **OPTIONS).reason == "single_group_overflow"
    for _ in range(2):  # u2 is reached at 31 tokens: it fails, each time
        got = _outcome(lambda: window.build(max_tokens=31, **OPTIONS))
        assert got == _outcome(
            lambda: build_context(path, max_tokens=31, estimate_tokens=fussy, **OPTIONS)
        )
        assert got[0] is EstimatorError  # type: ignore[index]
        assert "entry u2" in got[1]  # type: ignore[index]


@pytest.mark.parametrize(
    ("option", "value"),
    [("max_tokens", -1), ("reserved_output", float("nan")), ("safety_margin", True)],
)
def test_bad_options_are_the_same_error(option: str, value: object) -> None:
    window = ContextWindow.from_entries(fx.opening_path(), estimate_tokens=fx.opening_estimator)
    options: dict[str, Any] = {"max_tokens": 31, **OPTIONS, option: value}
    with pytest.raises(ContextOptionError) as info:
        window.build(**options)
    assert info.value.option == option
    with pytest.raises(ContextOptionError):
        window.build(max_tokens=31, summary_language="fr", **OPTIONS)  # type: ignore[arg-type]


def test_the_estimator_must_be_callable() -> None:
    with pytest.raises(ContextOptionError) as info:
        ContextWindow(estimate_tokens=42)  # type: ignore[arg-type]
    assert info.value.option == "estimate_tokens"


# -- appending ------------------------------------------------------------------------------------


def test_append_parses_the_entry_and_returns_its_snapshot() -> None:
    window = ContextWindow(estimate_tokens=fx.opening_estimator)
    wire = fx.opening_path()[0].to_json()
    stored = window.append(wire)
    wire["message"]["content"] = "changed later"
    assert stored == fx.opening_path()[0]
    with pytest.raises(EntryParseError, match=r"message\.role"):
        window.append({**fx.opening_path()[1].to_json(), "message": {"content": []}})
    assert len(window) == 1


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ([("u1", "not-there")], "first entry of a path must be a root"),
        ([("u1", None), ("a1", None)], "is not the current leaf"),
        ([("u1", None), ("a1", "zzz")], "is not the current leaf"),
        ([("u1", None), ("u1", "u1")], "already on the path"),
    ],
)
def test_append_checks_the_path(entries: list[tuple[str, str | None]], message: str) -> None:
    window = ContextWindow(estimate_tokens=fx.opening_estimator)
    *good, (bad_id, bad_parent) = entries
    for entry_id, parent in good:
        window.append(MessageSessionEntry(entry_id, parent, 1, UserMessage((), 1)))
    with pytest.raises(SessionTreeError, match=message) as info:
        window.append(MessageSessionEntry(bad_id, bad_parent, 1, UserMessage((), 1)))
    assert info.value.entry_id == bad_id
    assert len(window) == len(good)  # a refused entry leaves the window unchanged


def test_a_window_over_a_stores_active_path(tmp_path: Any) -> None:
    from ctxlab import JsonlSessionStore

    store = JsonlSessionStore.open(tmp_path / "s.jsonl", durable=False)
    for entry in fx.resumed_path():
        store.append(entry)
    path = path_to(store.entries(), "a4")
    window = ContextWindow.from_entries(path, estimate_tokens=fx.opening_estimator)
    assert window.build(max_tokens=31, **OPTIONS) == build_context(
        path, max_tokens=31, estimate_tokens=fx.opening_estimator, **OPTIONS
    )
