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
