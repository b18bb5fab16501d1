"""Lab 11.2 in the Chinese edition (issue 18): what the lab prints and what its checks say
come out in Chinese, the ctxlab extensions are labelled, and the zh answer key is commented
in Chinese. The English edition stays as it was."""

from __future__ import annotations

import ast
import dataclasses
import io
import re
import tokenize
from typing import Any

import pytest

from ctxlab import fixtures
from ctxlab.errors import InteractionError
from ctxlab.interactions import group_interactions, message_entries
from ctxlab.lab import check_implementation, lab11_2
from ctxlab.lab.grading import reference_functions
from nbsource_module import load_nbsource

pytestmark = pytest.mark.teaching

HAN = re.compile(r"[\u4e00-\u9fff]")
EXTENSIONS = {
    "message_before_first_user",
    "tool_pairs",
    "errors_name_entry_and_call",
    "walks_input_once",
}


def _unknown_1_error() -> InteractionError:
    with pytest.raises(InteractionError) as caught:
        group_interactions(message_entries(fixtures.unknown_call_path()))
    return caught.value


def test_exercise_c_shows_the_grouping_error_in_chinese(zh: None) -> None:
    verdict = lab11_2.check_error_entry("r-test")
    assert verdict.ok
    assert verdict.detail == (
        "u3 开头的那一组：tool result r-test 回答的是 unknown-1，"
        "但这一组里没有声明过 tool call unknown-1"
    )
    assert "answers" not in str(verdict)


def test_exercise_c_stays_english_in_the_english_edition() -> None:
    verdict = lab11_2.check_error_entry("u3")
    assert verdict.ok
    assert verdict.title == "the error names u3 too; the entry carrying unknown-1 is r-test"
    assert verdict.detail == str(_unknown_1_error())


def _report(function: Any) -> dict[str, Any]:
    return {
        result.key: result
        for result in check_implementation("11.2", group_interactions=function).results
    }


def test_no_groups_at_all_is_said_in_each_language() -> None:
    results = _report(lambda entries: [])
    three = results["three_groups"]
    assert not three.passed
    assert three.detail_en.endswith("got [] (no groups)")
    assert three.detail_zh.endswith("实际 []（没有组）")


def test_a_missing_group_and_missing_pairs_are_said_in_chinese() -> None:
    reference = reference_functions("11.2")["group_interactions"]

    def one_group_short(entries: Any) -> Any:
        return reference(entries)[:-1]

    short = _report(one_group_short)["tool_pairs"]
    assert short.detail_en.endswith(": expected 3 groups, got 2")
    assert short.detail_zh.endswith("：期望 3 组，实际 2 组")

    def no_pairs(entries: Any) -> Any:
        return [dataclasses.replace(group, tool_pairs=()) for group in reference(entries)]

    empty = _report(no_pairs)["tool_pairs"]
    assert not empty.passed
    assert empty.detail_en.endswith("got (none)")
    assert empty.detail_zh.endswith("实际 （无）")
    assert "none" not in empty.detail_zh


def test_only_the_ctxlab_extensions_are_labelled_in_the_check_table() -> None:
    results = check_implementation("11.2", **reference_functions("11.2")).results
    assert all(result.passed for result in results)
    for result in results:  # the kind is the row's source, shown under its own heading
        assert (result.source == "ctxlab") == (result.key in EXTENSIONS), result.key
        assert not result.behaviour_en.startswith("ctxlab extension"), result.key
        assert not result.behaviour_zh.startswith("ctxlab 扩展"), result.key


def _comments(code: str) -> list[str]:
    """The comments and docstrings of a code cell."""
    found = [
        token.string
        for token in tokenize.generate_tokens(io.StringIO(code).readline)
        if token.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.FunctionDef | ast.Module) and ast.get_docstring(node):
            found.append(ast.get_docstring(node) or "")
    return found


@pytest.mark.parametrize("role", ["student", "instructor"])
def test_the_zh_build_it_cell_is_commented_in_chinese(role: str) -> None:
    nbsource = load_nbsource()
    source = next(s for s in nbsource.load_sources() if s.lab == "11.2")
    notebook = nbsource.build_notebook(source, nbsource.Edition("zh", role))
    code = str(next(c.source for c in notebook.cells if c.id == "11-2-b02"))
    comments = _comments(code)
    assert comments, "the build-it cell has comments or docstrings"
    assert all(HAN.search(comment) for comment in comments), comments
    english = nbsource.build_notebook(source, nbsource.Edition("en", role))
    en_code = str(next(c.source for c in english.cells if c.id == "11-2-b02"))
    assert not any(HAN.search(c) and "§" not in c for c in _comments(en_code))
