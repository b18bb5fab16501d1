"""The crafted inputs of the checks (ctxlab.lab.grading.cases): path_of's notation."""

from __future__ import annotations

from ctxlab.lab.grading.cases import assistant, crafted, path_of, system, tag_estimator, user
from ctxlab.messages import ToolResultMessage


def test_path_of_writes_the_entries_the_builders_make() -> None:
    built = crafted(
        user("u1", 1), assistant("calls", 1, "c-1"), user("u2", 5), system("sys", "sys [3]")
    )
    assert path_of("u1 calls[c-1] u2:5 sys:3") == built
    assert [entry.parent_id for entry in built] == [None, "u1", "calls", "u2"]


def test_a_cost_after_the_colon_is_what_the_tag_estimator_prices() -> None:
    path = path_of("u1 calls[c-1,c-2]:4 r-1->c-1:2 r-2->c-2 a1:7")
    assert [tag_estimator(entry.message) for entry in path] == [1, 4, 2, 1, 7]
    result = path[2].message
    assert isinstance(result, ToolResultMessage)
    assert (result.tool_call_id, result.tool_name) == ("c-1", "read")
