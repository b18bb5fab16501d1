"""Entry and message objects built by hand with a wrong field get a clear error.

The functions after the parser trust parsed entries and read them without checking them
again (that is what keeps one pass over 100,000 entries cheap). But the dataclasses can be
built directly -- a student in a notebook writes ``MessageSessionEntry("a1", "u1", 2,
{"role": "user", ...})`` -- and then such a read fails. Whatever one field of one object
holds, every function that reads entries or messages raises a ``CtxlabError`` (never a
bare ``AttributeError`` or ``TypeError``), and the chapter's functions name the entry and
the field, as the strict parser would.

``make test`` runs a few hundred examples; ``make fuzz`` runs more
(``CTXLAB_FUZZ_EXAMPLES`` scales them, as for tests/test_fuzz.py).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxlab import (
    AssistantMessage,
    CompactionSessionEntry,
    CompactionSummary,
    ContextOptionError,
    CtxlabError,
    EntryParseError,
    InMemorySessionStore,
    InteractionError,
    MessageSessionEntry,
    SessionEntry,
    SessionTreeError,
    SystemMessage,
    TextContent,
    ToolCall,
    Usage,
    UserMessage,
    build_context,
    chars_per_token,
    create_compaction_entry,
    current_system_message,
    current_system_prompt,
    group_interactions,
    path_to,
    render_summary,
    text_of,
)
from ctxlab import fixtures as fx
from ctxlab.errors import CompactionError
from ctxlab.json_values import FrozenDict
from strategies import budgets, sessions

pytestmark = pytest.mark.fuzz

EXAMPLES = max(50, int(os.environ.get("CTXLAB_FUZZ_EXAMPLES", "5100")) // 17)

#: Values of the wrong kind for any field: what a hand-built object might hold.
WRONG_VALUES: tuple[Any, ...] = (
    None,
    5,
    1.5,
    float("nan"),
    "x",
    "",
    [],
    {},
    ("x",),
    (None,),
    (1, 2),
    {"role": "user", "content": "hi"},
    {"a": 5},
    object(),
)


def _field_paths(value: Any, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Every settable field of a dataclass object, at any depth (tuples indexed)."""
    paths: list[tuple[str | int, ...]] = []
    if isinstance(value, tuple):
        for index, item in enumerate(value):
            paths += _field_paths(item, (*prefix, index))
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            if field.init:
                paths.append((*prefix, field.name))
                paths += _field_paths(getattr(value, field.name), (*prefix, field.name))
    return paths


def _replaced(value: Any, path: tuple[str | int, ...], new: Any) -> Any:
    """A copy of ``value`` with the field at ``path`` set to ``new``, built directly."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, tuple):
        assert isinstance(head, int)
        items = list(value)
        items[head] = _replaced(items[head], rest, new)
        return tuple(items)
    assert isinstance(head, str)
    fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value) if f.init}
    fields[head] = _replaced(fields[head], rest, new)
    return type(value)(**fields)


def _readers(path: list[SessionEntry], budget: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    """Every public function that reads entries or messages, called on ``path``."""
    messages = [e.message for e in path if isinstance(e, MessageSessionEntry)]
    summaries = [e.summary for e in path if isinstance(e, CompactionSessionEntry)]
    estimate = chars_per_token(4)
    leaf = path[-1].id if isinstance(path[-1].id, str) else "leaf"
    return {
        "build_context": lambda: build_context(path, **budget, estimate_tokens=lambda _: 1),
        "build_context/chars": lambda: build_context(path, **budget, estimate_tokens=estimate),
        "group_interactions": lambda: group_interactions(
            [e for e in path if isinstance(e, MessageSessionEntry)]
        ),
        "create_compaction_entry": lambda: create_compaction_entry(
            path,
            id="compact-new",
            timestamp=10**9,
            summary=fx.compact1_summary(),
            first_kept_entry_id=next(
                (e.id for e in path if isinstance(getattr(e, "message", None), UserMessage)),
                "none",
            ),
            tokens_before=0,
        ),
        "path_to": lambda: path_to(path, leaf),
        "current_system_message": lambda: current_system_message(messages),
        "current_system_prompt": lambda: current_system_prompt(messages),
        "text_of": lambda: [text_of(m) for m in messages],
        "chars_per_token": lambda: [estimate(m) for m in messages],
        "render_summary": lambda: [render_summary(s) for s in summaries],
        "store.append": lambda: [InMemorySessionStore().append(e) for e in path],
    }


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(sessions(), st.data(), budgets())
def test_one_wrong_field_anywhere_gives_a_ctxlab_error(
    path: list[SessionEntry], data: st.DataObject, budget: dict[str, Any]
) -> None:
    if not path:
        return
    index = data.draw(st.integers(0, len(path) - 1), label="entry")
    entry = path[index]
    field = data.draw(st.sampled_from(_field_paths(entry)), label="field")
    wrong = data.draw(st.sampled_from(WRONG_VALUES), label="value")
    broken = [*path[:index], _replaced(entry, field, wrong), *path[index + 1 :]]
    for name, read in _readers(broken, budget).items():
        try:
            read()
        except CtxlabError as error:
            # The chapter's functions name the hand-built entry (unless its id is what
            # is wrong, or the error is about the budget, not the entry).
            if (
                isinstance(error, EntryParseError)
                and name in ("build_context", "group_interactions", "path_to")
                and field != ("id",)
            ):
                assert error.entry_id == entry.id, (name, field, wrong, str(error))
        except Exception as error:  # pragma: no cover - the failure being tested for
            pytest.fail(f"{name} let {type(error).__name__} escape: {error} ({field}={wrong!r})")


# -- the errors a student meets ---------------------------------------------------------------


def _user(entry_id: str = "u1") -> MessageSessionEntry:
    return MessageSessionEntry(entry_id, None, 1, UserMessage((TextContent("hi"),), 1))


def _assistant(content: Any) -> AssistantMessage:
    return AssistantMessage(content, "p", "m", Usage(1, 1, 2), "toolUse", 2)


BUDGET: dict[str, Any] = {"max_tokens": 100, "reserved_output": 0, "safety_margin": 0}

HAND_BUILT_MESSAGES = [
    pytest.param(
        {"role": "assistant", "content": []},
        "session entry a1: message must be an agent message object, got dict",
        "message",
        id="wire-dict-as-message",
    ),
    pytest.param(
        _assistant(5),
        "session entry a1: message is a malformed AssistantMessage object"
        " (TypeError: 'int' object is not iterable)",
        "message",
        id="content-not-a-tuple",
    ),
    pytest.param(
        _assistant((ToolCall(["c1"], "read", {}),)),  # type: ignore[arg-type]
        "session entry a1: message.content[0].id must be a string, got an array",
        "message.content[0].id",
        id="call-id-a-list",
    ),
]


@pytest.mark.parametrize(("message", "expected", "field"), HAND_BUILT_MESSAGES)
@pytest.mark.parametrize("reader", ["build_context", "group_interactions"])
def test_a_hand_built_message_entry_is_named_with_its_field(
    message: Any, expected: str, field: str, reader: str
) -> None:
    path = [_user(), MessageSessionEntry("a1", "u1", 2, message)]
    with pytest.raises(EntryParseError) as caught:
        if reader == "build_context":
            build_context(path, **BUDGET, estimate_tokens=lambda _: 1)
        else:
            group_interactions(path)
    assert str(caught.value) == expected
    assert (caught.value.entry_id, caught.value.field) == ("a1", field)
    # What went wrong first stays visible underneath.
    assert isinstance(caught.value.__cause__, (AttributeError, TypeError))


def test_a_hand_built_system_message_is_named_by_entry_or_position() -> None:
    system = SystemMessage(content=5, timestamp=1)  # type: ignore[arg-type]
    path = [_user(), MessageSessionEntry("sys", "u1", 2, system)]
    with pytest.raises(EntryParseError) as caught:
        build_context(path, **BUDGET, estimate_tokens=lambda _: 1)
    assert (
        str(caught.value) == "session entry sys: message.content must be a string, got the number 5"
    )
    with pytest.raises(EntryParseError) as listed:
        current_system_message([path[0].message, system])
    assert str(listed.value) == "messages[1]: content must be a str, got int"
    assert listed.value.field == "content"
    with pytest.raises(EntryParseError, match=r"^text_of: is a malformed SystemMessage object"):
        text_of(system)
    with pytest.raises(EntryParseError, match=r"^text_of: is a malformed SystemMessage object"):
        chars_per_token(4)(system)  # it prices a system message by its text_of
    user = UserMessage((TextContent(5),), 1)  # type: ignore[arg-type]
    with pytest.raises(EntryParseError, match=r"^chars_per_token: is a malformed UserMessage"):
        chars_per_token(4)(user)


def test_a_hand_built_id_is_named_by_path_to() -> None:
    bad = MessageSessionEntry(["u1"], None, 1, _user().message)  # type: ignore[arg-type]
    with pytest.raises(EntryParseError) as caught:
        path_to([bad], "u1")
    assert str(caught.value) == "session entry: id must be a string, got an array"


def test_a_hand_built_summary_is_refused_when_rendered() -> None:
    with pytest.raises(CompactionError, match=r"^render_summary: summary must be a Compaction"):
        render_summary(fx.compact1_summary().to_json())  # type: ignore[arg-type]
    summary = CompactionSummary(goal="G", decisions=5)  # type: ignore[arg-type]
    with pytest.raises(EntryParseError, match=r"^render_summary: is a malformed Compaction"):
        render_summary(summary)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        pytest.param(
            lambda: build_context(
                iter([_user()]),  # type: ignore[arg-type]
                **BUDGET,
                estimate_tokens=lambda _: 1,
            ),
            ContextOptionError,
            "build_context: active_path must be a list of session entries, got list_iterator",
            id="build_context-iterator",
        ),
        pytest.param(
            lambda: group_interactions(5),  # type: ignore[arg-type]
            InteractionError,
            "entries must be a list of message entries, got int",
            id="group_interactions-int",
        ),
        pytest.param(
            lambda: path_to(5, "u1"),  # type: ignore[arg-type]
            SessionTreeError,
            "entries must be a list of entries, got int",
            id="path_to-int",
        ),
    ],
)
def test_a_wrong_kind_of_argument_is_named(
    call: Callable[[], Any], error: type[CtxlabError], message: str
) -> None:
    with pytest.raises(error) as caught:
        call()
    assert str(caught.value) == message


def test_well_formed_entries_built_by_hand_need_no_parsing() -> None:
    """The check happens only when a read fails: correct objects built directly work."""
    call = ToolCall("c1", "read", FrozenDict({"path": "a.py"}))
    path = [
        _user(),
        MessageSessionEntry("a1", "u1", 2, _assistant((call,))),
    ]
    with pytest.raises(InteractionError, match=r"tool call c1 .* has no tool result"):
        build_context(path, **BUDGET, estimate_tokens=lambda _: 1)
    assert [g.entry_ids for g in group_interactions(path[:1])] == [("u1",)]
