"""The exit quiz of each lab 11.1-11.5 (issue 27, item 4): its questions as data.

Each question is tied to one of the chapter's tests of the lab (:attr:`Question.test`, the
chapter's own words, quoted verbatim), and its expected answer is computed with ctxlab by a
small function here, not written down. The questions' text is in the notebook source (cell
``11-N-k06``); :func:`ctxlab.lab.classroom.check_quiz` judges a student's answers.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["QUIZZES", "AnswerKind", "Question"]


AnswerKind = Literal["choice", "choices", "number", "ids", "text"]


@dataclass(frozen=True)
class Question:
    """One exit-quiz question: its number, the chapter's test it is tied to, the kind of
    answer, and a function computing the expected answer with ctxlab."""

    lab: str
    number: int
    test: str
    kind: AnswerKind
    expected: Callable[[], object]
    why_en: str
    why_zh: str


def _build(path: object, max_tokens: int) -> object:
    import ctxlab
    from ctxlab import fixtures

    return ctxlab.build_context(
        path,  # type: ignore[arg-type]
        max_tokens=max_tokens, reserved_output=4, safety_margin=2,
        estimate_tokens=fixtures.opening_estimator,
    )  # fmt: skip


def _refused(action: Callable[[], object]) -> bool:
    from ctxlab.errors import CtxlabError

    try:
        action()
    except CtxlabError:
        return True
    return False


# -- 11.1


def _q11_1_draft() -> str:
    import json
    import tempfile
    from pathlib import Path

    import ctxlab
    from ctxlab import fixtures

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
    from ctxlab import CompactionSummary

    return len(CompactionSummary(goal="g").to_json())  # six empty lists are still six keys


def _q11_1_tokens_before() -> list[str]:
    import ctxlab
    from ctxlab import fixtures

    options = {"a": -1, "b": 0, "c": 12345, "d": "29"}
    refused = []
    for letter, value in options.items():
        wire = fixtures.compact1().to_json()
        wire["tokensBefore"] = value
        if _refused(functools.partial(ctxlab.parse_session_entry, wire)):
            refused.append(letter)
    return refused


def _q11_1_reopen() -> int:
    import tempfile
    from pathlib import Path

    import ctxlab
    from ctxlab import fixtures

    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / "session.jsonl"
        store = ctxlab.JsonlSessionStore.open(file)
        for entry in fixtures.resumed_path():  # ten entries, compact-1, u4, a4
            store.append(entry)
        return len(ctxlab.JsonlSessionStore.open(file).entries())


def _q11_1_no_special_code() -> str:
    import ctxlab

    stores = (ctxlab.InMemorySessionStore, ctxlab.JsonlSessionStore)
    methods = {name for store in stores for name in dir(store) if "compact" in name.lower()}
    return "b" if not methods else "a"


# -- 11.2


def _message_entries(path: Sequence[object]) -> list[object]:
    return [entry for entry in path if getattr(entry, "type", None) == "message"]


def _reordered(*order: str) -> list[object]:
    """The opening path's message entries, group 3 in the given order (parent ids are not
    read by the grouping)."""
    from ctxlab import fixtures

    by_id = {entry.id: entry for entry in fixtures.opening_path()}
    head = ["sys", "u1", "a1", "u2", "a2"]
    return [by_id[entry_id] for entry_id in (*head, *order)]


def _q11_2_groups() -> int:
    import ctxlab
    from ctxlab import fixtures

    return len(ctxlab.group_interactions(_message_entries(fixtures.resumed_path())))  # type: ignore[arg-type]


def _q11_2_patch() -> str:
    import ctxlab
    from ctxlab import MessageSessionEntry, SystemMessage

    path = _reordered("u3", "calls", "r-test", "r-read", "a3")
    patch = MessageSessionEntry("patch-3", "calls", 7.5, SystemMessage("Prefer small diffs.", 7.5))
    path.insert(path.index(next(e for e in path if e.id == "calls")) + 1, patch)  # type: ignore[attr-defined]
    groups = ctxlab.group_interactions(path)  # type: ignore[arg-type]
    if any("patch-3" in group.entry_ids for group in groups):
        return "c"
    whole = groups[-1].entry_ids == ("u3", "calls", "r-test", "r-read", "a3")
    return "b" if len(groups) == 3 and whole else "a"


def _q11_2_before_call() -> str:
    import ctxlab

    path = _reordered("u3", "r-test", "r-read", "calls", "a3")
    return "b" if _refused(lambda: ctxlab.group_interactions(path)) else "a"  # type: ignore[arg-type]


def _q11_2_read1() -> str:
    import ctxlab

    path = _reordered("u3", "calls", "r-test", "a3", "r-read")
    groups = ctxlab.group_interactions(path)  # type: ignore[arg-type]
    return next(group.entry_ids[0] for group in groups if "r-read" in group.entry_ids)


def _q11_2_missing() -> str:
    import ctxlab
    from ctxlab import fixtures

    path = _message_entries(fixtures.missing_result_path())
    return "b" if _refused(functools.partial(ctxlab.group_interactions, path)) else "a"  # type: ignore[arg-type]


# -- 11.3


def _tokens(max_tokens: int) -> object:
    from ctxlab import fixtures

    return _build(fixtures.opening_path(), max_tokens).tokens  # type: ignore[attr-defined]


def _q11_3_available_25() -> int:
    return int(_tokens(25).available_for_messages)  # type: ignore[attr-defined]


def _q11_3_available_5() -> int:
    return int(_tokens(5).available_for_messages)  # type: ignore[attr-defined]


def _q11_3_kept_30() -> list[str]:
    from ctxlab import fixtures

    return list(_build(fixtures.opening_path(), 30).kept_entry_ids)  # type: ignore[attr-defined]


def _q11_3_reason_15() -> str:
    from ctxlab import fixtures

    return str(_build(fixtures.opening_path(), 15).reason)  # type: ignore[attr-defined]


def _q11_3_total_allowed() -> str:
    from ctxlab import fixtures

    result = _build(fixtures.opening_path(), 15)
    return "b" if result.tokens.total > 15 else "a"  # type: ignore[attr-defined]


# -- 11.4


def _q11_4_parent() -> str:
    import ctxlab
    from ctxlab import fixtures

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
    import ctxlab

    names = inspect.signature(ctxlab.create_compaction_entry).parameters
    return "b" if not any("parent" in name for name in names) else "a"


def _q11_4_refused() -> list[str]:
    import ctxlab
    from ctxlab import fixtures

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
    import ctxlab
    from ctxlab import fixtures

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
    import ctxlab
    from ctxlab import fixtures

    path = fixtures.system_patch_path()

    def create() -> object:
        return ctxlab.create_compaction_entry(
            path, id="compact-9", timestamp=999, summary=fixtures.compact1_summary(),
            first_kept_entry_id="patch-2", tokens_before=1,
        )  # fmt: skip

    return "b" if _refused(create) else "a"


# -- 11.5


def _q11_5_kept_35() -> list[str]:
    from ctxlab import fixtures

    return list(_build(fixtures.resumed_path(), 35).kept_entry_ids)  # type: ignore[attr-defined]


def _q11_5_second() -> str:
    import ctxlab
    from ctxlab import fixtures

    result = _build(fixtures.resumed_path(), 40)
    second = result.messages[1]  # type: ignore[attr-defined]
    text = ctxlab.text_of(second)
    return "b" if second.role == "user" and text.startswith("【会话压缩摘要】") else "a"


def _q11_5_first_kept_after_third() -> str:
    import ctxlab
    from ctxlab import fixtures

    path = list(fixtures.recompacted_path())
    path.append(
        ctxlab.create_compaction_entry(
            path, id="compact-3", timestamp=300, summary=fixtures.compact1_summary(),
            first_kept_entry_id="u4", tokens_before=20,
        )
    )  # fmt: skip
    kept = _build(path, 40).kept_entry_ids  # type: ignore[attr-defined]
    return str(kept[0]) if kept else ""


def _q11_5_timestamp() -> str:
    import ctxlab
    from ctxlab import fixtures

    path = [entry for entry in fixtures.system_patch_path() if entry.id != "sys"]
    replayed = ctxlab.current_system_message(e.message for e in path if e.type == "message")
    assert replayed is not None
    for entry in path:
        message: Any = getattr(entry, "message", None)
        if getattr(message, "role", None) == "system" and message.timestamp == replayed.timestamp:
            return entry.id
    return ""


def _q11_5_isolated() -> str:
    from ctxlab import fixtures

    path = fixtures.resumed_path()
    first, second = _build(path, 40), _build(path, 40)
    wire = first.to_json()  # type: ignore[attr-defined]
    wire["keptEntryIds"].clear()  # not the summary text the lab's cell edits
    wire["messages"].append(dict(wire["messages"][-1]))
    fresh = _build(fixtures.resumed_path(), 40)
    same = second.to_json() == fresh.to_json() == first.to_json()  # type: ignore[attr-defined]
    return "a" if same and path == fixtures.resumed_path() else "b"


#: The exit quiz of each lab 11.1-11.5 (11.x, the optional exercise, has none: the chapter
#: lists no test of it). The questions' text is in the notebook source (cell ``11-N-k06``).
QUIZZES: dict[str, tuple[Question, ...]] = {
    "11.1": (
        Question(
            "11.1",
            1,
            "严格 compaction schema",
            "choice",
            _q11_1_draft,
            "Reopening parses each line again: an unknown key is refused even beside the current"
            " one, and the error names line 11 and compact-1.",
            "重新打开时每一行都再解析一次：即使与当前字段并存，未知字段也被拒绝；"
            "错误指出第 11 行和 compact-1。",
        ),
        Question(
            "11.1",
            2,
            "严格 compaction schema",
            "number",
            _q11_1_fields,
            "goal and six lists: an empty list is still written, as [].",
            "goal 和六个列表：空列表也照样写出来，写成 []。",
        ),
        Question(
            "11.1",
            3,
            "严格 compaction schema",
            "choices",
            _q11_1_tokens_before,
            "Only a finite number ≥ 0 is accepted; 12345 is accepted: it is never recomputed.",
            "只接受非负有限数；12345 也能通过：它不会被重新估算。",
        ),
        Question(
            "11.1",
            4,
            "两个 Store 的重开",
            "number",
            _q11_1_reopen,
            "Ten opening entries, compact-1, u4 and a4: reopening parses every line again.",
            "十条开篇 entry、compact-1、u4 和 a4：重新打开时每一行都再解析一次。",
        ),
        Question(
            "11.1",
            5,
            "两个 Store 的重开",
            "choice",
            _q11_1_no_special_code,
            "A store that snapshots through parse_session_entry needs no compaction code.",
            "通过 parse_session_entry 获取快照的 Store 不需要 compaction 专用代码。",
        ),
    ),
    "11.2": (
        Question(
            "11.2",
            1,
            "user 分组",
            "number",
            _q11_2_groups,
            "Three groups, then u4 opens a fourth; sys and compact-1 are in none.",
            "先是三组，u4 再开启第四组；sys 和 compact-1 都不属于任何一组。",
        ),
        Question(
            "11.2",
            2,
            "user 分组",
            "choice",
            _q11_2_patch,
            "A system message belongs to no group, wherever it stands; it ends none.",
            "system message 不管在哪里，都不属于任何一组，也不结束任何一组。",
        ),
        Question(
            "11.2",
            3,
            "call/result 配对",
            "choice",
            _q11_2_before_call,
            "Pairing reads ids only: both results may stand before their call.",
            "配对只看 id：两条 result 都可以排在它们的 call 前面。",
        ),
        Question(
            "11.2",
            4,
            "call/result 配对",
            "text",
            _q11_2_read1,
            "A group runs up to the next user message; r-read pairs with read-1 by id.",
            "一组一直延续到下一条 user message；r-read 按 id 与 read-1 配对。",
        ),
        Question(
            "11.2",
            5,
            "call/result 配对",
            "choice",
            _q11_2_missing,
            "When the group ends, every call must have its result: the error names the call.",
            "group 结束时，所有 call 都要配齐 result：错误信息指出那个 call。",
        ),
    ),
    "11.3": (
        Question(
            "11.3",
            1,
            "固定成本",
            "number",
            _q11_3_available_25,
            "25 − 3 − 4 − 2 = 16.",
            "25 − 3 − 4 − 2 = 16。",
        ),
        Question(
            "11.3",
            2,
            "固定成本",
            "number",
            _q11_3_available_5,
            "The fixed costs exceed the window: the message budget is 0, never negative.",
            "固定成本超过总窗口：消息额度降到 0，不会变成负数。",
        ),
        Question(
            "11.3",
            3,
            "完整组裁剪",
            "ids",
            _q11_3_kept_30,
            "21 tokens: group 3 (15) fits, group 2 would make 22: the choice stops at u3.",
            "21 个 token：第三组（15）放得下，再加第二组就是 22：选择停在 u3。",
        ),
        Question(
            "11.3",
            4,
            "最新组超限",
            "text",
            _q11_3_reason_15,
            "6 tokens left, the newest group needs 15: it comes back whole.",
            "只剩 6 个 token，最新一组需要 15：它仍被完整返回。",
        ),
        Question(
            "11.3",
            5,
            "最新组超限",
            "choice",
            _q11_3_total_allowed,
            "3 + 15 + 4 + 2 = 24 > 15: the function cannot safely cut a call, a result or"
            " the final answer out of a group.",
            "3 + 15 + 4 + 2 = 24 > 15：函数不能安全地从组内剪掉 call、result 或终态回答。",
        ),
    ),
    "11.4": (
        Question(
            "11.4",
            1,
            "纯创建",
            "text",
            _q11_4_parent,
            "The parent is the path's last entry, whatever its type (meta-1 here).",
            "parent 是路径的最后一条 entry，不论它是什么类型（这里是 meta-1）。",
        ),
        Question(
            "11.4",
            2,
            "纯创建",
            "choice",
            _q11_4_no_parent_argument,
            "No parent argument: one answer, not two.",
            "没有 parent 参数：只有一份答案，不会有两份。",
        ),
        Question(
            "11.4",
            3,
            "纯创建",
            "choices",
            _q11_4_refused,
            "Only the shape is checked: an empty goal and a cut inside a group are refused.",
            "只校验形状：为空的 goal 和组内的切点被拒绝。",
        ),
        Question(
            "11.4",
            4,
            "纯创建",
            "number",
            _q11_4_store_count,
            "14: creating writes nothing, however often; only the one append writes.",
            "14 条：创建多少次都不写入；只有那一次 append 写入。",
        ),
        Question(
            "11.4",
            5,
            "纯创建",
            "choice",
            _q11_4_patch2,
            "A system message cannot be a cut point.",
            "system message 不能成为切点。",
        ),
    ),
    "11.5": (
        Question(
            "11.5",
            1,
            "最新摘要恢复",
            "ids",
            _q11_5_kept_35,
            "35 − 3 − 4 − 2 = 26 = 4 (the summary) + 7 (u4/a4) + 15 (group 3): an exact fit;"
            " group 2 would make 33.",
            "35 − 3 − 4 − 2 = 26 = 4（摘要）+ 7（u4/a4）+ 15（第三组），正好放下；"
            "再加第二组就是 33。",
        ),
        Question(
            "11.5",
            2,
            "最新摘要恢复",
            "choice",
            _q11_5_second,
            "[system?, summary, ...kept suffix].",
            "[system?, 摘要, ...保留的后缀]。",
        ),
        Question(
            "11.5",
            3,
            "二次压缩",
            "text",
            _q11_5_first_kept_after_third,
            "Only the newest compaction is read: compact-3 keeps from u4"
            " (compact-2 would keep u3 too).",
            "只读取最新的 compaction：compact-3 从 u4 开始保留"
            "（若读 compact-2，u3 那组也会留下）。",
        ),
        Question(
            "11.5",
            4,
            "跨压缩边界的 system 重放",
            "text",
            _q11_5_timestamp,
            "The replay reads the whole path; its timestamp is the first system message's"
            " (patch-1 once sys is gone).",
            "重放读取整条路径；它的 timestamp 取第一条 system message 的"
            "（去掉 sys 后是 patch-1）。",
        ),
        Question(
            "11.5",
            5,
            "公开副本隔离",
            "choice",
            _q11_5_isolated,
            "Each result is its own deep copy: the second build is deep-equal to the first.",
            "每次结果都是独立的深副本：第二次构建与第一次深相等。",
        ),
    ),
}
