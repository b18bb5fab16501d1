"""An exercise verdict speaks the edition's language all the way (issue 18, item 4):
the exercise's name and a ctxlab error met while checking are Chinese in the zh edition,
and the English edition keeps the core's own message."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ctxlab import parse_session_entry
from ctxlab.lab import checks
from ctxlab.lab.checks import Verdict
from ctxlab.lab.language import set_language

pytestmark = pytest.mark.teaching


@checks.friendly
def check_my_summary(answer: object) -> Verdict:
    parse_session_entry(answer)
    return Verdict(ok=True, title="ok")


@pytest.fixture(autouse=True)
def _english_afterwards() -> Iterator[None]:
    yield
    set_language("en")


def test_placeholder_names_the_exercise_in_each_language() -> None:
    set_language("en")
    assert check_my_summary(...).title == "not answered yet: my summary"
    set_language("zh")
    assert check_my_summary(...).title == "还没有作答：check_my_summary"


def test_a_ctxlab_error_is_shown_in_chinese_in_the_zh_edition() -> None:
    record = {"type": "compaction", "id": "compact-1"}
    set_language("en")
    english = check_my_summary(record)
    assert not english.ok
    assert english.detail.startswith("EntryParseError: session entry compact-1: ")
    assert "is missing" in english.detail
    set_language("zh")
    chinese = check_my_summary(record)
    assert not chinese.ok
    assert chinese.detail.startswith("EntryParseError: entry compact-1：缺少 ")
    assert "missing" not in chinese.detail


def test_a_failed_rows_first_difference_is_in_the_edition_language() -> None:
    from ctxlab.lab.grading.expect import diff, ids

    expected = {"messages": [{"role": "user", "content": "Read context.ts"}], "reason": "trimmed"}
    cases = [
        ({"messages": [{"role": "user", "content": "Read contxt.ts"}], "reason": "trimmed"}),
        ({"messages": [], "reason": "trimmed"}),
        ({"messages": [{"role": "user", "content": "Read context.ts"}]}),
        ({**expected, "extra": 1}),
        ({"messages": [{"role": "user", "content": "Read context.ts"}], "reason": 3}),
    ]
    set_language("en")
    english = [diff(expected, got, "") for got in cases]
    assert english == [
        "messages[0].content: differs at character 9:"
        " expected 'Read context.ts', got 'Read contxt.ts'",
        "messages: expected [{'content': 'Read context.ts', 'role': 'user'}], got []",
        "reason: missing",
        "extra: not expected, got 1",
        "reason: expected 'trimmed', got 3",
    ]
    assert ids([]) == "(none)"
    set_language("zh")
    chinese = [diff(expected, got, "") for got in cases]
    assert chinese == [
        "messages[0].content：第 9 个字符起不同：应为 'Read context.ts'，实际是 'Read contxt.ts'",
        "messages：应为 [{'content': 'Read context.ts', 'role': 'user'}]，实际是 []",
        "reason：缺失",
        "extra：不应出现，实际是 1",
        "reason：应为 'trimmed'，实际是 3",
    ]
    assert ids([]) == "（无）"


def test_every_exercise_check_names_itself_in_both_languages() -> None:
    """Each exercise checker of the teaching layer, called on its placeholder, names the
    exercise in words: English in the English edition, Chinese in the Chinese one."""
    import re

    from ctxlab.lab import lab11_1, lab11_2, lab11_3, lab11_4, lab11_5, lab11_x

    checkers = [
        getattr(module, name)
        for module in (lab11_1, lab11_2, lab11_3, lab11_4, lab11_5, lab11_x)
        for name in dir(module)
        if name.startswith("check_") and name != "check_implementation"
    ]
    assert len(checkers) >= 14  # 11.1: 1, 11.2: 3, 11.3: 2, 11.4: 3, 11.5: 3, 11.x: 2
    for checker in checkers:
        set_language("en")
        english = checker(...)
        set_language("zh")
        chinese = checker(...)
        assert not english.ok and english.title.startswith("not answered yet: ")
        assert not chinese.ok and chinese.title.startswith("还没有作答：")
        assert re.search(r"[\u4e00-\u9fff]", chinese.title.removeprefix("还没有作答：")) or (
            re.fullmatch(r"还没有作答：[\w-]+", chinese.title)
        ), (checker.__name__, chinese.title)
