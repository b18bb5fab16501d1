"""What the labs expect of a student's result: the comparisons several labs use.

A failed row shows the first failing example named with the chapter's entry ids: :func:`diff`
says where the student's value first differs from the expected one (``messages[2]
(u3).content[0].text: differs at character 3 ...``). A compaction entry (Labs 11.1, 11.4):
:func:`entry_result`. A ``ContextResult`` (Labs 11.3, 11.5): :func:`compare_context`; the
31-token example, bad budget numbers and estimates, random paths.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ctxlab import fixtures as fx
from ctxlab.context import ContextResult, build_context
from ctxlab.entries import CompactionSessionEntry, MessageSessionEntry, SessionEntry
from ctxlab.errors import ContextOptionError, EstimatorError, shown
from ctxlab.lab.grading import drawn
from ctxlab.lab.grading.calls import CHAPTER_ERROR, Trial, fail
from ctxlab.lab.grading.text import Text, kind, same
from ctxlab.lab.language import tr
from ctxlab.messages import SystemMessage, UserMessage


def ids(values: Sequence[object]) -> str:
    """``u2,a2`` (or ``(none)``, 「（无）」)."""
    return ",".join(str(i) for i in values) if values else tr("(none)", "（无）")


_OPENING_IDS = ("sys", "u1", "a1", "u2", "a2", "u3", "calls", "r-test", "r-read", "a3")


def path_name(path: Sequence[SessionEntry]) -> str:
    """A short name of a path: ``sys..a3`` for the opening path, its ids for a short one."""
    entry_ids = tuple(entry.id for entry in path)
    if not entry_ids:
        return "[]"
    if entry_ids == _OPENING_IDS:
        return "sys..a3"
    if len(entry_ids) > 12:
        return f"{entry_ids[0]}..{entry_ids[-1]}"
    return ",".join(entry_ids)


def canonical(value: object) -> str:
    """Canonical JSON of a wire value (``?`` when it is not JSON)."""
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=True)
    except (TypeError, ValueError):
        return "?"


def _expected(where: str, expected: str, got: str) -> str:
    return tr(f"{where}: expected {expected}, got {got}", f"{where}：应为 {expected}，实际是 {got}")


def _the_value(where: str) -> str:
    return where or tr("the value", "返回值")


def diff(expected: object, got: object, where: str) -> str | None:
    """The first place where ``got`` differs from ``expected`` (JSON-shaped or dataclass),
    in the language of the report."""
    if dataclasses.is_dataclass(expected) and not isinstance(expected, type):
        if type(got) is not type(expected):
            return _expected(_the_value(where), type(expected).__name__, kind(got))
        for field in dataclasses.fields(expected):
            name = field.name
            found = diff(getattr(expected, name), getattr(got, name), _join(where, name))
            if found:
                return found
        return None
    if isinstance(expected, Mapping):
        if not isinstance(got, Mapping):
            return _expected(_the_value(where), tr("an object", "对象"), kind(got))
        for key in expected:
            if key not in got:
                return tr(f"{_join(where, str(key))}: missing", f"{_join(where, str(key))}：缺失")
            found = diff(expected[key], got[key], _join(where, str(key)))
            if found:
                return found
        for key in got:
            if key not in expected:
                place = _join(where, str(key))
                return tr(
                    f"{place}: not expected, got {shown(got[key])}",
                    f"{place}：不应出现，实际是 {shown(got[key])}",
                )
        return None
    if isinstance(expected, (list, tuple)):
        if type(got) is not type(expected) and not (
            isinstance(got, (list, tuple)) and isinstance(expected, list)
        ):
            return _expected(
                where, tr(f"a {type(expected).__name__}", type(expected).__name__), kind(got)
            )
        assert isinstance(got, (list, tuple))
        if len(got) != len(expected):
            return _expected(where, shown(expected), shown(got))
        for index, (e, g) in enumerate(zip(expected, got, strict=True)):
            found = diff(e, g, f"{where}[{index}]")
            if found:
                return found
        return None
    if isinstance(expected, str) and isinstance(got, str) and expected != got:
        at = next(
            (i for i, (e, g) in enumerate(zip(expected, got, strict=False)) if e != g),
            min(len(expected), len(got)),
        )
        start = max(0, at - 20)
        place = where or tr("the text", "文本")
        wanted, found_text = shown(expected[start : at + 30]), shown(got[start : at + 30])
        return tr(
            f"{place}: differs at character {at}: expected {wanted}, got {found_text}",
            f"{place}：第 {at} 个字符起不同：应为 {wanted}，实际是 {found_text}",
        )
    alike = type(expected) is type(got) or (
        isinstance(expected, (int, float))
        and isinstance(got, (int, float))
        and not isinstance(expected, bool)
        and not isinstance(got, bool)
    )
    if alike and expected == got:
        return None
    return _expected(_the_value(where), shown(expected), shown(got))


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


def entry_result(label: Text, got: object, expected: CompactionSessionEntry) -> None:
    """``got`` must be a CompactionSessionEntry equal to ``expected``, in canonical form."""
    if not isinstance(got, CompactionSessionEntry):
        fail(
            label,
            f": returned {kind(got)}; expected a CompactionSessionEntry"
            " (from ctxlab import CompactionSessionEntry)",
            f"：返回了 {kind(got)}；期望 CompactionSessionEntry"
            "（from ctxlab import CompactionSessionEntry）",
        )
    found = diff(expected.to_json(), got.to_json(), "")
    if found:
        fail(label, f": {found}", f"：{found}")
    found = diff(expected, got, "")
    if found:
        fail(
            label,
            f": not typed as ctxlab's entry: {found} (use tuples, as CompactionSummary does)",
            f"：类型与 ctxlab 的 entry 不一致：{found}（像 CompactionSummary 那样使用 tuple）",
        )


def kept_exactly(label: Text, name: str, given: object, kept: object) -> None:
    """Field ``name`` of the student's entry is ``given``, of its type (never recomputed)."""
    if type(kept) is not type(given) or kept != given:
        fail(
            label,
            f": {name} must be kept exactly as given ({shown(given)},"
            f" {type(given).__name__}), got {shown(kept)} ({type(kept).__name__})",
            f"：{name} 必须原样保存（{shown(given)}，{type(given).__name__}），"
            f"实际是 {shown(kept)}（{type(kept).__name__}）",
        )


def shares_nothing(
    label: Text, got: CompactionSessionEntry, expected: CompactionSessionEntry, en: str, zh: str
) -> None:
    """After the caller changed its input, ``got`` still equals ``expected`` (``en``/``zh``:
    how it changed)."""
    found = diff(expected.to_json(), got.to_json(), "")
    if found:
        fail(label, f": the returned entry {en} ({found})", f"：返回的 entry {zh}（{found}）")


def budget(
    max_tokens: object,
    reserved_output: object = 4,
    safety_margin: object = 2,
    estimate_tokens: object = fx.opening_estimator,
) -> dict[str, Any]:
    """build_context's options; by default the chapter's 4/2 and its estimator."""
    return {
        "max_tokens": max_tokens,
        "reserved_output": reserved_output,
        "safety_margin": safety_margin,
        "estimate_tokens": estimate_tokens,
    }


#: A path's name in a label: the same in both languages (``sys..a3``), or a Text.
PathName = str | Text


def bilingual(name: PathName) -> Text:
    return name if isinstance(name, Text) else same(name)


def budget_label(name: PathName, options: Mapping[str, Any]) -> Text:
    numbers = "/".join(shown(options[option]) for option, _ in _OPTIONS)
    path = bilingual(name)
    return Text(f"path {path.en}, budget {numbers}", f"路径 {path.zh}，预算 {numbers}")


def _names(path: Sequence[SessionEntry], reference: ContextResult) -> dict[str, str]:
    """Canonical JSON of a message -> how a detail names it (entry id, system, summary)."""
    names: dict[str, str] = {}
    for entry in path:
        if isinstance(entry, MessageSessionEntry):
            names.setdefault(canonical(entry.message.to_json()), entry.id)
    if reference.messages and isinstance(reference.messages[0], SystemMessage):
        names[canonical(reference.messages[0].to_json())] = "system"
    compactions = [e for e in path if isinstance(e, CompactionSessionEntry)]
    if compactions:
        newest = compactions[-1]
        for message in reference.messages[:2]:
            if isinstance(message, UserMessage) and message.timestamp == newest.timestamp:
                names[canonical(message.to_json())] = f"summary({newest.id})"
    return names


def _message_name(names: Mapping[str, str], wire: object, index: int) -> str:
    name = names.get(canonical(wire))
    if name is not None:
        return name
    role = _role(wire)
    if isinstance(role, str):
        return "system" if role == "system" else f"{role}?"
    return f"<item {index}>"


def _role(wire: object) -> object:
    return wire.get("role") if isinstance(wire, Mapping) else None


def context_wire(label: Text, got: object) -> dict[str, Any]:
    """The wire form of the student's result (it must be a ContextResult-like object)."""
    to_json = getattr(got, "to_json", None)
    if not callable(to_json) or isinstance(got, type):
        fail(
            label,
            f": returned {kind(got)}; expected a ContextResult (from ctxlab import ContextResult)",
            f"：返回了 {kind(got)}；期望 ContextResult（from ctxlab import ContextResult）",
        )
    wire = to_json()
    if not isinstance(wire, Mapping):
        fail(
            label,
            f": its to_json() returned {kind(wire)}, not an object",
            f"：它的 to_json() 返回了 {kind(wire)}，不是对象",
        )
    return dict(wire)


def compare_context(
    label: Text,
    got: object,
    make_path: Callable[[], list[SessionEntry]],
    options: Mapping[str, Any],
    *,
    kept: Sequence[str] | None = None,
    reason: str | None = None,
    tokens: Mapping[str, int] | None = None,
    course: bool = False,
) -> dict[str, Any]:
    """The student's result against the reference's on a fresh path (``kept``, ``reason``,
    ``tokens``: the chapter's literal facts); the first difference fails, named with entry
    ids. What the chapter leaves open once a summary is sent is compared only if ``course``."""
    wire, path = context_wire(label, got), make_path()
    reference = build_context(make_path(), **options)
    expected = reference.to_json()
    summary = None if course else _summary(path, reference, options)
    if summary is not None:
        wire = _open_choices_as_expected(wire, expected, *summary)
    want_kept = list(kept) if kept is not None else expected["keptEntryIds"]
    got_kept = wire.get("keptEntryIds")
    got_kept_list = list(got_kept) if isinstance(got_kept, (list, tuple)) else got_kept
    if got_kept_list != want_kept:
        shown_kept = ids(got_kept_list) if isinstance(got_kept_list, list) else shown(got_kept)
        fail(
            label,
            f": expected kept {ids(want_kept)}, got {shown_kept}",
            f"：期望保留 {ids(want_kept)}，实际 {shown_kept}",
        )
    names = _names(path, reference)
    want_messages = expected["messages"]
    got_messages = wire.get("messages")
    if not isinstance(got_messages, (list, tuple)):
        fail(label, f": messages: expected a list, got {kind(got_messages)}")
    want_names = [_message_name(names, m, i) for i, m in enumerate(want_messages)]
    got_names = [_message_name(names, m, i) for i, m in enumerate(got_messages)]
    named_alike = len(want_names) == len(got_names) and all(
        w == h or (h.endswith("?") and _role(want) == _role(have))
        for w, h, want, have in zip(want_names, got_names, want_messages, got_messages, strict=True)
    )
    if not named_alike:
        fail(
            label,
            f": expected messages {' → '.join(want_names) or '(none)'},"
            f" got {' → '.join(got_names) or '(none)'}",
            f"：期望 messages {' → '.join(want_names) or '（无）'}，"
            f"实际 {' → '.join(got_names) or '（无）'}",
        )
    for index, (want, have) in enumerate(zip(want_messages, got_messages, strict=True)):
        found = diff(want, have, f"messages[{index}] ({want_names[index]})")
        if found:
            fail(label, f": {found}")
    want_reason = reason if reason is not None else expected["reason"]
    if wire.get("reason") != want_reason:
        fail(
            label,
            f": kept the right entries, but expected reason {want_reason},"
            f" got {shown(wire.get('reason'))}",
            f"：保留的 entries 正确，但期望 reason {want_reason}，实际 {shown(wire.get('reason'))}",
        )
    want_tokens = dict(tokens) if tokens is not None else expected["tokens"]
    found = diff(want_tokens, wire.get("tokens"), "tokens")
    if found:
        fail(label, f": {found}")
    return wire


def _summary(
    path: Sequence[SessionEntry], result: ContextResult, options: Mapping[str, Any]
) -> tuple[int, Any] | None:
    """Where ``result`` put the newest compaction's summary, and its cost (None: no compaction)."""
    if not any(isinstance(entry, CompactionSessionEntry) for entry in path):
        return None
    at = 1 if result.messages and isinstance(result.messages[0], SystemMessage) else 0
    return at, options["estimate_tokens"](result.messages[at])


def _open_choices_as_expected(
    wire: dict[str, Any], expected: Mapping[str, Any], at: int, cost: Any
) -> dict[str, Any]:
    """``wire`` with the reference's answers where the chapter leaves them open (ctxlab does as
    the course's code, Lab 11.5's ``course_ledger``): the summary's timestamp, and
    availableForMessages before the summary's ``cost`` where the student's is after it."""
    found, sent, tokens = dict(wire), wire.get("messages"), wire.get("tokens")
    sent = list(sent) if isinstance(sent, (list, tuple)) else []
    if at < len(sent) and isinstance(sent[at], Mapping) and sent[at].get("role") == "user":
        found["messages"] = sent
        sent[at] = {**sent[at], "timestamp": expected["messages"][at]["timestamp"]}
    before = expected["tokens"]["availableForMessages"]
    after = tokens.get("availableForMessages") if isinstance(tokens, Mapping) else None
    if type(after) in (int, float) and after == max(0, before - cost):  # not a bool
        found["tokens"] = {**tokens, "availableForMessages": before}  # type: ignore[dict-item]
    return found


def expect_context(
    t: Trial,
    name: PathName,
    make_path: Callable[[], list[SessionEntry]],
    options: Mapping[str, Any],
    **literal: Any,
) -> dict[str, Any]:
    """Call the student's build_context on a fresh path; compare with the reference."""
    label = budget_label(name, options)
    return compare_context(
        label, t.returns(label, make_path(), **options), make_path, options, **literal
    )


def expect_deterministic(
    t: Trial, name: PathName, make_path: Callable[[], list[SessionEntry]], max_tokens: int
) -> None:
    """Two calls give equal results; changing one's ``to_json()`` leaves it as it was."""
    path, options = make_path(), budget(max_tokens)
    label = budget_label(name, options)
    first = context_wire(label, t.returns(label, path, **options))
    second_result = t.returns(label, path, **options)
    second = context_wire(label, second_result)
    if canonical(first) != canonical(second):
        fail(label, ": two calls gave different results", "：两次调用结果不同")
    first["keptEntryIds"] = ["changed"]
    if isinstance(first.get("messages"), list) and first["messages"]:
        first["messages"][0] = {"role": "changed"}
    if canonical(context_wire(label, second_result)) != canonical(second):
        fail(
            label,
            ": changing one result's to_json() changed the result itself",
            "：修改一次结果的 to_json() 改动了结果本身",
        )
    compare_context(label, second_result, make_path, options)


#: The third group of the opening path, and what the 31-token example keeps.
GROUP_3 = ("u3", "calls", "r-test", "r-read", "a3")
KEPT_31 = ("u2", "a2", *GROUP_3)
TOKENS_31 = {
    "maxTokens": 31, "system": 3, "messages": 22, "reservedOutput": 4, "safetyMargin": 2,
    "availableForMessages": 22, "total": 31,
}  # fmt: skip


def expect_worked_example_31(t: Trial) -> None:
    """The chapter's 31-token example on the opening path sys..a3."""
    expect_context(
        t, "sys..a3", fx.opening_path, budget(31), kept=KEPT_31, reason="trimmed", tokens=TOKENS_31
    )


_BAD_NUMBERS = (float("nan"), float("inf"), float("-inf"), -1, -0.5, True, "31", None)
_OPTIONS = (
    ("max_tokens", "maxTokens"),
    ("reserved_output", "reservedOutput"),
    ("safety_margin", "safetyMargin"),
)


def rejects_bad_options(
    t: Trial, name: PathName, make_path: Callable[[], list[SessionEntry]], *, strict: bool = False
) -> None:
    """Every bad budget number is refused: with a ValueError (the chapter) or (``strict``)
    a ContextOptionError naming the option, also for an estimator that is no function."""
    path = bilingual(name)
    cases = [(option, camel, bad) for option, camel in _OPTIONS for bad in _BAD_NUMBERS]
    if strict:
        cases += [("estimate_tokens", "estimateTokens", bad) for bad in (None, 5, "estimate")]
    for option, camel, bad in cases:
        label = Text(
            f"path {path.en}, {option}={shown(bad)}", f"路径 {path.zh}，{option}={shown(bad)}"
        )
        t.rejects(
            label,
            [[option, camel]] if strict else [],
            make_path(),
            error_type=ContextOptionError if strict else CHAPTER_ERROR,
            attrs={"option": option} if strict else None,
            **{**budget(31), option: bad},
        )


#: What ``.subject`` of the EstimatorError names.
SUBJECTS: dict[str, tuple[str, ...]] = {
    "system": ("the system message", "the replayed system message"),
    "compact-1": ("the summary of compact-1", "the summary of compaction compact-1"),
}


class BadEstimate:
    """The chapter's estimator (or ``other``), but ``bad`` (returned, or raised) for entry
    ``target``, ``"system"`` or ``"compact-1"`` (the summary: a user message not on the path)."""

    def __init__(
        self, path: Sequence[SessionEntry], target: str, bad: object, other: float | None = None
    ) -> None:
        self.target, self.bad, self.other = target, bad, other
        self.originals = [e.message for e in path if isinstance(e, MessageSessionEntry)]
        self.message = next(
            (e.message for e in path if isinstance(e, MessageSessionEntry) and e.id == target),
            None,
        )

    def __call__(self, message: object) -> object:
        if self.target == "system":
            hit = isinstance(message, SystemMessage)
        elif self.target == "compact-1":
            hit = isinstance(message, UserMessage) and message not in self.originals
        else:
            hit = message == self.message
        if not hit:
            return fx.opening_estimator(message) if self.other is None else self.other
        if isinstance(self.bad, BaseException):
            raise self.bad
        return self.bad


def rejects_bad_estimates(
    t: Trial,
    name: PathName,
    make_path: Callable[[], list[SessionEntry]],
    cases: Sequence[tuple[str, object]],
    *,
    strict: bool = False,
) -> None:
    """Each :class:`BadEstimate` of ``cases`` (target, bad) is refused: a bad value with a
    ValueError (the chapter) or (``strict``) an EstimatorError naming the message, also
    for an estimator that raises."""
    named = bilingual(name)
    for target, bad in cases:
        path = make_path()
        raising = isinstance(bad, BaseException)
        if raising and not strict:
            continue  # the chapter says nothing of an estimator that raises
        shown_bad = f"raises {type(bad).__name__}" if raising else f"returns {shown(bad)}"
        shown_bad_zh = f"抛出 {type(bad).__name__}" if raising else f"返回 {shown(bad)}"
        label = Text(
            f"path {named.en}, budget 500/4/2, the estimator {shown_bad} for {target}",
            f"路径 {named.zh}，预算 500/4/2，估算器对 {target} {shown_bad_zh}",
        )
        subject = SUBJECTS.get(target, (f"entry {target}",))
        t.rejects(
            label,
            [[target]] if strict else [],
            path,
            error_type=EstimatorError if strict else CHAPTER_ERROR,
            attrs={"subject": subject} if strict else None,
            **budget(500, estimate_tokens=BadEstimate(path, target, bad)),
        )


def zero(message: object) -> int:
    """Every message at 0: a valid estimate."""
    return 0


def halves(message: object) -> float:
    """The chapter's estimator plus half a token per message: every estimate a fraction."""
    return float(fx.opening_estimator(message)) + 0.5


def random_context(
    lab: str, key: str, number: int, compactions: tuple[int, ...]
) -> drawn.Cases[drawn.Path]:
    """Lab ``lab``'s random row ``key``: ``number`` random paths (with one of ``compactions``
    compactions) and budgets, some broken."""

    def draw(r: random.Random) -> drawn.Path:
        items = drawn.draw_path(r, compactions=r.choice(compactions))
        options = drawn.draw_budget(r, items)
        if r.random() < 0.2:
            options = drawn.break_budget(r, items, options)
        return drawn.Path(items, tuple(options.items()))

    def outcome(case: drawn.Path) -> str | None:
        if not drawn.in_scope(case.items):
            return None
        path, options = drawn.build(case.items), dict(case.options)
        try:
            result = build_context(path, **options)
        except ValueError:
            return "refuses"
        # Groups that cost 0 kept though the summary cost more than the allowance: only so when
        # what it leaves is 0, not less, which the chapter leaves open (11.5's course_ledger).
        summary = _summary(path, result, options)
        dear = summary is not None and summary[1] > result.tokens.available_for_messages
        kept = result.kept_entry_ids and result.reason != "single_group_overflow"
        return None if dear and kept else "returns"

    def check(t: Trial, case: drawn.Path, kind: str) -> None:
        options = dict(case.options)
        path = drawn.build(case.items)
        label = drawn.label(f"path {drawn.describe(case.items)}, {drawn.budget_text(options)}")
        if kind == "refuses":
            t.rejects(label, [], path, error_type=CHAPTER_ERROR, **options)
            return
        got = t.returns(label, path, **options)
        compare_context(label, got, lambda: drawn.build(case.items), options)

    return drawn.Cases(lab, key, number, draw, check, outcome, drawn.smaller_path)
