"""Lab 11.4 checks: ``create_compaction_entry(active_path, *, id, timestamp, summary, ...)``.

The chapter, "compact-1 记录摘要与保留起点": parentId is the path's last entry; firstKeptEntryId
must be a user message that starts a group; the candidate goes through
``parseSessionEntry()``; creating is pure. Expected is the reference's entry.
"""

from __future__ import annotations

import dataclasses
import random
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ctxlab import fixtures as fx
from ctxlab.compaction import create_compaction_entry, first_kept_problem
from ctxlab.entries import (
    CompactionSessionEntry,
    MetadataSessionEntry,
    SessionEntry,
    parse_session_entry,
)
from ctxlab.errors import CompactionError, CtxlabError, EntryParseError, shown
from ctxlab.lab.errors_zh import message_zh
from ctxlab.lab.grading import drawn, drawn_entries
from ctxlab.lab.grading.calls import CHAPTER_ERROR, Failed, Trial, fail
from ctxlab.lab.grading.declare import LabChecks
from ctxlab.lab.grading.expect import (
    PathName,
    bilingual,
    entry_result,
    kept_exactly,
    shares_nothing,
)
from ctxlab.lab.grading.text import Text

LAB = LabChecks(
    "11.4",
    "create_compaction_entry",
    ("active_path",),
    create_compaction_entry,
    solution=(create_compaction_entry, first_kept_problem),
    stubbed=(create_compaction_entry,),
    solution_name="ctxlab.create_compaction_entry",
    helpers="ctxlab.compaction.first_kept_problem",
)


def _options(
    entry_id: str = "compact-1",
    first_kept: str = "u2",
    summary: object = None,
    tokens_before: object = 29,
    timestamp: object = 100,
) -> dict[str, Any]:
    """create_compaction_entry's keywords; by default the chapter's compact-1."""
    return {
        "id": entry_id,
        "timestamp": timestamp,
        "summary": fx.compact1_summary() if summary is None else summary,
        "first_kept_entry_id": first_kept,
        "tokens_before": tokens_before,
    }


def _compact_2(first_kept: str) -> dict[str, Any]:
    """compact-2 on the resumed path sys..a4."""
    return _options("compact-2", first_kept, fx.compact2_summary(), 33, 200)


def _compact_3(first_kept: str) -> dict[str, Any]:
    """compact-3 on the recompacted path sys..compact-2."""
    return _options("compact-3", first_kept, tokens_before=11, timestamp=300)


def _label(name: PathName, options: Mapping[str, Any], wrong: str = "") -> Text:
    """A case's label; ``wrong``: the field it gets wrong, shown with its value."""
    path = bilingual(name)
    entry_id, first_kept = (_plain(options[k]) for k in ("id", "first_kept_entry_id"))
    text = Text(
        f"path {path.en}, id {entry_id}, first kept {first_kept}",
        f"路径 {path.zh}，id {entry_id}，保留起点 {first_kept}",
    )
    if wrong:
        if wrong.startswith("summary."):
            summary = options["summary"]
            wire = summary if isinstance(summary, Mapping) else summary.to_json()
            key, _, index = wrong.split(".", 1)[1].partition("[")  # changedFiles[1]: an item
            got: Any = wire.get(key)
            value = shown(got[int(index.rstrip("]"))] if index else got)
        else:  # tokensBefore: the option tokens_before
            value = shown(options[re.sub("([A-Z])", r"_\1", wrong).lower()])
        text += Text(f", with {wrong} = {value}", f"，其中 {wrong} = {value}")
    return text


def _plain(value: object) -> str:
    """An id as it reads, or quoted when it is blank, padded or not a string."""
    if isinstance(value, str) and value and value == value.strip():
        return value
    return shown(value)


def _expect_created(
    t: Trial,
    options: Mapping[str, Any],
    name: PathName = "sys..a3",
    make_path: Callable[[], list[SessionEntry]] = fx.opening_path,
    parent: str | None = "a3",
) -> CompactionSessionEntry:
    """The student's entry equals the reference's (and its parentId is ``parent``)."""
    label = _label(name, options)
    got = t.returns(label, make_path(), **options)
    expected = create_compaction_entry(make_path(), **options)
    if isinstance(got, CompactionSessionEntry) and parent is not None and got.parent_id != parent:
        fail(
            label,
            f": expected parentId {parent} (the last entry of the path),"
            f" got {shown(got.parent_id)}",
            f"：期望 parentId {parent}（路径的最后一条 entry），实际 {shown(got.parent_id)}",
        )
    entry_result(label, got, expected)
    assert isinstance(got, CompactionSessionEntry)
    return got


def _refused(
    t: Trial,
    options: Mapping[str, Any],
    names: Sequence[Sequence[str]],
    strict: bool,
    name: PathName = "sys..a3",
    path: list[SessionEntry] | None = None,
    wrong: str = "",
) -> None:
    """Creating on ``path`` (the opening path) is refused, naming ``names``: with a ValueError
    (the chapter) or (``strict``) a CompactionError."""
    error_type: type[Exception] = CompactionError if strict else CHAPTER_ERROR
    path = fx.opening_path() if path is None else path
    t.rejects(_label(name, options, wrong), names, path, error_type=error_type, **options)


@LAB.check(
    "compact-1 (timestamp 100, first kept u2, tokensBefore 29) gets parentId a3",
    '函数从 activePath.at(-1) 得到 parentId: "a3"',
    source="chapter",
    quote_zh='函数从 activePath.at(-1) 得到 parentId: "a3"',
    quote_en='the function takes parentId: "a3" from activePath.at(-1)',
)
def compact_1(t: Trial) -> None:
    _expect_created(t, _options())


@LAB.check(
    "creating is pure: the path is left as it was, and the same call gives an equal entry",
    "返回 compact1 以后，active path 仍保持原样；函数也不接收 Store",
    source="chapter",
    quote_zh="返回 compact1 以后，active path 仍保持原样",
    quote_en="after compact1 is returned, the active path stays as it was",
)
def pure(t: Trial) -> None:
    path = fx.opening_path()
    options = _options()
    label = _label("sys..a3", options)
    got = t.returns(label, path, **options)
    if [entry.id for entry in path] != [entry.id for entry in fx.opening_path()]:
        fail(label, ": the path changed", "：路径被改动了")
    expected = create_compaction_entry(fx.opening_path(), **_options())
    entry_result(label, got, expected)
    again = t.returns(label, path, **_options())
    entry_result(label, again, expected)


@LAB.check(
    "parentId is the id of the path's last entry, whatever its type or timestamp",
    "parent 不由调用者重复传入：parentId 总是路径最后一条 entry 的 id，不论它的类型和 timestamp",
    source="chapter",
    quote_zh="parent 不由调用者重复传入",
    quote_en="the parent is not passed again by the caller",
)
def parent_is_last_entry(t: Trial) -> None:
    def tagged() -> list[SessionEntry]:
        return [
            *fx.opening_path(),
            MetadataSessionEntry("note", "a3", 50, "model", "course-model-1"),
        ]

    def behind() -> list[SessionEntry]:  # its clock behind a3's: the place decides
        return [*fx.opening_path(), MetadataSessionEntry("note", "a3", 0, "model", "m")]

    for name, make_path, options, parent in (
        ("sys..a3,note", tagged, _options("c", "u3", tokens_before=0), "note"),
        ("sys..a3,note (timestamp 0)", behind, _options("c", "u3", tokens_before=0), "note"),
        ("sys..a4", fx.resumed_path, _compact_2("u3"), "a4"),
        ("sys..compact-2", fx.recompacted_path, _compact_3("u4"), "compact-2"),
    ):
        _expect_created(t, options, name, make_path, parent)
    # The caller cannot pass parentId: a call that tries is not accepted.
    for keyword in ("parent_id", "parentId"):
        options = {**_options(), keyword: "u1"}
        label = Text(
            f"path sys..a3, compact-1 with {keyword}=u1 passed by the caller",
            f"路径 sys..a3，调用者为 compact-1 传入 {keyword}=u1",
        )
        try:
            got = t.returns(label, fx.opening_path(), **options)
        except Failed:
            continue  # refused (TypeError: no such keyword): right
        fail(
            label,
            f": the call was accepted (parentId {shown(getattr(got, 'parent_id', None))});"
            " the caller cannot pass parentId, it is always the path's last entry",
            f"：这次调用被接受了（parentId {shown(getattr(got, 'parent_id', None))}）；"
            "调用者不能传入 parentId，它总是路径最后一条 entry 的 id",
        )


@LAB.check(
    "an id already on the path is an error (a CompactionError) naming it",
    "id 已经在路径上时报错（CompactionError），并写明这个 id",
    source="ctxlab",
    why_en="the chapter leaves ids to the caller; ctxlab refuses a second entry with the same"
    " id, which would make the session tree ambiguous",
    why_zh="本章把 id 交给调用者决定；ctxlab 拒绝与已有 entry 同 id 的新记录，否则 session 树"
    "就有了歧义",
)
def id_already_on_path(t: Trial) -> None:
    for entry_id in ("u2", "a3", "sys"):
        _refused(t, _options(entry_id), [[entry_id]], True)
    _refused(t, _options("compact-1", "u3"), [["compact-1"]], True, "sys..a4", fx.resumed_path())


@LAB.check(
    "firstKeptEntryId must be the user message that starts a group (the newest group's too,"
    " still unanswered): u2 is valid; a2, calls, r-test are inside a group",
    "firstKeptEntryId 只能指向一组的首条 user message（最新一组还没有得到回答时，它的首条也可以）："
    "u2 合法；a2、calls、r-test 都位于组内，不能成为切点",
    source="chapter",
    quote_zh="u2 合法；a2、calls、r-test 都位于组内，不能成为",
    quote_en="u2 is valid; a2, calls and r-test lie inside a group and cannot be",
)
def first_kept_starts_group(t: Trial, strict: bool = False) -> None:
    for first_kept in ("u1", "u2", "u3") if not strict else ():
        _expect_created(t, _options(first_kept=first_kept))
    if not strict:  # u4 at the leaf, its answer a4 not yet written: a group of its own
        _expect_created(t, _compact_2("u4"), "sys..u4", lambda: fx.resumed_path()[:-1], "u4")
        # a path of one entry, u1: its own leaf and the head of its group
        _expect_created(t, _options(first_kept="u1"), "u1", lambda: fx.opening_path()[1:2], "u1")
    for first_kept in ("a2", "calls", "r-test", "r-read", "a3", "a1"):
        _refused(t, _options(first_kept=first_kept), [[first_kept]], strict)


@LAB.check(
    "a system message (e.g. patch-2) cannot be the first kept entry",
    'system message 也不能成为切点：firstKeptEntryId: "patch-2" 会被报告',
    source="chapter",
    quote_zh='createCompactionEntry() 遇到 firstKeptEntryId: "patch-2" 会报告它不是完整'
    " interaction 的首条 message",
    quote_en='createCompactionEntry() given firstKeptEntryId: "patch-2" reports that it is not'
    " the first message of a whole interaction",
)
def first_kept_not_system(t: Trial, strict: bool = False) -> None:
    name = Text("sys..a3 (system patches)", "sys..a3（带 system patch）")
    for first_kept in ("patch-2", "sys", "patch-1"):
        options = _options("compact-2", first_kept, tokens_before=10, timestamp=200)
        _refused(t, options, [[first_kept]], strict, name, fx.system_patch_path())
    if not strict:
        options = _options("compact-2", "u3", tokens_before=10, timestamp=200)
        _expect_created(t, options, name, fx.system_patch_path)


@LAB.check(
    "an unknown id, a compaction or a metadata entry as first kept entry is an error naming it",
    "未知 id、compaction 或 metadata entry 作为 firstKeptEntryId 时报错并指出它",
    source="chapter",
    quote_zh="只能指向一组的首条 user message",
    quote_en="can only point to the first user message of a group",
)
def first_kept_unknown(t: Trial, strict: bool = False) -> None:
    for first_kept in ("nope", "u9", " u2", "u2 "):
        _refused(t, _options(first_kept=first_kept), [[first_kept]], strict)
    for first_kept in ("compact-1", "note"):
        path = [*fx.resumed_path(), MetadataSessionEntry("note", "a4", 103, "k", 1)]
        _refused(t, _options("c-9", first_kept), [[first_kept]], strict, "sys..a4,note", path)


@LAB.check(
    "the group heads come from groupInteractions(): a path it refuses (r-test answering"
    " unknown-1) is refused, whatever the first kept entry",
    "组首由 groupInteractions() 找出：它拒绝的路径（r-test 回应 unknown-1）同样被拒绝，"
    "不论保留起点是哪一条",
    source="chapter",
    quote_zh="函数复用 groupInteractions() 找到这些组首",
    quote_en="the function reuses groupInteractions() to find these group heads",
)
def heads_from_group_interactions(t: Trial) -> None:
    name = Text("sys..a3 with r-test(unknown-1)", "sys..a3，其中 r-test(unknown-1)")
    for first_kept in ("u1", "u2", "u3"):
        options = _options(first_kept=first_kept)
        _refused(t, options, [["r-test", "unknown-1"]], False, name, fx.unknown_call_path())


@LAB.check(
    "an empty path is an error (a CompactionError) naming the compaction's id: there is no"
    " leaf to append after",
    "路径为空时报错（CompactionError），并写明 compaction 的 id：没有 leaf 可以接在后面",
    source="ctxlab",
    why_en="the chapter always has a leaf (a3); ctxlab says plainly when there is none instead"
    " of failing on activePath.at(-1)",
    why_zh="本章的路径总有 leaf（a3）；没有 leaf 时，ctxlab 明确报错，而不是在"
    " activePath.at(-1) 处出错",
)
def empty_path(t: Trial) -> None:
    for entry_id in ("compact-1", "compact-7"):
        _refused(t, _options(entry_id), [[entry_id]], True, Text("[] (empty)", "[]（空路径）"), [])


#: The field a CompactionSummary whose changed_files holds a number is refused on.
_CHANGED_1 = "summary.changedFiles[1]"


def _parser_refusals(t: Trial, *, strict: bool) -> None:
    """What the parser refuses, then an empty first kept entry. A case: (options, what the
    chapter's error names (one of), the parser's field path (``.field``), whether the rule
    is the chapter's). The chapter's rows give the summary as a CompactionSummary only: a
    wire-form mapping is ctxlab's extra (:func:`summary_forms`)."""
    one_number: Any = ("context.ts", 3)  # changedFiles[1] is not a string
    not_text = dataclasses.replace(fx.compact1_summary(), changed_files=one_number)
    bad_summary = fx.compact1_summary().to_json()
    del bad_summary["changedFiles"]
    bad_summary["files"] = ["context.ts"]
    empty_goal = dataclasses.replace(fx.compact1_summary(), goal="")
    blank_goal = {**fx.compact1_summary().to_json(), "goal": " \n"}
    as_str = {**fx.compact1_summary().to_json(), "changedFiles": "context.ts"}  # not an array
    cases = [
        (_options(summary=not_text), [["compact-1", "changedFiles"]], _CHANGED_1, True),
        (_options(summary=bad_summary), [["compact-1", "summary.files"]], "summary.files", False),
        (_options(summary=as_str), [["compact-1", "changedFiles"]], "summary.changedFiles", False),
        (_options(tokens_before=-1), [["compact-1", "tokensBefore"]], "tokensBefore", True),
        (_options(tokens_before=True), [["compact-1", "tokensBefore"]], "tokensBefore", True),
        (_options(tokens_before=None), [["compact-1", "tokensBefore"]], "tokensBefore", True),
        (_options(tokens_before=False), [["compact-1", "tokensBefore"]], "tokensBefore", True),
        (_options(timestamp="100"), [["compact-1", "timestamp"]], "timestamp", True),
        (_options(summary=empty_goal), [["compact-1", "summary.goal"]], "summary.goal", True),
        (_options(summary=blank_goal), [["compact-1", "summary.goal"]], "summary.goal", False),
    ]
    for bad in (float("nan"), float("inf"), float("-inf")):
        cases.append((_options(tokens_before=bad), [["tokensBefore"]], "tokensBefore", True))
        cases.append((_options(timestamp=bad), [["timestamp"]], "timestamp", False))
    cases += [(_options(blank), [["id"]], "id", False) for blank in ("", "  ", "\t", "\n", " \t\n")]
    for options, names, field, chapter in cases:
        label = _label("sys..a3", options, field)
        if strict:
            attrs = {"field": field}
            path = fx.opening_path()
            t.rejects(label, [[field]], path, error_type=EntryParseError, attrs=attrs, **options)
        elif chapter:
            t.rejects(label, names, fx.opening_path(), error_type=CHAPTER_ERROR, **options)
    for blank in ("", "\t", " \n"):  # the chapter's error, or ctxlab's CompactionError
        names = [["compact-1"]] if strict else []
        _refused(t, _options(first_kept=blank), names, strict, wrong="firstKeptEntryId")


@LAB.check(
    "the candidate goes through parseSessionEntry() as its final check and copy: a bad "
    "summary, timestamp or tokensBefore, or an empty first kept entry, is refused",
    "再把候选对象交给 parseSessionEntry() 做最后一次运行时校验和复制：summary、timestamp "
    "或 tokensBefore 不合法、firstKeptEntryId 为空时都会被拒绝",
    source="chapter",
    quote_zh="再把候选对象交给 parseSessionEntry() 做最后一次运行时校验和复制",
    quote_en="then hands the candidate to parseSessionEntry() for a last runtime check and copy",
)
def parsed_result(t: Trial) -> None:
    _parser_refusals(t, strict=False)
    options = _options()
    label = _label("sys..a3", options)
    got = t.returns(label, fx.opening_path(), **options)
    if isinstance(got, CompactionSessionEntry):
        try:
            again = parse_session_entry(got)
        except CtxlabError as error:
            fail(
                label,
                f": the result does not pass parse_session_entry: {error}",
                f"：结果过不了 parse_session_entry：{message_zh(str(error))}",
            )
        assert isinstance(again, CompactionSessionEntry)
        entry_result(label, got, again)


@LAB.check(
    "every error names what is wrong as ctxlab's parser does: an EntryParseError naming the"
    " field (.field) for a bad summary, id, timestamp or tokensBefore (a blank id, a NaN"
    " timestamp too), a CompactionError naming a first kept entry that starts no group",
    "每个错误都像 ctxlab 的 parser 那样写明问题：summary、id、timestamp 或 tokensBefore 不合法"
    "（包括空白的 id、NaN 的 timestamp）时是写明字段（.field）的 EntryParseError；"
    "firstKeptEntryId 不是组首时是写明它的 CompactionError",
    source="ctxlab",
    why_en="the chapter asks for the parser's check; ctxlab's parser also refuses a blank id"
    " and a timestamp that is not finite, and ctxlab's errors name the field and have a class"
    " of their own",
    why_zh="本章要求经过 parser 的校验；ctxlab 的 parser 还拒绝空白的 id 和非有限的 timestamp，"
    "而且 ctxlab 的错误写明字段，并有各自的错误类型",
)
def errors_named(t: Trial) -> None:
    _parser_refusals(t, strict=True)
    # The chapter's rows on first kept entries again, their refusals now strictly.
    for row in (first_kept_starts_group, first_kept_not_system, first_kept_unknown):
        strictly: Callable[..., None] = row  # each of them takes ``strict``
        strictly(t, True)


@LAB.check(
    "the summary may be a CompactionSummary or its wire-form mapping (copied: changing the"
    " mapping afterwards changes nothing)",
    "summary 可以是 CompactionSummary，也可以是它的 wire 形式（字典；会被复制，之后修改"
    "这个字典不影响结果）",
    source="ctxlab",
    why_en="Python callers hold a summary either as ctxlab's CompactionSummary or as the dict"
    " the wire format gives; ctxlab takes both",
    why_zh="Python 调用者手里的 summary 可能是 ctxlab 的 CompactionSummary，也可能是 wire 格式"
    "给出的 dict；ctxlab 两种都接受",
)
def summary_forms(t: Trial) -> None:
    as_mapping = Text("sys..a3 (summary = a mapping)", "sys..a3（summary 是 wire 形式的字典）")
    as_object = Text(
        "sys..a3 (summary = a CompactionSummary)", "sys..a3（summary 是 CompactionSummary）"
    )
    _expect_created(t, _options(summary=fx.compact1_summary().to_json()), as_mapping)
    _expect_created(t, _options(), as_object)
    summary = fx.compact1_summary().to_json()
    options = _options(summary=summary)
    label = _label(as_mapping, options)
    got = t.returns(label, fx.opening_path(), **options)
    expected = create_compaction_entry(fx.opening_path(), **_options())
    entry_result(label, got, expected)
    summary["changedFiles"].append("evil.ts")
    summary["goal"] = "changed"
    changed = "changed with the summary mapping it was given", "随传入的 summary 一起变了"
    shares_nothing(label, got, expected, *changed)


@LAB.check(
    "tokensBefore and timestamp are kept exactly as the caller gave them (29.6 stays 29.6, "
    "29 stays an int): never rounded or recomputed (and the id and the summary too: spaces,"
    " repeated items and all)",
    "tokensBefore 与 timestamp 由调用者写入，原样保存（29.6 仍是 29.6，29 仍是整数），"
    "不会取整，也不会重新估算（id 与 summary 也原样保存：两端的空格、重复的项都不会被去掉）",
    source="chapter",
    quote_zh="summary 正文与 tokensBefore 由调用者提供，函数不重新判断业务事实是否完整，"
    "也不重算压缩前规模",
    quote_en="the summary's text and tokensBefore come from the caller; the function neither"
    " judges again whether the facts are complete nor recomputes the size before compaction",
)
def kept_as_given(t: Trial) -> None:
    for entry_id in (" compact-1", "compact-1 ", "compact 1"):
        _expect_created(t, _options(entry_id))
    padded = dataclasses.replace(fx.compact1_summary(), goal="  keep the budget  ")
    _expect_created(t, _options(summary=padded))
    twice = dataclasses.replace(fx.compact1_summary(), changed_files=("context.ts", "context.ts"))
    _expect_created(t, _options(summary=twice))
    for tokens_before, timestamp in (
        (29.6, 100), (29, 100.5), (29.0, 100), (0, 0), (0.25, 7), (29, -5),
    ):  # fmt: skip
        options = _options(tokens_before=tokens_before, timestamp=timestamp)
        got = _expect_created(t, options)
        label = _label("sys..a3", options)
        kept_exactly(label, "tokens_before", tokens_before, got.tokens_before)
        kept_exactly(label, "timestamp", timestamp, got.timestamp)


@LAB.check(
    "after a compaction, any group head may be kept again, even one before the previous"
    " compaction's first kept entry",
    "已有 compaction 时，任何组首都可以作为新的保留起点，包括早于上一次 firstKeptEntryId 的组首",
    source="chapter",
    quote_zh="它是恢复上下文时保留原消息的起点，只能指向一组的首条 user message",
    quote_en="it is where the original messages are kept from when the context is rebuilt, and"
    " can only point to the first user message of a group",
)
def first_kept_any_group_head(t: Trial) -> None:
    for first_kept in ("u1", "u2"):  # compact-1 kept u2
        _expect_created(t, _compact_2(first_kept), "sys..a4", fx.resumed_path, "a4")
    for first_kept in ("u1", "u2"):  # compact-2 kept u3
        options = _compact_3(first_kept)
        _expect_created(t, options, "sys..compact-2", fx.recompacted_path, "compact-2")


@LAB.check(
    "random paths (seeded): created as the chapter's rules create it from any group's first"
    " user message, refused from any other entry",
    "随机路径（带种子）：从任意一组的首条 user message 开始保留时按本章规则创建，"
    "从其他任何 entry 开始时被拒绝",
    source="chapter",
    quote_zh="只能指向一组的首条 user message",
    quote_en="can only point to the first user message of a group",
)
def random_paths(t: Trial) -> None:
    drawn.run(t, _RANDOM)


def _random_draw(r: random.Random) -> drawn.Path:
    items = drawn.draw_path(r, compactions=r.choice((0, 1, 2)), least=1, most=4)
    heads = [i.id for i in items if i.kind == "user"]
    others = [i.id for i in items if i.kind != "user"]
    others += [i.id for i in items if i.kind == "system"]  # a system message, twice as often
    others += ["u-unknown"] * (len(others) // 3 + 1)  # an unknown id, often
    wire = drawn_entries.draw_wire(r)
    options = {
        "id": r.choice(("k-new", "k-new", " k-new", "k-new\t")),  # padded: kept as given
        "timestamp": wire["timestamp"],
        "summary": parse_session_entry(wire).summary,  # type: ignore[union-attr]
        "first_kept_entry_id": r.choice(heads if r.random() < 0.55 else others),
        "tokens_before": wire["tokensBefore"],
    }
    return drawn.Path(items, tuple(options.items()))


def _random_kind(case: drawn.Path) -> str | None:
    if not case.items or not drawn.in_scope(case.items):
        return None
    options = dict(case.options)
    return drawn.outcome(lambda: create_compaction_entry(drawn.build(case.items), **options))


def _random_check(t: Trial, case: drawn.Path, kind: str) -> None:
    options = dict(case.options)
    name = drawn.describe(case.items)
    if kind == "refuses":
        path = drawn.build(case.items)
        t.rejects(_label(name, options), [], path, error_type=CHAPTER_ERROR, **options)
    else:
        _expect_created(t, options, name, lambda: drawn.build(case.items), None)


#: The paths :func:`random_paths` draws: 60 per run.
_RANDOM = drawn.Cases(
    LAB.lab, "random_paths", 60, _random_draw, _random_check, _random_kind, drawn.smaller_path
)
