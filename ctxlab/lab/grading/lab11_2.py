"""Lab 11.2 checks: ``group_interactions(entries)``, the interaction groups of a path.

The chapter's "两个 tool result 仍属于 u3 开始的同一组": groups open at user messages, four id
relations hold inside a group, only ids pair a result with its call. Its error "携带 entry id
或 call id" (either): its rows accept a ValueError naming one; ctxlab's row asks for an
``InteractionError`` naming both.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Sequence
from typing import Any

from ctxlab import fixtures as fx
from ctxlab import interactions
from ctxlab.entries import MessageSessionEntry, SessionEntry
from ctxlab.errors import InteractionError, shown
from ctxlab.interactions import GroupBuilder, group_interactions
from ctxlab.lab.grading import drawn
from ctxlab.lab.grading.calls import CHAPTER_ERROR, Trial, fail
from ctxlab.lab.grading.cases import by_id, crafted, messages, path_of, rechain, system
from ctxlab.lab.grading.declare import LabChecks, methods
from ctxlab.lab.grading.expect import ids, path_name
from ctxlab.lab.grading.text import Text, kind, same

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


def _groups_text(groups: Sequence[Sequence[str]]) -> Text:
    """Groups as ``[u1, a1] [u2, a2]``; no groups at all as ``[]`` with a word on it."""
    if not groups:
        return Text("[] (no groups)", "[]（没有组）")
    return same(" ".join(f"[{ids(group)}]" for group in groups))


def _groups(text: str) -> list[list[str]]:
    """Groups written as :func:`_groups_text` shows them (``[u1,a1] [u2,a2]``), as ids."""
    return [group.strip("[]").split(",") for group in text.split()]


def _same_groups(label: Text, got: list[list[str]], want: str | list[list[str]]) -> None:
    want = _groups(want) if isinstance(want, str) else want
    if got != want:
        found, wanted = _groups_text(got), _groups_text(want)
        fail(
            label, f": expected {wanted.en}, got {found.en}", f"：期望 {wanted.zh}，实际 {found.zh}"
        )


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


def _expect(
    t: Trial, entries: list[SessionEntry], want: str | None, label: Text | None = None
) -> None:
    """The student's groups must be the reference's (or the literal ``want``, in
    :func:`_groups`' notation), and hold the path's own entries."""
    label = label or _label(entries)
    result = t.returns(label, entries)
    reference = [list(g.entry_ids) for g in group_interactions(list(entries))]
    _same_groups(label, _student_groups(label, result), reference if want is None else want)
    path_entries = by_id(entries)
    for group in result:
        for entry in group.entries:
            if entry != path_entries.get(entry.id):
                fail(
                    label,
                    f": entry {entry.id} in the result is not the path's entry {entry.id}",
                    f"：结果中的 entry {entry.id} 与路径上的 {entry.id} 不相等",
                )


def _with(path: list[SessionEntry], entry_id: str, **fields: Any) -> list[SessionEntry]:
    """``path`` with the message of ``entry_id`` changed (``stop_reason=``, ``is_error=``)."""
    return [
        dataclasses.replace(entry, message=dataclasses.replace(entry.message, **fields))
        if isinstance(entry, MessageSessionEntry) and entry.id == entry_id
        else entry
        for entry in path
    ]


def _refused(
    t: Trial, strict: bool, broken: str | list[SessionEntry], words: str, label: Text | None = None
) -> None:
    """A path that breaks an id relation (in :func:`~.cases.path_of`'s notation, or built):
    its message entries are refused. The chapter's rows: an error carrying one of ``words``.
    ctxlab's (``strict``): an InteractionError naming each word (``calls-2|calls``: either)."""
    path = path_of(broken) if isinstance(broken, str) else broken
    label = label or _label(path)
    names = [word.split("|") for word in words.split()]
    if not strict:
        names = [[name for group in names for name in group]]
    error_type = InteractionError if strict else CHAPTER_ERROR
    t.rejects(label, names, messages(path), error_type=error_type)


_THREE_GROUPS = "[u1,a1] [u2,a2] [u3,calls,r-test,r-read,a3]"

#: Results in another order than their calls, ``r-b`` even before ``calls`` declares it.
_RESULTS_FIRST = "u1 r-b->call-b calls[call-a,call-b,call-c] r-c->call-c r-a->call-a a1"


@LAB.check(
    "the opening path gives the chapter's three groups: [u1,a1] [u2,a2] "
    "[u3,calls,r-test,r-read,a3]; every user message starts a group, also one right after"
    " another",
    "groupInteractions() 跳过 sys，以 user 消息为起点，把其余九条记录分成三组；每条 user 消息"
    "都开启一组，紧跟在另一条 user 消息后面时也一样",
    source="chapter",
    quote_zh="groupInteractions() 跳过 sys，以 user 消息为起点，把其余九条记录分成三组",
    quote_en="groupInteractions() skips sys, starts at user messages, and splits the other nine"
    " records into three groups",
)
def three_groups(t: Trial) -> None:
    _expect(t, messages(fx.opening_path()), _THREE_GROUPS)
    # Every user message starts a group, also one right after another (u1 not yet answered).
    _expect(t, path_of("u1 u2 a2 u3 u4"), "[u1] [u2,a2] [u3] [u4]")


@LAB.check(
    "system messages belong to no group: skipped at the start, between groups and inside one",
    "system message 不属于任何一组：在开头、两组之间、组内都直接跳过，不会切开或混入哪一组",
    source="chapter",
    quote_zh="system message 出现在两组之间时也一样跳过，不会切开或混入哪一组。",
    quote_en="A system message between two groups is skipped just the same: it neither splits"
    " a group nor joins one.",
)
def system_skipped(t: Trial) -> None:
    opening = fx.opening_path()
    between = crafted(system("patch", "between"))[0]
    _expect(t, messages(rechain([*opening[:3], between, *opening[3:]])), _THREE_GROUPS)
    inside = crafted(system("patch", "", {"rules": "v2"}))[0]
    _expect(t, messages(rechain([*opening[:7], inside, *opening[7:]])), _THREE_GROUPS)
    _expect(t, [by_id(opening)["sys"]], "")
    _expect(t, [], "", Text("no entries at all", "没有任何 entry"))


@LAB.check(
    "tool results may come in any order, even before their call; groups keep path order",
    "result 的出现顺序不影响配对；返回的 entries 保持原路径顺序",
    source="chapter",
    quote_zh="result 的出现顺序不影响配对，也不会把这一组拆开。",
    quote_en="The order in which results appear does not affect pairing, nor does it split"
    " the group.",
)
def results_any_order(t: Trial) -> None:
    groups = "[u1,a1] [u2,a2] [u3,r-test,calls,r-read,a3]"
    _expect(t, messages(fx.results_before_call_path()), groups)
    _expect(t, path_of(_RESULTS_FIRST), None)


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
    path = path_of(
        "u1 call-read[read-1] call-test[test-1] r-test->test-1 r-read->read-1"
        " u2 calls-2[x-1,x-2] r-x2->x-2 between r-x1->x-1"
    )
    groups = "[u1,call-read,call-test,r-test,r-read] [u2,calls-2,r-x2,between,r-x1]"
    _expect(t, _with(path, "r-read", tool_name="bash"), groups)


@LAB.check(
    "a result whose toolCallId names no call of its group is refused (the chapter's "
    "r-test -> unknown-1); the error carries the entry id or the call id",
    "把 r-test.toolCallId 改成 unknown-1：groupInteractions() 找不到 unknown-1 对应的 call，"
    "拒绝这一组；错误信息携带 entry id 或 call id",
    source="chapter",
    quote_zh="groupInteractions() 找不到 unknown-1 对应的 call",
    quote_en="groupInteractions() finds no call for unknown-1",
)
def unknown_call_rejected(t: Trial, strict: bool = False) -> None:
    chapter = Text("the chapter's path with r-test(unknown-1)", "本章的路径，r-test(unknown-1)")
    _refused(t, strict, fx.unknown_call_path(), "r-test unknown-1", chapter)
    _refused(t, strict, "u1 calls[read-1] r-read->read-1 r-extra->ghost-1 a1", "r-extra ghost-1")


@LAB.check(
    "every call has a result when its group ends; a call without one is refused (the error"
    " carries the entry id or the call id)",
    "group 结束时，所有 call 都已经配齐 result；缺少 result 的 call 被拒绝（错误信息携带"
    " entry id 或 call id）",
    source="chapter",
    quote_zh="group 结束时，所有 call 都已经配齐 result",
    quote_en="when the group ends, every call has its result",
)
def missing_result_rejected(t: Trial, strict: bool = False) -> None:
    _refused(t, strict, fx.missing_result_path(), "calls read-1")
    _refused(t, strict, "u1 calls[read-1,test-1] r-test->test-1 a1 u2 a2", "calls read-1")


@LAB.check(
    "a call has at most one result; a second result is refused (the error carries the entry"
    " id or the call id)",
    "一个 call 至多对应一条 result；第二条 result 被拒绝（错误信息携带 entry id 或 call id）",
    source="chapter",
    quote_zh="一个 call 至多对应一条 result",
    quote_en="a call has at most one result",
)
def duplicate_result_rejected(t: Trial, strict: bool = False) -> None:
    again = "u3 calls[read-1,test-1] r-test->test-1 r-read->read-1 r-again->test-1 a3"
    _refused(t, strict, again, "r-again test-1")


@LAB.check(
    "each call id is declared once in its group; a second declaration is refused (the error"
    " carries the entry id or the call id); a later group may declare the same id again",
    "在同一个 user group 内每个 call.id 只声明一次；重复声明被拒绝（错误信息携带 entry id 或"
    " call id）；后面的组可以再次使用同一个 id",
    source="chapter",
    quote_zh="在这个 user group 内核对四个对象关系：每个 call.id 只声明一次",
    quote_en="within this user group it checks four relations between the objects: each call.id"
    " is declared only once",
)
def duplicate_call_rejected(t: Trial, strict: bool = False) -> None:
    twice = "u3 calls[read-1,test-1,read-1] r-test->test-1 r-read->read-1 a3"
    _refused(t, strict, twice, "calls read-1")
    redeclared = "u3 calls[read-1] r-read->read-1 calls-2[read-1] a3"
    _refused(t, strict, redeclared, "calls-2|calls read-1")
    # The relations are checked inside each group: another turn may number its calls anew.
    again = "u1 calls[read-1] r-read->read-1 a1 u2 calls-2[read-1] r-read-2->read-1 a2"
    _expect(t, path_of(again), "[u1,calls,r-read,a1] [u2,calls-2,r-read-2,a2]")


@LAB.check(
    "a call and its result must stand in the same user group (the error carries the entry id"
    " or the call id)",
    "工具事实只在这个 user group 内核对：call 和 result 必须在同一组（错误信息携带 entry id"
    " 或 call id）",
    source="chapter",
    quote_zh="每条 result 的 toolCallId 都能在组内找到对应 call",
    quote_en="each result's toolCallId finds its call within the group",
)
def pairs_within_group(t: Trial, strict: bool = False) -> None:
    _refused(t, strict, "u1 calls[read-1] u2 r-read->read-1 a2", "calls|r-read read-1")
    _refused(t, strict, "u1 r-read->read-1 a1 u2 calls[read-1] a2", "r-read|calls read-1")
    # A result in a later group answers no call of its own group, even when an earlier
    # group declared (and answered) that call id.
    later = "u1 calls[read-1] r-read->read-1 a1 u2 r-again->read-1 a2"
    _refused(t, strict, later, "r-again read-1")


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
    _refused(t, True, "sys a0 u1 a1", "a0")
    _refused(t, True, "r0->read-1 u1 a1", "r0")


@LAB.check(
    "the entries are left as they were, the groups hold them in path order (sys aside), and"
    " the same input gives equal groups every time",
    "输入的 entries 保持原样；各组按原路径顺序装下它们（sys 除外）；同样的输入每次得到相等的分组",
    source="chapter",
    quote_zh="分组函数保留 r-test、r-read 的原路径顺序",
    quote_en="the grouping function keeps r-test and r-read in their original path order",
)
def input_untouched(t: Trial) -> None:
    entries = messages(fx.opening_path())
    label = _label(entries)
    first = _student_groups(label, t.returns(label, entries))
    held, wanted = [i for group in first for i in group], [e.id for e in entries[1:]]  # no sys
    if held != wanted:
        fail(
            label,
            f": the groups hold {ids(held)}; expected {ids(wanted)}, each once, in path order",
            f"：各组装下的是 {ids(held)}；应当按路径顺序、各一次装下 {ids(wanted)}",
        )
    second = _student_groups(label, t.returns(label, entries))
    if first != second:
        one, two = _groups_text(first), _groups_text(second)
        fail(
            label,
            f": two calls gave {one.en} and then {two.en}",
            f"：两次调用先得到 {one.zh}，再得到 {two.zh}",
        )


def _pairs(value: object) -> list[tuple[object, ...]] | None:
    """``tool_pairs`` as a list of tuples (None when it is not a sequence of pairs)."""
    if isinstance(value, (list, tuple)) and all(
        isinstance(pair, (list, tuple)) and len(pair) == 2 for pair in value
    ):
        return [tuple(pair) for pair in value]
    return None


def _pairs_text(pairs: Sequence[Sequence[object]]) -> Text:
    text = ", ".join(f"{call}->{result}" for call, result in pairs)
    return same(text) if text else Text("(none)", "（无）")


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
    for entries in (
        messages(fx.opening_path()),
        messages(fx.results_before_call_path()),
        path_of(f"{_RESULTS_FIRST} u2 calls-2[x-2] calls-3[x-1] r-x1->x-1 r-x2->x-2"),
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
            raw = getattr(group, "tool_pairs", None)
            pairs, expected = _pairs(raw), [tuple(pair) for pair in want.tool_pairs]
            if pairs != expected:
                head, wanted = want.head.id, _pairs_text(expected)
                found = same(shown(raw)) if pairs is None else _pairs_text(pairs)
                fail(
                    label,
                    f": the group of {head}: expected tool_pairs {wanted.en}, got {found.en}",
                    f"：{head} 这一组：期望 tool_pairs 为 {wanted.zh}，实际 {found.zh}",
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
    # The chapter's rows on broken id relations again, their cases now strictly.
    rows: list[Callable[..., None]] = [unknown_call_rejected, missing_result_rejected]
    rows += [duplicate_result_rejected, duplicate_call_rejected, pairs_within_group]
    for row in rows:
        row(t, True)


@LAB.check(
    "tool calls are read from every assistant message, whatever its stopReason: only ids"
    " pair a call with its result",
    "每条 assistant message 的 tool call 都要记录，不论它的 stopReason 是什么（配对只看 id）",
    source="chapter",
    quote_zh="这些关系只依赖 id 集合",
    quote_en="these relations depend only on the sets of ids",
)
def calls_whatever_stop_reason(t: Trial) -> None:
    for reason in ("stop", "length"):
        path = _with(path_of("u1 calls[read-1] r-read->read-1 a1"), "calls", stop_reason=reason)
        _expect(t, path, "[u1,calls,r-read,a1]")


@LAB.check(
    "a result with isError: true is still its call's result: only ids pair them",
    "isError 为 true 的 result 仍然是它那个 call 的 result（配对只看 id）",
    source="chapter",
    quote_zh="这些关系只依赖 id 集合",
    quote_en="these relations depend only on the sets of ids",
)
def error_result_answers(t: Trial) -> None:
    path = path_of("u1 calls[read-1,test-1] r-test->test-1 r-read->read-1 a1")
    _expect(t, _with(path, "r-test", is_error=True), "[u1,calls,r-test,r-read,a1]")
    twice = path_of("u1 calls[read-1] r-read->read-1 r-again->read-1 a1")
    _refused(t, False, _with(twice, "r-read", is_error=True), "r-again read-1")


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
    _same_groups(label, _student_groups(label, t.returns(label, iter(entries))), _THREE_GROUPS)


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
    drawn.run(t, _RANDOM)


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
        _expect(t, entries, None, label)


#: The paths :func:`random_paths` draws: 150 per run.
_RANDOM = drawn.Cases(
    LAB.lab, "random_paths", 150, _random_draw, _random_check, _random_kind, drawn.smaller_path
)
