"""Lab 11.5 checks: ``build_context`` extended with resume and system replay.

The chapter, "恢复时把最新摘要接在保留后缀前面": the newest summary becomes one user message
after the system message, priced first; the original messages from firstKeptEntryId on are
budgeted as in Lab 11.3; "system 状态跨过 compaction 边界". Compared as in Lab 11.3.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import Any

from ctxlab import context
from ctxlab import fixtures as fx
from ctxlab.compaction import create_compaction_entry
from ctxlab.context import build_context, resume_candidates
from ctxlab.entries import (
    CompactionSessionEntry,
    CompactionSummary,
    MetadataSessionEntry,
    SessionEntry,
)
from ctxlab.errors import CtxlabError
from ctxlab.lab.grading import drawn
from ctxlab.lab.grading.calls import Failed, Trial, fail
from ctxlab.lab.grading.cases import path_of, rechain, tag_estimator
from ctxlab.lab.grading.declare import LabChecks, helper_functions
from ctxlab.lab.grading.expect import (
    GROUP_3,
    BadEstimate,
    budget,
    budget_label,
    diff,
    expect_context,
    expect_deterministic,
    expect_worked_example_31,
    halves,
    random_context,
    rejects_bad_estimates,
    rejects_bad_options,
    zero,
)
from ctxlab.lab.grading.text import Text, same
from ctxlab.window import ContextWindow

LAB = LabChecks(
    "11.5",
    "build_context",
    ("active_path",),
    build_context,
    solution=(build_context, ContextWindow.build, *helper_functions(context), resume_candidates),
    #: What the sandbox's copy of ctxlab replaces by a raise.
    stubbed=(
        build_context,
        context._build,
        context.select_newest_suffix,
        context.assemble_result,
        ContextWindow.build,
    ),
    solution_name="ctxlab.build_context",
    helpers="ctxlab.context._build, resume_candidates and the other private functions of"
    " ctxlab.context",
    budget=True,
)

_RESUMED_ALL = ("u2", "a2", *GROUP_3, "u4", "a4")
_RESUMED = Text("sys..a4 (compact-1 keeps u2)", "sys..a4（compact-1 从 u2 开始保留）")
_RECOMPACTED = Text(
    "sys..compact-2 (compact-2 keeps u3)", "sys..compact-2（compact-2 从 u3 开始保留）"
)


def _resumed(t: Trial, options: Mapping[str, Any], **literal: Any) -> None:
    """The chapter's resumed path: sys..a3, compact-1 (keeps u2), u4, a4."""
    expect_context(t, _RESUMED, fx.resumed_path, options, **literal)


def _tag_or_opening(message: object) -> int:
    """The chapter's estimator, and the ``[n]`` tags for a crafted message it does not know."""
    try:
        return int(fx.opening_estimator(message))
    except CtxlabError:
        return tag_estimator(message)


@LAB.check(
    "without a compaction it is Lab 11.3's build: the 31-token example keeps groups 2 and 3",
    "没有 compaction 时，结果与实验 11.3 相同：31 个 token 的例子留下第二、三组",
    source="chapter",
    quote_zh="fixedMessages 目前为空，留给后文的压缩摘要。",
    quote_en="fixedMessages is empty for now; it is kept for the compaction summary later on.",
)
def no_compaction(t: Trial) -> None:
    expect_worked_example_31(t)


@LAB.check(
    "the newest summary becomes one user message right after the system message; "
    "keptEntryIds lists only original entries",
    "结果的顺序是 [system?, 摘要, ...保留的后缀]；keptEntryIds 不为合成消息制造虚假 id",
    source="chapter",
    quote_zh="结果的顺序是 [system?, 摘要, ...保留的后缀]。",
    quote_en="The result's order is [system?, summary, ...the kept suffix].",
)
def summary_after_system(t: Trial) -> None:
    _resumed(t, budget(100), kept=_RESUMED_ALL)


@LAB.check(
    "the summary's cost is taken from the allowance first; the rest goes to whole groups",
    "合成的摘要消息有自己的 token 成本，这个成本先从消息额度中扣除，余量才交给完整 groups",
    source="chapter",
    quote_zh="这个成本先从消息额度中扣除，余量才交给完整 groups。",
    quote_en="This cost comes off the message allowance first; only what is left goes to"
    " whole groups.",
)
def summary_priced_first(t: Trial) -> None:
    # 22 for messages; the summary (4) is paid first; 18 left holds [u4,a4]=7, not group 3.
    _resumed(t, budget(31), kept=("u4", "a4"))
    # Less than the summary itself is left: the group budget is 0, the newest group overflows.
    _resumed(t, budget(12), kept=("u4", "a4"), reason="single_group_overflow")
    for max_tokens in (38, 55):
        _resumed(t, budget(max_tokens))


_STAMPED_EARLIER = Text(
    "sys..compact-2, compact-2 stamped 50 (before compact-1's 100)",
    "sys..compact-2，compact-2 的 timestamp 为 50（早于 compact-1 的 100）",
)


def _stamped_earlier() -> list[SessionEntry]:
    """compact-2 with a timestamp older than compact-1's: still the newest on the path."""
    path = fx.recompacted_path()
    path[-1] = dataclasses.replace(path[-1], timestamp=50)
    return path


@LAB.check(
    "only the newest compaction is read (compact-2, the one nearest the end of the path,"
    " whatever its timestamp): no second summary message",
    "路径中若已经有 compact-2，恢复只读取它（最新指离路径末尾最近，与 timestamp 无关），"
    "不会再生成第二份摘要消息",
    source="chapter",
    quote_zh="路径中若已经有 compact-2，恢复只读取它。",
    quote_en="If the path already has compact-2, resuming reads only that one.",
)
def newest_compaction_only(t: Trial) -> None:
    expect_context(t, _RECOMPACTED, fx.recompacted_path, budget(100), kept=(*GROUP_3, "u4", "a4"))
    expect_context(t, _RECOMPACTED, fx.recompacted_path, budget(30))
    # 「从活动路径末尾向前找到最新 compaction」: found by its place, not by the caller's clock.
    expect_context(t, _STAMPED_EARLIER, _stamped_earlier, budget(100), kept=(*GROUP_3, "u4", "a4"))


#: Paths with one compaction c, in path_of's notation: what comes before it, the id it keeps
#: from, what comes after it, and what a budget that holds every group keeps.
_COMPACTED = (
    ("sys u1 a1 u2 a2 u3 a3", "u3", "u4 a4", ("u3", "a3", "u4", "a4")),
    ("sys u1 a1 u2 a2 u3 a3 u4", "u4", "a4", ("u4", "a4")),  # kept at the leaf: its own parent
    ("u1 a1 u2 a2", "u1", "u3 a3", ("u1", "a1", "u2", "a2", "u3", "a3")),  # the path's first
    ("sys u1 a1 u2 u3 a3", "u2", "u4 a4", ("u2", "u3", "a3", "u4", "a4")),  # u2 never answered
)


def _compacted(before: str, first_kept: str, after: str) -> list[SessionEntry]:
    head = path_of(before)
    compaction = CompactionSessionEntry(
        "c", head[-1].id, 50, CompactionSummary("goal [2]"), first_kept, 6
    )
    return rechain([*head, compaction, *path_of(after)])


@LAB.check(
    "original messages are collected from firstKeptEntryId on, also those after the "
    "compaction (u4, a4)",
    "从 firstKeptEntryId 收集原消息，并继续收集 compaction 之后的 u4、a4",
    source="chapter",
    quote_zh="从 u2 收集原消息，并继续收集 compaction 之后的 u4、a4",
    quote_en="collect the original messages from u2 on, and go on to collect u4 and a4 after"
    " the compaction",
)
def candidates_from_first_kept(t: Trial) -> None:
    # A budget that would hold everything still starts at firstKeptEntryId: u1 and a1 are
    # summarised, not kept.
    _resumed(t, budget(1000), kept=_RESUMED_ALL, reason="within_budget")
    for before, first_kept, after, kept in _COMPACTED:
        path = f"{before} c {after}".replace(" ", ",")
        name = Text(
            path.replace(",c,", f",c(keeps {first_kept}),"),
            path.replace(",c,", f",c（从 {first_kept} 开始保留）,"),
        )
        make = functools.partial(_compacted, before, first_kept, after)
        expect_context(t, name, make, budget(100, 0, 0, tag_estimator), kept=kept)


def _with_notes() -> list[SessionEntry]:
    """The resumed path with metadata note-1 before u3 and note-2 before u4."""
    entries = fx.resumed_path()
    entries.insert(5, MetadataSessionEntry("note-1", None, 60, "model", "course-model-1"))
    entries.insert(12, MetadataSessionEntry("note-2", None, 100, "reviewed", True))
    return rechain(entries)


@LAB.check(
    "metadata and compaction entries are skipped before grouping",
    "跳过 metadata 与 compaction entry，再对消息后缀分组并应用预算",
    source="chapter",
    quote_zh="跳过 metadata 与 compaction entry",
    quote_en="skip metadata and compaction entries",
)
def metadata_skipped(t: Trial) -> None:
    name = Text("sys..a4 with note-1 and note-2", "sys..a4（插入 note-1 和 note-2）")
    expect_context(t, name, _with_notes, budget(100), kept=_RESUMED_ALL)
    expect_context(t, name, _with_notes, budget(31), kept=("u4", "a4"))


@LAB.check(
    "system state crosses the compaction boundary: the system message is replayed from the "
    "whole path, also the part before the compaction (what sys and patch-1 set is kept)",
    "system 状态跨过 compaction 边界：replayedSystemMessage() 读取整条 active path，"
    "包括 compaction 之前的部分，sys 和 patch-1 设下的内容都保留",
    source="chapter",
    quote_zh="replayedSystemMessage() 读取的是整条 active path，包括 compaction 之前的部分。",
    quote_en="replayedSystemMessage() reads the whole active path, including the part before"
    " the compaction.",
)
def system_replay_across_boundary(t: Trial) -> None:
    name = Text(
        "sys..a3 (system patches, compact-1 keeps u2)",
        "sys..a3（带 system patch，compact-1 从 u2 开始保留）",
    )
    wire = expect_context(t, name, fx.system_patch_path, budget(100), kept=("u2", "a2", "u3", "a3"))
    messages = wire.get("messages")
    first = messages[0] if isinstance(messages, list) and messages else None
    replayed = {
        "role": "system",
        "content": "BASE\n\nPrefer small diffs.",
        "sections": {"rules": "RULE v2"},
        "timestamp": 1,
    }
    found = diff(replayed, first, "messages[0]")
    if found:
        patches = Text("sys..a3 (system patches)", "sys..a3（带 system patch）")
        fail(budget_label(patches, budget(100)), f": {found}", f"：{found}")
    expect_context(t, name, fx.system_patch_path, budget(17))


def _first_kept_at(first_kept: str) -> list[SessionEntry]:
    """The opening path and compact-1 keeping from ``first_kept``."""
    path = fx.opening_path()
    path.append(
        CompactionSessionEntry("compact-1", "a3", 100, fx.compact1_summary(), first_kept, 29)
    )
    return path


@LAB.check(
    "firstKeptEntryId must be an earlier user message that starts a group (a2, r-test, "
    "a system patch, a metadata entry, an unknown or a later id is an error naming it)",
    "firstKeptEntryId 只能指向 compaction 之前一组的首条 user message；a2、r-test、"
    "system patch、metadata entry、未知的 id 或 compaction 之后的 id 都会报错，并指出它",
    source="ctxlab",
    why_en="the chapter checks firstKeptEntryId when the compaction is created (Lab 11.4);"
    " ctxlab checks it again when resuming, so a compaction built by hand cannot cut a group",
    why_zh="本章在创建 compaction 时检查 firstKeptEntryId（实验 11.4）；ctxlab 在恢复时再检查一次，"
    "手工构造的 compaction 也就切不开一组",
)
def first_kept_checked(t: Trial) -> None:
    for first_kept in ("a2", "r-test", "nope"):
        label = Text(
            f"path sys..compact-1 with firstKeptEntryId {first_kept}, budget 100/4/2",
            f"路径 sys..compact-1，firstKeptEntryId 为 {first_kept}，预算 100/4/2",
        )
        t.rejects(label, [[first_kept]], rechain(_first_kept_at(first_kept)), **budget(100))
    patched = [
        dataclasses.replace(e, first_kept_entry_id="patch-1")
        if isinstance(e, CompactionSessionEntry)
        else e
        for e in fx.system_patch_path()
    ]
    label = Text(
        "path sys..a3 (system patches) whose compact-1 keeps from patch-1, budget 100/4/2",
        "路径 sys..a3（system patch），compact-1 从 patch-1 开始保留，预算 100/4/2",
    )
    t.rejects(label, [["patch-1"]], patched, **budget(100))
    noted = _first_kept_at("note")
    noted.insert(5, MetadataSessionEntry("note", "a2", 5, "model", "course-model-1"))
    label = Text(
        "path sys..a3 with a metadata entry note before u3 and compact-1 keeping from note",
        "路径 sys..a3，u3 前有 metadata entry note，compact-1 从 note 开始保留",
    )
    t.rejects(label, [["note"]], rechain(noted), **budget(100))
    tags = budget(100, estimate_tokens=_tag_or_opening)
    label = Text(
        "path sys..compact-1,u4,a4 with firstKeptEntryId u4 (after the compaction)",
        "路径 sys..compact-1,u4,a4，firstKeptEntryId 为 compaction 之后的 u4",
    )
    late = [*_first_kept_at("u4"), *path_of("u4 a4")]
    t.rejects(label, [["u4"]], rechain(late), **tags)
    # A compaction first on the path: nothing stands before it to keep from.
    label = Text(
        "path c0,u1,a1 whose compaction c0 comes first and keeps from u1",
        "路径 c0,u1,a1：compaction c0 排在最前，从 u1 开始保留",
    )
    first = CompactionSessionEntry("c0", "root", 1, fx.compact1_summary(), "u1", 0)
    t.rejects(label, [["u1"]], rechain([first, *path_of("u1 a1")]), **tags)


def _compacted_again() -> list[SessionEntry]:
    """The recompacted path, compacted a third time (compact-3 keeps u4)."""
    entries = fx.recompacted_path()
    third = create_compaction_entry(
        entries,
        id="compact-3",
        timestamp=300,
        summary=fx.compact1_summary(),
        first_kept_entry_id="u4",
        tokens_before=11,
    )
    return [*entries, third]


def _continued() -> list[SessionEntry]:
    """The recompacted path, continued with u5, a5."""
    return rechain([*fx.recompacted_path(), *path_of("u5:2 a5:2")])


@LAB.check(
    "a resumed path can be compacted again; the newest compaction and its suffix win",
    "第二次 compaction 使用同一个创建函数；后续 buildContext() 先读取最新的 compaction",
    source="chapter",
    quote_zh="后续 buildContext() 先读取 compact-2，再从 u3 收集原消息。",
    quote_en="A later buildContext() reads compact-2 first, then collects the original"
    " messages from u3.",
)
def recompaction(t: Trial) -> None:
    expect_context(
        t,
        Text("sys..compact-3 (compact-3 keeps u4)", "sys..compact-3（compact-3 从 u4 开始保留）"),
        _compacted_again,
        budget(100),
        kept=("u4", "a4"),
    )
    expect_context(
        t,
        same("sys..compact-2,u5,a5"),
        _continued,
        budget(100, estimate_tokens=_tag_or_opening),
        kept=(*GROUP_3, "u4", "a4", "u5", "a5"),
    )


@LAB.check(
    "the same path and options give equal results; the path is left untouched",
    "相同 active path 与 options 应得到深相等结果；不会改写 session entries",
    source="chapter",
    quote_zh="相同 active path 与 options 应得到深相等结果",
    quote_en="the same active path and options should give deeply equal results",
)
def deterministic_and_isolated(t: Trial) -> None:
    expect_deterministic(t, "sys..compact-2", fx.recompacted_path, 100)


@LAB.check(
    "Lab 11.3's option rules still hold on a resumed path: a budget number that is not finite"
    " and >= 0 is refused with an error",
    "实验 11.3 的选项规则在恢复路径上照样成立：预算数值不是非负有限数时会被拒绝",
    source="chapter",
    quote_zh="四个配置数值和估算器的每次返回值都要是非负有限数",
    quote_en="the four configured numbers and every value the estimator returns must be"
    " finite numbers >= 0",
)
def options_checked(t: Trial) -> None:
    rejects_bad_options(t, _RESUMED, fx.resumed_path)


@LAB.check(
    "on a resumed path too, a bad budget number or an estimate_tokens that is not a function"
    " is a ContextOptionError naming the option (.option)",
    "在恢复路径上，预算数值不合法、estimate_tokens 不是函数时，同样抛出 ContextOptionError"
    " 并指出是哪个选项（.option）",
    source="ctxlab",
    why_en="the chapter asks for finite numbers >= 0; ctxlab's error also says which option is"
    " wrong, and refuses an estimator that is not a function before it is called",
    why_zh="本章要求非负有限数；ctxlab 的错误还要指出是哪个选项，并且在调用之前就拒绝不是"
    "函数的估算器",
)
def options_named(t: Trial) -> None:
    rejects_bad_options(t, _RESUMED, fx.resumed_path, strict=True)


@LAB.check(
    "Lab 11.3's estimator rules still hold, also for the summary message: a bad estimate is"
    " refused with an error; 0 is valid, and a fraction is used as it is",
    "实验 11.3 的估算器规则照样成立，摘要消息也不例外：返回值不合法时会被拒绝；返回 0 是合法的，"
    "小数原样使用",
    source="chapter",
    quote_zh="估算器的每次返回值都要是非负有限数",
    quote_en="every value the estimator returns must be a finite number >= 0",
)
def estimator_checked(t: Trial) -> None:
    rejects_bad_estimates(t, _RESUMED, fx.resumed_path, _BAD_ESTIMATES)
    _resumed(t, budget(31, estimate_tokens=zero), kept=_RESUMED_ALL)
    for max_tokens in (31, 45, 100):
        _resumed(t, budget(max_tokens, estimate_tokens=halves))


@LAB.check(
    "a bad or failing estimate is an EstimatorError naming the message (.subject: 'the summary"
    " of compact-1', 'the system message', 'entry a4')",
    "估算器出错或返回值不合法时，抛出 EstimatorError，并指出是哪条消息（.subject 依次为"
    " 'the summary of compact-1'、'the system message'、'entry a4'）",
    source="ctxlab",
    why_en="the chapter asks for finite estimates >= 0; ctxlab's error also names the message"
    " that was priced badly (the summary by its compaction), and wraps an estimator that"
    " raises",
    why_zh="本章要求估算值是非负有限数；ctxlab 的错误还要指出是哪条消息估算出了问题"
    "（摘要消息按它的 compaction 命名），估算器自己抛出的异常也包装成 EstimatorError",
)
def estimator_errors_named(t: Trial) -> None:
    rejects_bad_estimates(t, _RESUMED, fx.resumed_path, _BAD_ESTIMATES, strict=True)


_BAD_ESTIMATES: tuple[tuple[str, object], ...] = (
    ("compact-1", RuntimeError("tokenizer offline")), ("compact-1", -1),
    ("compact-1", float("nan")), ("compact-1", True), ("compact-1", "4"),
    ("system", RuntimeError("tokenizer offline")), ("system", float("inf")),
    ("a4", RuntimeError("tokenizer offline")), ("a4", -0.5), ("compact-1", None), ("a4", None),
)  # fmt: skip


def _without_system() -> list[SessionEntry]:
    return rechain([entry for entry in fx.resumed_path() if entry.id != "sys"])


@LAB.check(
    "Lab 11.3's ledger on resumed paths: without a system message tokens.system is 0; fixed "
    "costs above the window leave 0; a summary costing more than the allowance leaves no"
    " room, and the newest group is still sent whole",
    "恢复路径上的 token 预算账本与实验 11.3 一致：没有 system message 时 tokens.system 为 0；"
    "固定成本超过窗口时消息额度为 0；摘要的成本超过消息额度时，最新一组仍然完整保留",
    source="chapter",
    quote_zh="固定成本超过总窗口时，消息额度降到 0",
    quote_en="when the fixed costs exceed the whole window, the message allowance drops to 0",
)
def ledger_on_resumed_paths(t: Trial) -> None:
    # The summary costs 100, more than the 24.5 left: no group fits, [u4, a4] overflows.
    try:
        expect_context(
            t,
            Text(
                "u1..a4 (no sys, compact-1 keeps u2)",
                "u1..a4（没有 sys，compact-1 从 u2 开始保留）",
            ),
            _without_system,
            budget(31),
        )
        overflow = {"kept": ("u4", "a4"), "reason": "single_group_overflow"}
        _resumed(t, budget(5), **overflow)
        dear = budget(31, estimate_tokens=BadEstimate(fx.resumed_path(), "compact-1", 100, 0.5))
        expect_context(t, _dear_summary(0.5), fx.resumed_path, dear, **overflow)
    except Failed as failed:
        # Why a resumed path's ledger differs: the summary message is priced too.
        raise Failed(
            failed.text
            + Text(
                " (the estimator prices the summary message too: its cost comes off the"
                " allowance before any group, and counts in tokens.messages and tokens.total)",
                "（估算器也给摘要消息计价：它的成本先从消息额度中扣除，余量才交给各组，"
                "并计入 tokens.messages 与 tokens.total）",
            )
        ) from None


def _dear_summary(other: float) -> Text:
    return Text(
        f"sys..a4 (compact-1 keeps u2), the summary priced 100, every other message {other:g}",
        f"sys..a4（compact-1 从 u2 开始保留），摘要计 100，其余每条消息计 {other:g}",
    )


@LAB.check(
    "as the course's code does: tokens.availableForMessages is the allowance before the"
    " summary's cost, the summary message has the compaction's timestamp, and a summary"
    " costing more than the allowance leaves the groups 0, not less",
    "与课程代码一致：tokens.availableForMessages 是扣除摘要成本之前的消息额度；摘要消息的"
    " timestamp 取 compaction 的 timestamp；摘要的成本超过消息额度时，留给各组的预算是 0，"
    "不是负数",
    source="ctxlab",
    why_en="the chapter takes the summary's cost from the allowance but leaves these three open;"
    " ctxlab does as the course's TypeScript code does",
    why_zh="本章只说摘要的成本先从消息额度中扣除，这三点都没有规定；ctxlab 与课程的 TypeScript"
    " 代码一致",
)
def course_ledger(t: Trial) -> None:
    for max_tokens in (31, 100):
        _resumed(t, budget(max_tokens), course=True)
    expect_context(t, _RECOMPACTED, fx.recompacted_path, budget(30), course=True)
    # Groups that cost 0 fit in what the summary leaves: 0, not 24 - 100.
    dear = budget(31, estimate_tokens=BadEstimate(fx.resumed_path(), "compact-1", 100, 0))
    expect_context(t, _dear_summary(0), fx.resumed_path, dear, course=True)


@LAB.check(
    "random paths with compactions and budgets (seeded): the chapter's resumed context, and"
    " bad budget numbers or estimates refused",
    "随机的带 compaction 的路径与预算（带种子）：得到本章规则恢复出的 context；"
    "预算数值或估算值不合法时被拒绝",
    source="chapter",
    quote_zh="恢复时把最新摘要接在保留后缀前面",
    quote_en="On resume, the newest summary is placed before the kept suffix",
)
def random_resumes(t: Trial) -> None:
    drawn.run(t, _RANDOM)


#: The paths :func:`random_resumes` draws: 40 per run.
_RANDOM = random_context(LAB.lab, "random_resumes", 40, (1, 1, 2))
