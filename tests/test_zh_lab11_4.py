"""Lab 11.4 in the Chinese edition (issue 18): what the lab prints comes out in Chinese.

The English edition keeps its words; each test below looks at both languages.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import ctxlab
from ctxlab import fixtures
from ctxlab.compaction import create_compaction_entry
from ctxlab.errors import CtxlabError
from ctxlab.lab import lab11_4
from ctxlab.lab.errors_zh import error_text
from ctxlab.lab.grading import check_implementation
from ctxlab.lab.language import get_language, set_language

pytestmark = pytest.mark.teaching


@pytest.fixture
def zh() -> Iterator[None]:
    before = get_language()
    set_language("zh")
    try:
        yield
    finally:
        set_language(before)


@pytest.fixture
def en() -> Iterator[None]:
    before = get_language()
    set_language("en")
    try:
        yield
    finally:
        set_language(before)


def _refused(**change: Any) -> ctxlab.CtxlabError:
    """The error of cell 11-4-f04: the chapter's compact-1 call with one option changed."""
    options: dict[str, Any] = {
        "id": "compact-1",
        "timestamp": 100,
        "summary": fixtures.compact1_summary(),
        "first_kept_entry_id": "u2",
        "tokens_before": 29,
        **change,
    }
    with pytest.raises(ctxlab.CtxlabError) as caught:
        ctxlab.create_compaction_entry(fixtures.opening_path(), **options)
    return caught.value


BLANK_GOAL = {**fixtures.compact1_summary().to_json(), "goal": "  "}


def test_the_parsers_errors_of_cell_f04_in_chinese(zh: None) -> None:
    assert error_text(_refused(summary=BLANK_GOAL)) == (
        "entry compact-1：summary.goal 不能只含空白字符（ctxlab 的扩展规则）"
    )
    assert (
        error_text(_refused(tokens_before=-1))
        == "entry compact-1：tokensBefore 必须 >= 0，这里是 -1"
    )


def test_the_parsers_errors_of_cell_f04_stay_english_in_english(en: None) -> None:
    error = _refused(summary=BLANK_GOAL)
    assert (
        error_text(error)
        == str(error)
        == ("session entry compact-1: summary.goal must not be only white space")
    )


@pytest.mark.parametrize(
    ("check", "arguments", "zh_what", "en_what"),
    [
        (lab11_4.check_valid_first_kept, (...,), "可作保留起点的 id 集合", "valid first kept"),
        (lab11_4.check_store_count, (..., ...), "Store 里的 entry 条数", "store count"),
        (lab11_4.check_compact2, (...,), "compact-2", "compact2"),
    ],
)
def test_an_unanswered_exercise_is_named_in_the_notebooks_language(
    check: Any, arguments: tuple[object, ...], zh_what: str, en_what: str
) -> None:
    before = get_language()
    try:
        set_language("zh")
        verdict = check(*arguments)
        assert not verdict.ok
        assert verdict.title == f"还没有作答：{zh_what}"
        set_language("en")
        assert check(*arguments).title == f"not answered yet: {en_what}"
    finally:
        set_language(before)


def test_an_answer_of_the_wrong_kind_is_told_in_chinese(zh: None) -> None:
    verdict = lab11_4.check_store_count("ten", 11)
    assert not verdict.ok
    assert "这里应当是 entry 的条数（整数），实际是 'ten'" in verdict.detail
    not_a_list = lab11_4.check_valid_first_kept(3).detail
    assert "你给出的保留起点应当是 entry id 的列表或集合" in not_a_list


def test_the_error_of_a_refused_first_kept_id_is_chinese(zh: None) -> None:
    with pytest.raises(CtxlabError) as refused:
        create_compaction_entry(
            fixtures.opening_path(), id="compact-1", timestamp=100,
            summary=fixtures.compact1_summary(), first_kept_entry_id="a2", tokens_before=29,
        )  # fmt: skip
    assert error_text(refused.value) == (
        "compaction compact-1：firstKeptEntryId a2 位于 u2 开头的那一组内；"
        "只有一组的首条 user message 才能作保留起点"
    )
    set_language("en")
    assert error_text(refused.value).startswith(
        "compaction compact-1: firstKeptEntryId a2 is inside the interaction that u2 starts"
    )


def _unwritten(active_path: Any, **options: Any) -> Any:
    raise NotImplementedError


def test_the_check_tables_case_labels_are_chinese(zh: None) -> None:
    html = check_implementation("11.4", create_compaction_entry=_unwritten)._repr_html_()
    assert "保留起点 u2" in html
    assert "路径 sys..a3（带 system patch），id compact-2，保留起点 patch-2" in html
    assert "路径 []（空路径），id compact-1，保留起点 u2" in html
    for english in ("first kept", "(system patches)", "(empty)"):
        assert english not in html
    assert "ctxlab 的扩展检查（选做）" in html
    assert html.index("ctxlab 的扩展检查（选做）") < html.index("路径为空时报错")


def test_the_check_tables_case_labels_stay_english_in_english(en: None) -> None:
    html = check_implementation("11.4", create_compaction_entry=_unwritten)._repr_html_()
    assert "path sys..a3 (system patches), id compact-2, first kept patch-2" in html
    assert "path [] (empty), id compact-1, first kept u2" in html
    assert "ctxlab&#x27;s extras (optional)" in html
    assert html.index("ctxlab&#x27;s extras (optional)") < html.index("an empty path is an error")


def test_a_function_that_changes_the_path_is_told_so_in_chinese(zh: None) -> None:
    def pops(active_path: Any, **options: Any) -> Any:
        result = ctxlab.create_compaction_entry(active_path, **options)
        active_path.pop(0)
        return result

    report = check_implementation("11.4", create_compaction_entry=pops)
    html = report._repr_html_()
    assert "路径 sys..a3，id compact-1，保留起点 u2：调用期间改动了输入 active_path" in html
