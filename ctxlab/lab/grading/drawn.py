"""Random cases drawn from a seed: the labs' random rows (spec §10).

Fixed inputs can be remembered, so each lab has one random row (key ``random_...``): inputs
drawn from a seeded generator of valid and minimally broken inputs, the student's function
compared with the reference only where the chapter decides. :func:`run` runs a row's cases
and :func:`shrink`-s a failure to the smallest failing input found, shown with the seed that
replays it (``CTXLAB_SEED`` fixes it). Plain :mod:`random` only (Pyodide).
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import math
import os
import random
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final, Generic, TypeVar

from ctxlab.entries import (
    CompactionSessionEntry,
    CompactionSummary,
    MessageSessionEntry,
    MetadataSessionEntry,
    SessionEntry,
)
from ctxlab.json_values import FrozenDict
from ctxlab.lab.grading.calls import Failed, Trial
from ctxlab.lab.grading.text import Text
from ctxlab.lab.grading.usage import GradingUsageError
from ctxlab.messages import (
    AgentMessage,
    AssistantMessage,
    StopReason,
    SystemMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    text_of,
)

#: The environment variable that fixes the seed (nbval, CI, ``make mutants``, stored outputs).
ENV: Final = "CTXLAB_SEED"
#: How many candidates :func:`shrink` may try (each calls the student's function once).
SHRINK_TRIES: Final = 300

_SEED: list[int] = [0]
#: The time limit of the check a random row runs in (it draws cases for half of it at most).
_LIMIT: list[float] = [10.0]
#: The grader's clock, bound at load: a student's ``time.monotonic = ...`` changes nothing.
now: Final = time.monotonic
#: How many cases each random row draws per run, by ``"lab:key"`` (:class:`Cases`).
_COUNTS: dict[str, int] = {}


def count(lab: str, keys: Iterable[str]) -> int:
    """How many random cases a run of rows ``keys`` of lab ``lab`` draws."""
    return sum(_COUNTS.get(f"{lab}:{key}", 0) for key in keys)


def is_random(key: str) -> bool:
    """Is row ``key`` a random one (``random_...``; Gradescope's output holds it back)?"""
    return key.startswith("random_")


def fresh_seed(seed: object = None) -> int:
    """``seed`` when given (an int >= 0); else ``CTXLAB_SEED`` when set; else a new one."""
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise GradingUsageError(f"seed must be an int >= 0, got {seed!r}", option="seed")
        return seed
    fixed = os.environ.get(ENV, "").strip()
    if fixed:
        if not fixed.isdigit():
            raise GradingUsageError(f"{ENV} must be an int >= 0, got {fixed!r}", option=ENV)
        return int(fixed)
    return random.SystemRandom().randrange(1_000_000)


@contextlib.contextmanager
def seeded(seed: int, limit: float = 10.0) -> Iterator[None]:
    """The random rows run in this block draw from ``seed``, within checks of ``limit`` s."""
    previous = _SEED[0], _LIMIT[0]
    use(seed, limit)
    try:
        yield
    finally:
        use(*previous)


def in_time(began: float, slowest: float) -> bool:
    """May one more call (the slowest took ``slowest`` s) of a step that began at ``began``
    end within half the check's time limit?"""
    return now() + slowest - began <= _LIMIT[0] * 0.5


def use(seed: int, limit: float = 10.0) -> int:
    """From now on the random rows draw from ``seed`` (the sandbox route's grader)."""
    _SEED[0], _LIMIT[0] = seed, limit
    return seed


@dataclass(frozen=True)
class Item:
    """One entry of a drawn path: user, assistant (the ``calls`` it declares), result (the
    call it answers), system, metadata or compaction; ``cost``: its ``[n]``."""

    kind: str
    id: str
    cost: int = 0
    calls: tuple[str, ...] = ()
    first_kept: str = ""
    sections: tuple[tuple[str, int | None], ...] = ()
    #: assistant: stopReason index; result: isError and toolName; system: content; compaction:
    #: stamped 0, before every other entry (its caller's clock: the newest is found by place)
    flag: int = 0


_STOPS: Final[tuple[StopReason, ...]] = ("toolUse", "stop", "length")
#: A budget's numbers, as a drawn case's options name them.
_NUMBERS: Final = ("max_tokens", "reserved_output", "safety_margin")
_TAG = re.compile(r"\[(\d+)\]")


@dataclass(frozen=True)
class Estimator:
    """Prices a drawn message (or a string): ``scale`` per ``[n]`` unit, ``base`` per message;
    broken, ``worse`` for the message whose text holds ``bad``."""

    scale: float = 1
    base: float = 0
    bad: str = ""
    worse: float = 0

    def __call__(self, message: object) -> float:
        text = message if isinstance(message, str) else text_of(message)  # type: ignore[arg-type]
        if self.bad and f"{self.bad} [" in text:
            return self.worse
        value = self.base + self.scale * sum(int(n) for n in _TAG.findall(text))
        return int(value) if value == int(value) else value

    def __str__(self) -> str:
        text = f"estimator {self.scale:g} per [n] + {self.base:g} per message"
        return text + (f", {self.worse} for {self.bad}" if self.bad else "")


@dataclass(frozen=True)
class Path:
    """A drawn case of a path lab: the entries and the call's options."""

    items: tuple[Item, ...]
    options: tuple[tuple[str, Any], ...] = ()


def _message(item: Item, stamp: int) -> AgentMessage:
    text = (TextContent(f"{item.id} [{item.cost}]"),)
    if item.kind == "user":
        return UserMessage(text, stamp)
    if item.kind == "assistant":
        calls = tuple(ToolCall(c, "read", FrozenDict({"path": c})) for c in item.calls)
        stop: StopReason = _STOPS[item.flag % 3] if item.calls else "stop"
        return AssistantMessage(
            (*text, *calls), "course", "course-model-1", Usage(1, 1, 2), stop, stamp
        )
    if item.kind == "result":
        tool = "read" if item.flag % 2 == 0 else "grep"
        return ToolResultMessage(item.calls[0], tool, text, item.flag >= 2, stamp)
    sections = {name: None if c is None else f"{name} {item.id} [{c}]" for name, c in item.sections}
    content = "" if item.flag else f"{item.id} [{item.cost}]"
    return SystemMessage(content, stamp, FrozenDict[str | None](sections) if sections else None)


def _entry(item: Item, parent: str | None, stamp: int) -> SessionEntry:
    if item.kind == "metadata":
        return MetadataSessionEntry(item.id, parent, stamp, "note", item.id)
    if item.kind == "compaction":  # the summary's goal carries the [n] tag
        goal = f"goal of {item.id} [{item.cost}]"
        summary = CompactionSummary(goal, (), (f"{item.id} done 0",), (), (), (), ())
        stamp = 0 if item.flag else stamp
        return CompactionSessionEntry(item.id, parent or "root", stamp, summary, item.first_kept, 0)
    return MessageSessionEntry(item.id, parent, stamp, _message(item, stamp))


def build(items: Sequence[Item]) -> list[SessionEntry]:
    """The entries of a drawn path, chained; timestamps 1, 2, 3, ..."""
    parents = [None, *(item.id for item in items)]
    return [_entry(item, parents[n], n + 1) for n, item in enumerate(items)]


def describe(items: Sequence[Item]) -> str:
    """A drawn path in the chapter's terms: ``sys1[2] u1[3] a1[1](c1) r1[1]→c1 ...``."""
    return " ".join(map(_word, items)) or "[] (empty)"


def _word(item: Item) -> str:
    if item.kind == "assistant" and item.calls:
        return f"{item.id}[{item.cost}]({','.join(item.calls)})"
    if item.kind == "result":
        return f"{item.id}[{item.cost}]→{item.calls[0]}"
    if item.kind == "system":
        parts = [f"[{item.cost}]"] if not item.flag else ['""']
        parts += [f"{n}={'null' if c is None else f'[{c}]'}" for n, c in item.sections]
        return f"{item.id}({' '.join(parts)})"
    if item.kind == "metadata":
        return f"{item.id}(metadata)"
    if item.kind == "compaction":
        stamped = ", timestamp 0" if item.flag else ""
        return f"{item.id}(compaction [{item.cost}], first kept {item.first_kept}{stamped})"
    return f"{item.id}[{item.cost}]"


def in_scope(items: Sequence[Item]) -> bool:
    """No message but a system one before the first user message (the chapter leaves that
    open)."""
    first = next((item.kind for item in items if item.kind in ("user", "assistant", "result")), "")
    return first in ("", "user")


def draw_path(
    r: random.Random, *, compactions: int = 0, most: int = 4, least: int = 0
) -> tuple[Item, ...]:
    """A valid path: ``least``..``most`` groups (at least one with compactions)."""
    count: dict[str, int] = {}

    def new(prefix: str) -> str:
        count[prefix] = count.get(prefix, 0) + 1
        return f"{prefix}{count[prefix]}"

    def cost() -> int:
        return r.choice((0, 1, 1, 2, 2, 3, 5, 8, 13))

    def aside() -> Item:
        if r.random() < 0.35:
            return Item("metadata", new("m"))
        names = r.sample(("rules", "style", "tools"), r.choice((0, 0, 1, 2)))
        sections = tuple((n, None if r.random() < 0.3 else cost()) for n in names)
        empty = int(r.random() < 0.3)  # an empty content (sections only, or nothing)
        return Item("system", new("sys"), cost(), sections=sections, flag=empty)

    items: list[Item] = []
    if r.random() < 0.7:
        items.append(aside())
    groups = r.randint(max(least, 1 if compactions else 0), most)
    for _ in range(groups):
        group = [Item("user", new("u"), cost())]
        body: list[Item] = []
        for _ in range(r.choice((0, 1, 1, 2))):
            calls = tuple(new("c") for _ in range(r.choice((0, 1, 1, 2, 3))))
            body.append(Item("assistant", new("a"), cost(), calls, flag=r.randrange(3)))
        for call in [c for a in body for c in a.calls]:
            at = r.randint(0, len(body))
            body.insert(at, Item("result", new("r"), cost(), (call,), flag=r.randrange(4)))
        if r.random() < 0.6:
            body.append(Item("assistant", new("a"), cost()))
        group += body
        for _ in range(r.choice((0, 0, 0, 1, 2))):
            group.insert(r.randint(1, len(group)), aside())
        items += group
        if r.random() < 0.25:
            items.append(aside())
    for _ in range(compactions):
        users = [i for i, item in enumerate(items) if item.kind == "user"]
        head = r.choice(users)
        at = r.randint(head + 1, len(items))
        early = int(r.random() < 0.4)
        items.insert(
            at, Item("compaction", new("k"), cost(), first_kept=items[head].id, flag=early)
        )
        if r.random() < 0.5:  # more history after the compaction
            items += [
                dataclasses.replace(i, id=f"{i.id}x{at}", calls=tuple(f"{c}x{at}" for c in i.calls))
                for i in draw_path(r, most=1)
            ]
    return tuple(items)


def break_groups(r: random.Random, items: tuple[Item, ...]) -> tuple[Item, ...] | None:
    """``items`` with one id relation of a group broken (the chapter's four checks), or None
    when the path has no place for the break drawn."""
    users = [i for i, item in enumerate(items) if item.kind == "user"]
    if not users:
        return None
    start = r.choice(users)
    end = next((i for i in users if i > start), len(items))
    inside = list(range(start + 1, end + 1))
    calls = [c for item in items[start:end] if item.kind == "assistant" for c in item.calls]
    results = [i for i in range(start, end) if items[i].kind == "result"]
    elsewhere = [
        c for item in items if item.kind == "assistant" for c in item.calls if c not in calls
    ]
    earlier = [c for item in items[:start] if item.kind == "assistant" for c in item.calls]
    how = r.choice(("unknown", "unknown", "renamed", "renamed", "second", "missing", "twice"))
    # a call of an earlier group more often: pairing across groups is the likelier mistake
    call = r.choice(earlier if earlier and r.random() < 0.6 else [*elsewhere, "c-unknown"])
    out = list(items)
    if how == "unknown":
        out.insert(r.choice(inside), Item("result", "r-bad", 1, (call,)))
    elif how == "renamed" and results:
        at = r.choice(results)
        out[at] = dataclasses.replace(out[at], calls=(call,))
    elif how == "second" and calls:
        out.insert(r.choice(inside), Item("result", "r-again", 1, (r.choice(calls),)))
    elif how == "missing" and results:
        del out[r.choice(results)]
    elif how == "twice" and calls:
        out.insert(r.choice(inside), Item("assistant", "a-again", 1, (r.choice(calls),)))
    else:
        return None
    return tuple(out)


def draw_budget(r: random.Random, items: Sequence[Item]) -> dict[str, Any]:
    """The budget (0 and fractions too): ``max_tokens`` anywhere, near what the newest groups
    cost, or where a group does not fit but an older one would."""
    estimator = Estimator(r.choice((1, 1, 2, 0.5, 0.25)), r.choice((0, 0, 1, 0.5)))
    costs = [0.0]  # the messages before the first user (system ones), then each group
    for entry in build(items):
        if isinstance(entry, MessageSessionEntry):
            if entry.message.role == "user":
                costs.append(0.0)
            costs[-1] += estimator(entry.message)
    reserved = r.choice((0, 0, 1, 2, 4, 0.5))
    margin = r.choice((0, 0, 1, 2, 1.5))
    fixed = costs[0] + reserved + margin
    groups = costs[1:]  # oldest first
    walk = r.random()
    if walk < 0.3 and len(groups) > 2:  # a group that does not fit, an older one that would
        kept = r.randint(1, len(groups) - 2)
        stopper, older = groups[-kept - 1], min(groups[: -kept - 1])
        max_tokens: float = fixed + sum(groups[-kept:]) + min(older, max(stopper - 0.5, 0))
    elif walk < 0.6 and groups:
        newest = sum(groups[-r.randint(1, len(groups)) :])
        max_tokens = fixed + newest + r.choice((0, 0, -0.5, 0.5, 1, -1, 3))
    else:
        max_tokens = r.choice((0, r.uniform(0, sum(costs) * 1.2 + fixed + 2)))
    halves = max(0, round(max_tokens * 2))  # to the nearest half, an int when whole
    max_tokens = halves // 2 if halves % 2 == 0 else halves / 2
    return {
        "max_tokens": max_tokens,
        "reserved_output": reserved,
        "safety_margin": margin,
        "estimate_tokens": estimator,
    }


def break_budget(
    r: random.Random, items: Sequence[Item], options: dict[str, Any]
) -> dict[str, Any]:
    """``options`` with one number broken, or the estimator broken for a message every
    implementation prices ("四个配置数值和估算器的每次返回值都要是非负有限数")."""
    worse = r.choice((-1, -0.5, math.nan, math.inf))
    targets = [i.id for i in items if i.kind == "system" and not i.flag][:1]
    targets += [i.id for i in items if i.kind == "user"][-1:]
    if targets and r.random() < 0.4:
        estimator = dataclasses.replace(
            options["estimate_tokens"], bad=r.choice(targets), worse=worse
        )
        return {**options, "estimate_tokens": estimator}
    name = r.choice(_NUMBERS)
    return {**options, name: worse}


def budget_text(options: dict[str, Any]) -> str:
    numbers = "/".join(f"{options[name]:g}" for name in _NUMBERS)
    return f"budget {numbers}, {options['estimate_tokens']}"


def smaller_path(case: Path) -> Iterator[Path]:
    """Smaller candidates of a drawn path: a group, an entry, a call and its results dropped;
    a cost or budget number lowered; a plainer estimator."""
    items, options = case.items, dict(case.options)

    def changed(i: int, **fields: Any) -> Path:
        item = dataclasses.replace(items[i], **fields)
        return dataclasses.replace(case, items=(*items[:i], item, *items[i + 1 :]))

    def option(name: str, value: object) -> Path:
        return dataclasses.replace(case, options=tuple({**options, name: value}.items()))

    users = [i for i, item in enumerate(items) if item.kind == "user"]
    for start, end in itertools.pairwise([*users, len(items)]):
        yield dataclasses.replace(case, items=items[:start] + items[end:])
    for i in range(len(items)):
        yield dataclasses.replace(case, items=items[:i] + items[i + 1 :])
    for i, item in enumerate(items):
        for call in item.calls if item.kind == "assistant" else ():
            kept = changed(i, calls=tuple(c for c in item.calls if c != call)).items
            out = tuple(x for x in kept if not (x.kind == "result" and x.calls == (call,)))
            yield dataclasses.replace(case, items=out)
    for i, item in enumerate(items):
        yield from (changed(i, cost=n) for n in sorted({0, item.cost // 2}) if n < item.cost)
        if item.sections:
            yield changed(i, sections=item.sections[1:])
    for name in _NUMBERS:
        value = options.get(name)
        if isinstance(value, (int, float)) and math.isfinite(value) and value > 0:
            lowers: set[int | float] = {0, math.floor(value / 2), math.floor(value), value - 1}
            yield from (option(name, n) for n in sorted(lowers) if 0 <= n < value)
    estimator = options.get("estimate_tokens")
    if isinstance(estimator, Estimator):
        for scale, base in ((estimator.scale, 0), (1, estimator.base), (1, 0)):
            plainer = dataclasses.replace(estimator, scale=scale, base=base)
            if plainer != estimator:
                yield option("estimate_tokens", plainer)


C = TypeVar("C")


@dataclass(frozen=True)
class Cases(Generic[C]):
    """Lab ``lab``'s random row ``key``: ``number`` cases per run, drawn, checked, their kind
    (None: out of scope; a shrunk candidate keeps it), made smaller. Made, it is counted."""

    lab: str
    key: str
    number: int
    draw: Callable[[random.Random], C]
    check: Callable[[Trial, C, str], None]
    kind: Callable[[C], str | None]
    smaller: Callable[[C], Iterable[C]]

    def __post_init__(self) -> None:
        _COUNTS[f"{self.lab}:{self.key}"] = self.number


def shrink(
    case: C,
    smaller: Callable[[C], Iterable[C]],
    fails: Callable[[C], bool],
    deadline: float = math.inf,
) -> C:
    """Greedy: the first smaller candidate that still fails, until none does (at most
    :data:`SHRINK_TRIES` tries, until ``deadline``)."""
    tries = 0
    while True:
        for candidate in smaller(case):
            if tries >= SHRINK_TRIES or now() >= deadline:
                return case
            tries += 1
            if fails(candidate):
                case = candidate
                break
        else:  # no smaller candidate fails
            return case


def run(t: Trial, cases: Cases[C]) -> None:
    """Draw the row's cases from the run's seed and check each; shrink the first failure and
    fail with it and the seed. Cases run within half the time limit, shrinking within three
    quarters (a slow function is judged on the cases run, not timed out)."""
    lab, key, number = cases.lab, cases.key, cases.number
    seed, began, slowest = _SEED[0], now(), 0.0
    r = random.Random(f"{seed}:{lab}:{key}")
    failures: list[Text] = []  # how the drawn case, then each smaller one found, fails

    def fails(case: C, kind: str) -> bool:
        try:
            cases.check(t, case, kind)
        except Failed as failed:
            failures.append(failed.text)
            return True
        return False

    for index in range(1, number + 1):
        if not in_time(began, slowest):
            return
        case = cases.draw(r)
        kind = cases.kind(case)
        if kind is None:
            continue
        started = now()
        failed = fails(case, kind)
        slowest = max(slowest, now() - started)
        if not failed:
            continue

        def smaller_fails(candidate: C, kind: str = kind) -> bool:
            return cases.kind(candidate) == kind and fails(candidate, kind)

        shrink(case, cases.smaller, smaller_fails, began + 0.75 * _LIMIT[0] - slowest)
        head = Text(
            f"random case {index} of {number}, seed {seed} (check_implementation("
            f"{lab!r}, ..., seed={seed}) draws it again); the smallest failing input"
            " found:\n",
            f"随机用例 {number} 个中的第 {index} 个，种子 {seed}（check_implementation("
            f"{lab!r}, ..., seed={seed}) 会重新生成它）；找到的最小失败输入：\n",
        )
        raise Failed(head + failures[-1])


def outcome(call: Callable[[], object]) -> str:
    """What the reference does with a case: ``"returns"`` or ``"refuses"`` (a ValueError)."""
    try:
        call()
    except ValueError:
        return "refuses"
    return "returns"


def label(what: str) -> Text:
    """A case's label, in both languages."""
    zh = what.replace("path ", "路径 ", 1).replace(", budget ", "，预算 ", 1)
    zh = zh.replace(", estimator ", "，估算器 ", 1).replace("[] (empty)", "[]（空路径）")
    zh = zh.replace(" per [n] + ", " × [n] + ").replace(" per message", " 每条消息")
    zh = re.sub(r", (\S+) for (\S+)$", r"，\2 记为 \1", zh)
    zh = re.sub(r" \((\S+) renamed (\S+)\)$", r"（\1 改名为 \2）", zh)
    zh = re.sub(r" \((\S+) missing\)$", r"（缺少 \1）", zh)
    zh = zh.replace(", timestamp 0)", "，timestamp 为 0）")
    return Text(what, zh.replace(", first kept ", "，保留起点 "))
