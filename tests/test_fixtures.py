"""``ctxlab.fixtures``: the chapter's paths, its test estimator and its corrupted variants."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

import pytest

from ctxlab import (
    AssistantMessage,
    CompactionSessionEntry,
    CtxlabError,
    MessageSessionEntry,
    SessionEntry,
    ToolResultMessage,
    UserMessage,
    fixtures,
    group_interactions,
    parse_session_entry,
    path_to,
    text_of,
)
from ctxlab import fixtures as fx

pytestmark = pytest.mark.reference


def _chain_ok(path: list[SessionEntry]) -> None:
    for parent, child in itertools.pairwise(path):
        assert child.parent_id == parent.id
    assert path[0].parent_id is None
    assert path_to(path, path[-1].id) == path


@pytest.mark.parametrize(
    "make",
    [fx.opening_path, fx.resumed_path, fx.recompacted_path, fx.system_patch_path],
    ids=lambda f: f.__name__,
)
def test_fixture_paths_are_linked_valid_and_fresh(make: Callable[[], list[SessionEntry]]) -> None:
    first, second = make(), make()
    assert first == second
    assert first is not second
    first.pop()
    assert len(make()) == len(second)
    _chain_ok(second)
    for entry in second:
        assert parse_session_entry(entry.to_json()) == entry
    for entry in second:
        if isinstance(entry, MessageSessionEntry):
            assert entry.timestamp == entry.message.timestamp


def test_fixture_messages_read_like_a_real_coding_session() -> None:
    by_id = {e.id: e.message for e in fx.opening_path() if isinstance(e, MessageSessionEntry)}
    for entry_id in ("u1", "a1", "u2", "a2", "u3", "calls", "r-test", "r-read", "a3"):
        assert len(text_of(by_id[entry_id]).split()) >= 5, entry_id
    calls = by_id["calls"]
    assert isinstance(calls, AssistantMessage)
    assert [call.name for call in calls.tool_calls] == ["read", "bash"]
    assert calls.stop_reason == "toolUse"
    read, test = by_id["r-read"], by_id["r-test"]
    assert isinstance(read, ToolResultMessage)
    assert isinstance(test, ToolResultMessage)
    assert "buildContext" in text_of(read)
    assert "pass" in text_of(test).lower()
    assert isinstance(by_id["u3"], UserMessage)


def test_opening_estimator_prices_the_table_and_refuses_unknown_messages() -> None:
    costs = {
        e.id: fx.opening_estimator(e.message)
        for e in fx.opening_path()
        if isinstance(e, MessageSessionEntry)
    }
    assert costs == dict(fx.OPENING_COSTS)
    assert costs == {
        "sys": 3,
        "u1": 3,
        "a1": 4,
        "u2": 3,
        "a2": 4,
        "u3": 3,
        "calls": 3,
        "r-test": 3,
        "r-read": 3,
        "a3": 3,
    }
    with pytest.raises(CtxlabError, match="no price"):
        fx.opening_estimator(UserMessage((), 0))
    with pytest.raises(CtxlabError):
        fx.opening_estimator(42)


def test_resumed_and_recompacted_paths() -> None:
    resumed = fx.resumed_path()
    assert [e.id for e in resumed][-3:] == ["compact-1", "u4", "a4"]
    assert resumed[-2].parent_id == "compact-1"
    recompacted = fx.recompacted_path()
    last = recompacted[-1]
    assert isinstance(last, CompactionSessionEntry)
    assert (last.id, last.parent_id, last.first_kept_entry_id) == ("compact-2", "a4", "u3")
    assert last.timestamp == 200


def test_corrupted_variants_fail_where_the_chapter_says() -> None:
    messages = [e for e in fx.unknown_call_path() if isinstance(e, MessageSessionEntry)]
    with pytest.raises(CtxlabError, match="unknown-1"):
        group_interactions(messages)
    reordered = fx.results_before_call_path()
    assert [e.id for e in reordered][6:8] == ["r-test", "calls"]
    assert len(group_interactions(e for e in reordered if isinstance(e, MessageSessionEntry))) == 3
    corruptions = fx.compaction_corruptions()
    assert "files instead of changedFiles" in corruptions
    chapter = corruptions["files instead of changedFiles"]
    assert chapter["summary"]["files"] == ["context.ts"]
    assert "changedFiles" not in chapter["summary"]
    for wire in corruptions.values():
        with pytest.raises(CtxlabError, match="compact-1"):
            parse_session_entry(wire)


# ----------------------------------------------------------------------------- the zh texts


@pytest.mark.parametrize(
    "name",
    ["opening_path", "resumed_path", "recompacted_path", "system_patch_path",
     "unknown_call_path", "results_before_call_path", "missing_result_path",
     "duplicate_result_path", "duplicate_call_path"],
)  # fmt: skip
def test_the_chinese_texts_keep_ids_structure_and_costs(name: str) -> None:
    """Issue 27: the session's texts are ctxlab's, so the zh edition gets Chinese ones; the
    ids, parents, roles, tool calls and every price stay those of the English fixture."""
    import ctxlab
    from ctxlab.messages import text_of

    make = getattr(fixtures, name)
    english, chinese = make(language="en"), make(language="zh")
    assert [(e.id, e.parent_id, e.type) for e in english] == [
        (e.id, e.parent_id, e.type) for e in chinese
    ]
    changed = 0
    for en, zh in zip(english, chinese, strict=True):
        if en.type != "message":
            assert en.to_json()["summary"].keys() == zh.to_json()["summary"].keys()
            continue
        assert en.message.role == zh.message.role
        assert fixtures.opening_estimator(en.message) == fixtures.opening_estimator(zh.message)
        if text_of(en.message) != text_of(zh.message):
            changed += 1
            assert re.search(r"[\u4e00-\u9fff]", text_of(zh.message)), text_of(zh.message)
    assert changed >= 2
    for max_tokens in (10, 31, 40):
        budget = dict(max_tokens=max_tokens, reserved_output=4, safety_margin=2,
                      estimate_tokens=fixtures.opening_estimator)  # fmt: skip
        outcomes = []
        for path in (english, chinese):
            try:
                result = ctxlab.build_context(path, **budget)
                outcomes.append((result.kept_entry_ids, result.reason, result.tokens))
            except ctxlab.CtxlabError as error:  # the broken paths: the same error
                outcomes.append(str(error))
        assert outcomes[0] == outcomes[1]


def test_the_default_language_is_english_and_settable() -> None:
    assert fixtures.get_language() == "en"
    english = fixtures.compact1_summary()
    fixtures.set_language("zh")
    try:
        chinese = fixtures.compact1_summary()
        assert re.search(r"[\u4e00-\u9fff]", chinese.goal) and chinese != english
        assert fixtures.compact1_summary(language="en") == english
        with pytest.raises(CtxlabError, match="'en' or 'zh'") as raised:
            fixtures.set_language("fr")  # type: ignore[arg-type]
        assert raised.value.option == "language"
        with pytest.raises(CtxlabError, match="'en' or 'zh'") as raised:
            fixtures.opening_path(language="fr")  # type: ignore[arg-type]
        assert raised.value.option == "language"
    finally:
        fixtures.set_language("en")
    assert fixtures.compact1_summary() == english
