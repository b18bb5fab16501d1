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

Every text of the session -- the dialogue, the tool results, the summaries -- is ctxlab's
(the chapter gives the ids, the roles and the costs, not the words) and exists in English and
in Chinese: each fixture function takes ``language="en"`` or ``"zh"`` (keyword only; the
default is the one :func:`set_language` chose, English unless changed), and the Chinese
edition of the notebooks sets ``"zh"`` once (:func:`ctxlab.lab.setup_notebook`). Both
languages have the same ids, the same structure and the same costs: the estimator prices
either text of an entry at that entry's cost. What the chapter itself writes stays as it
writes it in both: ``"sys"``, ``"BASE"``, ``"RULE v1"``, ``"Prefer small diffs."``, file names,
tool names and arguments.

The early-draft records of the optional migration exercise (:func:`draft_records`,
:data:`NOT_MIGRATABLE`) live here too: they are data for the exercise, while
:mod:`ctxlab.migration` is the reference migration and does not depend on them.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

from ctxlab.compaction import SummaryLanguage, create_compaction_entry, render_summary
from ctxlab.entries import (
    CompactionSessionEntry,
    CompactionSummary,
    MessageSessionEntry,
    SessionEntry,
)
from ctxlab.errors import CtxlabError, EstimatorError, shown
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
    "get_language",
    "missing_result_path",
    "opening_estimator",
    "opening_path",
    "recompacted_path",
    "results_before_call_path",
    "resumed_path",
    "set_language",
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


def _assistant(text: str, timestamp: int, *calls: ToolCall) -> AssistantMessage:
    return AssistantMessage(
        content=(TextContent(text), *calls),
        provider=PROVIDER,
        model=MODEL,
        usage=Usage(900, 40, 940),
        stop_reason="toolUse" if calls else "stop",
        timestamp=timestamp,
    )


def _result(call_id: str, tool: str, text: str, timestamp: int) -> ToolResultMessage:
    return ToolResultMessage(call_id, tool, (TextContent(text),), False, timestamp)


def _entries(*pairs: tuple[str, AgentMessage], parent: str | None = None) -> list[SessionEntry]:
    """Chain messages into entries: each one's parent is the one before (the first's is
    ``parent``)."""
    path: list[SessionEntry] = []
    for entry_id, message in pairs:
        path.append(MessageSessionEntry(entry_id, parent, message.timestamp, message))
        parent = entry_id
    return path


#: The language of a fixture's texts: ``"en"`` (English) or ``"zh"`` (Chinese).
FixtureLanguage: TypeAlias = Literal["en", "zh"]
_LANGUAGE: list[FixtureLanguage] = ["en"]


def set_language(language: FixtureLanguage) -> None:
    """The language of the texts the fixture functions return when none is passed (process
    wide on purpose, like :func:`ctxlab.lab.set_language`: a notebook sets it once)."""
    _LANGUAGE[0] = _checked(language, "fixtures.set_language")


def get_language() -> FixtureLanguage:
    """The language of the fixtures' texts when a function is given none (``"en"``)."""
    return _LANGUAGE[0]


def _checked(language: FixtureLanguage, where: str) -> FixtureLanguage:
    if language != "en" and language != "zh":
        raise CtxlabError(
            f"must be 'en' or 'zh', got {shown(language)}", where=where, option="language"
        )
    return language


def _lang(language: FixtureLanguage | None) -> FixtureLanguage:
    return _LANGUAGE[0] if language is None else _checked(language, "fixtures")


#: The session's texts (ctxlab's: the chapter gives none), by language.
_TEXTS: Mapping[str, Mapping[str, str]] = {
    "en": {
        "u1": "Where does the session store write new entries?",
        "a1": "JsonlSessionStore appends one JSON line per entry and never rewrites earlier lines.",
        "u2": "The context is getting long. Can we just delete the old messages?",
        "a2": (
            "Better not: history stays append-only. We record a compaction entry with a summary"
            " and rebuild the context from it."
        ),
        "u3": "Read context.ts and run its tests.",
        "calls": "I'll read context.ts and run the context tests in parallel.",
        "r-test": (
            "PASS context.test.ts\n  keeps whole interactions\n  drops the oldest group first"
            "\n2 passed"
        ),
        "r-read": (
            "export function buildContext(activePath, options) {\n"
            "  // keep whole interactions, newest first\n"
            "}"
        ),
        "a3": (
            "buildContext() in context.ts keeps whole interactions, newest first; both tests pass."
        ),
        "u4": "Add a test for a group that is too big on its own.",
        "a4": (
            "Added: a 15-token group under a 10-token budget comes back whole as"
            " single_group_overflow."
        ),
        "patch-u3": "Now make the change, and keep the diff small.",
        "patch-a3": "Done: a four-line change in context.ts; the context tests still pass.",
        "goal": "Keep the agent's context under budget without losing history.",
        "constraint": "History is append-only: never edit or delete session entries.",
        "completed-1": "Confirmed that JsonlSessionStore appends one line per entry.",
        "completed-2": "buildContext() keeps whole interactions; the context tests pass.",
        "decision": "Record compaction as a new entry instead of deleting messages.",
        "next-1": "Read context.ts and run the context tests.",
        "next-2": "Run the new overflow test.",
        "draft-next": "Read context.ts.",
    },
    "zh": {
        "u1": "Session Store 把新的 entry 写到哪里？",
        "a1": "JsonlSessionStore 每条 entry 追加一行 JSON，从不改写前面的行。",
        "u2": "上下文越来越长了。能不能直接删掉旧消息？",
        "a2": "最好不要：历史只追加。我们记录一条带摘要的 compaction entry，再从它重建上下文。",
        "u3": "读一下 context.ts，再运行它的测试。",
        "calls": "我同时读取 context.ts、运行 context 的测试。",
        "r-test": "PASS context.test.ts\n  保留完整的组\n  先丢弃最旧的一组\n2 passed",
        "r-read": (
            "export function buildContext(activePath, options) {\n"
            "  // 保留完整的组，从最新一组开始\n"
            "}"
        ),
        "a3": "context.ts 里的 buildContext() 保留完整的组，从最新一组开始；两项测试都通过了。",
        "u4": "再加一个测试：一组单独就放不下的情形。",
        "a4": (
            "已添加：预算 10 个 token 时，15 个 token 的一组完整返回，"
            "reason 为 single_group_overflow。"
        ),
        "patch-u3": "现在动手改，diff 尽量小。",
        "patch-a3": "完成：context.ts 里改了四行；context 的测试仍然通过。",
        "goal": "在不丢失历史的前提下，让 agent 的上下文不超出预算。",
        "constraint": "历史只追加：从不修改或删除 session entry。",
        "completed-1": "确认了 JsonlSessionStore 每条 entry 追加一行。",
        "completed-2": "buildContext() 保留完整的组；context 的测试通过。",
        "decision": "把 compaction 记录成一条新 entry，而不是删除消息。",
        "next-1": "读 context.ts，运行 context 的测试。",
        "next-2": "运行新的超限测试。",
        "draft-next": "读 context.ts。",
    },
}


def _t(key: str, language: FixtureLanguage | None) -> str:
    return _TEXTS[_lang(language)][key]


def _read_call() -> ToolCall:
    return ToolCall("read-1", "read", FrozenDict({"path": "src/context.ts"}))


def _test_call() -> ToolCall:
    return ToolCall("test-1", "bash", FrozenDict({"command": "npm test -- context"}))


def opening_path(*, language: FixtureLanguage | None = None) -> list[SessionEntry]:
    """The chapter's ten-entry opening path (a fresh list each call); its texts in
    ``language`` (see :func:`set_language`)."""
    t = _TEXTS[_lang(language)]
    return _entries(
        ("sys", SystemMessage("sys", 1)),
        ("u1", _user(t["u1"], 2)),
        ("a1", _assistant(t["a1"], 3)),
        ("u2", _user(t["u2"], 4)),
        ("a2", _assistant(t["a2"], 5)),
        ("u3", _user(t["u3"], 6)),
        ("calls", _assistant(t["calls"], 7, _read_call(), _test_call())),
        ("r-test", _result("test-1", "bash", t["r-test"], 8)),
        ("r-read", _result("read-1", "read", t["r-read"], 9)),
        ("a3", _assistant(t["a3"], 10)),
    )


def compact1_summary(*, language: FixtureLanguage | None = None) -> CompactionSummary:
    """The seven-field summary recorded by ``compact-1`` (it replaces group 1)."""
    t = _TEXTS[_lang(language)]
    return CompactionSummary(
        goal=t["goal"],
        constraints=(t["constraint"],),
        completed=(t["completed-1"],),
        decisions=(t["decision"],),
        changed_files=("context.ts",),
        unresolved=(),
        next=(t["next-1"],),
    )


def compact1(
    path: list[SessionEntry] | None = None, *, language: FixtureLanguage | None = None
) -> CompactionSessionEntry:
    """``compact-1``: timestamp 100, keeps from ``u2``, tokensBefore 29, parent ``a3``."""
    return create_compaction_entry(
        opening_path(language=language) if path is None else path,
        id="compact-1",
        timestamp=100,
        summary=compact1_summary(language=language),
        first_kept_entry_id="u2",
        tokens_before=29,
    )


def resumed_path(*, language: FixtureLanguage | None = None) -> list[SessionEntry]:
    """Opening path + ``compact-1`` + ``u4`` → ``a4`` appended after it."""
    t = _TEXTS[_lang(language)]
    path = opening_path(language=language)
    path.append(compact1(path, language=language))
    path.extend(
        _entries(("u4", _user(t["u4"], 101)), ("a4", _assistant(t["a4"], 102)), parent=path[-1].id)
    )
    return path


def compact2_summary(*, language: FixtureLanguage | None = None) -> CompactionSummary:
    """The summary recorded by ``compact-2`` (it keeps from ``u3``)."""
    t = _TEXTS[_lang(language)]
    return CompactionSummary(
        goal=t["goal"],
        constraints=(t["constraint"],),
        completed=(t["completed-1"], t["completed-2"]),
        decisions=(t["decision"],),
        changed_files=("context.ts", "context.test.ts"),
        unresolved=(),
        next=(t["next-2"],),
    )


def compact2(
    path: list[SessionEntry] | None = None, *, language: FixtureLanguage | None = None
) -> CompactionSessionEntry:
    """``compact-2``: a second compaction on the resumed path, keeping from ``u3``."""
    return create_compaction_entry(
        resumed_path(language=language) if path is None else path,
        id="compact-2",
        timestamp=200,
        summary=compact2_summary(language=language),
        first_kept_entry_id="u3",
        tokens_before=33,
    )


def recompacted_path(*, language: FixtureLanguage | None = None) -> list[SessionEntry]:
    """The resumed path with ``compact-2`` appended after ``a4``."""
    path = resumed_path(language=language)
    path.append(compact2(path, language=language))
    return path


def system_patch_path(*, language: FixtureLanguage | None = None) -> list[SessionEntry]:
    """The chapter's last section: system state crosses the compaction boundary.

    ``sys`` (content BASE, rules v1) → u1 → a1 → ``patch-1`` (rules v2) → u2 → a2 →
    ``compact-1`` (keeps u2) → ``patch-2`` ("Prefer small diffs.") → u3 → a3.
    """
    t = _TEXTS[_lang(language)]
    head = _entries(
        ("sys", SystemMessage("BASE", 1, FrozenDict[str | None]({"rules": "RULE v1"}))),
        ("u1", _user(t["u1"], 2)),
        ("a1", _assistant(t["a1"], 3)),
        ("patch-1", SystemMessage("", 4, FrozenDict[str | None]({"rules": "RULE v2"}))),
        ("u2", _user(t["u2"], 5)),
        ("a2", _assistant(t["a2"], 6)),
    )
    compaction = create_compaction_entry(
        head,
        id="compact-1",
        timestamp=100,
        summary=compact1_summary(language=language),
        first_kept_entry_id="u2",
        tokens_before=20,
    )
    tail = _entries(
        ("patch-2", SystemMessage("Prefer small diffs.", 101)),
        ("u3", _user(t["patch-u3"], 102)),
        ("a3", _assistant(t["patch-a3"], 103)),
        parent=compaction.id,
    )
    return [*head, compaction, *tail]


# -- the chapter's corrupted records and other broken variants ------------------------------


def _opening_with(
    language: FixtureLanguage | None, entry_id: str, message: AgentMessage
) -> list[SessionEntry]:
    """The opening path with the message of entry ``entry_id`` replaced by ``message``."""
    path = opening_path(language=language)
    index = next(index for index, entry in enumerate(path) if entry.id == entry_id)
    old = path[index]
    path[index] = MessageSessionEntry(entry_id, old.parent_id, old.timestamp, message)
    return path


def unknown_call_path(*, language: FixtureLanguage | None = None) -> list[SessionEntry]:
    """The chapter's corruption: ``r-test.toolCallId`` changed from test-1 to unknown-1."""
    return _opening_with(
        language, "r-test", _result("unknown-1", "bash", _t("r-test", language), 8)
    )


def results_before_call_path(*, language: FixtureLanguage | None = None) -> list[SessionEntry]:
    """``r-test`` moved in front of ``calls`` (still valid: pairing is by id only)."""
    path = opening_path(language=language)
    order = ["sys", "u1", "a1", "u2", "a2", "u3", "r-test", "calls", "r-read", "a3"]
    by_id = {entry.id: entry for entry in path}
    return [by_id[entry_id] for entry_id in order]


def missing_result_path(*, language: FixtureLanguage | None = None) -> list[SessionEntry]:
    """``r-read`` removed: call read-1 has no result."""
    return [entry for entry in opening_path(language=language) if entry.id != "r-read"]


def duplicate_result_path(*, language: FixtureLanguage | None = None) -> list[SessionEntry]:
    """``r-read`` also answers test-1: call test-1 gets two results (and read-1 none)."""
    return _opening_with(language, "r-read", _result("test-1", "read", _t("r-read", language), 9))


def duplicate_call_path(*, language: FixtureLanguage | None = None) -> list[SessionEntry]:
    """``calls`` declares read-1 twice."""
    calls = _assistant(_t("calls", language), 7, _read_call(), _read_call())
    return _opening_with(language, "calls", calls)


def _compact1_with(language: FixtureLanguage | None, **changes: Any) -> dict[str, Any]:
    """The wire form of ``compact1()`` with changes: ``summary__files=[...]`` sets
    ``summary.files``; the value :data:`_DELETE` removes the key."""
    wire = compact1(language=language).to_json()
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


def compaction_corruptions(*, language: FixtureLanguage | None = None) -> dict[str, dict[str, Any]]:
    """Broken wire forms of ``compact-1``, by what is wrong with them.

    The first is the chapter's own: ``summary.changedFiles`` removed and the early-draft
    ``summary.files = ["context.ts"]`` in its place.
    """

    variant = partial(_compact1_with, language)
    return {
        "files instead of changedFiles": variant(
            summary__changedFiles=_DELETE, summary__files=["context.ts"]
        ),
        "nextSteps instead of next": variant(
            summary__next=_DELETE, summary__nextSteps=[_t("draft-next", language)]
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


def draft_records(*, language: FixtureLanguage | None = None) -> dict[str, dict[str, Any]]:
    """Early-draft forms of ``compact-1`` (fresh dicts each call), by what is old in them.

    All follow :func:`opening_path` (pass it as ``earlier`` to
    :func:`ctxlab.migration.migrate_draft_entry`). The first is the chapter's own
    corruption: ``changedFiles`` removed, ``files = ["context.ts"]``. The names in
    :data:`NOT_MIGRATABLE` must be refused with a ``MigrationError``.
    """

    draft = partial(_compact1_with, language)
    current = compact1(language=language).to_json()["summary"]
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
    # Every text in both languages, each at its entry's cost: the language changes no price.
    for texts in _LANGUAGES:
        for entry in opening_path(language=texts):
            assert isinstance(entry, MessageSessionEntry)
            costs[(entry.message.role, text_of(entry.message))] = OPENING_COSTS[entry.id]
        costs[("user", _t("u4", texts))] = 3
        costs[("assistant", _t("a4", texts))] = 4
        for summary in (compact1_summary(language=texts), compact2_summary(language=texts)):
            for language in _LANGUAGES:
                costs[("user", render_summary(summary, language))] = 4
        costs[("user", _t("patch-u3", texts))] = 3
        costs[("assistant", _t("patch-a3", texts))] = 4
    # The system-patch path: each system entry, and the prompt replayed after each one.
    costs[("system", "BASE\n\nRULE v1")] = 3
    costs[("system", "RULE v2")] = 2
    costs[("system", "BASE\n\nRULE v2")] = 3
    costs[("system", "Prefer small diffs.")] = 2
    costs[("system", "BASE\n\nPrefer small diffs.\n\nRULE v2")] = 4
    return TableEstimator("opening_estimator", costs)


#: The chapter's test estimator: prices every fixture message (see the module docstring).
opening_estimator: TableEstimator = _build_opening_estimator()
