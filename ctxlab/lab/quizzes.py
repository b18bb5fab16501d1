"""The exit quiz of each lab 11.1-11.5 (issue 27) as data: ``data/quizzes.json`` ties each
question to what it tests in the chapter's words (one of the chapter's tests, or else the
rules it states) and to the notebook sections that teach it; its expected answer is computed
with ctxlab by a function here (named in the data), never written down. The questions' text
is in the notebook source; :func:`ctxlab.lab.classroom.check_quiz` judges the answers.
"""

from __future__ import annotations

import functools
import inspect
import json
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import ctxlab
from ctxlab import CompactionSummary, ContextResult, MessageSessionEntry, SystemMessage, fixtures
from ctxlab.errors import CtxlabError
from ctxlab.interactions import message_entries

__all__ = ["QUIZZES", "AnswerKind", "Question", "chapter_build", "reopened"]


AnswerKind = Literal["choice", "choices", "number", "ids", "text"]


@dataclass(frozen=True)
class Question:
    """One exit-quiz question: its number, what it tests (the chapter's ``test`` of that name,
    or else the chapter's ``rules``, each quoted verbatim), the ``sections`` of the notebook
    that teach it (their headings, English and Chinese), the kind of answer, and a function
    computing the expected answer with ctxlab."""

    lab: str
    number: int
    kind: AnswerKind
    expected: Callable[[], object]
    why_en: str
    why_zh: str
    sections: tuple[tuple[str, str], ...]
    test: str = ""
    rules: tuple[str, ...] = ()


def chapter_build(path: Sequence[ctxlab.SessionEntry], max_tokens: int) -> ContextResult:
    """The chapter's budget at ``max_tokens`` (:class:`ctxlab.lab.ledger.Budget`, loaded late:
    the classroom kit needs neither pandas nor matplotlib until a quiz is checked)."""
    from ctxlab.lab.ledger import Budget

    return Budget(max_tokens).build(path)


def _refused(action: Callable[[], object]) -> bool:
    try:
        action()
    except CtxlabError:
        return True
    return False


def _q11_1_draft() -> str:
    wire = fixtures.compact1().to_json()
    wire["summary"]["files"] = ["context.ts"]  # beside changedFiles, not instead of it
    records = [entry.to_json() for entry in fixtures.opening_path()] + [wire]
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / "session.jsonl"
        lines = (json.dumps(record, ensure_ascii=False) + "\n" for record in records)
        file.write_text("".join(lines), encoding="utf-8")
        try:
            count = len(ctxlab.JsonlSessionStore.open(file).entries())
        except ctxlab.CtxlabError as error:
            return "b" if "compact-1" in str(error) and "11" in str(error) else "?"
    return "a" if count == 10 else "c"


def _q11_1_fields() -> int:
    return len(CompactionSummary(goal="g").to_json())  # six empty lists are still six keys


def _q11_1_tokens_before() -> list[str]:
    options = {"a": -1, "b": 0, "c": 12345, "d": "29"}
    refused = []
    for letter, value in options.items():
        wire = fixtures.compact1().to_json()
        wire["tokensBefore"] = value
        if _refused(functools.partial(ctxlab.parse_session_entry, wire)):
            refused.append(letter)
    return refused


def reopened(entries: Sequence[ctxlab.SessionEntry]) -> list[ctxlab.SessionEntry]:
    """``entries`` appended to a new JSONL store, read back by opening the file again."""
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / "session.jsonl"
        store = ctxlab.JsonlSessionStore.open(file)
        for entry in entries:
            store.append(entry)
        return ctxlab.JsonlSessionStore.open(file).entries()


def _q11_1_reopen() -> int:
    return len(reopened(fixtures.resumed_path()))  # ten entries, compact-1, u4, a4


def _q11_1_no_special_code() -> str:
    stores = (ctxlab.InMemorySessionStore, ctxlab.JsonlSessionStore)
    methods = {name for store in stores for name in dir(store) if "compact" in name.lower()}
    return "b" if not methods else "a"


def _reordered(*order: str) -> list[MessageSessionEntry]:
    """The opening path's message entries, group 3 in the given order (parent ids are not
    read by the grouping)."""
    by_id = {entry.id: entry for entry in message_entries(fixtures.opening_path())}
    head = ["sys", "u1", "a1", "u2", "a2"]
    return [by_id[entry_id] for entry_id in (*head, *order)]


def _q11_2_groups() -> int:
    return len(ctxlab.group_interactions(message_entries(fixtures.resumed_path())))


def _q11_2_patch() -> str:
    path = _reordered("u3", "calls", "r-test", "r-read", "a3")
    patch = MessageSessionEntry("patch-3", "calls", 7.5, SystemMessage("Prefer small diffs.", 7.5))
    path.insert(path.index(next(e for e in path if e.id == "calls")) + 1, patch)
    groups = ctxlab.group_interactions(path)
    if any("patch-3" in group.entry_ids for group in groups):
        return "c"
    whole = groups[-1].entry_ids == ("u3", "calls", "r-test", "r-read", "a3")
    return "b" if len(groups) == 3 and whole else "a"


def _q11_2_before_call() -> str:
    path = _reordered("u3", "r-test", "r-read", "calls", "a3")
    return "b" if _refused(lambda: ctxlab.group_interactions(path)) else "a"


def _q11_2_read1() -> str:
    path = _reordered("u3", "calls", "r-test", "a3", "r-read")
    groups = ctxlab.group_interactions(path)
    return next(group.entry_ids[0] for group in groups if "r-read" in group.entry_ids)


def _q11_2_missing() -> str:
    path = message_entries(fixtures.missing_result_path())
    return "b" if _refused(functools.partial(ctxlab.group_interactions, path)) else "a"


def _available(max_tokens: int) -> int:
    return int(chapter_build(fixtures.opening_path(), max_tokens).tokens.available_for_messages)


def _kept(path: Callable[[], Sequence[ctxlab.SessionEntry]], max_tokens: int) -> list[str]:
    return list(chapter_build(path(), max_tokens).kept_entry_ids)


_q11_3_available_25 = functools.partial(_available, 25)
_q11_3_available_5 = functools.partial(_available, 5)
_q11_3_kept_30 = functools.partial(_kept, fixtures.opening_path, 30)


def _q11_3_reason_15() -> str:
    return str(chapter_build(fixtures.opening_path(), 15).reason)


def _q11_3_total_allowed() -> str:
    result = chapter_build(fixtures.opening_path(), 15)
    return "b" if result.tokens.total > 15 else "a"


def _q11_4_parent() -> str:
    meta = ctxlab.MetadataSessionEntry("meta-1", "a4", 102, "model", "course-model-2")
    entry = ctxlab.create_compaction_entry(
        [*fixtures.resumed_path(), meta],
        id="compact-2",
        timestamp=200,
        summary=fixtures.compact2_summary(),
        first_kept_entry_id="u3",
        tokens_before=40,
    )
    return entry.parent_id


def _q11_4_no_parent_argument() -> str:
    names = inspect.signature(ctxlab.create_compaction_entry).parameters
    return "b" if not any("parent" in name for name in names) else "a"


def _q11_4_refused() -> list[str]:
    path = fixtures.opening_path()
    wire = fixtures.compact1_summary().to_json()
    options: dict[str, dict[str, Any]] = {
        "a": {"summary": {**wire, "goal": ""}},  # the chapter: goal 不能为空
        "b": {"summary": {**wire, "goal": "banana"}},
        "c": {"tokens_before": 12345},
        "d": {"first_kept_entry_id": "a2"},
    }
    refused = []
    for letter, change in options.items():
        arguments: dict[str, Any] = {
            "id": "compact-1",
            "timestamp": 100,
            "summary": wire,
            "first_kept_entry_id": "u2",
            "tokens_before": 29,
            **change,
        }
        if _refused(functools.partial(ctxlab.create_compaction_entry, path, **arguments)):
            refused.append(letter)
    return refused


def _q11_4_store_count() -> int:
    store = ctxlab.InMemorySessionStore()
    for entry in fixtures.resumed_path():
        store.append(entry)
    created = [
        ctxlab.create_compaction_entry(  # creating writes nothing, however often
            store.entries(), id="compact-2", timestamp=200, summary=fixtures.compact2_summary(),
            first_kept_entry_id="u3", tokens_before=33,
        )
        for _ in range(2)
    ]  # fmt: skip
    store.append(created[0])  # the caller's append
    return len(store.entries())


def _q11_4_patch2() -> str:
    path = fixtures.system_patch_path()

    def create() -> object:
        return ctxlab.create_compaction_entry(
            path, id="compact-9", timestamp=999, summary=fixtures.compact1_summary(),
            first_kept_entry_id="patch-2", tokens_before=1,
        )  # fmt: skip

    return "b" if _refused(create) else "a"


_q11_5_kept_35 = functools.partial(_kept, fixtures.resumed_path, 35)


def _q11_5_second() -> str:
    result = chapter_build(fixtures.resumed_path(), 40)
    second = result.messages[1]
    text = ctxlab.text_of(second)
    return "b" if second.role == "user" and text.startswith("【会话压缩摘要】") else "a"


def _q11_5_first_kept_after_third() -> str:
    path = list(fixtures.recompacted_path())
    path.append(
        ctxlab.create_compaction_entry(
            path, id="compact-3", timestamp=300, summary=fixtures.compact1_summary(),
            first_kept_entry_id="u4", tokens_before=20,
        )
    )  # fmt: skip
    kept = chapter_build(path, 40).kept_entry_ids
    return str(kept[0]) if kept else ""


def _q11_5_timestamp() -> str:
    path = [entry for entry in fixtures.system_patch_path() if entry.id != "sys"]
    replayed = ctxlab.current_system_message(e.message for e in path if e.type == "message")
    assert replayed is not None
    for entry in path:
        message: Any = getattr(entry, "message", None)
        if getattr(message, "role", None) == "system" and message.timestamp == replayed.timestamp:
            return entry.id
    return ""


def _q11_5_isolated() -> str:
    path = fixtures.resumed_path()
    first, second = chapter_build(path, 40), chapter_build(path, 40)
    before = second.to_json()
    try:
        summary: Any = first.messages[1].content[0]  # the summary's text
        summary.text = "edited"
    except AttributeError:  # a frozen dataclass refuses it (FrozenInstanceError)
        return "a"
    return "b" if second.to_json() == before and path == fixtures.resumed_path() else "c"


def _load() -> dict[str, tuple[Question, ...]]:
    """Each lab's questions from ``data/quizzes.json``; ``expected`` names a function here."""
    path = Path(__file__).with_name("data").joinpath("quizzes.json")
    return {
        lab: tuple(
            Question(
                lab=lab,
                **{
                    **q,
                    "expected": globals()[q["expected"]],
                    "sections": tuple(tuple(pair) for pair in q["sections"]),
                    "rules": tuple(q.get("rules", ())),
                },
            )
            for q in questions
        )
        for lab, questions in json.loads(path.read_text("utf-8")).items()
    }


#: The exit quiz of each lab 11.1-11.5 (11.x, the optional exercise, has none: the chapter
#: lists no test of it). The questions' text is in the notebook source (cell ``11-N-k06``).
QUIZZES: dict[str, tuple[Question, ...]] = _load()
