"""The chapter's fixtures: the ten-entry opening path and everything built on it.

Opening path (spec section 8; chapter "同一段历史会产生一份更短的模型输入"): one system
message and nine messages of a small coding session. In ``u3``'s interaction the assistant
calls ``read`` and a test runner in parallel, declaring ``read-1`` then ``test-1``; the
test finishes first, so ``r-test`` stands before ``r-read``.

=======  ==========  ====  ===========================================
id       role        cost  what it says
=======  ==========  ====  ===========================================
sys      system      3     content ``"sys"``
u1       user        3     asks where the store writes entries
a1       assistant   4     answers
u2       user        3     asks whether old messages can be deleted
a2       assistant   4     answers: no, record a compaction instead
u3       user        3     asks to read context.ts and run its tests
calls    assistant   3     calls ``read`` (read-1) and ``bash`` (test-1)
r-test   toolResult  3     answers test-1 (finished first)
r-read   toolResult  3     answers read-1
a3       assistant   3     final answer
=======  ==========  ====  ===========================================

The costs are the chapter's *test estimator* (:data:`opening_estimator`), not a real
tokenizer. It also prices every other fixture message: ``u4``/``a4``, the synthetic
summary messages of ``compact-1`` and ``compact-2`` (4 each, in English and Chinese) and
the system-patch path of the chapter's last section.

The early-draft records of the optional migration exercise (:func:`draft_records`,
:data:`NOT_MIGRATABLE`) live here too: they are data for the exercise, while
:mod:`ctxlab.migration` is the reference migration and does not depend on them.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ctxlab.compaction import SummaryLanguage, create_compaction_entry, render_summary
from ctxlab.entries import (
    CompactionSessionEntry,
    CompactionSummary,
    MessageSessionEntry,
    SessionEntry,
)
from ctxlab.errors import EstimatorError, shown
from ctxlab.json_values import FrozenDict
from ctxlab.messages import (
    AgentMessage,
    AssistantMessage,
    SystemMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    text_of,
)

__all__ = [
    "NOT_MIGRATABLE",
    "OPENING_COSTS",
    "TableEstimator",
    "compact1",
    "compact1_summary",
    "compact2",
    "compact2_summary",
    "compaction_corruptions",
    "draft_records",
    "duplicate_call_path",
    "duplicate_result_path",
    "missing_result_path",
    "opening_estimator",
    "opening_path",
    "recompacted_path",
    "results_before_call_path",
    "resumed_path",
    "system_patch_path",
    "unknown_call_path",
]

PROVIDER = "course"
MODEL = "course-model-1"

#: The cost of each opening entry, as the chapter's table gives it.
OPENING_COSTS: Mapping[str, int] = FrozenDict(
    {
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
)


def _user(text: str, timestamp: int) -> UserMessage:
    return UserMessage((TextContent(text),), timestamp)


def _assistant(
    text: str,
    timestamp: int,
    *calls: ToolCall,
    usage: tuple[int, int] = (900, 40),
) -> AssistantMessage:
    return AssistantMessage(
        content=(TextContent(text), *calls),
        provider=PROVIDER,
        model=MODEL,
        usage=Usage(usage[0], usage[1], usage[0] + usage[1]),
        stop_reason="toolUse" if calls else "stop",
        timestamp=timestamp,
    )


def _result(call_id: str, tool: str, text: str, timestamp: int) -> ToolResultMessage:
    return ToolResultMessage(call_id, tool, (TextContent(text),), False, timestamp)


def _entries(*pairs: tuple[str, AgentMessage]) -> list[SessionEntry]:
    """Chain messages into entries: each one's parent is the one before."""
    path: list[SessionEntry] = []
    parent: str | None = None
    for entry_id, message in pairs:
        path.append(MessageSessionEntry(entry_id, parent, message.timestamp, message))
        parent = entry_id
    return path


_U1 = "Where does the session store write new entries?"
_A1 = "JsonlSessionStore appends one JSON line per entry and never rewrites earlier lines."
_U2 = "The context is getting long. Can we just delete the old messages?"
_A2 = (
    "Better not: history stays append-only. We record a compaction entry with a summary"
    " and rebuild the context from it."
)
_U3 = "Read context.ts and run its tests."
_CALLS = "I'll read context.ts and run the context tests in parallel."
_R_TEST = (
    "PASS context.test.ts\n  keeps whole interactions\n  drops the oldest group first\n2 passed"
)
_R_READ = (
    "export function buildContext(activePath, options) {\n"
    "  // keep whole interactions, newest first\n"
    "}"
)
_A3 = "buildContext() in context.ts keeps whole interactions, newest first; both tests pass."
_U4 = "Add a test for a group that is too big on its own."
_A4 = "Added: a 15-token group under a 10-token budget comes back whole as single_group_overflow."


def _read_call() -> ToolCall:
    return ToolCall("read-1", "read", FrozenDict({"path": "src/context.ts"}))


def _test_call() -> ToolCall:
    return ToolCall("test-1", "bash", FrozenDict({"command": "npm test -- context"}))


def opening_path() -> list[SessionEntry]:
    """The chapter's ten-entry opening path (a fresh list each call)."""
    return _entries(
        ("sys", SystemMessage("sys", 1)),
        ("u1", _user(_U1, 2)),
        ("a1", _assistant(_A1, 3)),
        ("u2", _user(_U2, 4)),
        ("a2", _assistant(_A2, 5)),
        ("u3", _user(_U3, 6)),
        ("calls", _assistant(_CALLS, 7, _read_call(), _test_call())),
        ("r-test", _result("test-1", "bash", _R_TEST, 8)),
        ("r-read", _result("read-1", "read", _R_READ, 9)),
        ("a3", _assistant(_A3, 10)),
    )


def compact1_summary() -> CompactionSummary:
    """The seven-field summary recorded by ``compact-1`` (it replaces group 1)."""
    return CompactionSummary(
        goal="Keep the agent's context under budget without losing history.",
        constraints=("History is append-only: never edit or delete session entries.",),
        completed=("Confirmed that JsonlSessionStore appends one line per entry.",),
        decisions=("Record compaction as a new entry instead of deleting messages.",),
        changed_files=("context.ts",),
        unresolved=(),
        next=("Read context.ts and run the context tests.",),
    )


def compact1(path: list[SessionEntry] | None = None) -> CompactionSessionEntry:
    """``compact-1``: timestamp 100, keeps from ``u2``, tokensBefore 29, parent ``a3``."""
    return create_compaction_entry(
        opening_path() if path is None else path,
        id="compact-1",
        timestamp=100,
        summary=compact1_summary(),
        first_kept_entry_id="u2",
        tokens_before=29,
    )


def resumed_path() -> list[SessionEntry]:
    """Opening path + ``compact-1`` + ``u4`` → ``a4`` appended after it."""
    path = opening_path()
    path.append(compact1(path))
    path.extend(_after(path[-1].id, ("u4", _user(_U4, 101)), ("a4", _assistant(_A4, 102))))
    return path


def compact2_summary() -> CompactionSummary:
    """The summary recorded by ``compact-2`` (it keeps from ``u3``)."""
    return CompactionSummary(
        goal="Keep the agent's context under budget without losing history.",
        constraints=("History is append-only: never edit or delete session entries.",),
        completed=(
            "Confirmed that JsonlSessionStore appends one line per entry.",
            "buildContext() keeps whole interactions; the context tests pass.",
        ),
        decisions=("Record compaction as a new entry instead of deleting messages.",),
        changed_files=("context.ts", "context.test.ts"),
        unresolved=(),
        next=("Run the new overflow test.",),
    )


def compact2(path: list[SessionEntry] | None = None) -> CompactionSessionEntry:
    """``compact-2``: a second compaction on the resumed path, keeping from ``u3``."""
    return create_compaction_entry(
        resumed_path() if path is None else path,
        id="compact-2",
        timestamp=200,
        summary=compact2_summary(),
        first_kept_entry_id="u3",
        tokens_before=33,
    )


def recompacted_path() -> list[SessionEntry]:
    """The resumed path with ``compact-2`` appended after ``a4``."""
    path = resumed_path()
    path.append(compact2(path))
    return path


def _after(parent: str, *pairs: tuple[str, AgentMessage]) -> list[SessionEntry]:
    entries = _entries(*pairs)
    first = entries[0]
    assert isinstance(first, MessageSessionEntry)
    entries[0] = MessageSessionEntry(first.id, parent, first.timestamp, first.message)
    return entries


_PATCH_U3 = "Now make the change, and keep the diff small."
_PATCH_A3 = "Done: a four-line change in context.ts; the context tests still pass."


def system_patch_path() -> list[SessionEntry]:
    """The chapter's last section: system state crosses the compaction boundary.

    ``sys`` (content BASE, rules v1) → u1 → a1 → ``patch-1`` (rules v2) → u2 → a2 →
    ``compact-1`` (keeps u2) → ``patch-2`` ("Prefer small diffs.") → u3 → a3.
    """
    head = _entries(
        ("sys", SystemMessage("BASE", 1, FrozenDict[str | None]({"rules": "RULE v1"}))),
        ("u1", _user(_U1, 2)),
        ("a1", _assistant(_A1, 3)),
        ("patch-1", SystemMessage("", 4, FrozenDict[str | None]({"rules": "RULE v2"}))),
        ("u2", _user(_U2, 5)),
        ("a2", _assistant(_A2, 6)),
    )
    compaction = create_compaction_entry(
        head,
        id="compact-1",
        timestamp=100,
        summary=compact1_summary(),
        first_kept_entry_id="u2",
        tokens_before=20,
    )
    tail = _after(
        compaction.id,
        ("patch-2", SystemMessage("Prefer small diffs.", 101)),
        ("u3", _user(_PATCH_U3, 102)),
        ("a3", _assistant(_PATCH_A3, 103)),
    )
    return [*head, compaction, *tail]


# -- the chapter's corrupted records and other broken variants ------------------------------


def _replace_message(path: list[SessionEntry], entry_id: str, message: AgentMessage) -> None:
    for index, entry in enumerate(path):
        if entry.id == entry_id:
            assert isinstance(entry, MessageSessionEntry)
            path[index] = MessageSessionEntry(entry.id, entry.parent_id, entry.timestamp, message)
            return
    raise AssertionError(entry_id)


def unknown_call_path() -> list[SessionEntry]:
    """The chapter's corruption: ``r-test.toolCallId`` changed from test-1 to unknown-1."""
    path = opening_path()
    _replace_message(path, "r-test", _result("unknown-1", "bash", _R_TEST, 8))
    return path


def results_before_call_path() -> list[SessionEntry]:
    """``r-test`` moved in front of ``calls`` (still valid: pairing is by id only)."""
    path = opening_path()
    order = ["sys", "u1", "a1", "u2", "a2", "u3", "r-test", "calls", "r-read", "a3"]
    by_id = {entry.id: entry for entry in path}
    return [by_id[entry_id] for entry_id in order]


def missing_result_path() -> list[SessionEntry]:
    """``r-read`` removed: call read-1 has no result."""
    return [entry for entry in opening_path() if entry.id != "r-read"]


def duplicate_result_path() -> list[SessionEntry]:
    """``r-read`` also answers test-1: call test-1 gets two results (and read-1 none)."""
    path = opening_path()
    _replace_message(path, "r-read", _result("test-1", "read", _R_READ, 9))
    return path


def duplicate_call_path() -> list[SessionEntry]:
    """``calls`` declares read-1 twice."""
    path = opening_path()
    _replace_message(path, "calls", _assistant(_CALLS, 7, _read_call(), _read_call()))
    return path


def _compact1_with(**changes: Any) -> dict[str, Any]:
    """The wire form of ``compact1()`` with changes: ``summary__files=[...]`` sets
    ``summary.files``; the value :data:`_DELETE` removes the key."""
    wire = compact1().to_json()
    for dotted, value in changes.items():
        *parents, key = dotted.split("__")
        target = wire
        for name in parents:
            target = target[name]
        if value is _DELETE:
            del target[key]
        else:
            target[key] = value
    return wire


def compaction_corruptions() -> dict[str, dict[str, Any]]:
    """Broken wire forms of ``compact-1``, by what is wrong with them.

    The first is the chapter's own: ``summary.changedFiles`` removed and the early-draft
    ``summary.files = ["context.ts"]`` in its place.
    """
    variant = _compact1_with
    return {
        "files instead of changedFiles": variant(
            summary__changedFiles=_DELETE, summary__files=["context.ts"]
        ),
        "nextSteps instead of next": variant(
            summary__next=_DELETE, summary__nextSteps=["Read context.ts."]
        ),
        "invariants beside constraints": variant(summary__invariants=["append-only"]),
        "compactedEntryIds on the entry": variant(compactedEntryIds=["u1", "a1"]),
        "goal missing": variant(summary__goal=_DELETE),
        "blank goal": variant(summary__goal="   "),
        "a decision that is not a string": variant(summary__decisions=[42]),
        "blank firstKeptEntryId": variant(firstKeptEntryId=""),
        "parentId null": variant(parentId=None),
        "negative tokensBefore": variant(tokensBefore=-1),
        "tokensBefore is NaN": variant(tokensBefore=float("nan")),
        "tokensBefore is true": variant(tokensBefore=True),
    }


# -- early-draft records (the optional migration exercise, ctxlab.migration) ----------------------


def draft_records() -> dict[str, dict[str, Any]]:
    """Early-draft forms of ``compact-1`` (fresh dicts each call), by what is old in them.

    All follow :func:`opening_path` (pass it as ``earlier`` to
    :func:`ctxlab.migration.migrate_draft_entry`). The first is the chapter's own
    corruption: ``changedFiles`` removed, ``files = ["context.ts"]``. The names in
    :data:`NOT_MIGRATABLE` must be refused with a ``MigrationError``.
    """
    draft = _compact1_with
    current = compact1().to_json()["summary"]
    return {
        "files instead of changedFiles": draft(
            summary__changedFiles=_DELETE, summary__files=["context.ts"]
        ),
        "nextSteps instead of next": draft(
            summary__next=_DELETE, summary__nextSteps=current["next"]
        ),
        "invariants instead of constraints": draft(
            summary__constraints=_DELETE, summary__invariants=current["constraints"]
        ),
        "compactedEntryIds instead of firstKeptEntryId": draft(
            firstKeptEntryId=_DELETE, compactedEntryIds=["u1", "a1"]
        ),
        "compactedEntryIds beside firstKeptEntryId": draft(compactedEntryIds=["u1", "a1"]),
        "every draft name at once": draft(
            summary__changedFiles=_DELETE,
            summary__files=current["changedFiles"],
            summary__next=_DELETE,
            summary__nextSteps=current["next"],
            summary__constraints=_DELETE,
            summary__invariants=current["constraints"],
            firstKeptEntryId=_DELETE,
            compactedEntryIds=["sys", "u1", "a1"],
        ),
        "already current": draft(),
        # -- not migratable ---------------------------------------------------------------
        "files and changedFiles disagree": draft(summary__files=["store.ts"]),
        "invariants beside other constraints": draft(summary__invariants=["append-only"]),
        "compactedEntryIds ends inside an interaction": draft(
            firstKeptEntryId=_DELETE, compactedEntryIds=["u1", "a1", "u2"]
        ),
        "compactedEntryIds names an unknown entry": draft(
            firstKeptEntryId=_DELETE, compactedEntryIds=["u1", "a0"]
        ),
        "compactedEntryIds disagrees with firstKeptEntryId": draft(
            firstKeptEntryId="u3", compactedEntryIds=["u1", "a1"]
        ),
        "goal missing (the parser still refuses)": draft(summary__goal=_DELETE),
    }


#: The draft records of :func:`draft_records` that no migration may accept.
NOT_MIGRATABLE: frozenset[str] = frozenset(
    {
        "files and changedFiles disagree",
        "invariants beside other constraints",
        "compactedEntryIds ends inside an interaction",
        "compactedEntryIds names an unknown entry",
        "compactedEntryIds disagrees with firstKeptEntryId",
        "goal missing (the parser still refuses)",
    }
)

_DELETE: Any = object()


# -- the test estimator -----------------------------------------------------------------------


class TableEstimator:
    """Prices messages from a fixed table keyed by role and text (``text_of``).

    A message that is not in the table is an error, so a lesson can never silently price
    something it did not mean to. The estimator is read-only: its table is a read-only
    mapping and its attributes cannot be set, so code under check cannot change the
    chapter's prices for the checks (and the reference) that follow (issue 17).
    """

    __slots__ = ("_costs", "costs", "name")

    name: str
    costs: Mapping[str, int]
    _costs: Mapping[tuple[str, str], int]

    def __init__(self, name: str, costs: Mapping[tuple[str, str], int]) -> None:
        table = FrozenDict({f"{role}: {text}": cost for (role, text), cost in costs.items()})
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "costs", table)
        object.__setattr__(self, "_costs", MappingProxyType(dict(costs)))

    def __setattr__(self, attribute: str, value: object) -> None:
        raise AttributeError(f"{self.name} is read-only: its prices are the chapter's")

    def __delattr__(self, attribute: str) -> None:
        raise AttributeError(f"{self.name} is read-only: its prices are the chapter's")

    def __copy__(self) -> TableEstimator:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> TableEstimator:
        return self

    def __reduce__(self) -> tuple[type[TableEstimator], tuple[str, dict[tuple[str, str], int]]]:
        # Rebuilt from a plain table (a read-only mapping does not pickle): the terminal
        # route sends an estimator to the process that runs the student's file.
        return (TableEstimator, (self.name, dict(self._costs)))

    def __call__(self, message: Any) -> int:
        if isinstance(message, str):
            key = ("text", message)
        elif isinstance(message, (SystemMessage, UserMessage, AssistantMessage, ToolResultMessage)):
            key = (message.role, text_of(message))
        else:
            kind = type(message).__name__
            raise EstimatorError(f"{self.name} cannot price {shown(message)}", subject=kind)
        if key not in self._costs:
            preview = key[1] if len(key[1]) <= 40 else key[1][:37] + "..."
            raise EstimatorError(
                f"{self.name} has no price for the {key[0]} message {preview!r}",
                subject=f"{key[0]} message",
            )
        return self._costs[key]

    def __repr__(self) -> str:
        return f"<{self.name}: {len(self._costs)} priced messages>"


_LANGUAGES: tuple[SummaryLanguage, ...] = ("en", "zh")


def _build_opening_estimator() -> TableEstimator:
    costs: dict[tuple[str, str], int] = {}
    for entry in opening_path():
        assert isinstance(entry, MessageSessionEntry)
        costs[(entry.message.role, text_of(entry.message))] = OPENING_COSTS[entry.id]
    costs[("user", _U4)] = 3
    costs[("assistant", _A4)] = 4
    for summary in (compact1_summary(), compact2_summary()):
        for language in _LANGUAGES:
            costs[("user", render_summary(summary, language))] = 4
    # The system-patch path: each system entry, and the prompt replayed after each one.
    costs[("system", "BASE\n\nRULE v1")] = 3
    costs[("system", "RULE v2")] = 2
    costs[("system", "BASE\n\nRULE v2")] = 3
    costs[("system", "Prefer small diffs.")] = 2
    costs[("system", "BASE\n\nPrefer small diffs.\n\nRULE v2")] = 4
    costs[("user", _PATCH_U3)] = 3
    costs[("assistant", _PATCH_A3)] = 4
    return TableEstimator("opening_estimator", costs)


#: The chapter's test estimator: prices every fixture message (see the module docstring).
opening_estimator: TableEstimator = _build_opening_estimator()
