"""Deterministic synthetic agent sessions for the benchmarks (not tests).

:func:`synthetic_session` draws a valid active path of exactly ``n_entries`` entries from
a seeded ``random.Random``, with the mix of a coding agent's history:

* a root system message (about 2,000 characters, with ``rules`` and ``tools`` sections),
  and a system patch every ~500 entries (a section replaced, or content appended);
* user interactions: a user message, then one to four assistant turns; a turn calls zero
  to three tools in parallel and their results come back in random order (a result may
  stand before a later call of the same interaction); the last turn is plain text;
* a metadata entry now and then;
* a compaction every ~300 entries (when ``compactions`` is true), keeping the last two or
  three interactions (``firstKeptEntryId`` is the user message that starts them).

Texts are sized like real ones (user 40-400 characters, assistant 80-1,200, tool results
200-4,000) and cut from a fixed corpus, so generation is fast. The same seed gives the
same session; ``compactions=False`` gives the same interactions without compactions.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from ctxlab import (
    AgentMessage,
    AssistantMessage,
    CompactionSessionEntry,
    CompactionSummary,
    MessageSessionEntry,
    MetadataSessionEntry,
    SessionEntry,
    SystemMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from ctxlab.json_values import FrozenDict

__all__ = ["SIZES", "synthetic_session", "turn_ends"]

#: History lengths measured by the benchmarks.
SIZES = (1_000, 10_000, 100_000)

_WORDS = tuple(
    [
        "context",
        "budget",
        "entry",
        "session",
        "compaction",
        "summary",
        "group",
        "tool",
        "call",
        "result",
        "assistant",
        "user",
        "system",
        "patch",
        "append",
        "history",
        "store",
        "line",
        "json",
        "parse",
        "token",
        "window",
        "model",
        "kept",
        "dropped",
        "newest",
        "oldest",
        "interaction",
        "pair",
        "read",
        "bash",
        "edit",
        "grep",
        "test",
        "pass",
        "fail",
        "diff",
        "file",
        "path",
        "function",
        "class",
        "module",
        "import",
        "return",
        "value",
        "error",
        "warning",
        "retry",
        "cache",
        "index",
        "offset",
    ]
)
_TOOLS = ("read", "bash", "edit", "grep")


def _corpus(rng: random.Random, size: int = 20_000) -> str:
    words: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(_WORDS)
        words.append(word)
        length += len(word) + 1
        if rng.random() < 0.08:
            words.append("\n")
    return " ".join(words)


@dataclass
class _Builder:
    rng: random.Random
    crng: random.Random  # compactions only, so they do not change the interactions
    n_entries: int
    compactions: bool
    corpus: str
    scale: float = 1.0
    path: list[SessionEntry] = field(default_factory=list)
    heads: list[str] = field(default_factory=list)
    clock: int = 0
    calls: int = 0
    since_compaction: int = 0
    since_patch: int = 0

    def text(self, low: int, high: int, rng: random.Random | None = None) -> str:
        rng = rng or self.rng
        size = rng.randint(round(low * self.scale), round(high * self.scale))
        start = rng.randrange(0, len(self.corpus) - size)
        return self.corpus[start : start + size]

    def room(self) -> int:
        return self.n_entries - len(self.path)

    def add(self, entry: SessionEntry) -> None:
        self.path.append(entry)
        self.since_compaction += 1
        self.since_patch += 1

    def message(self, prefix: str, message: AgentMessage) -> None:
        parent = self.path[-1].id if self.path else None
        entry_id = f"{prefix}{len(self.path)}"
        self.add(MessageSessionEntry(entry_id, parent, message.timestamp, message))

    def tick(self) -> int:
        self.clock += 1
        return 1_700_000_000_000 + self.clock * 1_000

    def assistant(self, text: str, calls: list[ToolCall]) -> AssistantMessage:
        usage_in = self.rng.randint(1_000, 60_000)
        usage_out = self.rng.randint(20, 900)
        return AssistantMessage(
            (TextContent(text), *calls),
            provider="bench",
            model="bench-model-1",
            usage=Usage(usage_in, usage_out, usage_in + usage_out),
            stop_reason="toolUse" if calls else "stop",
            timestamp=self.tick(),
        )

    def interaction(self) -> None:
        """One user interaction; it never needs more entries than ``room()``."""
        rng = self.rng
        self.message("u", UserMessage((TextContent(self.text(40, 400)),), self.tick()))
        self.heads.append(self.path[-1].id)
        for _ in range(rng.randint(0, 3)):
            n_calls = rng.choice((1, 1, 1, 2, 2, 3))
            if self.room() < 2 + 2 * n_calls:
                break
            calls: list[ToolCall] = []
            results: list[ToolResultMessage] = []
            for _ in range(n_calls):
                self.calls += 1
                call_id = f"call_{self.calls:07d}"
                tool = rng.choice(_TOOLS)
                arguments = FrozenDict(
                    {"path": f"src/mod_{rng.randint(1, 400)}.py", "query": self.text(5, 60)}
                )
                calls.append(ToolCall(call_id, tool, arguments))
                results.append(
                    ToolResultMessage(
                        call_id, tool, (TextContent(self.text(200, 4_000)),), False, 0
                    )
                )
            self.message("a", self.assistant(self.text(0, 300), calls))
            rng.shuffle(results)  # parallel tools finish in any order
            for result in results:
                stamped = ToolResultMessage(
                    result.tool_call_id,
                    result.tool_name,
                    result.content,
                    rng.random() < 0.05,
                    self.tick(),
                )
                self.message("r", stamped)
        if self.room() >= 1:
            self.message("a", self.assistant(self.text(80, 1_200), []))

    def extras(self) -> None:
        rng = self.rng
        if self.room() >= 1 and self.since_patch >= 500:
            self.since_patch = 0
            if rng.random() < 0.5:
                patch = SystemMessage(
                    "", self.tick(), FrozenDict[str | None]({"rules": self.text(200, 800)})
                )
            else:
                patch = SystemMessage(self.text(50, 200), self.tick())
            self.message("sys", patch)
        if self.room() >= 1 and rng.random() < 0.02:
            parent = self.path[-1].id
            value = FrozenDict({"label": self.text(5, 30), "turn": len(self.heads)})
            self.add(MetadataSessionEntry(f"m{len(self.path)}", parent, self.tick(), "tag", value))
        if (
            self.compactions
            and self.room() >= 1
            and self.since_compaction >= 300
            and len(self.heads) >= 4
        ):
            self.since_compaction = 0
            rng = self.crng

            def ctext(low: int, high: int) -> str:
                return self.text(low, high, rng)

            kept = self.heads[-rng.randint(2, 3)]
            summary = CompactionSummary(
                goal=ctext(40, 160),
                constraints=tuple(ctext(20, 80) for _ in range(2)),
                completed=tuple(ctext(20, 120) for _ in range(rng.randint(1, 5))),
                decisions=tuple(ctext(20, 120) for _ in range(rng.randint(0, 3))),
                changed_files=tuple(f"src/mod_{rng.randint(1, 400)}.py" for _ in range(3)),
                unresolved=tuple(ctext(20, 80) for _ in range(rng.randint(0, 2))),
                next=(ctext(20, 100),),
            )
            self.add(
                CompactionSessionEntry(
                    f"c{len(self.path)}",
                    self.path[-1].id,
                    self.tick(),
                    summary,
                    kept,
                    rng.randint(50_000, 120_000),
                )
            )


def synthetic_session(
    n_entries: int, *, seed: int = 11, compactions: bool = True, scale: float = 1.0
) -> list[SessionEntry]:
    """A valid active path of exactly ``n_entries`` entries (see the module docstring).

    With ``compactions=False`` the interactions are the same as with ``True``; only the
    compaction entries (and so the ids that follow them) differ. ``scale`` multiplies
    every text length range (0.45: an agent that keeps its tool outputs short).
    """
    rng = random.Random(seed)
    corpus = _corpus(rng)
    b = _Builder(
        random.Random(seed + 1), random.Random(seed + 2), n_entries, compactions, corpus, scale
    )
    rules = FrozenDict[str | None]({"rules": b.text(600, 900), "tools": b.text(400, 700)})
    b.message("sys", SystemMessage(b.text(600, 900), b.tick(), rules))
    while b.room() > 0:
        b.interaction()
        b.extras()
    assert len(b.path) == n_entries
    return b.path


def turn_ends(path: list[SessionEntry], start: int) -> list[int]:
    """Indexes (after ``start``) where an agent calls the model: after a user message, and
    after the last result of an assistant turn's tool calls."""
    ends: list[int] = []
    pending: set[str] = set()
    for index in range(start, len(path)):
        entry = path[index]
        if not isinstance(entry, MessageSessionEntry):
            continue
        message = entry.message
        if isinstance(message, UserMessage):
            ends.append(index)
        elif isinstance(message, AssistantMessage):
            pending.update(call.id for call in message.tool_calls)
        elif isinstance(message, ToolResultMessage):
            pending.discard(message.tool_call_id)
            if not pending:
                ends.append(index)
    return ends
