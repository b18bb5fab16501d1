"""Hypothesis strategies for ctxlab: random but always valid sessions, estimators, budgets.

:func:`sessions` draws an active path (a list of :data:`~ctxlab.SessionEntry` linked by
``parentId``, root first) that exercises every rule of chapter 11 at once:

* system messages and system patches (content and/or sections set or deleted) anywhere --
  before the first user message, inside an interaction and between interactions;
* user interactions with zero or more assistant turns, each turn calling zero to three
  tools in parallel, whose results are inserted at random positions of the interaction
  (out of order, even before the call that they answer), with ``details`` absent, null
  or any JSON value;
* metadata entries anywhere;
* compactions built with :func:`~ctxlab.create_compaction_entry` (so always valid), possibly
  several, each keeping from the head of some interaction already on the path.

Sizes stay modest (about 40 entries at most) so that property tests stay fast.

Also exposed: :func:`estimators` (deterministic, role- and length-based, sometimes 0),
:func:`budgets` (keyword arguments for ``build_context``), :func:`json_values`,
:func:`summaries` and :func:`mutated_wires` (entry wire forms with one field broken).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from hypothesis import strategies as st

from ctxlab import (
    ABSENT,
    AgentMessage,
    AssistantMessage,
    CompactionSummary,
    MessageSessionEntry,
    MetadataSessionEntry,
    SessionEntry,
    SystemMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    create_compaction_entry,
    text_of,
)
from ctxlab.json_values import FrozenDict, freeze_json

__all__ = [
    "MAX_ENTRIES",
    "LengthEstimator",
    "budgets",
    "entry_wires",
    "estimators",
    "json_values",
    "mutated_wires",
    "sessions",
    "summaries",
    "texts",
]

#: A generated session never has more entries than this.
MAX_ENTRIES = 40

# Text without surrogates (a JSONL file must be able to store it): ASCII, characters that
# JSON escapes, CJK (the course text is Chinese), a line separator and an astral emoji.
# A fixed alphabet keeps generation fast.
_ALPHABET = st.sampled_from(
    "abcxyz ABC019 .,:;-_/ \"\\'\n\t{}[] 中文摘要，。【】：\u2028\u00e9\U0001f600"
)


@cache
def texts(*, min_size: int = 0, max_size: int = 24) -> st.SearchStrategy[str]:
    """Short text, possibly empty, possibly with CJK characters and newlines."""
    return st.text(_ALPHABET, min_size=min_size, max_size=max_size)


@cache
def nonblank_texts(max_size: int = 16) -> st.SearchStrategy[str]:
    """Text that is not blank after trimming white space."""
    return texts(min_size=1, max_size=max_size).filter(lambda s: bool(s.strip()))


_finite_floats = st.floats(allow_nan=False, allow_infinity=False, width=64)
_json_scalars = (
    st.none() | st.booleans() | st.integers(-(10**12), 10**12) | _finite_floats | texts()
)


@cache
def json_values(max_leaves: int = 12) -> st.SearchStrategy[Any]:
    """Plain JSON values (dicts with str keys, lists, finite numbers, strings, bools, None)."""
    return st.recursive(
        _json_scalars,
        lambda children: (
            st.lists(children, max_size=4)
            | st.dictionaries(texts(max_size=8), children, max_size=4)
        ),
        max_leaves=max_leaves,
    )


@cache
def summaries() -> st.SearchStrategy[CompactionSummary]:
    """Valid seven-field summaries (non-blank goal, six short lists of strings)."""
    items = st.lists(texts(max_size=20), max_size=3).map(tuple)
    return st.builds(
        CompactionSummary,
        goal=nonblank_texts(30),
        constraints=items,
        completed=items,
        decisions=items,
        changed_files=items,
        unresolved=items,
        next=items,
    )


_SECTION_NAMES = ("rules", "style", "project")


@dataclass
class _PathBuilder:
    """Appends entries to a path, chaining ``parentId`` and giving fresh ids and times."""

    path: list[SessionEntry] = field(default_factory=list)
    next_id: int = 0
    next_call: int = 0
    clock: int = 0

    def new_id(self, prefix: str) -> str:
        self.next_id += 1
        return f"{prefix}{self.next_id}"

    def tick(self) -> int:
        self.clock += 1
        return self.clock

    def parent(self) -> str | None:
        return self.path[-1].id if self.path else None

    def add_message(self, prefix: str, message: AgentMessage) -> None:
        entry_id = self.new_id(prefix)
        self.path.append(MessageSessionEntry(entry_id, self.parent(), message.timestamp, message))

    def room(self) -> int:
        return MAX_ENTRIES - len(self.path)


def _usage(draw: st.DrawFn) -> Usage:
    prompt = draw(st.integers(0, 5000))
    output = draw(st.integers(0, 500))
    return Usage(prompt, output, prompt + output)


def _draw_system(draw: st.DrawFn, b: _PathBuilder) -> None:
    """A system message or patch: content and/or sections set or deleted."""
    content = draw(st.one_of(st.just(""), texts(max_size=20)))
    sections: FrozenDict[str | None] | None = None
    if draw(st.booleans()):
        raw = draw(
            st.dictionaries(
                st.sampled_from(_SECTION_NAMES),
                st.one_of(st.none(), texts(max_size=16)),
                max_size=3,
            )
        )
        sections = FrozenDict[str | None](raw)
    b.add_message("sys", SystemMessage(content, b.tick(), sections))


def _draw_metadata(draw: st.DrawFn, b: _PathBuilder) -> None:
    entry_id = b.new_id("meta")
    value = freeze_json(draw(json_values(6)), entry_id=entry_id, path="value")
    key = draw(nonblank_texts(10))
    b.path.append(MetadataSessionEntry(entry_id, b.parent(), b.tick(), key, value))


def _draw_extras(draw: st.DrawFn, b: _PathBuilder, *, system: bool, metadata: bool) -> None:
    """Zero or more system patches / metadata entries at the current position."""
    kinds = [kind for kind, on in (("system", system), ("metadata", metadata)) if on]
    if not kinds:
        return
    for kind in draw(st.lists(st.sampled_from(kinds), max_size=2)):
        if b.room() <= 0:
            return
        if kind == "system":
            _draw_system(draw, b)
        else:
            _draw_metadata(draw, b)


def _draw_interaction(
    draw: st.DrawFn, b: _PathBuilder, *, system: bool, metadata: bool, budget: int
) -> str:
    """One user interaction; returns the id of its user message (the group head)."""
    b.add_message("u", UserMessage((TextContent(draw(texts())),), b.tick()))
    head = b.path[-1].id
    # The rest of the interaction: assistant turns in order, results inserted anywhere.
    turns: list[AssistantMessage] = []
    results: list[ToolResultMessage] = []
    remaining = max(0, budget - 1)
    for _ in range(draw(st.integers(0, 2))):
        n_calls = draw(st.integers(0, min(3, max(0, (remaining - 1) // 2))))
        if remaining < 1 + 2 * n_calls:
            break
        calls: list[ToolCall] = []
        for _ in range(n_calls):
            b.next_call += 1
            call_id = f"call-{b.next_call}"
            name = draw(st.sampled_from(("read", "bash", "edit", "grep")))
            arguments = freeze_json(draw(json_values(4)), entry_id=None, path="arguments")
            raw = draw(st.one_of(st.none(), texts(max_size=10)))
            calls.append(ToolCall(call_id, name, arguments, raw))
            # No details key, "details": null, or any other JSON value.
            details = draw(st.one_of(st.just(ABSENT), st.none(), json_values(3)))
            results.append(
                ToolResultMessage(
                    call_id,
                    name,
                    tuple(TextContent(t) for t in draw(st.lists(texts(), max_size=2))),
                    draw(st.booleans()),
                    0,  # the real timestamp is given when the result is placed
                    details
                    if details is ABSENT
                    else freeze_json(details, entry_id=None, path="details"),
                )
            )
        blocks: list[TextContent | ToolCall] = [
            TextContent(t) for t in draw(st.lists(texts(), max_size=1))
        ]
        blocks.extend(calls)
        error = draw(st.one_of(st.none(), texts(max_size=10)))
        turns.append(
            AssistantMessage(
                tuple(blocks),
                provider="test",
                model="m",
                usage=_usage(draw),
                stop_reason="toolUse" if calls else draw(st.sampled_from(("stop", "length"))),
                timestamp=0,
                error_message=error,
            )
        )
        remaining -= 1 + n_calls
    rest: list[AgentMessage] = list(turns)
    for result in results:
        rest.insert(draw(st.integers(0, len(rest))), result)
    for index, message in enumerate(rest):
        if b.room() - (len(rest) - index) >= 3:
            _draw_extras(draw, b, system=system, metadata=metadata)
        b.add_message(_prefix(message), _restamp(message, b.tick()))
    return head


def _prefix(message: AgentMessage) -> str:
    return {"assistant": "a", "toolResult": "r", "user": "u", "system": "sys"}[message.role]


def _restamp(message: AgentMessage, timestamp: int) -> AgentMessage:
    if isinstance(message, AssistantMessage):
        return AssistantMessage(
            message.content,
            message.provider,
            message.model,
            message.usage,
            message.stop_reason,
            timestamp,
            message.error_message,
        )
    if isinstance(message, ToolResultMessage):
        return ToolResultMessage(
            message.tool_call_id,
            message.tool_name,
            message.content,
            message.is_error,
            timestamp,
            message.details,
        )
    return message


@st.composite
def sessions(
    draw: st.DrawFn,
    *,
    max_groups: int = 6,
    system: bool = True,
    metadata: bool = True,
    compactions: bool = True,
    min_groups: int = 0,
) -> list[SessionEntry]:
    """A valid active path: root first, each entry's ``parentId`` the entry before."""
    b = _PathBuilder()
    heads: list[str] = []
    _draw_extras(draw, b, system=system, metadata=metadata)
    n_groups = draw(st.integers(min_groups, max_groups))
    for index in range(n_groups):
        left_groups = n_groups - index
        room = b.room() - 3 * (left_groups - 1)  # keep space for the later groups
        if room < 1:
            break
        heads.append(
            _draw_interaction(draw, b, system=system, metadata=metadata, budget=min(room, 10))
        )
        if compactions and b.room() > 1 and draw(st.integers(0, 3)) == 0:
            kept = draw(st.sampled_from(heads))
            b.path.append(
                create_compaction_entry(
                    b.path,
                    id=b.new_id("compact"),
                    timestamp=b.tick(),
                    summary=draw(summaries()),
                    first_kept_entry_id=kept,
                    tokens_before=draw(st.integers(0, 10_000) | st.floats(0, 1e6)),
                )
            )
        if b.room() > 0:
            _draw_extras(draw, b, system=system, metadata=metadata)
    return b.path


@dataclass(frozen=True)
class LengthEstimator:
    """A deterministic estimator: ``ceil((len(text) + role weight) / per_token)``.

    Roles listed in ``free_roles`` cost 0 (an estimator may well price something at 0).
    An assistant's tool calls add their name length and argument count. Strings are
    priced by their length.
    """

    per_token: int
    weights: Mapping[str, int]
    free_roles: frozenset[str] = frozenset()

    def __call__(self, value: Any) -> int:
        if isinstance(value, str):
            return math.ceil(len(value) / self.per_token)
        role: str = value.role
        if role in self.free_roles:
            return 0
        size = len(text_of(value)) + self.weights.get(role, 0)
        if isinstance(value, AssistantMessage):
            size += sum(len(call.name) + 2 for call in value.tool_calls)
        return math.ceil(size / self.per_token)


_ROLES = ("system", "user", "assistant", "toolResult")


def estimators() -> st.SearchStrategy[Callable[[Any], int]]:
    """Deterministic, stateless estimators based on text length and role."""
    return st.builds(
        LengthEstimator,
        per_token=st.integers(1, 8),
        weights=st.fixed_dictionaries({role: st.integers(0, 12) for role in _ROLES}),
        free_roles=st.frozensets(st.sampled_from(_ROLES), max_size=1) | st.just(frozenset[str]()),
    )


def budgets() -> st.SearchStrategy[dict[str, int | float]]:
    """Keyword arguments ``max_tokens``, ``reserved_output``, ``safety_margin``."""
    small = st.integers(0, 20) | st.floats(0, 20, allow_nan=False)
    return st.fixed_dictionaries(
        {
            "max_tokens": st.integers(0, 300) | st.floats(0, 300, allow_nan=False),
            "reserved_output": small,
            "safety_margin": small,
        }
    )


def entry_wires() -> st.SearchStrategy[dict[str, Any]]:
    """The wire form (``to_json()``) of one entry of a generated session."""
    return (
        sessions(max_groups=3)
        .filter(bool)
        .flatmap(lambda path: st.sampled_from(path))
        .map(lambda entry: entry.to_json())
    )


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path inside a plain JSON value (dict keys and list indexes)."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(_paths(item, (*prefix, index)))
    return found


@st.composite
def mutated_wires(draw: st.DrawFn) -> Any:
    """An entry's wire form with one field replaced, deleted or added at random.

    The result may still be valid; the point is that it is *almost* valid, so the
    parser's checks deep inside an entry are reached.
    """
    wire = draw(entry_wires())
    where = draw(st.sampled_from(_paths(wire)))
    odd_values = (
        json_values(4)
        | st.sampled_from([math.nan, math.inf, -1, True, "", "  ", None, [], {}])
        | st.builds(object)
        | st.just({1: "non-string key"})
    )
    action = draw(st.sampled_from(("replace", "delete", "add")))
    if not where:
        return draw(odd_values) if action == "replace" else wire
    *parents, last = where
    target: Any = wire
    for key in parents:
        target = target[key]
    if action == "replace":
        target[last] = draw(odd_values)
    elif action == "delete":
        if isinstance(target, dict):
            del target[last]
        else:
            target.pop(last)
    else:
        holder = target[last]
        if isinstance(holder, dict):
            holder[draw(st.sampled_from(["files", "nextSteps", "extra", "invariants"]))] = 1
        elif isinstance(holder, list):
            holder.append(draw(odd_values))
        else:
            target[last] = [holder]
    return wire
