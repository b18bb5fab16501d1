"""ctxlab against the course's own TypeScript code (issue 11; spec sections 1 and 6).

``tests/data/interop/`` is a copy of ``../shared/interop/`` (so the project stands alone):
a session file written by the course's ``JsonlSessionStore``, what the course parsed from
it, and the course's ``buildContext`` result for every leaf x estimator x budget, 728
cases. Its README defines the four estimators; they are written out below from that
definition, not taken from ctxlab.

With its DEFAULTS (no ``summary_language`` passed), ctxlab must open the file to the same
entries and give the same result in every case, compared as JSON values (``31`` is not
``31.0``), or fail with a :class:`~ctxlab.CtxlabError` where the course failed.

Each case is its own test, named ``<leaf>-<estimator>-<maxTokens>/<reservedOutput>/
<safetyMargin>`` (for example ``u4-chars4-128/8/4``); ``test_every_case_agrees`` counts
them all. Run only these with ``pytest -m interop``.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ctxlab import (
    AssistantMessage,
    CompactionSessionEntry,
    ContextResult,
    ContextWindow,
    CtxlabError,
    JsonlSessionStore,
    MessageSessionEntry,
    SessionEntry,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
    build_context,
    chars_per_token,
    current_system_message,
    parse_session_entry,
    path_to,
    render_summary,
    text_of,
)
from ctxlab.context import summary_message

pytestmark = pytest.mark.interop

DATA = Path(__file__).parent / "data" / "interop"
SESSION_FILE = DATA / "course-main.jsonl"


def _load(name: str) -> Any:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


COURSE: dict[str, Any] = _load("course-main.course.json")
BUDGETS: list[list[int | float]] = _load("budgets.json")
TABLE: dict[tuple[str, str], int | float] = {
    (role, text): cost for role, text, cost in _load("estimator-table.json")
}
CASES: list[dict[str, Any]] = COURSE["cases"]
LEAVES = [entry["id"] for entry in COURSE["entries"]]
SUMMARY_HEADING = "【会话压缩摘要】"


def canonical(value: Any) -> str:
    """A JSON value as text with sorted keys: equal texts mean equal JSON values, with
    ``31`` and ``31.0`` (and ``1`` and ``true``) told apart."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)


# -- the README's four estimators ------------------------------------------------------------
# Each is given a message or a string; a string is priced by its length in all but `table`.


def estimate_timestamp(value: object) -> int | float:
    """``timestamp``: a message costs its timestamp (the course's tests set timestamp = cost)."""
    if isinstance(value, str):
        return len(value)
    assert isinstance(value, (SystemMessage, UserMessage, AssistantMessage, ToolResultMessage))
    return value.timestamp


def estimate_unit(value: object) -> int:
    """``unit``: every message costs 1, a summary message (text starting with the course's
    heading) costs 2."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, UserMessage) and text_of(value).startswith(SUMMARY_HEADING):
        return 2
    return 1


def course_characters(value: object) -> int:
    """The characters ``chars4`` counts, written from the README's definition on the wire
    form: system -- its replayed prompt text (content, then sections, non-empty parts
    joined by a blank line); user and tool result -- the text blocks' lengths added up;
    assistant -- text blocks plus, per tool call, ``len(name)`` and the length of its
    arguments as compact JSON (``,`` and ``:`` separators, non-ASCII kept)."""
    if isinstance(value, str):
        return len(value)
    assert isinstance(value, (SystemMessage, UserMessage, AssistantMessage, ToolResultMessage))
    wire = value.to_json()
    if wire["role"] == "system":
        parts = [wire["content"], *(wire.get("sections") or {}).values()]
        return len("\n\n".join(part for part in parts if part))
    total = 0
    for block in wire["content"]:
        if block["type"] == "text":
            total += len(block["text"])
        else:
            arguments = json.dumps(block["arguments"], ensure_ascii=False, separators=(",", ":"))
            total += len(block["name"]) + len(arguments)
    return total


def estimate_chars4_course(value: object) -> int:
    """``chars4`` as the README defines it: ``ceil(characters / 4)``."""
    return -(-course_characters(value) // 4)


def estimate_table(value: object) -> int | float:
    """``table``: ``(role, text_of(message))`` looked up in ``estimator-table.json``; no row
    (or a plain string) is an estimator error."""
    if not isinstance(value, (SystemMessage, UserMessage, AssistantMessage, ToolResultMessage)):
        raise LookupError(f"the table prices messages only, not {type(value).__name__}")
    key = (value.role, text_of(value))
    if key not in TABLE:
        raise LookupError(f"no table row for {key!r}")
    return TABLE[key]


# `chars4` is ctxlab's own chars_per_token(4): test_chars_per_token_4_is_the_course_chars4
# checks that it counts exactly what the README's definition counts on everything priced here.
ESTIMATORS: dict[str, Callable[[Any], int | float]] = {
    "timestamp": estimate_timestamp,
    "unit": estimate_unit,
    "chars4": chars_per_token(4),
    "table": estimate_table,
}


def case_id(case: dict[str, Any]) -> str:
    budget = "/".join(json.dumps(number) for number in case["budget"])
    return f"{case['leaf']}-{case['estimator']}-{budget}"


# -- the course's file, opened by ctxlab ------------------------------------------------------


@pytest.fixture(scope="module")
def course_entries(tmp_path_factory: pytest.TempPathFactory) -> list[SessionEntry]:
    """The entries of a temporary copy of the course's session file, read by ctxlab."""
    copy = tmp_path_factory.mktemp("interop") / SESSION_FILE.name
    shutil.copyfile(SESSION_FILE, copy)
    read = JsonlSessionStore.open(copy, durable=False).read()
    assert read.warnings == ()
    assert copy.read_bytes() == SESSION_FILE.read_bytes()  # reading changed nothing
    return list(read.entries)


def test_the_data_is_every_leaf_estimator_and_budget() -> None:
    assert COURSE["file"] == SESSION_FILE.name
    assert COURSE["warnings"] == []
    assert len(LEAVES) == 14
    assert len(BUDGETS) == 13
    expected = {
        (leaf, estimator, canonical(budget))
        for leaf in LEAVES
        for estimator in ESTIMATORS
        for budget in BUDGETS
    }
    seen = [(c["leaf"], c["estimator"], canonical(c["budget"])) for c in CASES]
    assert len(seen) == len(set(seen)) == len(expected) == 728
    assert set(seen) == expected
    assert all(("ok" in c) != ("error" in c) for c in CASES)


def test_ctxlab_reads_the_course_file_as_the_course_does(
    course_entries: list[SessionEntry],
) -> None:
    wires = [entry.to_json() for entry in course_entries]
    assert wires == COURSE["entries"]
    assert [canonical(w) for w in wires] == [canonical(w) for w in COURSE["entries"]]
    # ... and line for line as the course wrote them.
    lines = SESSION_FILE.read_text(encoding="utf-8").splitlines()
    assert [canonical(json.loads(line)) for line in lines] == [canonical(w) for w in wires]
    assert all(parse_session_entry(entry.to_json()) == entry for entry in course_entries)


def test_a_course_file_written_back_by_ctxlab_reads_the_same(
    course_entries: list[SessionEntry], tmp_path: Path
) -> None:
    target = tmp_path / "written-by-ctxlab.jsonl"
    store = JsonlSessionStore.open(target, durable=False)
    for entry in course_entries:
        store.append(entry)
    written = target.read_text(encoding="utf-8").splitlines()
    course_lines = SESSION_FILE.read_text(encoding="utf-8").splitlines()
    assert [canonical(json.loads(line)) for line in written] == [
        canonical(json.loads(line)) for line in course_lines
    ]
    reopened = JsonlSessionStore.open(target, durable=False).entries()
    assert reopened == course_entries
    assert [e.to_json() for e in reopened] == COURSE["entries"]


def _priced_values(entries: list[SessionEntry]) -> list[object]:
    """Everything an estimator is given in the 728 cases, and a little more: every
    message, the replayed system message of every leaf, both renderings of every
    summary message, and a few strings (one with non-ASCII text)."""
    values: list[object] = []
    for entry in entries:
        if isinstance(entry, MessageSessionEntry):
            values.append(entry.message)
        elif isinstance(entry, CompactionSessionEntry):
            values.append(summary_message(entry, "zh"))
            values.append(summary_message(entry, "en"))
            values.append(render_summary(entry.summary, "zh"))
    for leaf in LEAVES:
        path = path_to(entries, leaf)
        replayed = current_system_message(
            e.message for e in path if isinstance(e, MessageSessionEntry)
        )
        if replayed is not None:
            values.append(replayed)
    values.extend(["", "abc", "四个字符", "x" * 17])
    return values


def test_chars_per_token_4_is_the_course_chars4(course_entries: list[SessionEntry]) -> None:
    ctxlab_chars4 = chars_per_token(4)
    values = _priced_values(course_entries)
    assert len(values) > 20
    assert [ctxlab_chars4(v) for v in values] == [estimate_chars4_course(v) for v in values]


def test_the_table_prices_every_message_of_the_session(
    course_entries: list[SessionEntry],
) -> None:
    messages = [e.message for e in course_entries if isinstance(e, MessageSessionEntry)]
    assert [estimate_table(m) for m in messages] == [m.timestamp for m in messages]
    with pytest.raises(LookupError, match="no table row"):
        estimate_table(UserMessage((), 0))


# -- the 728 cases -----------------------------------------------------------------------------


def _build(entries: list[SessionEntry], case: dict[str, Any]) -> ContextResult:
    max_tokens, reserved_output, safety_margin = case["budget"]
    return build_context(
        path_to(entries, case["leaf"]),
        max_tokens=max_tokens,
        reserved_output=reserved_output,
        safety_margin=safety_margin,
        estimate_tokens=ESTIMATORS[case["estimator"]],
    )


def _named_ids(course_error: str) -> list[str]:
    """The ids the course's error names (``tool call read-1（entry calls）缺少 result``)."""
    found = re.search(r"tool call (\S+?)（entry (\S+?)）", course_error)
    return list(found.groups()) if found else []


def _agrees(entries: list[SessionEntry], case: dict[str, Any]) -> bool:
    try:
        result = _build(entries, case)
    except CtxlabError as exc:
        return "error" in case and all(name in str(exc) for name in _named_ids(case["error"]))
    return "ok" in case and canonical(result.to_json()) == canonical(case["ok"])


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_case(course_entries: list[SessionEntry], case: dict[str, Any]) -> None:
    if "error" in case:
        with pytest.raises(CtxlabError) as caught:
            _build(course_entries, case)
        for name in _named_ids(case["error"]):
            assert name in str(caught.value)
        return
    actual = _build(course_entries, case).to_json()
    assert actual == case["ok"]
    assert canonical(actual) == canonical(case["ok"])


def test_every_case_agrees(course_entries: list[SessionEntry]) -> None:
    disagreeing = [case_id(c) for c in CASES if not _agrees(course_entries, c)]
    agreeing = len(CASES) - len(disagreeing)
    assert (agreeing, len(CASES)) == (728, 728), f"{agreeing}/{len(CASES)}; {disagreeing[:20]}"


def test_a_context_window_agrees_on_every_case(course_entries: list[SessionEntry]) -> None:
    """``ContextWindow.build`` with its defaults, one window per leaf and estimator."""
    disagreeing: list[str] = []
    for leaf in LEAVES:
        for name, estimate in ESTIMATORS.items():
            path = path_to(course_entries, leaf)
            window = ContextWindow.from_entries(path, estimate_tokens=estimate)
            for case in CASES:
                if (case["leaf"], case["estimator"]) != (leaf, name):
                    continue
                max_tokens, reserved_output, safety_margin = case["budget"]
                try:
                    result = window.build(
                        max_tokens=max_tokens,
                        reserved_output=reserved_output,
                        safety_margin=safety_margin,
                    ).to_json()
                except CtxlabError:
                    agrees = "error" in case
                else:
                    agrees = "ok" in case and canonical(result) == canonical(case["ok"])
                if not agrees:
                    disagreeing.append(case_id(case))
    assert disagreeing == []
