"""The shared teaching layer speaks Chinese in the Chinese edition (issue 12).

``ctxlab.lab.checks`` (the verdicts every self-check shows) and ``ctxlab.lab.display`` (the
messages of ``call_safely``, the colour of a verdict line) pick their text when it is
rendered: the same objects read English under ``set_language("en")`` and Chinese under
``set_language("zh")``. The English texts are pinned here too, so a translation can never
change the English edition.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest

from ctxlab.errors import CtxlabError
from ctxlab.lab.checks import Verdict, as_mapping, as_number, friendly, id_list, not_answered
from ctxlab.lab.display import call_safely
from ctxlab.lab.language import get_language, set_language

pytestmark = pytest.mark.teaching

HAN = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def zh() -> Iterator[None]:
    """Render in Chinese for one test; English again afterwards, whatever happens."""
    assert get_language() == "en"
    set_language("zh")
    try:
        yield
    finally:
        set_language("en")


def _stub(active_path: object) -> object:
    raise NotImplementedError


def _slow(active_path: object) -> object:
    time.sleep(3)
    return None


@friendly
def check_answer(answer: object) -> Verdict:
    if answer == "ctxlab":
        raise CtxlabError("session entry x: field 'summary' is missing")
    if answer == "kind":
        id_list(answer, "kept ids")
    if answer == "odd":
        raise RuntimeError("odd")
    return Verdict(True, "fine")


def test_verdict_mark_and_hint_follow_the_language_at_render_time() -> None:
    verdict = Verdict(False, "kept ids", "u2 is missing", "look at the budget")
    english = "✘ Not yet — kept ids\nu2 is missing\nHint: look at the budget"
    assert str(verdict) == english
    assert "<em>Hint:</em> look at the budget" in verdict._repr_html_()
    set_language("zh")
    try:
        # The same object, made in English, now renders in Chinese.
        assert str(verdict) == "✘ 还不对 — kept ids\nu2 is missing\n提示：look at the budget"
        assert str(Verdict(True, "对")).startswith("✔ 正确 — ")
        page = verdict._repr_html_()
        assert "<strong>✘ 还不对</strong>" in page and "<em>提示：</em>look at the budget" in page
        assert "Hint" not in page and "Not yet" not in page
    finally:
        set_language("en")
    assert str(verdict) == english


def test_not_answered_and_friendly_in_english_are_unchanged() -> None:
    assert str(not_answered("kept ids")) == (
        "✘ Not yet — not answered yet: kept ids\n"
        "The cell still holds the placeholder `...`.\n"
        "Hint: Replace `...` with your answer, run the cell again, then run this check."
    )
    assert check_answer("ctxlab").title == "ctxlab rejected the answer"
    kind = check_answer("kind")
    assert kind.title == "the answer is not the kind of value this exercise expects"
    assert kind.detail == "TypeError: kept ids should be a list or set of entry ids, got str"
    assert check_answer("odd").hint == "Re-run the cells above this one, then try again."


def test_not_answered_and_friendly_in_chinese(zh: None) -> None:
    placeholder = check_answer(...)
    # The Chinese edition names the exercise by its checker, as code.
    assert placeholder.title == "还没有作答：check_answer"
    assert "占位符 `...`" in placeholder.detail and "`...`" in placeholder.hint
    rejected = check_answer("ctxlab")
    assert rejected.title == "ctxlab 拒绝了这个答案"
    # A message the phrase table of ctxlab.lab.errors_zh does not know stays as the core
    # wrote it (it still names the entry and field); known ones are Chinese (test_checks_zh).
    assert "field 'summary' is missing" in rejected.detail
    kind = check_answer("kind")
    assert kind.title == "答案不是这道练习期望的那种值"
    assert kind.detail == "TypeError: kept ids 应当是 entry id 的列表或集合，实际是 str"
    odd = check_answer("odd")
    assert odd.title == "无法检查这个答案" and "RuntimeError: odd" in odd.detail
    for verdict in (placeholder, rejected, kind, odd):
        for text in (verdict.mark, verdict.title, verdict.hint):
            assert HAN.search(text), f"no Chinese in {text!r}"
        assert not re.search(r"\b(answer|Hint|Not yet|Correct)\b", verdict.mark + verdict.hint)


def test_answer_readers_explain_in_chinese(zh: None) -> None:
    with pytest.raises(TypeError, match="不是 entry id"):
        id_list(["u2", 3], "kept ids")
    with pytest.raises(TypeError, match=r"^budget 应当是一个数，实际是 True$"):
        as_number(True, "budget")
    # After a Chinese subject no space: 「你的答案应当是」, not 「你的答案 应当是」.
    with pytest.raises(TypeError, match=r"^你的答案应当是 entry id 的列表或集合，实际是 str$"):
        id_list("u2", "你的答案")
    with pytest.raises(TypeError, match=r"^第 3 题应当是一个数，实际是 'x'$"):
        as_number("x", "第 3 题")
    with pytest.raises(TypeError, match=r"^summary 应当是一个 dict，实际是 list$"):
        as_mapping([], "summary")


def test_call_safely_messages_in_both_languages() -> None:
    assert call_safely(_stub, []).error == "not written yet (the stub raises NotImplementedError)"
    assert call_safely(lambda path: 1 / 0, []).error == "raised ZeroDivisionError: division by zero"
    assert call_safely(_slow, [], seconds=0.2).error == (
        "did not return within 0.2 s (an endless loop?)"
    )
    set_language("zh")
    try:
        assert call_safely(_stub, []).error == "还没有写（占位函数抛出 NotImplementedError）"
        assert (
            call_safely(lambda path: 1 / 0, []).error
            == "抛出了 ZeroDivisionError: division by zero"
        )
        assert call_safely(_slow, [], seconds=0.2).error == "0.2 秒内没有返回（死循环？）"
    finally:
        set_language("en")
