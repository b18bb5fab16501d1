"""Every worked example of chapter 11, reproduced exactly (spec section 8).

The expected values below are copied from the chapter text, not computed with ctxlab:
the 31-token ledger, the three groups and their costs, the budget-10 overflow, compact-1,
the replayed system message of the system-patch path, the corrupted records, and the
Chinese and English summary renderings (written out from the spec's rules).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from ctxlab import (
    CompactionSummary,
    ContextResult,
    CtxlabError,
    InMemorySessionStore,
    JsonlSessionStore,
    MessageSessionEntry,
    SessionEntry,
    SystemMessage,
    TextContent,
    UserMessage,
    build_context,
    current_system_message,
    group_interactions,
    parse_session_entry,
    render_summary,
)
from ctxlab import fixtures as fx
from ctxlab.compaction import SummaryLanguage

pytestmark = pytest.mark.reference

OPENING_IDS = ["sys", "u1", "a1", "u2", "a2", "u3", "calls", "r-test", "r-read", "a3"]


def _build(
    path: Sequence[SessionEntry], max_tokens: float, **language: SummaryLanguage
) -> ContextResult:
    """The chapter's options: reserved output 4, safety margin 2, the test estimator;
    ctxlab's default summary language unless ``summary_language=`` is given."""
    return build_context(
        path,
        max_tokens=max_tokens,
        reserved_output=4,
        safety_margin=2,
        estimate_tokens=fx.opening_estimator,
        **language,
    )


def test_opening_path_is_the_chapters_ten_entries_with_their_costs() -> None:
    path = fx.opening_path()
    assert [entry.id for entry in path] == OPENING_IDS
    assert [e.parent_id for e in path] == [None, *OPENING_IDS[:-1]]
    costs = [fx.opening_estimator(e.message) for e in path if isinstance(e, MessageSessionEntry)]
    assert costs == [3, 3, 4, 3, 4, 3, 3, 3, 3, 3]
    roles = [e.message.role for e in path if isinstance(e, MessageSessionEntry)]
    assert roles == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "toolResult",
        "toolResult",
        "assistant",
    ]
    by_id = {e.id: e for e in path if isinstance(e, MessageSessionEntry)}
    assert by_id["sys"].message == SystemMessage("sys", 1)
    calls = by_id["calls"].message
    assert [call.id for call in calls.tool_calls] == ["read-1", "test-1"]
    assert by_id["r-test"].message.tool_call_id == "test-1"
    assert by_id["r-read"].message.tool_call_id == "read-1"


def test_groups_of_the_opening_path_and_their_costs() -> None:
    groups = group_interactions(e for e in fx.opening_path() if e.type == "message")
    assert [[e.id for e in g.entries] for g in groups] == [
        ["u1", "a1"],
        ["u2", "a2"],
        ["u3", "calls", "r-test", "r-read", "a3"],
    ]
    costs = [sum(fx.opening_estimator(e.message) for e in g.entries) for g in groups]
    assert costs == [7, 7, 15]


def test_the_31_token_ledger() -> None:
    result = _build(fx.opening_path(), 31)
    assert result.kept_entry_ids == ("u2", "a2", "u3", "calls", "r-test", "r-read", "a3")
    assert result.reason == "trimmed"
    wire = result.to_json()
    assert wire["keptEntryIds"] == ["u2", "a2", "u3", "calls", "r-test", "r-read", "a3"]
    assert wire["reason"] == "trimmed"
    assert wire["tokens"] == {
        "maxTokens": 31,
        "system": 3,
        "messages": 22,
        "reservedOutput": 4,
        "safetyMargin": 2,
        "availableForMessages": 22,
        "total": 31,
    }
    by_id = {e.id: e for e in fx.opening_path() if isinstance(e, MessageSessionEntry)}
    # system("sys") → u2 → a2 → u3 → calls → r-test → r-read → a3
    assert result.messages[0] == SystemMessage("sys", 1)
    expected = ["u2", "a2", "u3", "calls", "r-test", "r-read", "a3"]
    assert list(result.messages[1:]) == [by_id[i].message for i in expected]
    assert [m["role"] for m in wire["messages"]] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "toolResult",
        "toolResult",
        "assistant",
    ]
    assert "sys" not in result.kept_entry_ids


def test_budget_10_returns_the_newest_group_whole_as_overflow() -> None:
    # 19 - system 3 - reserved 4 - margin 2 leaves exactly 10 tokens for messages.
    result = _build(fx.opening_path(), 19)
    assert result.tokens.available_for_messages == 10
    assert result.kept_entry_ids == ("u3", "calls", "r-test", "r-read", "a3")
    assert result.reason == "single_group_overflow"
    assert result.tokens.messages == 15
    assert result.tokens.total == 3 + 15 + 4 + 2
    assert result.tokens.total > result.tokens.max_tokens


def test_compact_1() -> None:
    path = fx.opening_path()
    entry = fx.compact1(path)
    assert entry.id == "compact-1"
    assert entry.parent_id == "a3"
    assert entry.timestamp == 100
    assert entry.first_kept_entry_id == "u2"
    assert entry.tokens_before == 29
    wire = entry.to_json()
    assert list(wire) == [
        "type",
        "id",
        "parentId",
        "timestamp",
        "summary",
        "firstKeptEntryId",
        "tokensBefore",
    ]
    assert list(wire["summary"]) == [
        "goal",
        "constraints",
        "completed",
        "decisions",
        "changedFiles",
        "unresolved",
        "next",
    ]
    assert [e.id for e in path] == OPENING_IDS  # the path is unchanged


def test_replayed_system_message_of_the_system_patch_path() -> None:
    path = fx.system_patch_path()
    assert [e.id for e in path] == [
        "sys",
        "u1",
        "a1",
        "patch-1",
        "u2",
        "a2",
        "compact-1",
        "patch-2",
        "u3",
        "a3",
    ]
    result = _build(path, 100)
    system = result.messages[0]
    assert isinstance(system, SystemMessage)
    assert system.to_json() == {
        "role": "system",
        "content": "BASE\n\nPrefer small diffs.",
        "sections": {"rules": "RULE v2"},
        "timestamp": 1,
    }
    summary = result.messages[1]
    assert isinstance(summary, UserMessage)
    assert summary.timestamp == 100
    by_id = {e.id: e for e in path if isinstance(e, MessageSessionEntry)}
    assert list(result.messages[2:]) == [by_id[i].message for i in ("u2", "a2", "u3", "a3")]
    assert result.kept_entry_ids == ("u2", "a2", "u3", "a3")
    assert by_id["patch-2"].message not in result.messages[1:]
    messages = [e.message for e in path if isinstance(e, MessageSessionEntry)]
    assert current_system_message(messages) == system


def test_corrupted_compaction_with_files_is_refused_before_any_store_write(
    tmp_path: Path,
) -> None:
    wire = fx.compact1().to_json()
    del wire["summary"]["changedFiles"]
    wire["summary"]["files"] = ["context.ts"]
    with pytest.raises(CtxlabError) as caught:
        parse_session_entry(wire)
    assert "compact-1" in str(caught.value)
    assert "summary.files" in str(caught.value)

    memory = InMemorySessionStore(fx.opening_path())
    jsonl = JsonlSessionStore.open(tmp_path / "s.jsonl")
    for entry in fx.opening_path():
        jsonl.append(entry)
    before = (tmp_path / "s.jsonl").read_bytes()
    for store in (memory, jsonl):
        with pytest.raises(CtxlabError, match=r"compact-1.*summary\.files"):
            store.append(wire)
        assert [e.id for e in store.entries()] == OPENING_IDS
    assert (tmp_path / "s.jsonl").read_bytes() == before


def test_corrupted_r_test_pointing_at_unknown_1_is_refused_naming_both() -> None:
    path = fx.unknown_call_path()
    with pytest.raises(CtxlabError) as caught:
        group_interactions(e for e in path if e.type == "message")
    assert "r-test" in str(caught.value)
    assert "unknown-1" in str(caught.value)
    with pytest.raises(CtxlabError, match="unknown-1"):
        _build(path, 31)


def test_r_test_moved_before_calls_is_still_one_group() -> None:
    path = fx.results_before_call_path()
    groups = group_interactions(e for e in path if e.type == "message")
    assert [e.id for e in groups[-1].entries] == ["u3", "r-test", "calls", "r-read", "a3"]
    assert _build(path, 31).kept_entry_ids == ("u2", "a2", "u3", "r-test", "calls", "r-read", "a3")


SUMMARY = CompactionSummary(
    goal="让上下文保持在预算内",
    constraints=("历史只追加", "不删除旧记录"),
    completed=("读完 context.ts",),
    decisions=(),
    changed_files=("context.ts", "context.test.ts"),
    unresolved=(),
    next=("运行测试",),
)


def test_chinese_summary_rendering_is_byte_identical_to_the_course() -> None:
    expected = (
        "【会话压缩摘要】\n"
        "目标：让上下文保持在预算内\n"
        "约束：\n"
        "- 历史只追加\n"
        "- 不删除旧记录\n"
        "已完成：\n"
        "- 读完 context.ts\n"
        "决策：\n"
        "- （无）\n"
        "变更文件：\n"
        "- context.ts\n"
        "- context.test.ts\n"
        "未解决：\n"
        "- （无）\n"
        "下一步：\n"
        "- 运行测试"
    )
    rendered = render_summary(SUMMARY, "zh")
    assert rendered.encode("utf-8") == expected.encode("utf-8")
    assert render_summary(SUMMARY) == rendered  # the default


def test_english_summary_rendering() -> None:
    expected = (
        "[Conversation summary]\n"
        "Goal: 让上下文保持在预算内\n"
        "Constraints:\n"
        "- 历史只追加\n"
        "- 不删除旧记录\n"
        "Completed:\n"
        "- 读完 context.ts\n"
        "Decisions:\n"
        "- (none)\n"
        "Changed files:\n"
        "- context.ts\n"
        "- context.test.ts\n"
        "Unresolved:\n"
        "- (none)\n"
        "Next:\n"
        "- 运行测试"
    )
    assert render_summary(SUMMARY, "en") == expected


def test_compact_1_summary_message_in_chinese_after_the_system_message() -> None:
    path = fx.resumed_path()
    result = _build(path, 100)  # the default rendering is the course's
    assert result == _build(path, 100, summary_language="zh")
    assert result.messages[1] == UserMessage(
        (
            TextContent(
                "【会话压缩摘要】\n"
                "目标：Keep the agent's context under budget without losing history.\n"
                "约束：\n"
                "- History is append-only: never edit or delete session entries.\n"
                "已完成：\n"
                "- Confirmed that JsonlSessionStore appends one line per entry.\n"
                "决策：\n"
                "- Record compaction as a new entry instead of deleting messages.\n"
                "变更文件：\n"
                "- context.ts\n"
                "未解决：\n"
                "- （无）\n"
                "下一步：\n"
                "- Read context.ts and run the context tests."
            ),
        ),
        100,
    )
