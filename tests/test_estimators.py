"""``chars_per_token(n)``: ceil(characters / n), counting exactly what the docstring says.

Every expected count below is written out by hand from the fixture texts (lengths of
literal strings), not computed with the function under test.
"""

from __future__ import annotations

import math

import pytest

from ctxlab import (
    AssistantMessage,
    CompactionSummary,
    ContextOptionError,
    EstimatorError,
    MessageSessionEntry,
    SystemMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    build_context,
    render_summary,
)
from ctxlab import fixtures as fx
from ctxlab.estimators import chars_per_token, counted_characters
from ctxlab.json_values import FrozenDict

pytestmark = pytest.mark.reference


def _opening() -> dict[str, object]:
    return {e.id: e.message for e in fx.opening_path() if isinstance(e, MessageSessionEntry)}


# The opening path's texts, with their lengths counted by hand.
HAND_COUNTS = {
    "sys": 3,  # "sys"
    "u1": 47,  # "Where does the session store write new entries?"
    "a1": 83,  # "JsonlSessionStore appends one JSON line per entry and never rewrites ..."
    "u2": 65,
    "a2": 115,
    "u3": 34,  # "Read context.ts and run its tests."
    # text (59) + "read" (4) + {"path":"src/context.ts"} (25)
    #           + "bash" (4) + {"command":"npm test -- context"} (33)
    "calls": 59 + 4 + 25 + 4 + 33,
    "r-test": 87,
    "r-read": 96,
    "a3": 85,
}


def test_characters_counted_on_the_opening_path() -> None:
    messages = _opening()
    assert {key: counted_characters(m) for key, m in messages.items()} == HAND_COUNTS


def test_four_characters_per_token_rounds_up() -> None:
    estimate = chars_per_token(4)
    messages = _opening()
    expected = {
        "sys": 1,  # ceil(3/4)
        "u1": 12,  # ceil(47/4)
        "a1": 21,  # ceil(83/4)
        "u2": 17,
        "a2": 29,
        "u3": 9,  # ceil(34/4) = 9 (8.5 rounds up)
        "calls": 32,  # ceil(125/4)
        "r-test": 22,
        "r-read": 24,  # 96/4 exactly
        "a3": 22,
    }
    assert {key: estimate(m) for key, m in messages.items()} == expected


def test_default_n_is_four_and_other_n_work() -> None:
    text = "x" * 10
    assert chars_per_token()(text) == 3
    assert chars_per_token(1)(text) == 10
    assert chars_per_token(3)(text) == 4
    assert chars_per_token(2.5)(text) == 4
    assert chars_per_token(100)("") == 0
    assert chars_per_token(100)("a") == 1
    assert chars_per_token().__name__ == "chars_per_token_4"


def test_strings_count_python_characters() -> None:
    estimate = chars_per_token(1)
    assert estimate("中文摘要") == 4
    assert estimate("\U0001f600") == 1  # one code point (two UTF-16 units in TypeScript)
    assert estimate("a\nb") == 3


def test_blocks_are_summed_without_a_separator() -> None:
    user = UserMessage((TextContent("abc"), TextContent("de")), 1)
    result = ToolResultMessage("c1", "bash", (TextContent("1234"), TextContent("")), False, 2)
    assert counted_characters(user) == 5
    assert counted_characters(result) == 4


def test_system_counts_its_rendered_prompt() -> None:
    system = SystemMessage("BASE", 1, FrozenDict[str | None]({"rules": "RULE v1", "gone": None}))
    # "BASE" + "\n\n" + "RULE v1"; a deleted (None) section renders nothing
    assert counted_characters(system) == 4 + 2 + 7


def test_tool_calls_count_name_and_compact_json_arguments_but_not_bookkeeping() -> None:
    call = ToolCall(
        "id-that-is-not-counted",
        "edit",
        FrozenDict({"path": "a.py", "lines": (1, 2), "note": "é"}),
        raw_arguments="not counted either",
    )
    message = AssistantMessage(
        (TextContent("ok"), call), "p", "m", Usage(10**6, 10**6, 2 * 10**6), "toolUse", 1
    )
    # {"path":"a.py",  /  "lines":[1,2],  /  "note":"é"}  ->  15 + 14 + 11 characters
    arguments = '{"path":"a.py","lines":[1,2],"note":"é"}'
    assert len(arguments) == 15 + 14 + 11
    assert counted_characters(message) == 2 + 4 + 40


def test_the_summary_message_counts_its_summary_text() -> None:
    summary = CompactionSummary(goal="G", next=("n",))
    text = render_summary(summary, "en")
    expected = (
        "[Conversation summary]\nGoal: G\nConstraints:\n- (none)\nCompleted:\n- (none)\n"
        "Decisions:\n- (none)\nChanged files:\n- (none)\nUnresolved:\n- (none)\nNext:\n- n"
    )
    assert text == expected
    # line lengths + 13 newlines: 22 + 7 + 12 + 8 + 10 + 8 + 10 + 8 + 14 + 8 + 11 + 8 + 5 + 3
    assert counted_characters(UserMessage((TextContent(text),), 1)) == 134 + 13
    assert chars_per_token(4)(UserMessage((TextContent(text),), 1)) == 37  # ceil(147 / 4)


@pytest.mark.parametrize("bad", [0, -1, math.nan, math.inf, True, "4", None])
def test_n_must_be_a_finite_number_above_zero(bad: object) -> None:
    with pytest.raises(ContextOptionError) as info:
        chars_per_token(bad)  # type: ignore[arg-type]
    assert info.value.option == "n"
    assert "chars_per_token: n must be a finite number > 0" in str(info.value)


def test_something_that_is_not_a_message_is_a_clear_error() -> None:
    with pytest.raises(EstimatorError, match="cannot price a int"):
        chars_per_token()(42)


def test_build_context_with_chars4_on_the_opening_path() -> None:
    # Costs from test_four_characters_per_token_rounds_up: groups [u1,a1]=33,
    # [u2,a2]=46, [u3..a3]=9+32+22+24+22=109; system 1.
    result = build_context(
        fx.opening_path(),
        max_tokens=1 + 109 + 46 + 10,
        reserved_output=6,
        safety_margin=4,
        estimate_tokens=chars_per_token(4),
    )
    assert result.reason == "trimmed"
    assert result.kept_entry_ids == ("u2", "a2", "u3", "calls", "r-test", "r-read", "a3")
    assert result.tokens.system == 1
    assert result.tokens.messages == 155
    assert result.tokens.total == 166
