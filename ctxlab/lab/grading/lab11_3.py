"""Lab 11.3 checks: ``build_context(active_path, *, max_tokens, ...)`` without compaction.

The chapter's "31 个 token 怎样留下第二、三组". Cases: the opening path with the chapter's
estimator (budget ``a/b/c``: max_tokens/reserved_output/safety_margin) and crafted paths priced
by their ``[n]`` tags, compared with the reference's result (:mod:`.expect`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ctxlab import context
from ctxlab import fixtures as fx
from ctxlab.context import build_context
from ctxlab.entries import MetadataSessionEntry, SessionEntry
from ctxlab.lab.grading import drawn
from ctxlab.lab.grading.calls import CHAPTER_ERROR, Trial
from ctxlab.lab.grading.cases import (
    assistant,
    crafted,
    path_of,
    rechain,
    system,
    tag_estimator,
    user,
)
from ctxlab.lab.grading.declare import LabChecks, helper_functions
from ctxlab.lab.grading.expect import (
    GROUP_3,
    KEPT_31,
    budget,
    expect_context,
    expect_deterministic,
    expect_worked_example_31,
    halves,
    path_name,
    random_context,
    rejects_bad_estimates,
    rejects_bad_options,
    zero,
)
from ctxlab.lab.grading.text import Text
from ctxlab.messages import UserMessage
from ctxlab.window import ContextWindow

LAB = LabChecks(
    "11.3",
    "build_context",
    ("active_path",),
    build_context,
    # ctxlab's solution: the helper functions of ctxlab.context compute the answer too.
    solution=(build_context, ContextWindow.build, *helper_functions(context)),
    #: What the sandbox's copy of ctxlab replaces by a raise.
    stubbed=(
        build_context,
        context._build,
        context.select_newest_suffix,
        context.assemble_result,
        ContextWindow.build,
    ),
    solution_name="ctxlab.build_context",
    helpers="ctxlab.context._build and the other private functions of ctxlab.context",
    budget=True,
)

_ALL_GROUPS = ("u1", "a1", *KEPT_31)


def _opening(t: Trial, options: Mapping[str, Any], **literal: Any) -> None:
    expect_context(t, "sys..a3", fx.opening_path, options, **literal)


def _tagged(t: Trial, path: str | list[SessionEntry], max_tokens: int, **literal: Any) -> None:
    """A crafted path (``path_of``'s notation, or built) priced by its tags, budget n/0/0."""
    entries = path_of(path) if isinstance(path, str) else path
    options = budget(max_tokens, 0, 0, tag_estimator)
    expect_context(t, path_name(entries), lambda: list(entries), options, **literal)


@LAB.check(
    "the 31-token example keeps groups 2 and 3: kept u2,a2,u3,calls,r-test,r-read,a3, "
    "reason trimmed, tokens 31/3/22/4/2/22/31",
    "31 个 token 的例子留下第二、三组：保留 u2,a2,u3,calls,r-test,r-read,a3，"
    "reason 为 trimmed，tokens 与本章完全一致",
    source="chapter",
    quote_zh="结果正好保留第二、三组",
    quote_en="the result keeps exactly the second and third groups",
)
def worked_example_31(t: Trial) -> None:
    expect_worked_example_31(t)


@LAB.check(
    "with 10 tokens left the newest group (15) is still returned whole: single_group_overflow",
    "消息额度只有 10 而第三组需要 15：函数仍返回完整的第三组，reason 为 single_group_overflow",
    source="chapter",
    quote_zh="并把 reason 设为 single_group_overflow",
    quote_en="and sets reason to single_group_overflow",
)
def single_group_overflow(t: Trial) -> None:
    # 19 - system 3 - reserved 4 - margin 2 = 10 tokens for messages; group 3 needs 15.
    for max_tokens in (19, 0, 9, 23):
        _opening(t, budget(max_tokens), kept=GROUP_3, reason="single_group_overflow")


@LAB.check(
    "the course's code (not in the chapter's text): when every group fits (or there is none)"
    " the reason is within_budget",
    "课程代码（本章正文没有提到）：所有组都放得下（或根本没有组）时，reason 为 within_budget",
    source="chapter",
    course=True,
    quote_zh="三组都放得下，reason 是 within_budget（课程代码里的值，本章正文没有提到）",
    quote_en="all three groups fit, so the reason is within_budget (the course's code; the"
    " chapter's text does not name it)",
)
def within_budget(t: Trial) -> None:
    for max_tokens in (38, 500):
        _opening(t, budget(max_tokens), kept=_ALL_GROUPS, reason="within_budget")
    tags = budget(10, 1, 1, tag_estimator)
    expect_context(t, "sys", lambda: path_of("sys:3"), tags, kept=(), reason="within_budget")
    expect_context(t, "[]", list, tags, kept=(), reason="within_budget")


@LAB.check(
    "fixed costs (system, reserved output, safety margin) are deducted first; the "
    "allowance never goes below 0",
    "先扣除固定成本（system、回答预留、安全余量）；"
    "固定成本超过总窗口时消息额度降到 0，不会变成负数",
    source="chapter",
    quote_zh="固定成本超过总窗口时，消息额度降到 0",
    quote_en="when the fixed costs exceed the whole window, the message allowance drops to 0",
)
def fixed_costs_first(t: Trial) -> None:
    # One token more of margin leaves 21: group 2 no longer fits beside group 3.
    _opening(t, budget(31, 4, 3), kept=GROUP_3, reason="trimmed")
    _opening(t, budget(31, 5, 2), kept=GROUP_3, reason="trimmed")
    for numbers in ((5,), (31, 40, 2), (31, 4, 100), (2.5, 0.5, 0.25), (37,), (24,)):
        _opening(t, budget(*numbers))


@LAB.check(
    "groups are chosen from the newest backwards and the choice stops at the first group "
    "that does not fit",
    "从最新一组向前选择，停在第一个放不下的组：保留的是路径末尾连续的几组",
    source="chapter",
    quote_zh="于是选择停在 u2",
    quote_en="so the choice stops at u2",
)
def contiguous_newest_suffix(t: Trial) -> None:
    # Groups cost 2, 10, 3. With 8 tokens the newest (3) fits and the middle one (10) does
    # not: the choice stops there, although the oldest (2) would still fit.
    _tagged(t, "u1 a1 u2:5 a2:5 u3:2 a3", 8, kept=("u3", "a3"))
    # Groups 1, 6, 1, 1: with 4 tokens the two newest fit, then group 2 stops the choice.
    _tagged(t, "u1 u2:3 a2:3 u3 u4", 4, kept=("u3", "u4"))

    # Newest by place on the path, not by clock: u3 stamped in the same second as u2.
    path = path_of("u1 a1 u2:3 a2 u3:3 a3")
    same_second = [dataclasses.replace(e, timestamp=3) if e.id == "u3" else e for e in path]
    name = Text("u1..a3, u3 stamped as u2", "u1..a3，u3 与 u2 的 timestamp 相同")
    expect_context(
        t, name, lambda: list(same_second), budget(5, 0, 0, tag_estimator), kept=("u3", "a3")
    )


@LAB.check(
    "a group is kept or dropped whole: the cut lies only between groups",
    "group 是预算可以整体保留或整体丢弃的最小单位：裁剪位置只能落在两组之间",
    source="chapter",
    quote_zh="裁剪位置只能落在 a1/u2 或 a2/u3 之间",
    quote_en="the cut can only fall between a1/u2 or a2/u3",
)
def whole_groups(t: Trial) -> None:
    # The budget would hold a part of group 2 (r-1, a2) beside group 3.
    path = "u1 a1 u2 calls[c-1] r-1->c-1 a2 u3:2 a3:2"
    _tagged(t, path, 6, kept=("u3", "a3"))
    _tagged(t, path, 8, kept=("u2", "calls", "r-1", "a2", "u3", "a3"))


@LAB.check(
    "the system message is replayed from the whole path, placed first and priced once "
    "as one message; it is not in keptEntryIds",
    "system message 从整条路径重放，排在最前面，作为一条消息计价，不进入 keptEntryIds"
    "（content 为空的 system message 也是 system message）",
    source="chapter",
    quote_zh="currentSystemMessage() 是第 03 章的重放函数",
    quote_en="currentSystemMessage() is chapter 03's replay function",
)
def system_replayed(t: Trial) -> None:
    # sys: BASE [2] + rules v1 [3]; patch: rules v2 [1]; tip: TIP [1], style terse [1].
    # Replayed: "BASE [2]\n\nTIP [1]", sections rules "RULE v2 [1]", style "terse [1]" = 5.
    path = crafted(
        system("sys", "BASE [2]", {"rules": "RULE v1 [3]"}),
        user("u1", 2),
        assistant("a1", 2),
        system("patch", "", {"rules": "RULE v2 [1]", "gone": None}),
        user("u2", 2),
        system("tip", "TIP [1]", {"style": "terse [1]"}),
        assistant("a2", 2),
    )
    _tagged(t, path, 9, kept=("u2", "a2"))
    _tagged(t, path, 100, kept=("u1", "a1", "u2", "a2"))
    # A system message with empty content is still a system message: it is replayed (and
    # its sections are the prompt).
    name = "sys(content ''),u1,a1"
    empty = crafted(system("sys", ""), user("u1", 1), assistant("a1", 1))
    expect_context(t, name, lambda: list(empty), budget(10, 1, 1, one_each), kept=("u1", "a1"))
    sections = crafted(system("sys", "", {"rules": "RULE [2]"}), user("u1", 2), assistant("a1", 2))
    expect_context(t, name, lambda: list(sections), budget(100, 0, 0, tag_estimator))


@LAB.check(
    "without a system message tokens.system is 0 and no system message comes first",
    "路径上没有 system message 时，tokens.system 为 0，结果里也没有开头的 system",
    source="chapter",
    quote_zh="路径上没有 system message 时，这一项为 0，结果里也没有开头的 system。",
    quote_en="When the path has no system message this item is 0, and the result has no"
    " leading system message.",
)
def no_system(t: Trial) -> None:
    def path() -> list[SessionEntry]:
        return rechain([e for e in fx.opening_path() if e.id != "sys"])

    expect_context(t, Text("u1..a3 (no sys)", "u1..a3（没有 sys）"), path, budget(31), kept=KEPT_31)


@LAB.check(
    "the budget numbers max_tokens, reserved_output, safety_margin must be finite and >= 0:"
    " NaN, infinity, a negative number, a bool, a string or None is refused with an error",
    "预算数值 max_tokens、reserved_output、safety_margin 都要是非负有限数："
    "NaN、无穷大、负数、布尔值、字符串或 None 都会被拒绝",
    source="chapter",
    quote_zh="四个配置数值和估算器的每次返回值都要是非负有限数",
    quote_en="the four configured numbers and every value the estimator returns must be"
    " finite numbers >= 0",
)
def options_checked(t: Trial) -> None:
    rejects_bad_options(t, "sys..a3", fx.opening_path)
    rejects_bad_options(t, "[]", list)


@LAB.check(
    "a bad budget number, or an estimate_tokens that is not a function, is a"
    " ContextOptionError naming the option (.option)",
    "预算数值不合法、estimate_tokens 不是函数时，抛出 ContextOptionError 并指出是哪个选项"
    "（.option）",
    source="ctxlab",
    why_en="the chapter asks for finite numbers >= 0; ctxlab's error also says which option is"
    " wrong (ContextOptionError, .option), and refuses an estimator that is not a function"
    " before it is called",
    why_zh="本章要求非负有限数；ctxlab 的错误还要指出是哪个选项（ContextOptionError、.option），"
    "并且在调用之前就拒绝不是函数的估算器",
)
def options_named(t: Trial) -> None:
    rejects_bad_options(t, "sys..a3", fx.opening_path, strict=True)
    rejects_bad_options(t, "[]", list, strict=True)


def _zero_for_user(message: object) -> int:
    return 0 if isinstance(message, UserMessage) else int(fx.opening_estimator(message))


def negative_for_user(message: object) -> int:
    """The chapter's estimator, except -1 for a user message (misconception evidence)."""
    return -1 if isinstance(message, UserMessage) else int(fx.opening_estimator(message))


def one_each(message: object) -> int:
    return 1


@LAB.check(
    "every estimate must be a finite number >= 0: a bad one is refused with an error; 0 is"
    " valid, and a fraction such as 2.5 is used as it is (not rounded)",
    "估算器的每次返回值都要是非负有限数：不合法的值会被拒绝；0 也合法，2.5 这样的小数"
    "原样使用（不取整）",
    source="chapter",
    quote_zh="估算器的每次返回值都要是非负有限数",
    quote_en="the estimator's every return value must be a finite number >= 0",
)
def estimator_checked(t: Trial) -> None:
    rejects_bad_estimates(t, "sys..a3", fx.opening_path, _BAD_ESTIMATES)
    _opening(t, budget(31, estimate_tokens=zero), kept=_ALL_GROUPS)
    _opening(t, budget(31, estimate_tokens=_zero_for_user))
    # An estimate is any finite number >= 0: 2.5 is taken as 2.5, never truncated.
    half = Text("sys..a3 (every estimate + 0.5)", "sys..a3（每条估算值 + 0.5）")
    for max_tokens in (31, 35, 40):
        expect_context(t, half, fx.opening_path, budget(max_tokens, estimate_tokens=halves))


@LAB.check(
    "a bad or failing estimate is an EstimatorError naming the message: .subject is"
    " 'entry <id>' (e.g. 'entry a3'), or 'the system message' ('the replayed system message'"
    " passes too)",
    "估算器出错或返回值不合法时，抛出 EstimatorError，并指出是哪条消息：.subject 写成"
    " 'entry <id>'（如 'entry a3'）或 'the system message'（写 'the replayed system message'"
    " 也算对）",
    source="ctxlab",
    why_en="the chapter asks for finite estimates >= 0; ctxlab's error also names the message"
    " that was priced badly, and wraps an estimator that raises",
    why_zh="本章要求估算值是非负有限数；ctxlab 的错误还要指出是哪条消息估算出了问题，"
    "估算器自己抛出的异常也包装成 EstimatorError",
)
def estimator_errors_named(t: Trial) -> None:
    rejects_bad_estimates(t, "sys..a3", fx.opening_path, _BAD_ESTIMATES, strict=True)


_BAD_ESTIMATES: tuple[tuple[str, object], ...] = (
    ("a3", -1), ("system", float("nan")), ("r-read", True), ("calls", "3"),
    ("u3", RuntimeError("tokenizer offline")), ("a3", float("inf")),
    ("system", RuntimeError("tokenizer offline")), ("u1", -0.5), ("system", None), ("u2", None),
)  # fmt: skip


@LAB.check(
    "tool ids that do not pair stop the build (r-test -> unknown-1); results in any "
    "order still pair",
    "tool id 配不上时第三组不进入预算选择（r-test -> unknown-1）；result 反序仍然合法",
    source="chapter",
    quote_zh="第三组不进入预算选择",
    quote_en="the third group does not enter the budget selection",
)
def broken_groups_refused(t: Trial) -> None:
    label = Text(
        "path sys..a3 with r-test(unknown-1), budget 31/4/2",
        "路径 sys..a3，r-test(unknown-1)，预算 31/4/2",
    )
    path = fx.unknown_call_path()
    t.rejects(label, [["unknown-1", "r-test"]], path, error_type=CHAPTER_ERROR, **budget(31))
    name = Text("sys..a3 with r-test before calls", "sys..a3，r-test 排在 calls 之前")
    kept = ("u2", "a2", "u3", "r-test", "calls", "r-read", "a3")
    expect_context(t, name, fx.results_before_call_path, budget(31), kept=kept)


@LAB.check(
    "the same path and options give equal results, each an independent copy; the path "
    "is left untouched",
    "相同 active path 与 options 得到深相等结果；每次结果都是独立副本，不改写 session entries",
    source="chapter",
    quote_zh="相同 active path 与 options 应得到深相等结果",
    quote_en="the same active path and options should give deeply equal results",
)
def deterministic_and_isolated(t: Trial) -> None:
    expect_deterministic(t, "sys..a3", fx.opening_path, 31)
    # Metadata entries after a1 and at the end are skipped, and the caller's list is kept.
    expect_deterministic(t, Text("sys..a3 with note", "sys..a3（带 note）"), _noted, 31)


def _noted() -> list[SessionEntry]:
    entries: list[SessionEntry] = fx.opening_path()
    entries.insert(3, MetadataSessionEntry("note-1", None, 60, "model", "course-model-1"))
    entries.append(MetadataSessionEntry("note-2", None, 70, "reviewed", True))
    return rechain(entries)


@LAB.check(
    "random paths and budgets (seeded): the chapter's context, and bad budget numbers or"
    " estimates refused",
    "随机路径与预算（带种子）：得到本章规则给出的 context；预算数值或估算值不合法时被拒绝",
    source="chapter",
    quote_zh="预算使用调用者提供的确定性估算器，并扣除本章列出的固定成本。",
    quote_en="The budget uses the deterministic estimator the caller provides, and deducts the"
    " fixed costs this chapter lists.",
)
def random_paths(t: Trial) -> None:
    drawn.run(t, _RANDOM)


#: The paths :func:`random_paths` draws: 120 per run.
_RANDOM = random_context(LAB.lab, "random_paths", 120, (0,))
