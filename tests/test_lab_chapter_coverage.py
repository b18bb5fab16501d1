"""Issue 11: the teaching layer says what the chapter says, and shows what the chapter shows.

Each test runs a teaching function the notebooks call and checks it against the chapter's
words: whole error messages, the chapter's own answers accepted, the option checks, the
final ``messages`` list, what pairing does not read, metadata skipped on resume, the two
new cost figures (11.1, 11.4), and every lab figure small enough for a 16:9 slide.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import pytest

pytest.importorskip("matplotlib")

from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.text import Text

import ctxlab
from ctxlab import fixtures
from ctxlab.lab import display, lab11_1, lab11_2, lab11_3, lab11_4, lab11_5

pytestmark = pytest.mark.teaching


def _build(path: list[ctxlab.SessionEntry], max_tokens: int = 31) -> ctxlab.ContextResult:
    return ctxlab.build_context(
        path,
        max_tokens=max_tokens,
        reserved_output=4,
        safety_margin=2,
        estimate_tokens=fixtures.opening_estimator,
    )


def _texts(fig: Figure) -> list[Text]:
    fig.draw_without_rendering()
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


# -- whole error messages (11.1, 11.2) -------------------------------------------------------------


def test_the_corruption_table_shows_every_error_whole() -> None:
    table = lab11_1.corruption_styler()
    html = table.to_html()
    messages = lab11_1.corruption_table()["error"].tolist()
    assert max(len(message) for message in messages) > 50
    for message in messages:
        assert message in html  # whole, not cut at 50 characters
    assert "white-space: pre-wrap" in html


def test_the_grouping_error_table_shows_unknown_1_and_both_entries() -> None:
    html = lab11_2.grouping_errors_styler().to_html()
    said = lab11_2.grouping_errors_table().set_index("case")["group_interactions says"]
    message = said["r-test answers unknown-1"]
    assert len(message) > 50 and message in html
    assert "interaction u3" in message and "r-test" in message and "unknown-1" in message


@pytest.mark.parametrize(("answer", "ok"), [("u3", True), ("r-test", True), ("r-read", False),
                                            ("unknown-1", False), ("calls", False)])  # fmt: skip
def test_exercise_c_accepts_either_entry_the_error_names(answer: str, ok: bool) -> None:
    assert lab11_2.check_error_entry(answer).ok is ok


# -- 11.2: a system message between groups; toolName and the final assistant ----------------------


def test_a_system_message_between_two_groups_belongs_to_no_group() -> None:
    frame = lab11_2.grouping_table(fixtures.system_patch_path()).set_index("id")
    assert frame.loc["patch-1", "group"] == "—" and frame.loc["patch-2", "group"] == "—"
    assert frame.loc["a1", "group"] == 1 and frame.loc["u2", "group"] == 2


def test_tool_name_and_the_final_assistant_take_no_part_in_pairing() -> None:
    cases = lab11_2.pairing_cases()
    renamed = next(path for case, path in cases.items() if "toolName" in case)
    r_test = next(e for e in renamed if e.id == "r-test")
    assert isinstance(r_test, ctxlab.MessageSessionEntry)
    assert isinstance(r_test.message, ctxlab.ToolResultMessage)
    assert r_test.message.tool_name == "read"  # the call it answers, test-1, is "bash"
    said = lab11_2.pairing_cases_styler().data["group_interactions says"].tolist()
    assert all(verdict.startswith("accepted ✔ 3 groups") for verdict in said)
    assert "[u3, calls, r-test, r-read]" in said[2]  # no a3: the group still closes


# -- 11.3: option checks, no system message, the final messages list -------------------------------


def test_option_errors_name_the_option_or_what_was_priced() -> None:
    frame = lab11_3.option_errors_styler().data.set_index("case")["build_context says"]
    for case, said in frame.items():
        assert said.startswith(("ContextOptionError", "EstimatorError")), case
        if "estimator" not in case:
            option = case.split(" ")[0]
            assert f"{option} must be" in said, case
        else:
            assert "the replayed system message" in said
    assert "nan" in frame["max_tokens = NaN"] and "inf" in frame["reserved_output = inf"]


def test_without_a_system_message_tokens_system_is_0_and_no_system_leads() -> None:
    path = lab11_3.without_system_messages()
    assert [e.id for e in ctxlab.path_to(path, "a3")] == [e.id for e in path]
    result = _build(path)
    assert result.tokens.system == 0
    assert result.messages[0].role == "user"
    assert lab11_3.message_arrow(result).startswith("u2 → ")


def test_the_final_messages_list_sends_sys_but_does_not_keep_it() -> None:
    result = _build(fixtures.opening_path())
    arrow = lab11_3.message_arrow(result)
    assert arrow == 'system("sys") → u2 → a2 → u3 → calls → r-test → r-read → a3'
    frame = lab11_3.sent_messages_table(result)
    assert frame["in keptEntryIds"].tolist() == ["no"] + ["yes"] * 7
    assert "sys" not in result.kept_entry_ids


def test_the_ledger_follows_the_default_chinese_summary() -> None:
    frame = lab11_3.ledger_table(fixtures.resumed_path(), lab11_3.Budget(max_tokens=31))
    result = _build(fixtures.resumed_path())
    assert frame.iloc[-1]["tokens"] == result.tokens.total
    assert ctxlab.text_of(result.messages[1]).startswith("【会话压缩摘要】")


# -- 11.4: the result passes through the parser; first kept costs ----------------------------------


def test_first_kept_costs_split_the_conversation_at_each_legal_id() -> None:
    frame = lab11_4.first_kept_costs()
    assert frame["first kept"].tolist() == ["u1", "u2", "u3"]
    assert frame["kept tokens"].tolist() == [29, 22, 15]
    assert frame["summarised tokens"].tolist() == [0, 7, 14]


def test_first_kept_figure_draws_kept_solid_and_summarised_hatched() -> None:
    fig = lab11_4.first_kept_figure()
    bars = [p for p in fig.axes[0].patches if isinstance(p, Rectangle)]
    widths = [(round(b.get_width()), bool(b.get_hatch())) for b in bars]
    assert widths == [(0, True), (29, False), (7, True), (22, False), (14, True), (15, False)]
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["u3", "u2", "u1"]


# -- 11.1: each entry's cost, coloured by its group ----------------------------------------------


def test_cost_figure_colours_each_entry_by_its_group() -> None:
    fig = lab11_1.cost_figure()
    bars = [p for p in fig.axes[0].patches if isinstance(p, Rectangle)]
    assert [round(b.get_height()) for b in bars] == list(fixtures.OPENING_COSTS.values())
    colours = [b.get_facecolor() for b in bars]
    assert bars[0].get_hatch()  # sys: no group
    assert colours[1] == colours[2] != colours[3] == colours[4] != colours[5]
    assert len({c for c in colours[5:]}) == 1
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend == ["system: no group", "group 1: 7", "group 2: 7", "group 3: 15"]


# -- 11.5: metadata skipped; the comparison figure's colours and labels ----------------------------


def test_a_metadata_entry_is_skipped_on_resume() -> None:
    path = lab11_5.with_metadata()
    assert [e.id for e in ctxlab.path_to(path, "a4")] == [e.id for e in path]
    assert any(e.type == "metadata" for e in path)
    assert _build(path, 40) == _build(fixtures.resumed_path(), 40)


def test_the_comparison_figure_colours_kept_groups_green_and_names_the_safety_margin() -> None:
    fig = lab11_5.resume_comparison_figure(31)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels[0] == "system + reserve + safety"
    kept_colour = fig.axes[0].get_legend().get_patches()[2].get_facecolor()
    ax = fig.axes[0]
    solid = [p for p in ax.patches if isinstance(p, Rectangle) and not p.get_hatch()]

    def bar_under(label: Text) -> Rectangle:
        x, y = label.get_position()
        return next(
            bar
            for bar in solid
            if bar.get_x() <= x <= bar.get_x() + bar.get_width()
            and bar.get_y() <= y <= bar.get_y() + bar.get_height()
        )

    u4_labels = [t for t in ax.texts if t.get_text() == "u4"]
    assert len(u4_labels) == 2  # kept with and without the compaction
    for label in u4_labels:
        assert bar_under(label).get_facecolor() == kept_colour


# -- lecture fit: every figure fits a 16:9 slide ---------------------------------------------------

FIGURES: dict[str, Callable[[], Figure]] = {
    "lab11_1.cost_figure": lab11_1.cost_figure,
    "lab11_2.timeline_figure": lab11_2.timeline_figure,
    "lab11_3.budget_figure": lab11_3.budget_figure,
    "lab11_3.sweep_figure": lambda: lab11_3.sweep_figure(max_tokens=range(0, 61, 10)),
    "lab11_4.first_kept_figure": lab11_4.first_kept_figure,
    "lab11_5.resume_diagram": lambda: lab11_5.resume_diagram(fixtures.recompacted_path()),
    "lab11_5.resume_comparison_figure": lambda: lab11_5.resume_comparison_figure(31),
}


def test_every_figure_function_is_listed() -> None:
    modules = (lab11_1, lab11_2, lab11_3, lab11_4, lab11_5)
    found = {
        f"{module.__name__.rsplit('.', 1)[1]}.{name}"
        for module in modules
        for name, value in vars(module).items()
        if inspect.isfunction(value)
        and value.__module__ == module.__name__
        and inspect.signature(value).return_annotation in ("Figure", Figure)
    }
    assert found == set(FIGURES)


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_every_figure_fits_a_16_9_slide_and_stays_readable(name: str) -> None:
    fig = FIGURES[name]()
    width, height = fig.get_size_inches()
    assert height <= display.MAX_FIGURE_HEIGHT, f"{name} is {height} in tall"
    assert width <= 10.0, f"{name} is {width} in wide (1000 px of a 1280 px slide)"
    assert min(t.get_fontsize() for t in _texts(fig)) >= display.MIN_FONT_SIZE
