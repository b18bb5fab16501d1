"""The 15 behaviours chapter 11 pins ("15 项测试固定到哪里"), each with the tests pinning it.

1. Strict compaction schema, plus copy isolation:
   test_b01_compaction_schema_is_exactly_seven_fields,
   test_b01_parsed_compaction_shares_nothing_with_its_input
2. Old aliases, missing fields and bad numbers are rejected:
   test_b02_corrupted_compactions_are_rejected_naming_the_field,
   test_b02_missing_changed_files_is_named
3. A compaction is written to both stores and reopened:
   test_b03_compaction_round_trips_through_both_stores
4. User-boundary grouping, with independent copies:
   test_b04_groups_start_at_user_messages_and_skip_system,
   test_b04_grouping_returns_independent_copies
5. Out-of-order results are paired by call id:
   test_b05_results_in_any_order_pair_by_call_id
6. Orphan, duplicate and missing tool facts are rejected:
   test_b06_broken_tool_facts_are_rejected_naming_ids
7. Fixed costs are deducted:
   test_b07_fixed_costs_are_deducted_before_groups,
   test_b07_fixed_costs_above_the_window_leave_zero_not_negative
8. The newest group overflows on its own:
   test_b08_newest_group_too_big_is_returned_whole
9. Whole-group trimming, with isolated results:
   test_b09_trimming_keeps_whole_groups_newest_first,
   test_b09_results_are_isolated_copies
10. A pure create that derives the parent:
    test_b10_create_is_pure_and_derives_the_parent
11. First-kept validity:
    test_b11_group_heads_are_valid_first_kept_entries,
    test_b11_first_kept_must_start_a_group
12. Resume from the latest summary:
    test_b12_resume_puts_the_summary_after_system_and_prices_it_first
13. Several compactions: only the newest is read, deterministically:
    test_b13_only_the_newest_compaction_is_read_deterministically
14. Re-compaction of a resumed path:
    test_b14_a_resumed_path_can_be_compacted_again
15. System replay across the compaction boundary:
    test_b15_system_is_replayed_from_the_whole_path,
    test_b15_a_system_patch_cannot_be_the_first_kept_entry
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from ctxlab import (
    CompactionError,
    CompactionSessionEntry,
    ContextResult,
    CtxlabError,
    EntryParseError,
    InMemorySessionStore,
    InteractionError,
    JsonlSessionStore,
    MessageSessionEntry,
    MetadataSessionEntry,
    SessionEntry,
    SystemMessage,
    UserMessage,
    build_context,
    create_compaction_entry,
    group_interactions,
    parse_session_entry,
    path_to,
    render_summary,
)
from ctxlab import fixtures as fx

pytestmark = pytest.mark.reference

GROUP_1 = ("u1", "a1")
GROUP_2 = ("u2", "a2")
GROUP_3 = ("u3", "calls", "r-test", "r-read", "a3")


def _build(path: Sequence[SessionEntry], max_tokens: float, **overrides: float) -> ContextResult:
    return build_context(
        path,
        max_tokens=max_tokens,
        reserved_output=overrides.get("reserved_output", 4),
        safety_margin=overrides.get("safety_margin", 2),
        estimate_tokens=fx.opening_estimator,
    )


def _messages(path: Sequence[SessionEntry]) -> list[MessageSessionEntry]:
    return [entry for entry in path if isinstance(entry, MessageSessionEntry)]


# -- 1 ------------------------------------------------------------------------------------


def test_b01_compaction_schema_is_exactly_seven_fields() -> None:
    entry = parse_session_entry(fx.compact1().to_json())
    assert isinstance(entry, CompactionSessionEntry)
    assert entry.to_json()["summary"].keys() == {
        "goal",
        "constraints",
        "completed",
        "decisions",
        "changedFiles",
        "unresolved",
        "next",
    }
    for extra in ("files", "nextSteps", "invariants", "notes"):
        wire = fx.compact1().to_json()
        wire["summary"][extra] = []
        with pytest.raises(EntryParseError, match=rf"compact-1: summary\.{extra}"):
            parse_session_entry(wire)


def test_b01_parsed_compaction_shares_nothing_with_its_input() -> None:
    wire = fx.compact1().to_json()
    entry = parse_session_entry(wire)
    assert isinstance(entry, CompactionSessionEntry)
    wire["summary"]["changedFiles"].append("evil.ts")
    wire["summary"]["goal"] = "changed"
    wire["firstKeptEntryId"] = "u3"
    assert entry.summary.changed_files == ("context.ts",)
    assert entry.summary.goal == fx.compact1_summary().goal
    assert entry.first_kept_entry_id == "u2"
    with pytest.raises(dataclasses.FrozenInstanceError):
        entry.summary.goal = "x"  # type: ignore[misc]
    out = entry.to_json()
    out["summary"]["next"].clear()
    assert entry.to_json()["summary"]["next"] == ["Read context.ts and run the context tests."]
    again = parse_session_entry(entry)
    assert again == entry
    assert again is not entry


# -- 2 ------------------------------------------------------------------------------------

# What each corrupted variant must name, written out from the chapter's rules.
CORRUPTED_FIELDS = {
    "files instead of changedFiles": "summary.files",
    "nextSteps instead of next": "summary.nextSteps",
    "invariants beside constraints": "summary.invariants",
    "compactedEntryIds on the entry": "compactedEntryIds",
    "goal missing": "summary.goal",
    "blank goal": "summary.goal",
    "a decision that is not a string": "summary.decisions[0]",
    "blank firstKeptEntryId": "firstKeptEntryId",
    "parentId null": "parentId",
    "negative tokensBefore": "tokensBefore",
    "tokensBefore is NaN": "tokensBefore",
    "tokensBefore is true": "tokensBefore",
}


@pytest.mark.parametrize("name", sorted(CORRUPTED_FIELDS))
def test_b02_corrupted_compactions_are_rejected_naming_the_field(name: str) -> None:
    wire = fx.compaction_corruptions()[name]
    with pytest.raises(EntryParseError) as caught:
        parse_session_entry(wire)
    assert caught.value.entry_id == "compact-1"
    assert caught.value.field == CORRUPTED_FIELDS[name]
    assert f"session entry compact-1: {CORRUPTED_FIELDS[name]}" in str(caught.value)
    assert set(fx.compaction_corruptions()) == set(CORRUPTED_FIELDS)


def test_b02_missing_changed_files_is_named() -> None:
    wire = fx.compact1().to_json()
    del wire["summary"]["changedFiles"]
    with pytest.raises(EntryParseError) as caught:
        parse_session_entry(wire)
    assert str(caught.value) == "session entry compact-1: summary.changedFiles is missing"


# -- 3 ------------------------------------------------------------------------------------


def test_b03_compaction_round_trips_through_both_stores(tmp_path: Path) -> None:
    path = fx.resumed_path()
    memory = InMemorySessionStore()
    jsonl = JsonlSessionStore.open(tmp_path / "deep" / "session.jsonl")
    for entry in path:
        memory.append(entry)
        jsonl.append(entry)
    reopened = JsonlSessionStore.open(tmp_path / "deep" / "session.jsonl")
    for store in (memory, jsonl, reopened):
        entries = store.entries()
        assert entries == path
        compaction = next(e for e in entries if isinstance(e, CompactionSessionEntry))
        assert compaction == fx.compact1()
        active = path_to(entries, "a4")
        assert _build(active, 31) == _build(path, 31)
    assert reopened.read().warnings == ()


# -- 4 ------------------------------------------------------------------------------------


def test_b04_groups_start_at_user_messages_and_skip_system() -> None:
    path = fx.opening_path()
    patch = MessageSessionEntry("patch", "a1", 30, SystemMessage("between", 30))
    path.insert(3, patch)  # a system message between group 1 and group 2
    groups = group_interactions(_messages(path))
    assert [g.entry_ids for g in groups] == [GROUP_1, GROUP_2, GROUP_3]
    assert [g.head.id for g in groups] == ["u1", "u2", "u3"]


def test_b04_grouping_returns_independent_copies() -> None:
    entries = _messages(fx.opening_path())
    before = list(entries)
    first = group_interactions(entries)
    second = group_interactions(entries)
    assert first == second
    assert first is not second
    first.clear()
    assert [g.entry_ids for g in second] == [GROUP_1, GROUP_2, GROUP_3]
    assert entries == before
    assert all(isinstance(g.entries, tuple) for g in second)
    with pytest.raises(dataclasses.FrozenInstanceError):
        second[0].entries = ()  # type: ignore[misc]


# -- 5 ------------------------------------------------------------------------------------


def test_b05_results_in_any_order_pair_by_call_id() -> None:
    normal = group_interactions(_messages(fx.opening_path()))[-1]
    assert normal.entry_ids == GROUP_3  # r-test before r-read: path order kept
    assert normal.tool_pairs == (("read-1", "r-read"), ("test-1", "r-test"))
    early = group_interactions(_messages(fx.results_before_call_path()))[-1]
    assert early.entry_ids == ("u3", "r-test", "calls", "r-read", "a3")
    assert early.tool_pairs == (("read-1", "r-read"), ("test-1", "r-test"))


# -- 6 ------------------------------------------------------------------------------------

BROKEN = {
    "orphan result": (fx.unknown_call_path, "r-test", "unknown-1"),
    "missing result": (fx.missing_result_path, "calls", "read-1"),
    "duplicate result": (fx.duplicate_result_path, "r-read", "test-1"),
    "duplicate call": (fx.duplicate_call_path, "calls", "read-1"),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_b06_broken_tool_facts_are_rejected_naming_ids(name: str) -> None:
    make, entry_id, call_id = BROKEN[name]
    with pytest.raises(InteractionError) as caught:
        group_interactions(_messages(make()))
    assert caught.value.entry_id == entry_id
    assert caught.value.call_id == call_id
    assert entry_id in str(caught.value)
    assert call_id in str(caught.value)
    with pytest.raises(InteractionError):
        _build(make(), 1000)


# -- 7 ------------------------------------------------------------------------------------


def test_b07_fixed_costs_are_deducted_before_groups() -> None:
    result = _build(fx.opening_path(), 31)
    tokens = result.tokens
    assert (tokens.system, tokens.reserved_output, tokens.safety_margin) == (3, 4, 2)
    assert tokens.available_for_messages == 31 - 3 - 4 - 2
    # One more token of margin leaves 21: group 2 (7) no longer fits beside group 3 (15).
    tighter = _build(fx.opening_path(), 31, safety_margin=3)
    assert tighter.tokens.available_for_messages == 21
    assert tighter.kept_entry_ids == GROUP_3
    assert tighter.reason == "trimmed"
    # Without a system message, tokens.system is 0 and nothing is replayed.
    no_system = [e for e in fx.opening_path() if e.id != "sys"]
    no_system[0] = MessageSessionEntry("u1", None, 2, _messages(no_system)[0].message)
    plain = _build(no_system, 31)
    assert plain.tokens.system == 0
    assert plain.tokens.available_for_messages == 25
    assert not any(isinstance(m, SystemMessage) for m in plain.messages)


def test_b07_fixed_costs_above_the_window_leave_zero_not_negative() -> None:
    result = _build(fx.opening_path(), 5)
    assert result.tokens.available_for_messages == 0
    assert result.reason == "single_group_overflow"
    assert result.kept_entry_ids == GROUP_3


# -- 8 ------------------------------------------------------------------------------------


def test_b08_newest_group_too_big_is_returned_whole() -> None:
    for max_tokens in (0, 9, 19, 23):
        result = _build(fx.opening_path(), max_tokens)
        assert result.kept_entry_ids == GROUP_3
        assert result.reason == "single_group_overflow"
        assert result.tokens.messages == 15
        assert result.tokens.total == 24
        assert result.tokens.total > max_tokens
    fits = _build(fx.opening_path(), 24)
    assert fits.kept_entry_ids == GROUP_3
    assert fits.reason == "trimmed"


# -- 9 ------------------------------------------------------------------------------------


def test_b09_trimming_keeps_whole_groups_newest_first() -> None:
    expected = {
        24: (GROUP_3, "trimmed"),
        30: (GROUP_3, "trimmed"),
        31: (GROUP_2 + GROUP_3, "trimmed"),
        37: (GROUP_2 + GROUP_3, "trimmed"),
        38: (GROUP_1 + GROUP_2 + GROUP_3, "within_budget"),
        500: (GROUP_1 + GROUP_2 + GROUP_3, "within_budget"),
    }
    for max_tokens, (kept, reason) in expected.items():
        result = _build(fx.opening_path(), max_tokens)
        assert (result.kept_entry_ids, result.reason) == (kept, reason), max_tokens
        assert result.tokens.total <= max_tokens


def test_b09_results_are_isolated_copies() -> None:
    path = fx.opening_path()
    snapshot = [e.to_json() for e in path]
    first = _build(path, 31)
    wire = first.to_json()
    wire["messages"][4]["content"][1]["arguments"]["path"] = "elsewhere.ts"
    wire["keptEntryIds"].append("u1")
    wire["tokens"]["total"] = 0
    second = _build(path, 31)
    assert second == first
    assert second.to_json()["messages"][4]["content"][1]["arguments"] == {"path": "src/context.ts"}
    assert [e.to_json() for e in path] == snapshot
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.tokens.total = 0  # type: ignore[misc]


# -- 10 -----------------------------------------------------------------------------------


def test_b10_create_is_pure_and_derives_the_parent() -> None:
    path = fx.opening_path()
    store = InMemorySessionStore(path)
    before = [e.to_json() for e in path]
    entry = create_compaction_entry(
        path,
        id="compact-1",
        timestamp=100,
        summary=fx.compact1_summary(),
        first_kept_entry_id="u2",
        tokens_before=29,
    )
    assert entry.parent_id == "a3"
    assert [e.to_json() for e in path] == before
    assert store.entries() == fx.opening_path()
    assert "parent_id" not in inspect.signature(create_compaction_entry).parameters
    # The parent is the last entry, whatever its type.
    tagged = [*path, MetadataSessionEntry("note", "a3", 50, "model", "course-model-1")]
    from_meta = create_compaction_entry(
        tagged,
        id="c",
        timestamp=101,
        summary=fx.compact1_summary().to_json(),
        first_kept_entry_id="u3",
        tokens_before=0,
    )
    assert from_meta.parent_id == "note"
    store.append(entry)
    assert store.entries()[-1] == entry


# -- 11 -----------------------------------------------------------------------------------


@pytest.mark.parametrize("first_kept", ["u1", "u2", "u3"])
def test_b11_group_heads_are_valid_first_kept_entries(first_kept: str) -> None:
    entry = create_compaction_entry(
        fx.opening_path(),
        id="c",
        timestamp=100,
        summary=fx.compact1_summary(),
        first_kept_entry_id=first_kept,
        tokens_before=1,
    )
    assert entry.first_kept_entry_id == first_kept


@pytest.mark.parametrize("first_kept", ["a2", "calls", "r-test", "r-read", "a3", "sys", "nope"])
def test_b11_first_kept_must_start_a_group(first_kept: str) -> None:
    with pytest.raises(CompactionError) as caught:
        create_compaction_entry(
            fx.opening_path(),
            id="compact-1",
            timestamp=100,
            summary=fx.compact1_summary(),
            first_kept_entry_id=first_kept,
            tokens_before=29,
        )
    assert first_kept in str(caught.value)
    assert "compact-1" in str(caught.value)


# -- 12 -----------------------------------------------------------------------------------


def test_b12_resume_puts_the_summary_after_system_and_prices_it_first() -> None:
    path = fx.resumed_path()
    result = _build(path, 100)
    assert result.messages[0] == SystemMessage("sys", 1)
    summary = result.messages[1]
    assert isinstance(summary, UserMessage)
    assert summary.content[0].text == render_summary(fx.compact1_summary())
    assert summary.timestamp == 100
    assert result.kept_entry_ids == (*GROUP_2, *GROUP_3, "u4", "a4")
    assert "compact-1" not in result.kept_entry_ids
    assert result.tokens.messages == 4 + 7 + 15 + 7  # summary first, then the groups
    # Summary 4 is deducted from 22 first: 18 left holds [u4,a4]=7 but not group 3 (15).
    small = _build(path, 31)
    assert small.tokens.available_for_messages == 22
    assert small.kept_entry_ids == ("u4", "a4")
    assert small.tokens.messages == 4 + 7
    assert small.messages[1] == summary


# -- 13 -----------------------------------------------------------------------------------


def test_b13_only_the_newest_compaction_is_read_deterministically() -> None:
    path = fx.recompacted_path()
    first = _build(path, 100)
    summaries = [m for m in first.messages if isinstance(m, UserMessage) and m.timestamp >= 100]
    texts = [m.content[0].text for m in summaries if m.content]
    assert render_summary(fx.compact2_summary()) in texts
    assert render_summary(fx.compact1_summary()) not in texts
    assert first.messages[1].timestamp == 200
    assert first.kept_entry_ids == (*GROUP_3, "u4", "a4")
    assert first.tokens.messages == 4 + 15 + 7
    second = _build(fx.recompacted_path(), 100)
    assert second == first
    assert second.to_json() == first.to_json()


# -- 14 -----------------------------------------------------------------------------------


def test_b14_a_resumed_path_can_be_compacted_again(tmp_path: Path) -> None:
    resumed = fx.resumed_path()
    compact2 = create_compaction_entry(
        resumed,
        id="compact-2",
        timestamp=200,
        summary=fx.compact2_summary(),
        first_kept_entry_id="u3",
        tokens_before=33,
    )
    assert compact2.parent_id == "a4"
    assert compact2 == fx.compact2()
    store = JsonlSessionStore.open(tmp_path / "s.jsonl")
    for entry in [*resumed, compact2]:
        store.append(entry)
    entries = JsonlSessionStore.open(tmp_path / "s.jsonl").entries()
    assert [e.id for e in entries if e.type == "compaction"] == ["compact-1", "compact-2"]
    result = _build(path_to(entries, "compact-2"), 100)
    assert result.kept_entry_ids == (*GROUP_3, "u4", "a4")
    # the u4 group head added after compact-1 is also a valid cut for a third compaction
    third = create_compaction_entry(
        entries,
        id="compact-3",
        timestamp=300,
        summary=fx.compact1_summary(),
        first_kept_entry_id="u4",
        tokens_before=11,
    )
    assert third.parent_id == "compact-2"
    assert _build([*entries, third], 100).kept_entry_ids == ("u4", "a4")


# -- 15 -----------------------------------------------------------------------------------


def test_b15_system_is_replayed_from_the_whole_path() -> None:
    path = fx.system_patch_path()
    result = _build(path, 100)
    system = result.messages[0]
    assert system == SystemMessage(
        "BASE\n\nPrefer small diffs.", 1, parse_sections({"rules": "RULE v2"})
    )
    assert [type(m).__name__ for m in result.messages].count("SystemMessage") == 1
    assert result.tokens.system == 4
    assert "sys" not in result.kept_entry_ids
    assert "patch-1" not in result.kept_entry_ids
    assert "patch-2" not in result.kept_entry_ids


def parse_sections(sections: dict[str, str | None]) -> Mapping[str, str | None] | None:
    """The sections value of a parsed system message (a frozen mapping)."""
    entry = parse_session_entry(
        {
            "type": "message",
            "id": "x",
            "parentId": None,
            "timestamp": 0,
            "message": {"role": "system", "content": "", "sections": sections, "timestamp": 0},
        }
    )
    assert isinstance(entry, MessageSessionEntry)
    assert isinstance(entry.message, SystemMessage)
    return entry.message.sections


def test_b15_a_system_patch_cannot_be_the_first_kept_entry() -> None:
    path = fx.system_patch_path()
    with pytest.raises(CompactionError, match="patch-2") as caught:
        create_compaction_entry(
            path,
            id="compact-2",
            timestamp=200,
            summary=fx.compact1_summary(),
            first_kept_entry_id="patch-2",
            tokens_before=10,
        )
    assert "system message" in str(caught.value)
    assert isinstance(caught.value, CtxlabError)


def test_docstring_maps_every_behaviour_to_existing_tests() -> None:
    doc = __doc__ or ""
    rows = re.findall(r"^(\d{1,2})\. ", doc, flags=re.MULTILINE)
    assert [int(n) for n in rows] == list(range(1, 16))
    for name in re.findall(r"test_b\d\d_\w+", doc):
        assert callable(globals().get(name)), name
