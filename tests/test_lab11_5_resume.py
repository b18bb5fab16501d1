"""Lab 11.5: resuming from the latest compaction (spec section 6, chapter
"恢复时把最新摘要接在保留后缀前面" and "system 状态跨过 compaction 边界")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from ctxlab import (
    CompactionError,
    CompactionSessionEntry,
    ContextResult,
    MessageSessionEntry,
    MetadataSessionEntry,
    SessionEntry,
    SystemMessage,
    TextContent,
    UserMessage,
    build_context,
    render_summary,
    text_of,
)
from ctxlab import fixtures as fx

pytestmark = pytest.mark.reference


def _build(path: Sequence[SessionEntry], **changes: Any) -> ContextResult:
    options: dict[str, Any] = {
        "max_tokens": 100,
        "reserved_output": 4,
        "safety_margin": 2,
        "estimate_tokens": fx.opening_estimator,
        **changes,
    }
    return build_context(path, **options)


def _with_compaction(
    path: list[SessionEntry], first_kept: str, *, index: int | None = None
) -> list[SessionEntry]:
    """Insert a hand-made compaction (bypassing create's checks) at ``index``."""
    at = len(path) if index is None else index
    parent = path[at - 1].id
    entry = CompactionSessionEntry("c-x", parent, 100, fx.compact1_summary(), first_kept, 1)
    return [*path[:at], entry, *path[at:]]


def test_summary_message_follows_the_system_message() -> None:
    result = _build(fx.resumed_path())
    roles = [m.role for m in result.messages]
    assert roles[:3] == ["system", "user", "user"]
    summary = result.messages[1]
    assert summary == UserMessage((TextContent(render_summary(fx.compact1_summary())),), 100)


def test_summary_is_first_when_there_is_no_system_message() -> None:
    path = [e for e in fx.resumed_path() if e.id != "sys"]
    first = path[0]
    assert isinstance(first, MessageSessionEntry)
    path[0] = MessageSessionEntry(first.id, None, first.timestamp, first.message)
    result = _build(path)
    assert result.tokens.system == 0
    assert text_of(result.messages[0]).startswith("【会话压缩摘要】")
    assert result.kept_entry_ids[0] == "u2"


def test_summary_cost_is_deducted_before_the_groups() -> None:
    # available 22; summary 4 leaves 18: u4/a4 (7) fits, group 3 (15) does not.
    result = _build(fx.resumed_path(), max_tokens=31)
    assert result.tokens.available_for_messages == 22
    assert result.kept_entry_ids == ("u4", "a4")
    assert result.reason == "trimmed"
    # available 26: summary 4 + 7 + 15 = 26 fits exactly.
    exact = _build(fx.resumed_path(), max_tokens=35)
    assert exact.kept_entry_ids == ("u3", "calls", "r-test", "r-read", "a3", "u4", "a4")
    assert exact.tokens.messages == 26
    assert exact.tokens.total == 35


def test_summary_alone_above_the_budget_still_returns_the_newest_group() -> None:
    result = _build(fx.resumed_path(), max_tokens=10)
    assert result.tokens.available_for_messages == 1
    assert result.reason == "single_group_overflow"
    assert result.kept_entry_ids == ("u4", "a4")
    assert result.tokens.messages == 4 + 7


def test_kept_ids_never_include_synthetic_or_non_message_ids() -> None:
    for path in (fx.resumed_path(), fx.recompacted_path(), fx.system_patch_path()):
        for max_tokens in (0, 31, 1000):
            result = _build(path, max_tokens=max_tokens)
            message_ids = {
                e.id
                for e in path
                if isinstance(e, MessageSessionEntry) and not isinstance(e.message, SystemMessage)
            }
            assert set(result.kept_entry_ids) <= message_ids
            assert not any(i.startswith("compact") for i in result.kept_entry_ids)


def test_only_the_newest_compaction_is_read() -> None:
    result = _build(fx.recompacted_path())
    summaries = [m for m in result.messages if text_of(m).startswith("【会话压缩摘要】")]
    assert summaries == [UserMessage((TextContent(render_summary(fx.compact2_summary())),), 200)]
    assert result.kept_entry_ids[0] == "u3"


def test_entries_after_the_compaction_are_candidates_and_metadata_is_skipped() -> None:
    path = fx.resumed_path()
    path.append(MetadataSessionEntry("after", "a4", 103, "k", [1, 2]))
    result = _build(path)
    assert result.kept_entry_ids[-2:] == ("u4", "a4")
    assert "after" not in result.kept_entry_ids


def test_summary_language_defaults_to_zh_the_course_rendering() -> None:
    result = _build(fx.resumed_path())
    assert text_of(result.messages[1]) == render_summary(fx.compact1_summary(), "zh")
    assert text_of(result.messages[1]).startswith("【会话压缩摘要】\n目标：")
    assert result == _build(fx.resumed_path(), summary_language="zh")


def test_summary_language_en_is_an_explicit_choice() -> None:
    english = _build(fx.resumed_path(), summary_language="en")
    assert text_of(english.messages[1]) == render_summary(fx.compact1_summary(), "en")
    assert text_of(english.messages[1]).startswith("[Conversation summary]\nGoal: ")
    chinese = _build(fx.resumed_path())
    assert english.messages[0] == chinese.messages[0]
    assert english.messages[2:] == chinese.messages[2:]
    assert english.kept_entry_ids == chinese.kept_entry_ids
    assert english.tokens == chinese.tokens  # the test estimator prices both at 4


def test_first_kept_later_on_the_path_is_an_error() -> None:
    path = _with_compaction(fx.opening_path(), "u3", index=5)  # compaction before u3
    with pytest.raises(CompactionError, match="c-x") as caught:
        _build(path)
    assert "u3" in str(caught.value)
    assert "earlier" in str(caught.value)
    assert caught.value.entry_id == "c-x"


def test_first_kept_unknown_is_an_error() -> None:
    with pytest.raises(CompactionError, match="ghost"):
        _build(_with_compaction(fx.opening_path(), "ghost"))


@pytest.mark.parametrize("first_kept", ["a2", "calls", "r-test", "sys"])
def test_first_kept_inside_a_group_or_system_is_an_error(first_kept: str) -> None:
    with pytest.raises(CompactionError) as caught:
        _build(_with_compaction(fx.opening_path(), first_kept))
    assert first_kept in str(caught.value)
    assert "c-x" in str(caught.value)


def test_an_older_bad_compaction_is_ignored_once_a_newer_one_exists() -> None:
    path = _with_compaction(fx.opening_path(), "ghost")
    good = CompactionSessionEntry("c-good", "c-x", 200, fx.compact2_summary(), "u3", 1)
    result = _build([*path, good])
    assert result.kept_entry_ids == ("u3", "calls", "r-test", "r-read", "a3")


def test_system_replay_uses_the_whole_path() -> None:
    result = _build(fx.system_patch_path())
    system = result.messages[0]
    assert isinstance(system, SystemMessage)
    assert system.content == "BASE\n\nPrefer small diffs."
    assert dict(system.sections or {}) == {"rules": "RULE v2"}
    assert system.timestamp == 1
    assert sum(isinstance(m, SystemMessage) for m in result.messages) == 1


def test_results_share_no_state_with_each_other_or_the_path() -> None:
    path = fx.recompacted_path()
    before = [e.to_json() for e in path]
    first = _build(path)
    wire = first.to_json()
    wire["messages"][1]["content"][0]["text"] = "tampered"
    wire["messages"][3]["content"][1]["arguments"]["path"] = "tampered.ts"
    second = _build(path)
    assert second == first
    assert "tampered" not in str(second.to_json())
    assert [e.to_json() for e in path] == before


def test_determinism_across_fresh_paths() -> None:
    results = [_build(fx.recompacted_path(), max_tokens=m) for m in (31, 31, 100, 100)]
    assert results[0] == results[1]
    assert results[2] == results[3]
    assert results[0].to_json() == results[1].to_json()


def test_resume_candidates_start_at_the_newest_compactions_first_kept_entry() -> None:
    from ctxlab import fixtures
    from ctxlab.context import resume_candidates

    compaction, candidates = resume_candidates(fixtures.opening_path())
    assert compaction is None and [e.id for e in candidates][:2] == ["sys", "u1"]
    compaction, candidates = resume_candidates(fixtures.recompacted_path())
    assert compaction is not None and compaction.id == "compact-2"
    assert [e.id for e in candidates] == ["u3", "calls", "r-test", "r-read", "a3", "u4", "a4"]
