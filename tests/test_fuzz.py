"""Fuzzing the strict entry parser and the JSONL reader with Hypothesis.

Whatever arrives -- arbitrary JSON, valid entries with one field deleted, added or given the
wrong type, 100,000 levels of nesting, random bytes -- the only error that may escape
``parse_session_entry``, ``JsonlSessionStore.open`` and ``scan_jsonl`` is ``CtxlabError``
(never ``RecursionError``, ``KeyError``, ``TypeError``), and a reader error names its line.
The chapter's rule ("损坏记录在进入预算前就会被拒绝"): a bad record stops at the boundary.

``make test`` runs about 5,000 examples in all; ``make fuzz`` runs far more
(``CTXLAB_FUZZ_EXAMPLES``, the total over the Hypothesis tests here, default 5,100).
"""

from __future__ import annotations

import json
import math
import os
import random
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxlab import (
    CtxlabError,
    EntryParseError,
    JsonlSessionStore,
    SessionStoreError,
    fixtures,
    parse_session_entry,
)
from ctxlab.store import encode_entry_line, scan_jsonl

pytestmark = pytest.mark.fuzz

TOTAL = int(os.environ.get("CTXLAB_FUZZ_EXAMPLES", "5100"))
# Share of TOTAL per Hypothesis test. Hypothesis's own recursive strategies cost far more
# per example than the parser, so most examples draw cheap choices (a field path, a wrong
# value, a seed for a plain-random JSON generator) and the recursive ones get fewer.
SHARES = {
    "arbitrary_json": 0.06,
    "entry_shaped": 0.06,
    "seeded_json": 0.14,
    "mutation": 0.52,
    "mutation_jsonl": 0.08,
    "random_lines": 0.10,
    "bad_line_anywhere": 0.04,  # 198 distinct cases in all
}
RUN: Counter[str] = Counter()  # examples actually run, per test


def fuzz(name: str) -> Callable[[Any], Any]:
    return settings(
        max_examples=max(10, round(TOTAL * SHARES[name])),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


@pytest.fixture(scope="module", autouse=True)
def report_examples() -> Iterator[None]:
    yield
    print(f"\nfuzz examples run: {sum(RUN.values())} {dict(RUN)}")


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as folder:
        yield Path(folder)


# -- helpers -----------------------------------------------------------------------------------


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON values, keys present or absent alike, ``null`` kept, and ``1``,
    ``1.0`` and ``true`` told apart (a list and a tuple are both a JSON array)."""
    if isinstance(a, Mapping) or isinstance(b, Mapping):
        return (
            isinstance(a, Mapping)
            and isinstance(b, Mapping)
            and a.keys() == b.keys()
            and all(same_json(a[key], b[key]) for key in a)
        )
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return (
            isinstance(a, (list, tuple))
            and isinstance(b, (list, tuple))
            and len(a) == len(b)
            and all(same_json(x, y) for x, y in zip(a, b, strict=True))
        )
    return type(a) is type(b) and a == b


def parse_or_ctxlab_error(value: object) -> CtxlabError | None:
    """Parse; return the CtxlabError or None. Any other exception fails the test.

    What is accepted round-trips: parsing its wire form gives an equal entry, and that
    wire form is the value read, field for field (an optional key present -- ``null``
    included -- or absent as it was).
    """
    try:
        entry = parse_session_entry(value)
    except CtxlabError as exc:
        return exc
    assert parse_session_entry(entry.to_json()) == entry
    to_json = getattr(value, "to_json", None)
    assert same_json(entry.to_json(), to_json() if callable(to_json) else value)
    return None


def read_file(path: Path, data: bytes) -> SessionStoreError | None:
    """Open ``data`` as a session file with the store and with scan_jsonl; they must agree."""
    path.write_bytes(data)
    scan = scan_jsonl(path)  # never raises on bad lines
    error: SessionStoreError | None = None
    try:
        JsonlSessionStore.open(path, durable=False).read()
    except SessionStoreError as exc:
        error = exc
    blocking = [p for p in scan.problems if p.code != "unterminated_tail"]
    if error is None:
        assert blocking == [], blocking
    else:
        assert error.line is not None and f"line {error.line}" in str(error)
        assert blocking and blocking[0].line <= error.line
    return error


JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8)
)
JSON = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)

FIELD_NAMES = [
    "type",
    "id",
    "parentId",
    "timestamp",
    "message",
    "key",
    "value",
    "summary",
    "firstKeptEntryId",
    "tokensBefore",
    "role",
    "content",
    "text",
    "sections",
    "provider",
    "model",
    "usage",
    "input",
    "output",
    "totalTokens",
    "stopReason",
    "errorMessage",
    "toolCallId",
    "toolName",
    "isError",
    "details",
    "name",
    "arguments",
    "rawArguments",
    "goal",
    "constraints",
    "completed",
    "decisions",
    "changedFiles",
    "unresolved",
    "next",
    "files",
    "nextSteps",
]
WORDS = st.sampled_from(
    [
        "message",
        "metadata",
        "compaction",
        "system",
        "user",
        "assistant",
        "toolResult",
        "text",
        "toolCall",
        "stop",
        "toolUse",
        "u1",
        "a3",
        "compact-1",
        "",
        " ",
    ]
)
ENTRY_SHAPED = st.recursive(
    JSON_SCALARS | WORDS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(FIELD_NAMES), inner, max_size=8)
    ),
    max_leaves=12,
)


def valid_wires() -> list[dict[str, Any]]:
    """Every kind of entry and message the fixtures have, plus the optional fields.

    Index 10..19 come from the system-patch path; every other one fits the opening path.
    """
    wires = [entry.to_json() for entry in fixtures.opening_path()]
    wires += [entry.to_json() for entry in fixtures.system_patch_path()]
    assert len(wires) == 20
    wires.append(fixtures.compact1().to_json())
    wires.append(
        {"type": "metadata", "id": "m1", "parentId": "a3", "timestamp": 11, "key": "label"}
        | {"value": {"tags": ["x", 1, 2.5, None, True], "nested": {"a": []}}}
    )
    result = dict(wires[7])  # r-test with details
    result["message"] = dict(result["message"], details={"exitCode": 0, "lines": [1, 2]})
    wires.append(result)
    calls = json.loads(json.dumps(wires[6]))  # assistant with rawArguments and errorMessage
    calls["message"]["content"][1]["rawArguments"] = '{"path": "src/context.ts"}'
    calls["message"]["errorMessage"] = "partial"
    wires.append(calls)
    for wire in wires:
        parse_session_entry(wire)  # sanity: all valid
    return wires


WIRES = valid_wires()


def field_paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path (tuple of keys / indexes) inside a wire value, the value itself excluded."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*path, key)
            yield from field_paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield (*path, index)
            yield from field_paths(item, (*path, index))


PATHS = [(n, path) for n, wire in enumerate(WIRES) for path in field_paths(wire)]


def dotted(path: tuple[Any, ...]) -> str:
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
    return text


def deep_list(levels: int) -> list[Any]:
    root: list[Any] = []
    current = root
    for _ in range(levels - 1):
        child: list[Any] = []
        current.append(child)
        current = child
    return root


def deep_dict(levels: int) -> dict[str, Any]:
    root: dict[str, Any] = {}
    current = root
    for _ in range(levels - 1):
        child: dict[str, Any] = {}
        current["a"] = child
        current = child
    return root


DEEP = 100_000
DEEP_LIST = deep_list(DEEP)
DEEP_DICT = deep_dict(DEEP)

WRONG_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    1.5,
    -0.5,
    math.nan,
    math.inf,
    -math.inf,
    10**5000,
    "",
    "   ",
    "x",
    [],
    [1],
    ["x"],
    {},
    {"a": 1},
    {"type": "text"},
    DEEP_LIST,
    DEEP_DICT,
]


def mutate(
    wire: dict[str, Any], path: tuple[Any, ...], kind: str, value: Any = None
) -> dict[str, Any]:
    """A deep copy of ``wire`` with one change at ``path``: delete, add a sibling, replace."""
    copy = json.loads(json.dumps(wire))
    *parents, last = path
    target = copy
    for step in parents:
        target = target[step]
    if kind == "delete":
        del target[last]
    elif kind == "add":
        if isinstance(target, dict):
            target["unexpectedField"] = value
        else:
            target.append(value)
    else:
        target[last] = value
    return copy


# -- parse_session_entry -----------------------------------------------------------------------


@fuzz("arbitrary_json")
@given(JSON)
def test_arbitrary_json_only_ever_raises_ctxlab_error(value: Any) -> None:
    RUN["arbitrary_json"] += 1
    parse_or_ctxlab_error(value)


def random_json(rng: random.Random, depth: int = 0) -> Any:
    """Plain-random JSON: wider and deeper than the Hypothesis strategy, and cheap to draw."""
    kind = rng.randrange(11 if depth < 40 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.choice([0, -1, 1, 2**63, -(2**70), rng.randrange(-1000, 1000)])
    if kind == 3:
        return rng.choice([0.5, -0.0, 1e308, math.nan, math.inf, -math.inf, rng.random()])
    if kind in (4, 5):
        words = [*FIELD_NAMES, "", " ", "user", "message", "text", "\ud800", "\u00e9"]
        return rng.choice(words)
    if kind == 10:  # a long chain: sometimes deeper than any JSON value may be
        chain: Any = random_json(rng, 40)
        for _ in range(rng.randrange(300)):
            chain = [chain] if rng.random() < 0.5 else {"a": chain}
        return chain
    # Fewer than one container child on average, so the values stay finite and small.
    if kind in (6, 7):
        return [random_json(rng, depth + 1) for _ in range(rng.randrange(3))]
    return {rng.choice(FIELD_NAMES): random_json(rng, depth + 1) for _ in range(rng.randrange(4))}


@fuzz("seeded_json")
@given(st.integers(0, 2**64), st.sampled_from(WIRES))
def test_seeded_random_json_only_ever_raises_ctxlab_error(seed: int, wire: Any) -> None:
    RUN["seeded_json"] += 1
    rng = random.Random(seed)  # a plain generator: far cheaper than Hypothesis's own draws
    parse_or_ctxlab_error(random_json(rng))
    # ... and the same garbage grafted onto a valid entry, at a random field.
    grafted = json.loads(json.dumps(wire))
    target = grafted
    while True:
        keys = list(target) if isinstance(target, dict) else list(range(len(target)))
        if not keys:
            break
        key = rng.choice(keys)
        if not isinstance(target[key], (dict, list)) or rng.random() < 0.3:
            target[key] = random_json(rng)
            break
        target = target[key]
    parse_or_ctxlab_error(grafted)


@fuzz("entry_shaped")
@given(ENTRY_SHAPED)
def test_entry_shaped_garbage_only_ever_raises_ctxlab_error(value: Any) -> None:
    RUN["entry_shaped"] += 1
    parse_or_ctxlab_error(value)


# The replacement value: one of WRONG_VALUES (by index: never print 100,000 levels) or any
# small JSON value.
SHALLOW_WRONG = [i for i, v in enumerate(WRONG_VALUES) if v is not DEEP_LIST and v is not DEEP_DICT]
MUTATIONS = st.tuples(
    st.sampled_from(PATHS),
    st.sampled_from(["delete", "add", "replace"]),
    st.sampled_from(SHALLOW_WRONG).map(lambda i: ("wrong", i))
    | JSON_SCALARS.map(lambda v: ("json", v)),
)
Drawn = tuple[tuple[int, tuple[Any, ...]], str, tuple[str, Any]]


def apply(drawn: Drawn) -> tuple[int, dict[str, Any]]:
    (n, path), kind, (source, value) = drawn
    if source == "wrong":
        value = WRONG_VALUES[value]
    return n, mutate(WIRES[n], path, kind, value)


@fuzz("mutation")
@given(MUTATIONS)
def test_mutated_entries_fail_at_the_mutated_field_naming_the_entry(
    drawn: Drawn,
) -> None:
    RUN["mutation"] += 1
    n, mutated = apply(drawn)
    (_, path), _, _ = drawn
    error = parse_or_ctxlab_error(mutated)
    if error is None:
        return
    assert isinstance(error, EntryParseError)
    if path[0] != "id" and "id" in mutated:
        assert error.entry_id == WIRES[n]["id"]
        assert f"session entry {WIRES[n]['id']}:" in str(error)
    # The error points at the mutated field, below it, or at a sibling (a changed 'type'
    # or 'role' makes the siblings wrong), never somewhere unrelated.
    parent = dotted(path[:-1])
    assert error.field.startswith(parent), (error.field, parent)


def test_wrong_types_at_every_field_of_every_entry_kind() -> None:
    """Exhaustive: each field path of each valid entry, each wrong value, and deletion."""
    checked = rejected = 0
    for n, path in PATHS:
        for kind, value in [("delete", None), *(("replace", v) for v in WRONG_VALUES)]:
            mutated = mutate(WIRES[n], path, kind, value)
            error = parse_or_ctxlab_error(mutated)
            checked += 1
            if error is not None:
                rejected += 1
                assert isinstance(error, EntryParseError)
                assert error.field.startswith(dotted(path[:-1]))
    assert checked == len(PATHS) * (len(WRONG_VALUES) + 1)
    assert rejected > checked * 0.8  # almost every wrong value is wrong somewhere
    print(f"\nwrong values at every field: {checked} parsed, {rejected} rejected")


@pytest.mark.parametrize("deep", [DEEP_LIST, DEEP_DICT], ids=["list", "dict"])
def test_100000_levels_as_a_python_object(deep: Any) -> None:
    assert isinstance(parse_or_ctxlab_error(deep), CtxlabError)
    for n, path in PATHS:
        error = parse_or_ctxlab_error(mutate(WIRES[n], path, "replace", deep))
        assert error is not None, dotted(path)  # no field accepts 100,000 levels


# -- the JSONL reader ------------------------------------------------------------------------


def lines_of(n: int) -> tuple[list[bytes], int]:
    """The lines of the path that WIRES[n] belongs to, and its index among them."""
    target = WIRES[n]
    if 10 <= n < 20:
        path = [e.to_json() for e in fixtures.system_patch_path()]
    else:
        path = [e.to_json() for e in fixtures.opening_path()]
    ids = [wire["id"] for wire in path]
    if target["id"] in ids:
        index = ids.index(target["id"])
        path[index] = target
    else:
        path.append(target)
        index = len(path) - 1
    return [json.dumps(wire, ensure_ascii=False).encode() for wire in path], index


@fuzz("mutation_jsonl")
@given(MUTATIONS)
def test_mutated_entries_in_a_jsonl_file_fail_at_their_line(workdir: Path, drawn: Drawn) -> None:
    RUN["mutation_jsonl"] += 1
    n, mutated = apply(drawn)
    lines, index = lines_of(n)
    try:
        lines[index] = json.dumps(mutated, ensure_ascii=False).encode("utf-8", "surrogatepass")
    except ValueError:  # an integer too long to print (Python >= 3.11): write it by hand
        lines[index] = b'{"type":"metadata","id":"x","parentId":null,"timestamp":1,"key":"k",'
        lines[index] += b'"value":' + b"1" * 5000 + b"}"
    error = read_file(workdir / "s.jsonl", b"\n".join(lines) + b"\n")
    if parse_or_ctxlab_error_of_line(lines[index]) is not None:
        assert error is not None and error.line == index + 1
    elif error is not None:  # a valid entry, but its new id or parent breaks a link
        assert error.line is not None and error.line >= index + 1
        assert "duplicate id" in str(error) or "is not stored yet" in str(error)


def parse_or_ctxlab_error_of_line(line: bytes) -> Exception | None:
    try:
        parse_session_entry(json.loads(line))
    except (CtxlabError, ValueError, RecursionError) as exc:
        return exc
    return None


VALID_LINES = [encode_entry_line(entry).rstrip(b"\n") for entry in fixtures.opening_path()]
LINE = (
    st.binary(max_size=40)
    | st.text(max_size=40).map(lambda t: t.encode("utf-8", "surrogatepass"))
    | st.sampled_from(VALID_LINES)
    | st.tuples(st.sampled_from(VALID_LINES), st.integers(0, 400)).map(lambda p: p[0][: p[1]])
)


@fuzz("random_lines")
@given(st.lists(LINE, max_size=5), st.booleans())
def test_random_lines_only_ever_raise_ctxlab_error_with_a_line(
    workdir: Path, lines: list[bytes], newline_at_end: bool
) -> None:
    RUN["random_lines"] += 1
    data = b"\n".join(lines) + (b"\n" if newline_at_end else b"")
    read_file(workdir / "r.jsonl", data)


BAD_LINES = [
    b'{"type":"metadata","id":"x","parentId":null,"timestamp":NaN,"key":"k","value":1}',
    b'{"type":"metadata","id":"x","parentId":null,"timestamp":1,"key":"k","value":Infinity}',
    b'{"type":"metadata","id":"x","parentId":null,"timestamp":1,"key":"k","value":-Infinity}',
    b'{"type":"metadata","id":"x","parentId":null,"timestamp":1,"key":"k","key":"k","value":1}',
    b'{"type":"metadata","id":"x","parentId":null,"timestamp":1,"key":"k","value":{"a":1,"a":2}}',
    b'{"type":"metadata","id":"x","parentId":null,"timestamp":1,"key":"\xff","value":1}',
    b'{"type":"metadata","id":"x","parentId":null,"timestamp":1,"key":"\xc3","value":1}',
    b'{"type":"metadata","id":"x","parentId":null,"timestamp":1,"key":"\xed\xa0\x80","value":1}',
    b'{"type":"metadata","id":"x","parentId":null,"timestamp":1,"key":"\xc0\xaf","value":1}',
    b"[" * DEEP + b"]" * DEEP,
    b'{"a":' * DEEP + b"1" + b"}" * DEEP,
    b'{"type":"metadata","id":"x","parentId":null,"timestamp":1,"key":"k","value":'
    + b"[" * DEEP
    + b"]" * DEEP
    + b"}",
    b"1" * 5000,
]
REASONS = ["NaN", "Infinity", "Infinity", "duplicate key 'key'", "duplicate key 'a'"]
REASONS += ["UTF-8"] * 4 + ["nested"] * 3 + ["digits"]


@pytest.mark.parametrize("index", range(len(BAD_LINES)))
def test_the_reader_rejects_nan_infinity_duplicate_keys_bad_utf8_and_depth(
    tmp_path: Path, index: int
) -> None:
    good = [encode_entry_line(entry).rstrip(b"\n") for entry in fixtures.opening_path()]
    for position in (0, 4, 10):
        lines = [*good]
        lines.insert(position, BAD_LINES[index])
        path = tmp_path / f"bad-{position}.jsonl"
        path.write_bytes(b"\n".join(lines) + b"\n")
        with pytest.raises(SessionStoreError) as error:
            JsonlSessionStore.open(path)
        assert error.value.line == position + 1
        assert f"line {position + 1}:" in str(error.value)
        assert REASONS[index] in str(error.value)
        problems = scan_jsonl(path).problems
        assert problems[0].line == position + 1
        assert REASONS[index] in problems[0].message


@fuzz("bad_line_anywhere")
@given(st.integers(0, 10), st.sampled_from(BAD_LINES[:9]), st.sampled_from([b"\n", b"\r\n"]))
def test_a_bad_line_anywhere_is_named_by_its_number(
    workdir: Path, position: int, bad: bytes, newline: bytes
) -> None:
    RUN["bad_line_anywhere"] += 1
    lines = [encode_entry_line(entry).rstrip(b"\n") for entry in fixtures.opening_path()]
    lines.insert(position, bad)
    error = read_file(workdir / "b.jsonl", newline.join(lines) + newline)
    assert error is not None and error.line == position + 1
