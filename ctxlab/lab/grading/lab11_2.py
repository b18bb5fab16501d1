"""Lab 11.2 checks: ``group_interactions(entries)``, the interaction groups of a path.

The chapter, "两个 tool result 仍属于 u3 开始的同一组": ``groupInteractions()`` skips the
system message, opens a group at each user message, and checks four id relations inside
the group (each call id declared once; each result's toolCallId names a call of the group;
a call has at most one result; every call has its result when the group ends). Only ids
pair a result with its call: result order, toolName and the final assistant take no part.
"损坏记录在进入预算前就会被拒绝": ``r-test -> unknown-1`` is refused, naming the id.

Cases: the chapter's opening path and its broken variants (:mod:`ctxlab.fixtures`), and
crafted paths whose expected groups are written out or are the reference's groups.

The errors: the chapter says an error "携带 entry id 或 call id" (carries the entry id *or*
the call id). So the chapter's rows accept an error (a ValueError, as every ctxlab error is)
whose message names either. ctxlab's own rule is stricter, and is its own row
(``errors_name_entry_and_call``): an ``InteractionError`` naming **both** the entry involved
(the result, or the assistant message that declares the call) and the call id. A message
before the first user message has no call: it names that entry (a ctxlab rule too).

``tool_pairs``: the checklist's result is ``InteractionGroup(entries=..., tool_pairs=...)``,
so each group's pairs are checked too: (call id, id of the entry holding its result), in
the order the calls are declared -- the reference's pairs.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence

from ctxlab import fixtures as fx
from ctxlab import interactions
from ctxlab.entries import SessionEntry
from ctxlab.errors import InteractionError, shown
from ctxlab.interactions import GroupBuilder, group_interactions
from ctxlab.lab.grading import drawn
from ctxlab.lab.grading.calls import CHAPTER_ERROR, Trial, fail
from ctxlab.lab.grading.cases import (
    assistant,
    by_id,
    crafted,
    messages,
    rechain,
    system,
    tool_result,
    user,
)
from ctxlab.lab.grading.compare import ids, path_name
from ctxlab.lab.grading.declare import LabChecks, methods
from ctxlab.lab.grading.text import Text, kind
from ctxlab.messages import AgentMessage, AssistantMessage, StopReason, ToolResultMessage

__all__ = ["LAB"]

LAB = LabChecks(
    "11.2",
    "group_interactions",
    ("entries",),
    group_interactions,
    solution=(group_interactions, interactions._tool_pairs, *methods(GroupBuilder)),
    stubbed=(group_interactions, GroupBuilder.feed, GroupBuilder.finish, GroupBuilder._close),
    solution_name="ctxlab.group_interactions",
    helpers="ctxlab.interactions.GroupBuilder",
)


def _groups_text(groups: Sequence[Sequence[str]], zh: bool = False) -> str:
    """Groups as ``[u1, a1] [u2, a2]``; no groups at all as ``[]`` with a word on it."""
    if not groups:
        return "[]（没有组）" if zh else "[] (no groups)"
    return " ".join(f"[{ids(group)}]" for group in groups)


def _student_groups(label: Text, got: object) -> list[list[str]]:
    """The ids of the student's groups (each item must have ``.entries``)."""
    if not isinstance(got, (list, tuple)):
        fail(
            label,
            f": returned {kind(got)}; expected a list of InteractionGroup",
            f"：返回了 {kind(got)}；期望 InteractionGroup 列表",
        )
    groups: list[list[str]] = []
    for index, group in enumerate(got):
        entries = getattr(group, "entries", None)
        if not isinstance(entries, (list, tuple)) or not all(
            isinstance(getattr(entry, "id", None), str) for entry in entries
        ):
            fail(
                label,
                f": item {index} of the result is {kind(group)}; expected an"
                " InteractionGroup whose .entries holds the group's entries",
                f"：结果的第 {index} 项是 {kind(group)}；期望 InteractionGroup，"
                ".entries 保存这一组的 entries",
            )
        groups.append([entry.id for entry in entries])
    return groups


def _label(path: Sequence[SessionEntry]) -> Text:
    name = path_name(path)
    return Text(f"path {name}", f"路径 {name}")


def _expect_groups(
    t: Trial, label: Text, entries: list[SessionEntry], expected: list[list[str]] | None
) -> None:
    """The student's groups must be the reference's (or the literal ``expected`` ids)."""
    result = t.returns(label, entries)
    got = _student_groups(label, result)
    reference = group_interactions(list(entries))
    want = [list(g.entry_ids) for g in reference] if expected is None else expected
    if got != want:
        fail(
            label,
            f": expected {_groups_text(want)}, got {_groups_text(got)}",
            f"：期望 {_groups_text(want, zh=True)}，实际 {_groups_text(got, zh=True)}",
        )
    path_entries = by_id(entries)
    for group in result:
        for entry in group.entries:
            if entry != path_entries.get(entry.id):
                fail(
                    label,
                    f": entry {entry.id} in the result is not the path's entry {entry.id}",
                    f"：结果中的 entry {entry.id} 与路径上的 {entry.id} 不相等",
                )


def _expect(t: Trial, path: list[SessionEntry], expected: list[list[str]] | None) -> None:
    _expect_groups(t, _label(path), path, expected)


def _refused(
    t: Trial, path: list[SessionEntry], names: list[list[str]], *, strict: bool = False
) -> None:
    """The path's message entries are refused. The chapter (``strict=False``): an error
    carrying the entry id or the call id -- any name of ``names``. ctxlab (``strict``): an
    InteractionError naming one of each group of ``names``."""
    if strict:
        t.rejects(_label(path), names, messages(path), error_type=InteractionError)
    else:
        either = [[name for group in names for name in group]]
        t.rejects(_label(path), either, messages(path), error_type=CHAPTER_ERROR)


_THREE_GROUPS = [["u1", "a1"], ["u2", "a2"], ["u3", "calls", "r-test", "r-read", "a3"]]


def _results_first() -> list[tuple[str, AgentMessage]]:
    """One interaction whose results come in another order than their calls, one of them
    (``r-b``) even before ``calls`` declares it: the case of ``results_any_order`` and the
    first group of ``tool_pairs``."""
    return [
        user("u1", 1),
        tool_result("r-b", "call-b", 1),
        assistant("calls", 1, "call-a", "call-b", "call-c"),
        tool_result("r-c", "call-c", 1),
        tool_result("r-a", "call-a", 1),
        assistant("a1", 1),
    ]


@LAB.check(
    "the opening path gives the chapter's three groups: [u1,a1] [u2,a2] "
    "[u3,calls,r-test,r-read,a3]",
    "groupInteractions() 跳过 sys，以 user 消息为起点，把其余九条记录分成三组",
    source="chapter",
    quote_zh="groupInteractions() 跳过 sys，以 user 消息为起点，把其余九条记录分成三组",
    quote_en="groupInteractions() skips sys, starts at user messages, and splits the other nine"
    " records into three groups",
)
def three_groups(t: Trial) -> None:
    _expect(t, messages(fx.opening_path()), _THREE_GROUPS)


@LAB.check(
    "system messages belong to no group: skipped at the start, between groups and inside one",
    "system message 不属于任何一组：出现在两组之间时也一样跳过，不会切开或混入哪一组",
    source="chapter",
    quote_zh="system message 出现在两组之间时也一样跳过，不会切开或混入哪一组。",
    quote_en="A system message between two groups is skipped just the same: it neither splits"
    " a group nor joins one.",
)
def system_skipped(t: Trial) -> None:
    opening = fx.opening_path()
    between = crafted(system("patch", "between"))[0]
    path = rechain([*opening[:3], between, *opening[3:]])
    _expect(t, messages(path), _THREE_GROUPS)
    inside = crafted(system("patch", "", {"rules": "v2"}))[0]
    path = rechain([*opening[:7], inside, *opening[7:]])
    _expect(t, messages(path), _THREE_GROUPS)
    _expect(t, [by_id(opening)["sys"]], [])
    _expect_groups(t, Text("no entries at all", "没有任何 entry"), [], [])


@LAB.check(
    "tool results may come in any order, even before their call; groups keep path order",
    "result 的出现顺序不影响配对；返回的 entries 保持原路径顺序",
    source="chapter",
    quote_zh="result 的出现顺序不影响配对，也不会把这一组拆开。",
    quote_en="The order in which results appear does not affect pairing, nor does it split"
    " the group.",
)
def results_any_order(t: Trial) -> None:
    _expect(
        t,
        messages(fx.results_before_call_path()),
        [["u1", "a1"], ["u2", "a2"], ["u3", "r-test", "calls", "r-read", "a3"]],
    )
    _expect(t, crafted(*_results_first()), None)


@LAB.check(
    "only ids pair a result with its call: toolName and the final assistant message take no part",
    "result 的数组位置、toolName 与终态 assistant 不参与配对",
    source="chapter",
    quote_zh="result 的数组位置、toolName 与终态 assistant 不参与这次配对。",
    quote_en="A result's position in the array, its toolName and the final assistant message"
    " take no part in this pairing.",
)
def pairing_by_id_only(t: Trial) -> None:
    # Results named after another tool; calls split over two assistant messages; no final
    # assistant; an interaction that ends with results.
    path = crafted(
        user("u1", 1),
        assistant("call-read", 1, "read-1"),
        assistant("call-test", 1, "test-1"),
        tool_result("r-test", "test-1", 1, tool="read"),
        tool_result("r-read", "read-1", 1, tool="bash"),
        user("u2", 1),
        assistant("calls-2", 1, "x-1", "x-2"),
        tool_result("r-x2", "x-2", 1),
        assistant("between", 1),
        tool_result("r-x1", "x-1", 1),
    )
    _expect(
        t,
        path,
        [
            ["u1", "call-read", "call-test", "r-test", "r-read"],
            ["u2", "calls-2", "r-x2", "between", "r-x1"],
        ],
    )


@LAB.check(
    "a result whose toolCallId names no call of its group is refused (the chapter's "
    "r-test -> unknown-1); the error carries the entry id or the call id",
    "把 r-test.toolCallId 改成 unknown-1：groupInteractions() 找不到 unknown-1 对应的 call，"
    "拒绝这一组；错误信息携带 entry id 或 call id",
    source="chapter",
    quote_zh="groupInteractions() 找不到 unknown-1 对应的 call",
    quote_en="groupInteractions() finds no call for unknown-1",
)
def unknown_call_rejected(t: Trial) -> None:
    _unknown_call(t)


def _unknown_call(t: Trial, *, strict: bool = False) -> None:
    label = Text("the chapter's path with r-test(unknown-1)", "本章的路径，r-test(unknown-1)")
    if strict:
        t.rejects(
            label,
            [["r-test"], ["unknown-1"]],
            messages(fx.unknown_call_path()),
            error_type=InteractionError,
        )
    else:
        t.rejects(
            label,
            [["r-test", "unknown-1"]],
            messages(fx.unknown_call_path()),
            error_type=CHAPTER_ERROR,
        )
    path = crafted(
        user("u1", 1),
        assistant("calls", 1, "read-1"),
        tool_result("r-read", "read-1", 1),
        tool_result("r-extra", "ghost-1", 1),
        assistant("a1", 1),
    )
    _refused(t, path, [["r-extra"], ["ghost-1"]], strict=strict)


@LAB.check(
    "every call has a result when its group ends; a call without one is refused (the error"
    " carries the entry id or the call id)",
    "group 结束时，所有 call 都已经配齐 result；缺少 result 的 call 被拒绝（错误信息携带"
    " entry id 或 call id）",
    source="chapter",
    quote_zh="group 结束时，所有 call 都已经配齐 result",
    quote_en="when the group ends, every call has its result",
)
def missing_result_rejected(t: Trial) -> None:
    _missing_result(t)


def _missing_result(t: Trial, *, strict: bool = False) -> None:
    _refused(t, fx.missing_result_path(), [["calls"], ["read-1"]], strict=strict)
    path = crafted(
        user("u1", 1),
        assistant("calls", 1, "read-1", "test-1"),
        tool_result("r-test", "test-1", 1),
        assistant("a1", 1),
        user("u2", 1),
        assistant("a2", 1),
    )
    _refused(t, path, [["calls"], ["read-1"]], strict=strict)


@LAB.check(
    "a call has at most one result; a second result is refused (the error carries the entry"
    " id or the call id)",
    "一个 call 至多对应一条 result；第二条 result 被拒绝（错误信息携带 entry id 或 call id）",
    source="chapter",
    quote_zh="一个 call 至多对应一条 result",
    quote_en="a call has at most one result",
)
def duplicate_result_rejected(t: Trial) -> None:
    _duplicate_result(t)


def _duplicate_result(t: Trial, *, strict: bool = False) -> None:
    path = crafted(
        user("u3", 1),
        assistant("calls", 1, "read-1", "test-1"),
        tool_result("r-test", "test-1", 1),
        tool_result("r-read", "read-1", 1),
        tool_result("r-again", "test-1", 1),
        assistant("a3", 1),
    )
    _refused(t, path, [["r-again"], ["test-1"]], strict=strict)


@LAB.check(
    "each call id is declared once; a second declaration is refused (the error carries the"
    " entry id or the call id)",
    "每个 call.id 只声明一次；重复声明被拒绝（错误信息携带 entry id 或 call id）",
    source="chapter",
    quote_zh="每个 call.id 只声明一次",
    quote_en="each call.id is declared only once",
)
def duplicate_call_rejected(t: Trial) -> None:
    _duplicate_call(t)


def _duplicate_call(t: Trial, *, strict: bool = False) -> None:
    in_one = crafted(
        user("u3", 1),
        assistant("calls", 1, "read-1", "test-1", "read-1"),
        tool_result("r-test", "test-1", 1),
        tool_result("r-read", "read-1", 1),
        assistant("a3", 1),
    )
    _refused(t, in_one, [["calls"], ["read-1"]], strict=strict)
    in_two = crafted(
        user("u3", 1),
        assistant("calls", 1, "read-1"),
        tool_result("r-read", "read-1", 1),
        assistant("calls-2", 1, "read-1"),
        assistant("a3", 1),
    )
    _refused(t, in_two, [["calls-2", "calls"], ["read-1"]], strict=strict)


@LAB.check(
    "a call and its result must stand in the same user group (the error carries the entry id"
    " or the call id)",
    "工具事实只在这个 user group 内核对：call 和 result 必须在同一组（错误信息携带 entry id"
    " 或 call id）",
    source="chapter",
    quote_zh="每条 result 的 toolCallId 都能在组内找到对应 call",
    quote_en="each result's toolCallId finds its call within the group",
)
def pairs_within_group(t: Trial) -> None:
    _pairs_within_group(t)


def _pairs_within_group(t: Trial, *, strict: bool = False) -> None:
    late = crafted(
        user("u1", 1),
        assistant("calls", 1, "read-1"),
        user("u2", 1),
        tool_result("r-read", "read-1", 1),
        assistant("a2", 1),
    )
    _refused(t, late, [["calls", "r-read"], ["read-1"]], strict=strict)
    early = crafted(
        user("u1", 1),
        tool_result("r-read", "read-1", 1),
        assistant("a1", 1),
        user("u2", 1),
        assistant("calls", 1, "read-1"),
        assistant("a2", 1),
    )
    _refused(t, early, [["r-read", "calls"], ["read-1"]], strict=strict)
    # A result in a later group answers no call of its own group, even when an earlier
    # group declared (and answered) that call id.
    again = crafted(
        user("u1", 1),
        assistant("calls", 1, "read-1"),
        tool_result("r-read", "read-1", 1),
        assistant("a1", 1),
        user("u2", 1),
        tool_result("r-again", "read-1", 1),
        assistant("a2", 1),
    )
    _refused(t, again, [["r-again"], ["read-1"]], strict=strict)


@LAB.check(
    "a message other than system before the first user message is refused, naming that entry",
    "第一条 user message 之前出现 system 以外的消息时被拒绝，错误信息写明这条 entry",
    source="ctxlab",
    why_en="the chapter's paths always start a group at a user message; ctxlab refuses a"
    " message that no group can hold rather than drop it silently",
    why_zh="本章的路径总是由 user 消息开始一组；ctxlab 拒绝无法归入任何一组的消息，"
    "而不是悄悄丢掉它",
)
def message_before_first_user(t: Trial) -> None:
    first = crafted(system("sys", "sys [1]"), assistant("a0", 1), user("u1", 1), assistant("a1", 1))
    _refused(t, first, [["a0"]], strict=True)
    result = crafted(tool_result("r0", "read-1", 1), user("u1", 1), assistant("a1", 1))
    _refused(t, result, [["r0"]], strict=True)


@LAB.check(
    "the entries are left as they were, and the same input gives equal groups every time",
    "输入的 entries 保持原样；同样的输入每次得到相等的分组",
    source="chapter",
    quote_zh="分组函数保留 r-test、r-read 的原路径顺序",
    quote_en="the grouping function keeps r-test and r-read in their original path order",
)
def input_untouched(t: Trial) -> None:
    entries = messages(fx.opening_path())
    label = _label(entries)
    first = _student_groups(label, t.returns(label, entries))
    second = _student_groups(label, t.returns(label, entries))
    if first != second:
        fail(
            label,
            f": two calls gave {_groups_text(first)} and then {_groups_text(second)}",
            f"：两次调用先得到 {_groups_text(first, zh=True)}，"
            f"再得到 {_groups_text(second, zh=True)}",
        )
    if first != _THREE_GROUPS:  # equal to each other, and the chapter's groups too
        fail(
            label,
            f": expected {_groups_text(_THREE_GROUPS)}, got {_groups_text(first)}",
            f"：期望 {_groups_text(_THREE_GROUPS, zh=True)}，实际 {_groups_text(first, zh=True)}",
        )


def _pairs(value: object) -> list[tuple[object, ...]] | None:
    """``tool_pairs`` as a list of tuples (None when it is not a sequence of pairs)."""
    if not isinstance(value, (list, tuple)):
        return None
    if not all(isinstance(pair, (list, tuple)) and len(pair) == 2 for pair in value):
        return None
    return [tuple(pair) for pair in value]


def _pairs_text(pairs: Sequence[Sequence[object]], zh: bool = False) -> str:
    if not pairs:
        return "（无）" if zh else "(none)"
    return ", ".join(f"{call}->{result}" for call, result in pairs)


@LAB.check(
    "each group's tool_pairs pairs every call id with the entry holding its "
    "result, in the order the calls are declared (group 3: read-1->r-read, test-1->r-test)",
    "每组的 tool_pairs 按 call 的声明顺序列出配对：call id 和保存其 result 的 entry"
    "（第三组：read-1->r-read、test-1->r-test）",
    source="ctxlab",
    why_en="the chapter checks the pairs and keeps them to itself; ctxlab's InteractionGroup"
    " hands them out, so later code need not pair the ids again",
    why_zh="本章只在分组时核对配对，并不返回它们；ctxlab 的 InteractionGroup 把配对一并返回，"
    "后面的代码不必再按 id 配一遍",
)
def tool_pairs(t: Trial) -> None:
    results_first = crafted(
        *_results_first(),
        user("u2", 1),
        assistant("calls-2", 1, "x-2"),
        assistant("calls-3", 1, "x-1"),
        tool_result("r-x1", "x-1", 1),
        tool_result("r-x2", "x-2", 1),
    )
    for entries in (
        messages(fx.opening_path()),
        messages(fx.results_before_call_path()),
        results_first,
    ):
        label = _label(entries)
        got = t.returns(label, entries)
        _student_groups(label, got)
        reference = group_interactions(list(entries))
        if len(got) != len(reference):
            fail(
                label,
                f": expected {len(reference)} groups, got {len(got)}",
                f"：期望 {len(reference)} 组，实际 {len(got)} 组",
            )
        for group, want in zip(got, reference, strict=True):
            pairs = _pairs(getattr(group, "tool_pairs", None))
            expected = [tuple(pair) for pair in want.tool_pairs]
            if pairs != expected:
                head = want.head.id
                if pairs is None:
                    got_en = got_zh = shown(getattr(group, "tool_pairs", None))
                else:
                    got_en, got_zh = _pairs_text(pairs), _pairs_text(pairs, zh=True)
                fail(
                    label,
                    f": the group of {head}: expected tool_pairs {_pairs_text(expected)},"
                    f" got {got_en}",
                    f"：{head} 这一组：期望 tool_pairs 为 {_pairs_text(expected, zh=True)}，"
                    f"实际 {got_zh}",
                )


@LAB.check(
    "every refusal of a broken id relation is an InteractionError naming both the entry"
    " involved and the call id",
    "每个 id 关系错误都是 InteractionError，并且同时写明相关的 entry id 和 call id",
    source="ctxlab",
    why_en="the chapter asks for the entry id or the call id; ctxlab names both, so the reader"
    " finds the record and the call without searching",
    why_zh="本章只要求携带 entry id 或 call id；ctxlab 两个都写明，读者不必再去查找就能找到"
    "那条记录和那次 call",
)
def errors_name_entry_and_call(t: Trial) -> None:
    for case in (
        _unknown_call,
        _missing_result,
        _duplicate_result,
        _duplicate_call,
        _pairs_within_group,
    ):
        case(t, strict=True)


def _stopped(pair: tuple[str, AgentMessage], reason: StopReason) -> tuple[str, AgentMessage]:
    """The assistant message of ``pair``, with another stopReason."""
    entry_id, message = pair
    assert isinstance(message, AssistantMessage)
    return entry_id, dataclasses.replace(message, stop_reason=reason)


def _failed(pair: tuple[str, AgentMessage]) -> tuple[str, AgentMessage]:
    """The tool result of ``pair``, with isError: true."""
    entry_id, message = pair
    assert isinstance(message, ToolResultMessage)
    return entry_id, dataclasses.replace(message, is_error=True)


@LAB.check(
    "tool calls are read from every assistant message, whatever its stopReason: only ids"
    " pair a call with its result",
    "每条 assistant message 的 tool call 都要记录，不论它的 stopReason 是什么（配对只看 id）",
    source="chapter",
    quote_zh="这些关系只 依赖 id 集合",
    quote_en="these relations depend only on the sets of ids",
)
def calls_whatever_stop_reason(t: Trial) -> None:
    for reason in ("stop", "length"):
        path = crafted(
            user("u1", 1),
            _stopped(assistant("calls", 1, "read-1"), reason),
            tool_result("r-read", "read-1", 1),
            assistant("a1", 1),
        )
        _expect(t, path, [["u1", "calls", "r-read", "a1"]])


@LAB.check(
    "a result with isError: true is still its call's result: only ids pair them",
    "isError 为 true 的 result 仍然是它那个 call 的 result（配对只看 id）",
    source="chapter",
    quote_zh="这些关系只 依赖 id 集合",
    quote_en="these relations depend only on the sets of ids",
)
def error_result_answers(t: Trial) -> None:
    path = crafted(
        user("u1", 1),
        assistant("calls", 1, "read-1", "test-1"),
        _failed(tool_result("r-test", "test-1", 1)),
        tool_result("r-read", "read-1", 1),
        assistant("a1", 1),
    )
    _expect(t, path, [["u1", "calls", "r-test", "r-read", "a1"]])
    twice = crafted(
        user("u1", 1),
        assistant("calls", 1, "read-1"),
        _failed(tool_result("r-read", "read-1", 1)),
        tool_result("r-again", "read-1", 1),
        assistant("a1", 1),
    )
    _refused(t, twice, [["r-again"], ["read-1"]])


@LAB.check(
    "entries may be any iterable of message entries (an iterator too), walked once",
    "entries 可以是任何可迭代对象（迭代器也可以），只遍历一次",
    source="ctxlab",
    why_en="the chapter's input is an array; ctxlab's function, like Python's own, takes any"
    " iterable, so a student who walks it twice (or takes len() of it) loses entries",
    why_zh="本章的输入是数组；ctxlab 的函数像 Python 自己的函数一样接受任何可迭代对象，"
    "遍历两次（或对它取 len()）就会丢失 entries",
)
def walks_input_once(t: Trial) -> None:
    entries = messages(fx.opening_path())
    label = Text("iter(path sys..a3), an iterator", "iter(路径 sys..a3)，一个迭代器")
    got = _student_groups(label, t.returns(label, iter(entries)))
    if got != _THREE_GROUPS:
        fail(
            label,
            f": expected {_groups_text(_THREE_GROUPS)}, got {_groups_text(got)}",
            f"：期望 {_groups_text(_THREE_GROUPS, zh=True)}，实际 {_groups_text(got, zh=True)}",
        )


@LAB.check(
    "random paths (seeded): groups as the chapter's rules make them, and a path with a broken"
    " id relation refused",
    "随机路径（带种子）：分组符合本章规则，破坏了某个 id 关系的路径被拒绝",
    source="chapter",
    quote_zh="groupInteractions() 以 user 边界和四个 call/result id 关系组成不可拆分组。",
    quote_en="groupInteractions() forms unsplittable groups from user boundaries and the four"
    " call/result id relations.",
)
def random_paths(t: Trial) -> None:
    drawn.run(t, LAB.lab, "random_paths", RANDOM_CASES, _RANDOM)


#: How many paths :func:`random_paths` draws per run.
RANDOM_CASES = drawn.declare(LAB.lab, "random_paths", 150)


def _random_draw(r: random.Random) -> drawn.Path:
    items = tuple(i for i in drawn.draw_path(r) if i.kind != "metadata")
    if r.random() < 0.55:
        items = drawn.break_groups(r, items) or items
    return drawn.Path(items)


def _random_kind(case: drawn.Path) -> str | None:
    if not drawn.in_scope(case.items):
        return None
    return drawn.outcome(lambda: group_interactions(messages(drawn.build(case.items))))


def _random_check(t: Trial, case: drawn.Path, kind: str) -> None:
    entries = messages(drawn.build(case.items))
    label = drawn.label(f"path {drawn.describe(case.items)}")
    if kind == "refuses":
        t.rejects(label, [], entries, error_type=CHAPTER_ERROR)
    else:
        _expect_groups(t, label, entries, None)


_RANDOM = drawn.Cases(_random_draw, _random_check, _random_kind, drawn.smaller_path)
