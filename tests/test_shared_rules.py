"""The shared implementations of two chapter rules (issue 13): the system-replay fold
(``SystemReplay``) and the group builder (``GroupBuilder``).

``build_context``, ``group_interactions``, ``current_system_message`` and ``ContextWindow``
all run these; the checks here are about what the sharing relies on: feeding entries in
pieces gives what feeding them at once gives, a cached replay is redone after a patch, and
a broken interaction before a compaction's first kept entry does not count.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import (
    CompactionSessionEntry,
    CtxlabError,
    InteractionError,
    MessageSessionEntry,
    SessionEntry,
    SystemMessage,
    build_context,
    current_system_message,
    group_interactions,
    parse_session_entry,
)
from ctxlab import fixtures as fx
from ctxlab.interactions import GroupBuilder
from ctxlab.messages import SystemReplay
from strategies import sessions


def _relinked(entries: list[SessionEntry]) -> list[SessionEntry]:
    linked: list[SessionEntry] = []
    for entry in entries:
        wire = entry.to_json()
        wire["parentId"] = linked[-1].id if linked else None
        linked.append(parse_session_entry(wire))
    return linked


def _outcome(run: object) -> object:
    try:
        return run()  # type: ignore[operator]
    except CtxlabError as exc:
        return type(exc), str(exc)


@pytest.mark.lab11_3
@settings(max_examples=60)
@given(path=sessions(max_groups=8, compactions=False), data=st.data())
def test_system_replay_cached_result_is_redone_after_each_patch(
    path: list[SessionEntry], data: st.DataObject
) -> None:
    replay = SystemReplay()
    seen: list[SystemMessage] = []
    for entry in path:
        if isinstance(entry, MessageSessionEntry) and isinstance(entry.message, SystemMessage):
            replay.add(entry.message)
            seen.append(entry.message)
        if data.draw(st.booleans()):  # look at the result now and then, in between
            assert replay.result() == current_system_message(seen)
    assert replay.result() == current_system_message(seen)


@pytest.mark.lab11_2
@settings(max_examples=60)
@given(
    path=sessions(max_groups=8, compactions=False, metadata=False),
    cuts=st.lists(st.integers(0, 40), max_size=6),
    drop=st.integers(0, 40),
)
def test_feeding_entries_in_pieces_equals_group_interactions(
    path: list[SessionEntry], cuts: list[int], drop: int
) -> None:
    # Dropping one entry often breaks an interaction: the error must be the same too.
    messages = [e for i, e in enumerate(path) if isinstance(e, MessageSessionEntry) and i != drop]
    builder = GroupBuilder()
    bounds = [0, *sorted(c for c in cuts if c < len(messages)), len(messages)]
    for start, stop in itertools.pairwise(bounds):
        handed_back = list(builder.feed(messages[start:stop]))
        assert all(isinstance(e, MessageSessionEntry) for _, e in handed_back)  # system only
    assert _outcome(builder.finish) == _outcome(lambda: group_interactions(messages))


@pytest.mark.lab11_5
def test_a_broken_interaction_before_the_first_kept_entry_does_not_count() -> None:
    # [u1, a1] and [u2, a2] are whole; u3's interaction lost r-read; the compaction keeps
    # only u4's interaction, so the broken one is not among the candidates.
    broken = [e for e in fx.opening_path() if e.id != "r-read"]
    with pytest.raises(InteractionError, match="read-1"):
        group_interactions([e for e in broken if isinstance(e, MessageSessionEntry)])
    tail = [e for e in fx.resumed_path() if e.id in ("u4", "a4")]
    compaction = fx.compact1().to_json() | {"firstKeptEntryId": "u4"}
    path = _relinked([*broken, *tail, parse_session_entry(compaction)])
    assert isinstance(path[-1], CompactionSessionEntry)
    result = build_context(
        path,
        max_tokens=100,
        reserved_output=4,
        safety_margin=2,
        estimate_tokens=fx.opening_estimator,
    )
    assert result.kept_entry_ids == ("u4", "a4")
    # Keeping u3's interaction instead brings the broken one back among the candidates.
    path[-1] = parse_session_entry(path[-1].to_json() | {"firstKeptEntryId": "u3"})
    with pytest.raises(InteractionError, match="read-1"):
        build_context(
            path,
            max_tokens=100,
            reserved_output=4,
            safety_margin=2,
            estimate_tokens=fx.opening_estimator,
        )
