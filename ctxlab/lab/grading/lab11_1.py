"""Lab 11.1 checks: ``parse_compaction_entry(value)``, the compaction branch of the parser.

The chapter's "摘要先成为 session 中的一条普通事实" and "损坏记录在进入预算前就会被拒绝"; each
row says what it checks. Every case is compact-1's wire form with one field changed; an
accepted one must equal the reference's result.
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ctxlab import entries
from ctxlab import fixtures as fx
from ctxlab.entries import (
    SUMMARY_FIELDS,
    CompactionSessionEntry,
    MessageSessionEntry,
    MetadataSessionEntry,
    parse_session_entry,
)
from ctxlab.errors import EntryParseError, entry_error, shown
from ctxlab.lab.grading import drawn, drawn_entries
from ctxlab.lab.grading.calls import CHAPTER_ERROR, Trial, fail
from ctxlab.lab.grading.cases import by_id
from ctxlab.lab.grading.declare import LabChecks, methods
from ctxlab.lab.grading.drawn_entries import LISTS
from ctxlab.lab.grading.expect import entry_result, kept_exactly, shares_nothing
from ctxlab.lab.grading.text import Text, exception_text
from ctxlab.lab.language import tr


def parse_compaction_entry(value: object) -> CompactionSessionEntry:
    """The reference: the core parser (:func:`~ctxlab.entries.parse_session_entry`) reads
    every field; a message or metadata entry is refused first, by ``type`` as the core
    parser dispatches, naming its id and the field ``type``."""
    entry_type: object = None
    entry_id: object = None
    if isinstance(value, Mapping):
        entry_type, entry_id = value.get("type"), value.get("id")
    elif isinstance(value, (MessageSessionEntry, MetadataSessionEntry)):
        entry_type, entry_id = value.type, value.id
    if entry_type in ("message", "metadata"):
        readable = entry_id if isinstance(entry_id, str) and entry_id.strip() else None
        raise entry_error(
            readable,
            "type",
            f"must be 'compaction', got {entry_type!r}: parse_compaction_entry reads"
            " compaction entries only",
        )
    entry = parse_session_entry(value)
    assert isinstance(entry, CompactionSessionEntry)  # a message or metadata: refused above
    return entry


LAB = LabChecks(
    "11.1",
    "parse_compaction_entry",
    ("value",),
    parse_compaction_entry,
    solution=(
        parse_session_entry,
        parse_compaction_entry,
        entries._read_summary,
        entries._wire_of,
        *methods(entries._Reader),
    ),
    stubbed=(parse_session_entry, entries._read_summary, parse_compaction_entry),
    also_reference=(parse_session_entry,),
    solution_name="ctxlab's parse_compaction_entry (or ctxlab.parse_session_entry)",
    helpers="ctxlab.entries' reader",
)


# The cases: compact-1's wire form with one field changed
def edited(edits: Mapping[str, object]) -> dict[str, Any]:
    """compact-1's wire form with each field path of ``edits`` set to its value (``...``:
    deleted; ``a->b``: renamed)."""
    wire = fx.compact1().to_json()
    for field, value in edits.items():
        drawn_entries.edit(wire, field, value)
    return wire


def changed(field: str, value: object = None) -> dict[str, Any]:
    return edited({field: value})


def wire_label(name: Text | str) -> Text:
    """``compact-1 with <name>`` (a ``str`` name is code, the same in both languages)."""
    text = name if isinstance(name, Text) else Text(name, name)
    return Text(f"compact-1 with {text.en}", f"compact-1（{text.zh}）")


#: A refusal case: its label, the wire value, and the field path the error is about (or the
#: paths it may name, when the value allows several, such as an empty summary).
Case = tuple[Text | str, object, str | tuple[str, ...]]


def _set(field: str, *values: object) -> list[Case]:
    """``field = value`` cases, one per value: the error is about that field."""
    return [(f"{field} = {shown(value)}", changed(field, value), field) for value in values]


def _renamed(rename: str) -> Case:
    """``field->new``: the field's last key renamed ``new``; the error is about the new one."""
    field, new = rename.split("->")
    parent, _, key = field.rpartition(".")
    name = Text(f"{new} instead of {key}", f"用 {new} 代替 {key}")
    return (name, changed(rename), f"{parent}.{new}".lstrip("."))


def _beside(field: str, old: str) -> Case:
    new = field.rpartition(".")[2]
    name = Text(f"{new} beside {old}", f"{old} 旁多了 {new}")
    return (name, changed(field, ["context.ts"]), field)


def _refuses(t: Trial, strict: bool, *cases: Case) -> None:
    """Each changed compact-1 is refused. The chapter's rows (「错误停在 compact-1」): a
    ValueError naming compact-1 or the field (when the value has a readable id). ctxlab's
    (``strict``): an EntryParseError naming compact-1 and the field, with ``.entry_id``
    compact-1 and ``.field`` the field path."""
    for name, wire, field in cases:
        label = wire_label(name)
        entry_id = wire.get("id") if isinstance(wire, Mapping) else None
        readable = isinstance(entry_id, str) and bool(entry_id.strip())
        fields = [field] if isinstance(field, str) else list(field)
        if not strict:
            leaves = (re.sub(r"\[\d+\]$", "", f.rpartition(".")[2]) for f in fields if f)
            either = ["compact-1", *leaves]  # summary.decisions[0]: "decisions"
            t.rejects(label, [either] if readable else [], wire, error_type=CHAPTER_ERROR)
            continue
        names = [["compact-1"], fields] if readable else ([fields] if field else [])
        attrs: dict[str, str | tuple[str, ...]] = {"field": field} if field else {}
        attrs.update({"entry_id": "compact-1"} if readable else {})
        t.rejects(label, names, wire, error_type=EntryParseError, attrs=attrs)


def _accepts(t: Trial, name: Text | str, edits: Mapping[str, object]) -> None:
    """The changed compact-1 is read as the reference reads it."""
    label = wire_label(name)
    entry_result(label, t.returns(label, edited(edits)), parse_compaction_entry(edited(edits)))


def _kept_or_refused(t: Trial, field: str) -> None:
    """``field`` = 10**400, an int Python's json can give but a float cannot hold: kept
    exactly, or refused with the parser's error -- never a crash."""
    label = wire_label(f"{field} = 10**400")
    ok, got = t.outcome(label, changed(field, 10**400))
    if ok:
        entry_result(label, got, parse_compaction_entry(changed(field, 10**400)))
        return
    text = exception_text(got)
    if not isinstance(got, CHAPTER_ERROR):
        fail(
            label,
            f": raised {text}; keep it as given, or refuse it with the parser's error (a"
            " ValueError naming compact-1, such as EntryParseError)",
            f"：抛出了 {text}；要么原样保存，要么用 parser 的错误拒绝它"
            "（指出 compact-1 的 ValueError，例如 EntryParseError）",
        )
    if "compact-1" not in text and field not in text:
        fail(
            label,
            f": the error should name compact-1 or {field}; got {text}",
            f"：错误信息应当指出 compact-1 或 {field}；实际是 {text}",
        )


# The chapter's rows
@LAB.check(
    "compact-1's wire form is read into an equal, canonical CompactionSessionEntry",
    "compact-1 的 wire 形式被读成一条相等的 CompactionSessionEntry（parentId a3，"
    "firstKeptEntryId u2，tokensBefore 29）",
    source="chapter",
    quote_zh="JSONL 重新打开时，同一条解析路径会恢复 compact-1。",
    quote_en="When the JSONL file is reopened, the same parsing path restores compact-1.",
)
def accepts_compact_1(t: Trial) -> None:
    label = Text(
        "ctxlab's compact-1 (fixtures.compact1)", "ctxlab 的 compact-1（fixtures.compact1）"
    )
    got = t.returns(label, edited({}))
    if isinstance(got, CompactionSessionEntry):
        facts = (got.id, got.parent_id, got.first_kept_entry_id, got.tokens_before, got.timestamp)
        if facts != ("compact-1", "a3", "u2", 29, 100):
            got_facts = "/".join(shown(f) for f in facts)
            fail(
                label,
                ": expected id/parentId/firstKeptEntryId/tokensBefore/timestamp ="
                f" compact-1/a3/u2/29/100, got {got_facts}",
                "：期望 id/parentId/firstKeptEntryId/tokensBefore/timestamp ="
                f" compact-1/a3/u2/29/100，实际 {got_facts}",
            )
    entry_result(label, got, parse_compaction_entry(edited({})))


@LAB.check(
    "the parser returns a new object: changing the input afterwards changes nothing",
    "parser 返回新对象，因此调用者之后修改 summary 数组也不会改动 Store 中的记录",
    source="chapter",
    quote_zh="解析器返回新对象，因此调用者之后修改 summary 数组也不会改动 Store 中的记录。",
    quote_en="The parser returns a new object, so a caller who later changes the summary's"
    " arrays does not change the record in the Store.",
)
def no_shared_state(t: Trial) -> None:
    label = Text("compact-1, input changed after the call", "compact-1，调用后修改输入")
    wire = edited({})
    got = t.returns(label, wire)
    expected = parse_compaction_entry(edited({}))
    entry_result(label, got, expected)
    wire["summary"]["changedFiles"].append("evil.ts")
    wire["summary"]["constraints"].clear()
    wire["summary"]["goal"] = "changed"
    wire["firstKeptEntryId"] = "u3"
    wire["tokensBefore"] = 0
    shares_nothing(label, got, expected, "changed with its input", "随输入一起变了")


_STOPS_AT_COMPACT_1 = "缺少当前字段或加入旧别名时，错误停在 compact-1"
_STOPS_AT_COMPACT_1_EN = (
    "when a current field is missing or an old alias is added, the error stops at compact-1"
)


@LAB.check(
    "the chapter's early-draft name files, in place of changedFiles or beside it (and a"
    " snake_case alias such as first_kept_entry_id in place of a camelCase field), is"
    " refused: the error stops at compact-1",
    "本章早期草案中的 files 被拒绝，无论它代替了 changedFiles 还是与之并存（用"
    " first_kept_entry_id 这样的 snake_case 别名代替 camelCase 字段也一样），错误停在 compact-1",
    source="chapter",
    quote_zh=_STOPS_AT_COMPACT_1,
    quote_en=_STOPS_AT_COMPACT_1_EN,
)
def rejects_draft_names(t: Trial, strict: bool = False) -> None:
    renames = (
        "summary.changedFiles->files firstKeptEntryId->first_kept_entry_id"
        " tokensBefore->tokens_before parentId->parent_id summary.changedFiles->changed_files"
    )
    _refuses(t, strict, *map(_renamed, renames.split()), _beside("summary.files", "changedFiles"))


@LAB.check(
    "a missing field (summary.changedFiles, goal, firstKeptEntryId, tokensBefore, ...) is "
    "refused: the error stops at compact-1",
    "缺少当前字段（summary.changedFiles、goal、firstKeptEntryId、tokensBefore 等）时，"
    "错误停在 compact-1",
    source="chapter",
    quote_zh=_STOPS_AT_COMPACT_1,
    quote_en=_STOPS_AT_COMPACT_1_EN,
)
def rejects_missing_fields(t: Trial, strict: bool = False) -> None:
    fields = (
        "summary.changedFiles summary.goal summary.unresolved firstKeptEntryId tokensBefore"
        " parentId timestamp summary"
    )
    missing = [(Text(f"{f} missing", f"缺少 {f}"), changed(f, ...), f) for f in fields.split()]
    # An empty summary misses all seven fields: the error may name any of them.
    every = tuple(f"summary.{key}" for key in SUMMARY_FIELDS)
    empty = (Text("summary = {}", "summary 为 {}"), changed("summary", {}), every)
    _refuses(t, strict, *missing, empty)


@LAB.check(
    "goal, parentId and firstKeptEntryId must not be empty (and parentId is not null)",
    "goal、parentId 和 firstKeptEntryId 不能为空（compaction 的 parentId 也不能是 null）",
    source="chapter",
    quote_zh="goal、parentId 和 firstKeptEntryId 不能为空",
    quote_en="goal, parentId and firstKeptEntryId must not be empty",
)
def rejects_blank_ids(t: Trial, strict: bool = False) -> None:
    blanks = [*_set("parentId", None, ""), *_set("firstKeptEntryId", ""), *_set("summary.goal", "")]
    _refuses(t, strict, *blanks)


@LAB.check(
    "each of the six lists is an array (null is not an empty list) and every item in it is"
    " a string",
    "六个数组字段都是数组（null 不是空数组），数组中的每一项都是字符串",
    source="chapter",
    quote_zh="数组中的每一项都是字符串",
    quote_en="every item of an array is a string",
)
def rejects_non_string_items(t: Trial, strict: bool = False) -> None:
    cases: tuple[tuple[str, object, str], ...] = (
        # field, value, the field path the error names (an item by its index)
        ("summary.decisions", [42], "summary.decisions[0]"),
        ("summary.changedFiles", ["context.ts", None], "summary.changedFiles[1]"),
        ("summary.next", "Read context.ts.", "summary.next"),
        ("summary.completed", [["nested"]], "summary.completed[0]"),
        ("summary.constraints", {"0": "append-only"}, "summary.constraints"),
        ("summary.unresolved", ["ok", "ok", 3.5], "summary.unresolved[2]"),
        # null is no array (string[]): it is not read as an empty list
        *((f"summary.{name}", None, f"summary.{name}") for name in LISTS),
    )
    _refuses(t, strict, *((f"{f} = {shown(v)}", changed(f, v), named) for f, v, named in cases))


@LAB.check(
    "tokensBefore is a finite number >= 0: 0 is read; NaN, infinity, a negative number, a"
    " bool or a string is refused",
    "tokensBefore 是非负有限数：0 可以读入；NaN、无穷大、负数、布尔值或字符串都被拒绝",
    source="chapter",
    quote_zh="tokensBefore 是非负有限数",
    quote_en="tokensBefore is a finite number >= 0",
)
def rejects_bad_tokens_before(t: Trial, strict: bool = False) -> None:
    nan, inf = float("nan"), float("inf")
    _refuses(t, strict, *_set("tokensBefore", -1, nan, inf, -inf, -0.5, True, False, "29", None))
    if not strict:  # (ctxlab's errors row asks the refusals only)
        _accepts(t, "tokensBefore = 0", {"tokensBefore": 0})


@LAB.check(
    "a field of the wrong type (timestamp: number, the ids: string, summary: an object), or"
    " a value that is not an object, is refused",
    "字段类型不对（timestamp 是 number，各个 id 是 string，summary 是对象）或整个值不是对象时"
    "被拒绝",
    source="chapter",
    quote_zh="parseSessionEntry() 逐字段读取外部对象。",
    quote_en="parseSessionEntry() reads the external object field by field.",
)
def rejects_wrong_types(t: Trial, strict: bool = False) -> None:
    values = [
        (Text(f"the value {shown(value)}", f"值 {shown(value)}"), value, "")
        for value in (["compact-1"], "compact-1", None, 42)
    ]
    _refuses(
        t,
        strict,
        *_set("summary", tr("Keep the context small.", "让上下文保持精简。")),
        *_set("summary.goal", 7),
        *_set("timestamp", "100", True, None),
        *_set("firstKeptEntryId", 2),
        *_set("parentId", 3),
        *_set("summary", None, 5, ["goal"]),
        *_set("id", 5, None),
        *values,
    )


@LAB.check(
    "tokensBefore is the caller's estimate: it is kept as given, never recomputed",
    "tokensBefore 由调用者写入；parser 只检查它是非负有限数，不会重新估算并核对该值",
    source="chapter",
    quote_zh="parser 只检查它是非负有限数，不会重新估算并核对该值。",
    quote_en="the parser only checks that it is a finite number >= 0; it does not re-estimate"
    " it and compare.",
)
def tokens_before_not_recomputed(t: Trial) -> None:
    for value in (1, 2.5, 29, 29.6, 29.0, 1_000_000):
        name = f"tokensBefore = {shown(value)}"
        _accepts(t, name, {"tokensBefore": value})
        got = t.returns(wire_label(name), changed("tokensBefore", value))
        kept_exactly(wire_label(name), "tokens_before", value, getattr(got, "tokens_before", None))


@LAB.check(
    "timestamp is any number: negative, zero, decimal or huge, it is kept as given",
    "timestamp 可以是任何数：负数、0、小数或很大的数都原样保存",
    source="chapter",
    quote_zh="timestamp: number;",
    quote_en="timestamp: number;",
)
def timestamp_any_number(t: Trial) -> None:
    for value in (-5, -0.5, 0, 100.5, 1e300, 10**20):
        _accepts(t, f"timestamp = {shown(value)}", {"timestamp": value})


@LAB.check(
    "other valid compactions (empty lists, decimal numbers, Chinese text, strings with"
    " spaces, firstKeptEntryId equal to parentId) are accepted as they are",
    "其他合法的 compaction（空数组、小数、中文文本、带空格的字符串、firstKeptEntryId 与 parentId"
    " 相同）原样接受",
    source="chapter",
    quote_zh="parseSessionEntry() 逐字段读取外部对象。",
    quote_en="parseSessionEntry() reads the external object field by field.",
)
def accepts_valid_variants(t: Trial) -> None:
    _accepts(t, Text("all six lists empty", "六个列表全为空"), {f"summary.{k}": [] for k in LISTS})
    filled = {f"summary.{k}": [f"{k} item"] for k in LISTS}
    _accepts(t, Text("every list with one item", "每个列表各有一项"), filled)
    numbers = Text(
        "timestamp 100.5 and tokensBefore 0.25", "timestamp 为 100.5，tokensBefore 为 0.25"
    )
    _accepts(t, numbers, {"timestamp": 100.5, "tokensBefore": 0.25})
    goal, constraints = "让上下文保持在预算内", ["历史只追加", "不删除旧记录"]
    chinese = {"summary.goal": goal, "summary.constraints": constraints, "id": "压缩-1"}
    _accepts(t, Text("Chinese text", "中文文本"), chinese)
    spaces = {"summary.goal": "  keep the budget  ", "summary.next": ["", "  "]}
    _accepts(t, Text("goal and items with spaces", "goal 和列表项带空格"), spaces)
    # 11.4 keeps u4 while it waits at the leaf: parent and first kept entry are both u4.
    same = Text("parentId and firstKeptEntryId both u4", "parentId 和 firstKeptEntryId 都是 u4")
    _accepts(t, same, {"parentId": "u4", "firstKeptEntryId": "u4"})


@LAB.check(
    "random entries (seeded): a valid one read as the chapter's parser reads it, one with a"
    " field broken where the chapter constrains it refused",
    "随机 entry（带种子）：合法的按本章 parser 的方式读取，某个字段在本章约束处被破坏的被拒绝",
    source="chapter",
    quote_zh="parseSessionEntry() 逐字段读取外部对象。",
    quote_en="parseSessionEntry() reads the external object field by field.",
)
def random_entries(t: Trial) -> None:
    drawn.run(t, _RANDOM)


#: A drawn case: a valid wire form, and the field broken in it (``""``: none) and how.
_Drawn = tuple[dict[str, Any], str, object]


def _random_draw(r: random.Random) -> _Drawn:
    wire = drawn_entries.draw_wire(r)
    return (wire, "", None) if r.random() < 0.2 else (wire, *drawn_entries.break_wire(r))


def _random_input(case: _Drawn) -> dict[str, Any]:
    wire, field, value = case
    return drawn_entries.broken(wire, field, value) if field else wire


def _random_kind(case: _Drawn) -> str | None:
    kind = drawn.outcome(lambda: parse_compaction_entry(_random_input(case)))
    return kind if (kind == "refuses") == bool(case[1]) else None


def _random_check(t: Trial, case: _Drawn, kind: str) -> None:
    value = _random_input(case)
    broken = f" ({drawn_entries.break_text(case[1], case[2])})" if case[1] else ""
    text = json.dumps(value, ensure_ascii=False, allow_nan=True)
    label = drawn.label(f"entry {text}{broken}")
    if case[1]:
        t.rejects(label, [], value, error_type=CHAPTER_ERROR)
        return
    entry_result(label, t.returns(label, value), parse_compaction_entry(value))


def _random_smaller(case: _Drawn) -> Iterator[_Drawn]:
    return ((wire, case[1], case[2]) for wire in drawn_entries.smaller_wire(case[0]))


#: The entries :func:`random_entries` draws: 220 per run.
_RANDOM = drawn.Cases(
    LAB.lab, "random_entries", 220, _random_draw, _random_check, _random_kind, _random_smaller
)


# ctxlab's rows
@LAB.check(
    "any other unknown key is refused too, on the entry and in the summary (the migration"
    " exercise's old names nextSteps, invariants, compactedEntryIds; a snake_case key beside"
    " its camelCase one)",
    "任何未知字段都被拒绝，entry 上和 summary 里都一样（包括迁移练习里的旧字段名 nextSteps、"
    "invariants、compactedEntryIds，以及 camelCase 字段旁多出的 snake_case 键）",
    source="ctxlab",
    why_en="the chapter's parser only builds the seven-field summary; ctxlab refuses every key"
    " it does not read, so a typo or an old name never passes silently",
    why_zh="本章的 parser 只生成七字段 summary；ctxlab 拒绝所有它不读取的键，"
    "拼错的或旧的字段名都不会悄悄通过",
)
def rejects_unknown_keys(t: Trial, strict: bool = False) -> None:
    extra = [
        (Text(f"an extra key {field}", f"多了一个键 {field}"), changed(field, []), field)
        for field in ("summary.notes", "notes", "summary.goals", "first_kept_entry_id")
    ]
    # The old names of ctxlab's migration exercise (Lab 11.x); a draft name is named as
    # such also when a current field is missing as well.
    on_entry = Text("compactedEntryIds on the entry", "entry 上多了 compactedEntryIds")
    instead = Text(
        "compactedEntryIds instead of firstKeptEntryId",
        "用 compactedEntryIds 代替 firstKeptEntryId",
    )
    replaced = edited({"compactedEntryIds": ["u1"], "firstKeptEntryId": ...})
    _refuses(
        t,
        strict,
        *extra,
        _renamed("summary.next->nextSteps"),
        _beside("summary.invariants", "constraints"),
        (on_entry, changed("compactedEntryIds", ["context.ts"]), "compactedEntryIds"),
        (instead, replaced, "compactedEntryIds"),
    )


@LAB.check(
    "a string of only spaces, tabs or newlines counts as empty (for parentId,"
    " firstKeptEntryId and goal), and the id must not be blank either",
    "只由空格、制表符或换行组成的字符串也算空（parentId、firstKeptEntryId 和 goal），id 也不能为空",
    source="ctxlab",
    why_en="the chapter says 'not empty'; ctxlab also refuses a string of white space, which"
    " names nothing either, and asks the same of the entry's own id",
    why_zh="本章只说「不能为空」；ctxlab 把只有空白字符的字符串也当作空（它同样什么都没有指明），"
    "并对 entry 自己的 id 提同样的要求",
)
def rejects_whitespace_ids(t: Trial, strict: bool = False) -> None:
    blanks = (" ", "   ", "\t", "\n", " \t\r\n ")
    fields = ("parentId", "firstKeptEntryId", "summary.goal")
    _refuses(t, strict, *(c for f in fields for c in _set(f, *blanks)), *_set("id", "", *blanks))


@LAB.check(
    "timestamp is a finite number: NaN, infinity and -infinity are refused",
    "timestamp 必须是有限数：NaN、正负无穷大都被拒绝",
    source="ctxlab",
    why_en="the chapter types timestamp as a number and asks finiteness only of tokensBefore;"
    " ctxlab refuses NaN and infinity, which JSON cannot carry and which order nothing",
    why_zh="本章把 timestamp 写成 number，只要求 tokensBefore 是有限数；ctxlab 拒绝 NaN 和"
    "无穷大，JSON 表示不了它们，它们也无法给记录排序",
)
def rejects_bad_timestamp(t: Trial, strict: bool = False) -> None:
    _refuses(t, strict, *_set("timestamp", float("nan"), float("inf"), float("-inf")))


@LAB.check(
    "a number too large for a float (10**400, as tokensBefore or timestamp) is kept exactly,"
    " or refused with the parser's error: never a crash",
    "大到 float 放不下的数（tokensBefore 或 timestamp 为 10**400）要么原样保存，要么用 parser"
    " 的错误拒绝，不能让程序崩溃",
    source="ctxlab",
    why_en="the chapter's numbers are JavaScript doubles, where such a value cannot arise;"
    " Python's json reads a 401-digit number as an int, and float(), math.isfinite() on it"
    " raise OverflowError",
    why_zh="本章的数是 JavaScript 的双精度浮点数，不会出现这样的值；Python 的 json 把 401 位的"
    "数读成 int，对它调用 float() 或 math.isfinite() 会抛出 OverflowError",
)
def huge_numbers_kept_or_refused(t: Trial) -> None:
    for field in ("tokensBefore", "timestamp"):
        _kept_or_refused(t, field)


@LAB.check(
    "only compaction entries are read: a message or metadata entry is refused, naming its "
    "id and the field type",
    "只读 compaction entry：message 或 metadata entry 被拒绝，错误指出它的 id 和 type 字段",
    source="ctxlab",
    why_en="the lab builds the compaction branch of parseSessionEntry(); ctxlab refuses the"
    " other types so a caller never mistakes a message for a compaction",
    why_zh="本实验只写 parseSessionEntry() 的 compaction 分支；ctxlab 拒绝其他类型，"
    "调用者就不会把 message 误当成 compaction",
)
def other_types_refused(t: Trial) -> None:
    note = MetadataSessionEntry("note-1", "a3", 50, "model", "course-model-1")
    for entry in (by_id(fx.opening_path())["u2"], note):
        label = Text(f"the {entry.type} entry {entry.id}", f"{entry.type} entry {entry.id}")
        t.rejects(label, [[entry.id], ["type"]], entry.to_json())
    missing: Case = (Text("type missing", "缺少 type"), changed("type", ...), "type")
    _refuses(t, True, *_set("type", "compactio", None), missing)


@LAB.check(
    "an existing CompactionSessionEntry, and its to_json(), read back equal (a new object)",
    "已有的 CompactionSessionEntry 对象及其 to_json() 读回后相等（且是新对象）",
    source="ctxlab",
    why_en="ctxlab's stores hand the parser entry objects as well as wire dicts, so the"
    " parser reads both",
    why_zh="ctxlab 的 Store 交给 parser 的既有 wire 字典也有 entry 对象，所以 parser 两种都读",
)
def accepts_entry_object(t: Trial) -> None:
    entry = fx.compact1()
    label = Text("the CompactionSessionEntry compact-1", "CompactionSessionEntry 对象 compact-1")
    entry_result(label, t.returns(label, entry), entry)
    second = Text("compact-1 read twice (parse(parse(wire).to_json()))", "compact-1 读两遍")
    first = t.returns(second, edited({}))
    if isinstance(first, CompactionSessionEntry):
        entry_result(second, t.returns(second, first.to_json()), fx.compact1())


@LAB.check(
    "every error is an EntryParseError naming compact-1 and the field path (.entry_id,"
    " .field), e.g. session entry compact-1: summary.files",
    "每个错误都是 EntryParseError，写明 compact-1 和字段路径（.entry_id、.field），"
    "例如 entry compact-1：summary.files",
    source="ctxlab",
    why_en="the chapter asks that the error stop at compact-1; ctxlab's errors also say which"
    " field, in the message and as attributes a program can read",
    why_zh="本章要求错误停在 compact-1；ctxlab 的错误还要写明是哪个字段，"
    "既写在错误信息里，也作为程序可读的属性",
)
def errors_name_the_field(t: Trial) -> None:
    for row in LAB.checks:  # every refusal row (rejects_...) again, now strictly
        if row.key.startswith("rejects_"):
            strictly: Callable[..., None] = row.run  # each of them takes ``strict``
            strictly(t, True)


@LAB.check(
    "a CompactionSessionEntry object with a broken field is checked like its wire form:"
    " an EntryParseError naming compact-1 and the field, never a copy",
    "字段损坏的 CompactionSessionEntry 对象要像它的 wire 形式一样被检查：抛出 EntryParseError，"
    "写明 compact-1 和字段，而不是直接复制",
    source="ctxlab",
    why_en="ctxlab's parser reads entry objects too (the chapter reads wire objects only), so"
    " an object built in code with a bad field must be refused like the same dict",
    why_zh="ctxlab 的 parser 也读 entry 对象（本章只读 wire 对象），所以在代码里构造出来、"
    "字段不合法的对象，也要像同样的字典一样被拒绝",
)
def entry_object_checked(t: Trial) -> None:
    entry = fx.compact1()
    no_goal = dataclasses.replace(entry.summary, goal="")
    for field, value, broken in (
        ("tokensBefore", -1, dataclasses.replace(entry, tokens_before=-1)),
        ("firstKeptEntryId", "", dataclasses.replace(entry, first_kept_entry_id="")),
        ("summary.goal", "", dataclasses.replace(entry, summary=no_goal)),
    ):
        name = f"{field} = {shown(value)}"
        label = Text(
            f"the CompactionSessionEntry compact-1 with {name}",
            f"CompactionSessionEntry 对象 compact-1，其中 {name}",
        )
        attrs = {"field": field, "entry_id": "compact-1"}
        t.rejects(label, [["compact-1"], [field]], broken, error_type=EntryParseError, attrs=attrs)
