"""Issue 11: the teaching layer says what the chapter says, and shows what the chapter shows.

Each test checks a teaching function (or the core where the notebook computes it in its
own cells) against the chapter's words: the chapter's own answers accepted, a path without
a system message, the final ``messages`` list, what pairing does not read, metadata
skipped on resume, the 11.4 cost figure, and every lab figure small enough for a 16:9 slide.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable

import pytest

pytest.importorskip("matplotlib")

from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.text import Text

import ctxlab
from ctxlab import fixtures
from ctxlab.interactions import message_entries
from ctxlab.lab import display, lab11_2, lab11_3, lab11_4, lab11_5, ledger

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


# -- 11.2: exercise C -------------------------------------------------------------


@pytest.mark.parametrize(("answer", "ok"), [("u3", True), ("r-test", True), ("r-read", False),
                                            ("unknown-1", False), ("calls", False)])  # fmt: skip
def test_exercise_c_accepts_either_entry_the_error_names(answer: str, ok: bool) -> None:
    assert lab11_2.check_error_entry(answer).ok is ok


# -- 11.2: a system message between groups; toolName and the final assistant ----------------------


def test_a_system_message_between_two_groups_belongs_to_no_group() -> None:
    path = fixtures.system_patch_path()
    groups = ctxlab.group_interactions(message_entries(path))
    grouped = [entry_id for group in groups for entry_id in group.entry_ids]
    assert "patch-1" not in grouped and "patch-2" not in grouped
    assert "a1" in groups[0].entry_ids and groups[1].entry_ids[0] == "u2"


def test_tool_name_and_the_final_assistant_take_no_part_in_pairing() -> None:
    """「result 的数组位置、toolName 与终态 assistant 不参与这次配对」, on the core."""
    entries = message_entries(fixtures.opening_path())
    renamed = []
    for entry in entries:
        if entry.id == "r-test":  # answers test-1, a "bash" call; named "read" here
            assert isinstance(entry.message, ctxlab.ToolResultMessage)
            message = dataclasses.replace(entry.message, tool_name="read")
            entry = dataclasses.replace(entry, message=message)
        renamed.append(entry)
    groups = ctxlab.group_interactions(renamed)
    assert [g.entry_ids for g in groups] == [
        g.entry_ids for g in ctxlab.group_interactions(entries)
    ]
    without_a3 = ctxlab.group_interactions([e for e in entries if e.id != "a3"])
    assert without_a3[-1].entry_ids == ("u3", "calls", "r-test", "r-read")  # still closes


# -- 11.3: no system message, the final messages list -------------------------------


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
    assert len(result.messages) == len(result.kept_entry_ids) + 1
    assert "sys" not in result.kept_entry_ids


def test_the_ledger_follows_the_default_chinese_summary() -> None:
    frame = lab11_3.ledger_styler(fixtures.resumed_path(), lab11_3.Budget(max_tokens=31)).data
    result = _build(fixtures.resumed_path())
    assert frame.iloc[-1]["tokens"] == result.tokens.total
    assert ctxlab.text_of(result.messages[1]).startswith("【会话压缩摘要】")


# -- 11.4: the first kept entry ----------------------------------


def test_first_kept_figure_draws_kept_solid_and_summarised_hatched() -> None:
    fig = lab11_4.first_kept_figure()
    bars = [p for p in fig.axes[0].patches if isinstance(p, Rectangle)]
    widths = [(round(b.get_width()), bool(b.get_hatch())) for b in bars]
    assert widths == [(0, True), (29, False), (7, True), (22, False), (14, True), (15, False)]
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["u3", "u2", "u1"]


# -- 11.5: metadata skipped; the comparison figure's colours and labels ----------------------------


def test_a_metadata_entry_is_skipped_on_resume() -> None:
    resumed = fixtures.resumed_path()
    index = next(i for i, e in enumerate(resumed) if e.id == "compact-1")
    meta = ctxlab.MetadataSessionEntry("meta-1", "compact-1", 100, "model", "course-model-2")
    after = dataclasses.replace(resumed[index + 1], parent_id="meta-1")
    path = [*resumed[: index + 1], meta, after, *resumed[index + 2 :]]
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
    "lab11_2.timeline_figure": lab11_2.timeline_figure,
    "ledger.budget_figure": ledger.budget_figure,
    "lab11_4.first_kept_figure": lab11_4.first_kept_figure,
    "lab11_5.resume_diagram": lambda: lab11_5.resume_diagram(fixtures.recompacted_path()),
    "lab11_5.resume_comparison_figure": lambda: lab11_5.resume_comparison_figure(31),
}


def test_every_figure_function_is_listed() -> None:
    modules = (lab11_2, lab11_3, lab11_4, lab11_5, ledger)
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
