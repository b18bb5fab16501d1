"""``build_context``'s budget options and its estimator (Lab 11.3, "31 个 token ...").

"四个配置数值和估算器的每次返回值都要是非负有限数": the three budget numbers and every
value the estimator returns must be finite numbers >= 0. A bad option is a
``ContextOptionError`` naming it; an estimator that raises or returns a bad value is an
``EstimatorError`` naming the message being priced, with the cause chained.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from ctxlab import (
    ContextOptionError,
    CtxlabError,
    EstimatorError,
    build_context,
    fixtures,
    text_of,
)

pytestmark = pytest.mark.reference

BUDGET = {"max_tokens": 31, "reserved_output": 4, "safety_margin": 2}
BAD_OPTIONS: list[Any] = [
    math.nan,
    math.inf,
    -math.inf,
    -1,
    -0.5,
    True,
    False,
    "31",
    "",
    None,
    [31],
    {"n": 31},
    -(10**5000),
]


def run(**changes: Any) -> Any:
    options: dict[str, Any] = {**BUDGET, "estimate_tokens": fixtures.opening_estimator}
    options.update(changes)
    return build_context(fixtures.opening_path(), **options)


def test_the_chapter_example_still_holds() -> None:
    result = run()
    assert result.to_json()["tokens"] == {
        "maxTokens": 31,
        "system": 3,
        "messages": 22,
        "reservedOutput": 4,
        "safetyMargin": 2,
        "availableForMessages": 22,
        "total": 31,
    }


@pytest.mark.parametrize("option", sorted(BUDGET))
@pytest.mark.parametrize("value", BAD_OPTIONS, ids=lambda v: type(v).__name__)
def test_a_bad_budget_option_is_rejected_naming_it(option: str, value: Any) -> None:
    with pytest.raises(ContextOptionError) as error:
        run(**{option: value})
    assert error.value.option == option
    assert option in str(error.value)


@pytest.mark.parametrize("option", sorted(BUDGET))
def test_zero_floats_and_huge_integers_are_fine_options(option: str) -> None:
    assert run(**{option: 0}).tokens.to_json()[_camel(option)] == 0
    assert run(**{option: 31.0}).tokens.to_json()[_camel(option)] == 31.0
    huge = 10**400  # an int is always finite, however long (math.isfinite would overflow)
    assert run(**{option: huge}).tokens.to_json()[_camel(option)] == huge


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


def test_a_non_callable_estimator_is_an_option_error() -> None:
    with pytest.raises(ContextOptionError) as error:
        run(estimate_tokens=42)
    assert error.value.option == "estimate_tokens"


class Boom(RuntimeError):
    pass


def failing_on(role: str, text: str | None = None) -> Any:
    def estimate(message: Any) -> Any:
        if message.role == role and (text is None or text_of(message) == text):
            raise Boom(f"cannot price {role}")
        return fixtures.opening_estimator(message)

    return estimate


@pytest.mark.parametrize(
    ("estimator", "subject"),
    [
        (failing_on("system"), "the replayed system message"),
        (failing_on("assistant", text_of(fixtures.opening_path()[9].message)), "entry a3"),
        (failing_on("toolResult"), "entry r-test"),  # the first result priced
    ],
    ids=["system", "a3", "r-test"],
)
def test_an_estimator_that_raises_is_named_and_chained(estimator: Any, subject: str) -> None:
    with pytest.raises(EstimatorError) as error:
        run(estimate_tokens=estimator)
    assert error.value.subject == subject
    assert subject in str(error.value)
    assert isinstance(error.value.__cause__, Boom)
    if subject.startswith("entry "):
        assert error.value.entry_id == subject.split()[1]


def test_an_estimator_failing_on_the_summary_names_the_compaction() -> None:
    path = fixtures.resumed_path()

    def estimate(message: Any) -> Any:
        if text_of(message).startswith("【会话压缩摘要】"):
            raise Boom("no summary prices")
        return fixtures.opening_estimator(message)

    with pytest.raises(EstimatorError) as error:
        build_context(path, **BUDGET, estimate_tokens=estimate)
    assert "compact-1" in str(error.value) and error.value.entry_id == "compact-1"
    assert isinstance(error.value.__cause__, Boom)


BAD_COSTS: list[Any] = [math.nan, math.inf, -math.inf, -1, -0.001, True, "3", None, [3], 3j]


@pytest.mark.parametrize("cost", BAD_COSTS, ids=lambda v: type(v).__name__)
def test_an_estimator_returning_a_bad_value_names_the_message(cost: Any) -> None:
    def estimate(message: Any) -> Any:
        if message.role == "toolResult" and text_of(message).startswith("PASS"):
            return cost
        return fixtures.opening_estimator(message)

    with pytest.raises(EstimatorError) as error:
        run(estimate_tokens=estimate)
    assert error.value.subject == "entry r-test"
    assert "r-test" in str(error.value)


def test_a_hostile_estimator_never_leaks_another_error() -> None:
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    hostile = [
        lambda message: deep,  # repr would recurse 100,000 levels
        lambda message: -(10**5000),  # repr would exceed the int-to-str limit
        lambda message: 10**400 if message.role == "system" else 1,  # fine: a huge int
        lambda message: 1 / 0,
        lambda message: {}["missing"],
    ]
    outcomes = []
    for estimate in hostile:
        try:
            run(estimate_tokens=estimate)
            outcomes.append("ok")
        except CtxlabError as exc:
            outcomes.append(type(exc).__name__)
    assert outcomes == ["EstimatorError", "EstimatorError", "ok", *["EstimatorError"] * 2]
