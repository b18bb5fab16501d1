"""ctxlab's error messages in Chinese, for the tables of the Chinese edition (issue 18).

The core speaks English: every :class:`~ctxlab.errors.CtxlabError` says
``"<where>: <problem>"`` and keeps its context as attributes (``entry_id``, ``field``,
``call_id``, ``line``, ...). The teaching layer shows some of these errors in a table
(the corruptions of ``compact-1``, the grouping errors, the first-kept table, the draft
records). In the Chinese edition those tables show :func:`error_text`: the place and the
problem rendered in Chinese from a phrase table of the core's problem texts. A problem the
table does not know is shown as the core wrote it, in English, so nothing is ever lost.

The core stays English; this module only reads its messages.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeAlias

from ctxlab.errors import CtxlabError
from ctxlab.lab.language import get_language

if TYPE_CHECKING:
    from ctxlab.migration import MigrationChange

__all__ = ["change_text", "error_text", "place_zh", "problem_zh"]

_F = r"(?P<f>[\w.\[\]-]+)"
_ID = r"(?P<id>[\w.-]+)"


def _kind_zh(got: str) -> str:
    """The core's description of a wrong value (``_kind`` in ctxlab.entries) in Chinese."""
    kinds = {
        "a boolean": "布尔值",
        "a string": "字符串",
        "an array": "数组",
        "an object": "对象",
    }
    if got in kinds:
        return kinds[got]
    if got.startswith("the number "):
        return f"数字 {got.removeprefix('the number ')}"
    return f" {got}"


#: What the estimator was pricing (``EstimatorError.subject``), in Chinese.
_SUBJECTS = {"the replayed system message": "重放出的 system message "}


def _subject_zh(subject: str) -> str:
    return _SUBJECTS.get(subject, f" {subject} ")


_Table: TypeAlias = list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]]


def _sub(template: str) -> Callable[[re.Match[str]], str]:
    return lambda m: template.format(**{k: v or "" for k, v in m.groupdict().items()})


#: (pattern of the core's problem text, its Chinese rendering). Patterns match the whole
#: problem (``re.fullmatch``); the first that matches wins.
_PROBLEMS: _Table = [
    (
        re.compile(
            rf"{_F} is not a known field \(the chapter's early-draft name; the current field is "
            r"(?P<new>\w+): migrate old records before parsing\)"
        ),
        _sub("{f} 不是已知字段（本章早期草案中的名字，现在叫 {new}：先迁移旧记录，再解析）"),
    ),
    (
        re.compile(
            rf"{_F} is not a known field \(an old name of ctxlab's migration exercise; the "
            r"current field is (?P<new>\w+): migrate old records before parsing\)"
        ),
        _sub("{f} 不是已知字段（ctxlab 迁移练习里的旧字段名，现在叫 {new}：先迁移旧记录，再解析）"),
    ),
    (re.compile(rf"{_F} is not a known field"), _sub("{f} 不是已知字段")),
    (re.compile(rf"{_F} is missing"), _sub("缺少 {f}")),
    # the chapter's rule is 「不能为空」; counting white space alone as empty is ctxlab's
    (
        re.compile(rf"{_F} must not be blank"),
        _sub("{f} 不能为空（ctxlab 扩展：只由空白字符组成也算空）"),
    ),
    (
        re.compile(rf"{_F} must not be null: a compaction is appended after a leaf"),
        _sub("{f} 不能是 null：compaction 总是追加在某个 leaf 之后"),
    ),
    (
        re.compile(rf"{_F} must be a string, got (?P<got>.+)"),
        lambda m: f"{m['f']} 必须是字符串，这里是{_kind_zh(m['got'])}",
    ),
    (
        re.compile(rf"{_F} must be an array, got (?P<got>.+)"),
        lambda m: f"{m['f']} 必须是数组，这里是{_kind_zh(m['got'])}",
    ),
    (
        re.compile(rf"{_F} must be an object, got (?P<got>.+)"),
        lambda m: f"{m['f']} 必须是对象，这里是{_kind_zh(m['got'])}",
    ),
    (
        re.compile(rf"{_F} must be true or false, got (?P<got>.+)"),
        lambda m: f"{m['f']} 必须是 true 或 false，这里是{_kind_zh(m['got'])}",
    ),
    (
        re.compile(rf"{_F} must be a finite number, got (?P<got>.+)"),
        lambda m: f"{m['f']} 必须是有限的数，这里是{_kind_zh(m['got'])}",
    ),
    (
        re.compile(rf"{_F} must be >= (?P<min>\S+), got (?P<got>.+)"),
        _sub("{f} 必须 >= {min}，这里是 {got}"),
    ),
    (
        re.compile(rf"{_F} must be a finite number >= 0, got (?P<got>.+)"),
        _sub("{f} 必须是 >= 0 的有限数，这里是 {got}"),
    ),
    (
        re.compile(
            r"estimate_tokens returned (?P<got>.+) for (?P<what>.+); expected a finite number >= 0"
        ),
        lambda m: (
            f"estimate_tokens 给{_subject_zh(m['what'])}估出了 {m['got']}；应当是 >= 0 的有限数"
        ),
    ),
    (
        re.compile(
            r"tool result (?P<r>\S+) answers (?P<c>\S+), but no tool call (?P=c) is declared in "
            r"this interaction"
        ),
        _sub("tool result {r} 回答的是 {c}，但这一组里没有声明过 tool call {c}"),
    ),
    (
        re.compile(r"tool call (?P<c>\S+) \(declared in (?P<e>\S+)\) has no tool result"),
        _sub("tool call {c}（在 {e} 里声明）没有 tool result"),
    ),
    (
        re.compile(r"tool call (?P<c>\S+) has two results \((?P<a>\S+) and (?P<b>\S+)\)"),
        _sub("tool call {c} 有两个 result（{a} 和 {b}）"),
    ),
    (
        re.compile(r"tool call (?P<c>\S+) is declared twice \(in (?P<e>\S+)\)"),
        _sub("tool call {c} 声明了两次（都在 {e} 里）"),
    ),
    (
        re.compile(
            rf"firstKeptEntryId {_ID} is a system message, which belongs to no interaction "
            r"\(system state is replayed from the whole path\); it cannot be the first kept entry"
        ),
        _sub(
            "firstKeptEntryId {id} 是 system message，不属于任何组"
            + "（system 状态从整条路径重放），不能作保留起点"
        ),
    ),
    (
        re.compile(
            rf"firstKeptEntryId {_ID} is inside the interaction that (?P<u>\S+) starts; only the "
            r"user message that starts an interaction can be the first kept entry"
        ),
        _sub(
            "firstKeptEntryId {id} 在 {u} 开头的那一组中间；"
            + "只有一组的首条 user message 才能作保留起点"
        ),
    ),
    (
        re.compile(rf"firstKeptEntryId {_ID} is not on the active path"),
        _sub("firstKeptEntryId {id} 不在活动路径上"),
    ),
    (
        re.compile(
            rf"firstKeptEntryId {_ID} is a compaction entry, not the user message that starts "
            r"an interaction"
        ),
        _sub("firstKeptEntryId {id} 是 compaction entry，不是一组的首条 user message"),
    ),
    (
        re.compile(rf"{_F} and (?P<g>\S+) are both present and disagree; not migratable"),
        _sub("{f} 和 {g} 同时存在，而且内容不一致；无法迁移"),
    ),
    (
        re.compile(
            rf"{_F} ends at (?P<x>\S+), inside an interaction \((?P<y>\S+) follows it\); a "
            r"compaction keeps whole interactions; not migratable"
        ),
        _sub("{f} 停在 {x}，落在一组中间（后面还有 {y}）；compaction 只保留整组；无法迁移"),
    ),
    (
        re.compile(rf"{_F} names (?P<x>\S+), which is not on the path; not migratable"),
        _sub("{f} 写的 {x} 不在路径上；无法迁移"),
    ),
    (
        re.compile(
            rf"{_F} points to (?P<x>\S+) as the first kept entry, but firstKeptEntryId is "
            r"(?P<v>.+); not migratable"
        ),
        _sub("按 {f} 推出的保留起点是 {x}，但 firstKeptEntryId 是 {v}；无法迁移"),
    ),
    # lab 11.1: the torn last line of a JSONL session file (a ctxlab extension)
    (
        re.compile(
            r"(?P<file>\S+) line (?P<n>\d+) has no newline: it is an unterminated tail "
            r"\((?P<b>\d+) bytes, probably a torn write\); it is not read as an entry\. "
            r"Appends are refused until JsonlSessionStore\.repair\(\) moves it aside\."
        ),
        _sub(
            "{file} 第 {n} 行没有换行符：这是被截断的最后一行（{b} 字节，多半是写到一半时中断了），"
            + "不会被读成 entry。在 JsonlSessionStore.repair() 把它挪到旁路文件之前，"
            + "Store 拒绝一切追加。"
        ),
    ),
    (
        re.compile(
            r"(?P<file>\S+) line (?P<n>\d+) is an unterminated tail; entry (?P<id>\S+) was "
            r"not appended\. Run JsonlSessionStore\.repair\(path\) first\."
        ),
        _sub(
            "{file} 第 {n} 行是被截断的最后一行，entry {id} 没有追加进去。"
            + "请先运行 JsonlSessionStore.repair(path)。"
        ),
    ),
    (
        re.compile(r"after migration the parser still refuses it: (?P<inner>.+); not migratable"),
        lambda m: f"迁移之后 parser 仍然拒绝它：{message_zh(m['inner'])}；无法迁移",
    ),
    # lab 11.x: the other refusals of ctxlab.migration (migrate_draft_entry, migrate_jsonl)
    (
        re.compile(rf"{_F} must be a non-empty array of entry ids; not migratable"),
        _sub("{f} 必须是非空的 entry id 数组；无法迁移"),
    ),
    (
        re.compile(rf"{_F} must be a non-blank entry id; not migratable"),
        _sub("{f} 必须是 entry id，不能为空，也不能只由空白字符组成；无法迁移"),
    ),
    (
        re.compile(rf"{_F} must name the entry the compaction follows; not migratable"),
        _sub("{f} 必须写明 compaction 接在哪条 entry 后面；无法迁移"),
    ),
    (
        re.compile(rf"{_F} does not lead to a path \((?P<inner>.+)\); not migratable"),
        lambda m: f"从 {m['f']} 找不到一条路径（{message_zh(m['inner'])}）；无法迁移",
    ),
    (
        re.compile(r"leaf (?P<id>'[^']*') is not in the session"),
        _sub("leaf {id} 不在 session 里"),
    ),
    (
        re.compile(rf"{_F} ends at (?P<x>\S+): no interaction is left to keep; not migratable"),
        _sub("{f} 停在 {x}：后面已经没有可以保留的组；无法迁移"),
    ),
    (
        re.compile(r"session entry: must be an object, got (?P<got>\S+); not migratable"),
        _sub("entry 必须是对象，这里是 {got}；无法迁移"),
    ),
    (
        re.compile(
            r"(?P<name>\S+) already exists; migration writes a new file and never overwrites one"
        ),
        _sub("{name} 已经存在；迁移只写新文件，从不覆盖已有的文件"),
    ),
    (
        re.compile(r"(?P<name>\S+) already exists; migration never overwrites a file"),
        _sub("{name} 已经存在；迁移从不覆盖已有的文件"),
    ),
    (
        re.compile(
            r"the last line has no newline \(a torn write\); repair the file before migrating it"
        ),
        _sub("最后一行没有换行符（写入被截断了）；先修复文件，再迁移"),
    ),
]

#: (pattern of the core's *where*, its Chinese rendering).
_PLACES: _Table = [
    (re.compile(r"session entry (?P<id>.+)"), _sub("entry {id}")),
    (re.compile(r"session entry"), _sub("entry")),
    (re.compile(r"interaction (?P<id>.+)"), _sub("{id} 开头的那一组")),
    (re.compile(r"compaction (?P<id>.+)"), _sub("compaction {id}")),
    (re.compile(r"(?P<file>.+) line (?P<n>\d+)"), _sub("{file} 第 {n} 行")),
]


def _render(
    text: str, table: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]]
) -> str | None:
    for pattern, render in table:
        match = pattern.fullmatch(text)
        if match:
            return render(match)
    return None


def problem_zh(problem: str) -> str | None:
    """The Chinese rendering of one of the core's problem texts, or ``None`` if unknown."""
    return _render(problem, _PROBLEMS)


def place_zh(where: str) -> str:
    """The Chinese rendering of an error's place (``session entry u2`` → ``entry u2``)."""
    rendered = _render(where, _PLACES)
    return where if rendered is None else rendered


def message_zh(message: str) -> str:
    """A whole ``"<where>: <problem>"`` message in Chinese (unknown parts stay English)."""
    rendered = problem_zh(message)
    if rendered is not None:
        return rendered
    if ": " in message:
        where, problem = message.split(": ", 1)
        rendered = problem_zh(problem)
        if rendered is not None:
            return f"{place_zh(where)}：{rendered}"
    return message


def error_text(error: CtxlabError) -> str:
    """``error`` as a table shows it: the core's English message, or in the Chinese edition
    its place and problem in Chinese (the English message when the problem is unknown)."""
    if get_language() != "zh":
        return str(error)
    rendered = problem_zh(error.problem)
    if rendered is None:
        return str(error)
    return f"{place_zh(error.where)}：{rendered}" if error.where else rendered


_ACTIONS = {"renamed": "已改名", "dropped": "已删除"}
_DETAILS: _Table = [
    (re.compile(r"now (?P<f>\S+)"), _sub("现在是 {f}")),
    (re.compile(r"same value as (?P<f>\S+)"), _sub("与 {f} 的值相同")),
    (
        re.compile(r"firstKeptEntryId derived from it: (?P<id>\S+)"),
        _sub("由它推出 firstKeptEntryId：{id}"),
    ),
    (
        re.compile(r"agrees with firstKeptEntryId (?P<id>\S+)"),
        _sub("与 firstKeptEntryId {id} 一致"),
    ),
]


def change_text(change: MigrationChange) -> str:
    """One migration change as a table shows it, in the notebook's language."""
    if get_language() != "zh":
        return str(change)
    detail = _render(change.detail, _DETAILS)
    action = _ACTIONS.get(change.action)
    if detail is None or action is None:
        return str(change)
    return f"{change.field}：{action}（{detail}）"
