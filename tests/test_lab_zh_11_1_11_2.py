"""The Chinese edition of labs 11.1 and 11.2 (issue 12): their tables, widgets, verdicts and
figures really speak Chinese when the notebook asks for it, and English stays as it was."""

from __future__ import annotations

import io
import re
import warnings
from collections.abc import Iterator

import pytest

pytest.importorskip("pandas")
mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")

from ctxlab import fixtures  # noqa: E402
from ctxlab.lab import fonts, lab11_1, lab11_2  # noqa: E402
from ctxlab.lab.language import set_figure_language, set_language  # noqa: E402

pytestmark = pytest.mark.teaching

HAN = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def zh() -> Iterator[None]:
    saved = mpl.rcParams.copy()
    set_language("zh")
    set_figure_language("zh")
    try:
        yield
    finally:
        set_language("en")
        set_figure_language(None)
        mpl.rcParams.update(saved)


def _figure_texts(fig: mpl.figure.Figure) -> list[str]:
    ax = fig.axes[0]
    texts = [ax.get_title(loc="left"), ax.get_xlabel(), ax.get_ylabel()]
    texts += [t.get_text() for t in ax.texts]
    legend = ax.get_legend()
    if legend is not None:
        texts += [t.get_text() for t in legend.get_texts()]
    return [t for t in texts if t]


# -- 11.1 ------------------------------------------------------------------------------------------


def test_11_1_path_table_has_chinese_headers_but_the_frame_keeps_english_names(zh: None) -> None:
    assert list(lab11_1.path_table().columns) == [
        "id", "parent", "role", "text", "tool call ids", "cost"
    ]  # fmt: skip
    shown = lab11_1.path_styler().data
    assert list(shown.columns) == ["id", "parent", "角色", "文本", "tool call 的 id", "成本"]
    assert shown["成本"].tolist() == list(fixtures.OPENING_COSTS.values())
    resumed = lab11_1.path_table(fixtures.resumed_path()).set_index("id")
    assert resumed.loc["compact-1", "text"].startswith("摘要：")


def test_11_1_corruption_table_names_every_case_in_chinese(zh: None) -> None:
    shown = lab11_1.corruption_styler().data
    assert list(shown.columns) == ["情形", "parser 的错误信息"]
    assert all(HAN.search(case) for case in shown["情形"])
    assert shown["情形"].iloc[0] == "用 files 代替 changedFiles"
    assert "summary.files" in shown["parser 的错误信息"].iloc[0]
    assert set(lab11_1.CASE_LABELS_ZH) == {lab11_1.VALID_CASE, *fixtures.compaction_corruptions()}


def test_11_1_verdicts_and_widget_are_chinese(zh: None) -> None:
    assert lab11_1.parse_verdict(lab11_1.VALID_CASE).startswith("接受 ✔ compaction")
    assert lab11_1.parse_verdict("goal missing").startswith("拒绝 ✘")
    box = lab11_1.build_parse_widget()
    dropdown = box.controls["case"]
    assert dropdown.description == "情形"
    assert dropdown.value == lab11_1.VALID_CASE  # the value stays the fixture's key
    assert ("用 files 代替 changedFiles", "files instead of changedFiles") in dropdown.options
    dropdown.value = "files instead of changedFiles"
    assert "拒绝 ✘" in box.outputs["verdict"].value
    verdict = lab11_1.check_my_summary(fixtures.compact1_summary().to_json())
    assert not verdict.ok and verdict.title == "这是 compact-1 自己的摘要"
    assert HAN.search(verdict.hint)


def test_11_1_english_stays_english() -> None:
    assert lab11_1.path_styler().data.columns[-1] == "cost"
    assert lab11_1.parse_verdict(lab11_1.VALID_CASE).startswith("accepted ✔")
    assert lab11_1.build_parse_widget().controls["case"].options == lab11_1.parse_cases()
    assert not any(HAN.search(t) for t in _figure_texts(lab11_1.cost_figure()))


def test_11_1_cost_figure_is_drawn_in_chinese(zh: None) -> None:
    fig = lab11_1.cost_figure()
    ax = fig.axes[0]
    assert ax.get_title(loc="left") == "每条 entry 的成本，按它将进入的组着色"
    assert HAN.search(ax.get_xlabel()) and HAN.search(ax.get_ylabel())
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["system：不属于任何组", "第 1 组：7", "第 2 组：7", "第 3 组：15"]


# -- 11.2 ------------------------------------------------------------------------------------------


def test_11_2_tables_have_chinese_headers_and_cases(zh: None) -> None:
    grouping = lab11_2.grouping_styler().data
    assert list(grouping.columns) == ["id", "角色", "组", "组首", "tool call 的 id"]
    assert list(lab11_2.grouping_table().columns)[2:4] == ["group", "starts with"]
    errors = lab11_2.grouping_errors_styler().data
    assert list(errors.columns) == ["情形", "group_interactions 的结论"]
    assert errors["情形"].iloc[0] == "r-test 回答 unknown-1"
    said = errors["group_interactions 的结论"].tolist()
    assert said[0].startswith("拒绝 ✘") and said[-1].startswith("接受 ✔ 3 组")
    cases = lab11_2.pairing_cases_styler().data["情形"].tolist()
    assert all(HAN.search(case) for case in cases)
    matrix = lab11_2.pairing_matrix()
    assert HAN.search(matrix.index.name) and HAN.search(matrix.columns.name)
    assert matrix.loc["read-1", "r-read"] == "✔"
    groups = _opening_groups()
    assert lab11_2.group_label(3, groups[2]) == "第 3 组：u3…a3"


def _opening_groups() -> list[lab11_2.InteractionGroup]:
    from ctxlab import group_interactions
    from ctxlab.interactions import message_entries

    return group_interactions(message_entries(fixtures.opening_path()))


def test_11_2_widget_and_checks_are_chinese(zh: None) -> None:
    box = lab11_2.build_grouping_widget()
    assert HAN.search(box.controls["order"].description)
    assert HAN.search(box.controls["r-test answers"].description)
    box.controls["r-test answers"].value = "unknown-1"
    assert "拒绝 ✘" in box.outputs["verdict"].value
    assert "没有配对" in box.outputs["pairing"].value
    verdict = lab11_2.check_legal_cuts(["a1|u2", "a2|u3", "r-test|r-read"])
    assert not verdict.ok and verdict.title == "这些切点落在组内：r-test|r-read"
    assert lab11_2.check_error_entry("r-test").title.startswith("错误信息指出了 r-test")
    assert lab11_2.check_group_of_u3(["u3", "calls", "r-read", "r-test", "a3"]).title == (
        "成员对了，顺序不对"
    )


def test_11_2_timeline_figure_is_drawn_in_chinese_without_missing_glyphs(zh: None) -> None:
    if fonts.cjk_font() is None:
        pytest.skip("no CJK font on this machine (apt-get install fonts-noto-cjk)")
    fonts.use_figure_language("zh")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        figures = [lab11_2.timeline_figure(), lab11_1.cost_figure()]
        for fig in figures:
            fig.savefig(io.BytesIO(), format="png")  # renders every glyph (Agg)
    assert not [str(w.message) for w in caught if "missing from font" in str(w.message)]
    texts = _figure_texts(figures[0])
    assert texts[0].startswith("预算可以在哪里切开？")
    assert [t for t in texts if t.startswith("第 ")] == ["第 1 组", "第 2 组", "第 3 组"]
