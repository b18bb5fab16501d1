"""Lab 11.4: ``create_compaction_entry`` and ``render_summary`` (spec sections 6-7)."""

from __future__ import annotations

from typing import Any

import pytest

from ctxlab import (
    CompactionError,
    CompactionSessionEntry,
    CompactionSummary,
    CtxlabError,
    EntryParseError,
    InMemorySessionStore,
    MetadataSessionEntry,
    SessionEntry,
    create_compaction_entry,
    render_summary,
)
from ctxlab import fixtures as fx

pytestmark = pytest.mark.reference


def _create(path: list[SessionEntry], **changes: Any) -> CompactionSessionEntry:
    options: dict[str, Any] = {
        "id": "compact-1",
        "timestamp": 100,
        "summary": fx.compact1_summary(),
        "first_kept_entry_id": "u2",
        "tokens_before": 29,
        **changes,
    }
    return create_compaction_entry(path, **options)


def test_create_returns_the_chapters_compact_1() -> None:
    entry = _create(fx.opening_path())
    assert entry == fx.compact1()
    assert entry.parent_id == "a3"


def test_create_is_pure() -> None:
    path = fx.opening_path()
    store = InMemorySessionStore(path)
    snapshot = [e.to_json() for e in path]
    _create(path)
    _create(path)
    assert [e.to_json() for e in path] == snapshot
    assert len(path) == 10
    assert store.entries() == fx.opening_path()


def test_summary_may_be_given_in_wire_form_and_is_copied() -> None:
    wire = fx.compact1_summary().to_json()
    entry = _create(fx.opening_path(), summary=wire)
    wire["changedFiles"].append("later.ts")
    assert entry.summary == fx.compact1_summary()


def test_the_candidate_goes_through_the_parser() -> None:
    bad = fx.compact1_summary().to_json()
    bad["files"] = bad.pop("changedFiles")
    with pytest.raises(EntryParseError, match=r"compact-1: summary\.files"):
        _create(fx.opening_path(), summary=bad)
    with pytest.raises(EntryParseError, match="tokensBefore"):
        _create(fx.opening_path(), tokens_before=-1)
    with pytest.raises(EntryParseError, match="tokensBefore"):
        _create(fx.opening_path(), tokens_before=float("nan"))
    with pytest.raises(EntryParseError, match="timestamp"):
        _create(fx.opening_path(), timestamp=True)
    with pytest.raises(EntryParseError, match=r"summary\.goal"):
        _create(fx.opening_path(), summary=CompactionSummary(goal="  "))
    with pytest.raises(EntryParseError, match="id"):
        _create(fx.opening_path(), id=" ")


def test_an_empty_path_is_an_error() -> None:
    with pytest.raises(CompactionError, match="empty") as caught:
        _create([])
    assert caught.value.entry_id == "compact-1"


@pytest.mark.parametrize("taken", ["u2", "a3", "sys"])
def test_an_id_already_on_the_path_is_an_error(taken: str) -> None:
    with pytest.raises(CompactionError, match=f"'{taken}'"):
        _create(fx.opening_path(), id=taken)
    resumed = fx.resumed_path()
    with pytest.raises(CompactionError, match="compact-1"):
        _create(resumed, first_kept_entry_id="u4")


@pytest.mark.parametrize(
    ("first_kept", "why"),
    [
        ("a2", "inside the interaction that u2 starts"),
        ("calls", "inside the interaction that u3 starts"),
        ("r-test", "inside the interaction that u3 starts"),
        ("sys", "system message"),
        ("unknown", "not on the active path"),
    ],
)
def test_first_kept_must_be_a_group_head(first_kept: str, why: str) -> None:
    with pytest.raises(CompactionError) as caught:
        _create(fx.opening_path(), first_kept_entry_id=first_kept)
    assert first_kept in str(caught.value)
    assert why in str(caught.value)
    assert caught.value.entry_id == "compact-1"


def test_a_system_patch_after_the_last_compaction_is_not_a_cut() -> None:
    with pytest.raises(CompactionError, match=r"patch-2.*system message"):
        _create(fx.system_patch_path(), id="compact-2", first_kept_entry_id="patch-2")


def test_metadata_and_compaction_entries_are_not_cuts() -> None:
    path: list[SessionEntry] = [*fx.opening_path(), MetadataSessionEntry("m", "a3", 11, "k", 1)]
    with pytest.raises(CompactionError, match="m is a metadata entry"):
        _create(path, first_kept_entry_id="m")
    with pytest.raises(CompactionError, match="compact-1 is a compaction entry"):
        _create(fx.resumed_path(), id="compact-2", first_kept_entry_id="compact-1")
    assert _create(path).parent_id == "m"


def test_creating_on_a_path_with_broken_tool_facts_is_an_error() -> None:
    with pytest.raises(CtxlabError, match="unknown-1"):
        _create(fx.unknown_call_path())


def test_render_summary_rejects_an_unknown_language() -> None:
    with pytest.raises(CompactionError, match="'fr'"):
        render_summary(fx.compact1_summary(), "fr")  # type: ignore[arg-type]


def test_render_summary_of_an_all_empty_summary() -> None:
    assert render_summary(CompactionSummary(goal="G"), "zh") == (
        "【会话压缩摘要】\n目标：G\n约束：\n- （无）\n已完成：\n- （无）\n决策：\n- （无）\n"
        "变更文件：\n- （无）\n未解决：\n- （无）\n下一步：\n- （无）"
    )
    assert render_summary(CompactionSummary(goal="G"), "en") == (
        "[Conversation summary]\nGoal: G\nConstraints:\n- (none)\nCompleted:\n- (none)\n"
        "Decisions:\n- (none)\nChanged files:\n- (none)\nUnresolved:\n- (none)\nNext:\n- (none)"
    )


def test_render_summary_defaults_to_the_course_rendering() -> None:
    summary = fx.compact1_summary()
    text = render_summary(summary)
    assert text.startswith("【会话压缩摘要】\n目标：")
    assert text == render_summary(summary, "zh") != render_summary(summary, "en")


def test_render_summary_keeps_items_verbatim_in_order() -> None:
    summary = CompactionSummary(goal="g", next=("b", "a", "", "- x"))
    assert render_summary(summary).endswith("下一步：\n- b\n- a\n- \n- - x")
    assert render_summary(summary, "en").endswith("Next:\n- b\n- a\n- \n- - x")


def test_wire_dicts_on_the_path_are_refused() -> None:
    wire: list[Any] = [e.to_json() for e in fx.opening_path()]
    with pytest.raises(CompactionError, match=r"active_path\[0\] is not a session entry"):
        _create(wire)
