"""The Chinese edition of labs 11.3 and 11.4 (issue 12): tables, figures, widgets and
self-checks speak Chinese when the notebook is Chinese, and the code that reads the frames
keeps working. The English rendering is covered by the other teaching-layer tests."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("pandas")
pytest.importorskip("matplotlib")
pytest.importorskip("ipywidgets")

from ctxlab import build_context, fixtures
from ctxlab.lab import lab11_3, lab11_4
from ctxlab.lab.fonts import use_figure_language
from ctxlab.lab.language import set_figure_language, set_language

pytestmark = pytest.mark.teaching

HAN = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def chinese() -> Iterator[None]:
    """Chinese text and figures (with the CJK font first, as ``setup_notebook`` sets it)."""
    import matplotlib as mpl

    with mpl.rc_context():
        set_language("zh")
        try:
            if use_figure_language("zh", notice=io.StringIO()) != "zh":
                pytest.skip("no CJK font installed")
            yield
        finally:
            set_language("en")
            set_figure_language(None)


def _chinese(text: object) -> bool:
    return bool(HAN.search(str(text)))


# -- 11.3 ------------------------------------------------------------------------------------------


def test_ledger_is_chinese_and_still_colours_kept_and_dropped_rows(chinese: None) -> None:
    frame = lab11_3.ledger_table(
        None, lab11_3.Budget(max_tokens=31, reserved_output=4, safety_margin=2)
    )
    assert list(frame.columns) == ["项目", "token", "累计", "决定"]
    decisions = frame["决定"].tolist()
    assert decisions.count("保留") == 2
    assert "丢弃：加上它会变成 29 > 22" in decisions
    assert frame["项目"].tolist()[5] == "第 3 组：u3…a3 (15)"
    html = lab11_3.ledger_styler(None, lab11_3.Budget(max_tokens=31)).to_html()
    kept_rule = re.search(r"([^{}]*)\{\s*background-color: #009E7333", html)
    assert kept_rule is not None
    kept_rows = set(re.findall(r"_row(\d+)_col0", kept_rule.group(1)))
    assert kept_rows == {"5", "6"}  # groups 3 and 2, green
    dropped_rule = re.search(r"([^{}]*)\{\s*background: repeating-linear-gradient", html)
    assert dropped_rule is not None
    assert set(re.findall(r"_row(\d+)_col0", dropped_rule.group(1))) == {"7"}  # group 1


def test_sweep_keeps_the_names_the_notebook_groups_by(chinese: None) -> None:
    sweep = lab11_3.sweep_table(None, lab11_3.Budget(reserved_output=4, safety_margin=2))
    assert {"max_tokens", "reason", "保留的组数"} <= set(sweep.columns)
    bands = sweep.groupby("reason", sort=False)["max_tokens"].agg(["min", "max"])
    assert bands.loc["within_budget", "min"] == 38
    fig = lab11_3.sweep_figure(max_tokens=range(0, 61, 5))
    assert fig.axes[0].get_ylabel() == "保留的组数"
    assert _chinese(fig.axes[0].get_title(loc="left"))


def test_budget_figure_is_drawn_in_chinese(chinese: None) -> None:
    fig = lab11_3.budget_figure(
        None, lab11_3.Budget(max_tokens=31, reserved_output=4, safety_margin=2)
    )
    ax = fig.axes[0]
    assert ax.get_title(loc="left") == "max_tokens 31：trimmed，total 31"
    assert ax.get_xlabel() == "token（累计）"
    assert "第 3 组：u3…a3" in [t.get_text() for t in ax.get_yticklabels()]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["保留（实心）", "丢弃（斜线）"]


def test_figures_stay_english_without_a_cjk_font(chinese: None) -> None:
    set_figure_language("en")
    fig = lab11_3.budget_figure(None, lab11_3.Budget(max_tokens=31))
    assert fig.axes[0].get_xlabel() == "tokens (running total)"
    assert not any(_chinese(t.get_text()) for t in fig.axes[0].get_yticklabels())
    # ...while the tables still speak Chinese
    assert "决定" in lab11_3.ledger_table().columns


def test_sent_messages_and_option_errors_are_chinese(chinese: None) -> None:
    result = build_context(
        fixtures.opening_path(),
        max_tokens=31,
        reserved_output=4,
        safety_margin=2,
        estimate_tokens=fixtures.opening_estimator,
    )
    frame = lab11_3.sent_messages_table(result)
    assert frame["在 keptEntryIds 里？"].tolist() == ["否"] + ["是"] * 7
    assert frame["来自"].tolist()[1] == "entry u2"  # the glossary keeps entry in English
    errors = lab11_3.option_errors_styler()
    assert list(errors.data.columns) == ["情形", "build_context 的回答"]
    assert "估算器返回 -1" in errors.data["情形"].tolist()
    assert _chinese(errors.caption)


def _always_within_budget(active_path: Any, **options: Any) -> Any:
    import dataclasses

    return dataclasses.replace(build_context(active_path, **options), reason="within_budget")


def test_compare_table_marks_the_first_difference_in_chinese(chinese: None) -> None:
    frame = lab11_3.compare_table(None, _always_within_budget)
    assert list(frame.columns) == ["", "参考实现", "你的结果", "相同？"]
    marks = frame["相同？"].tolist()
    assert marks.count("✘ 第一处不同") == 1
    assert frame[""][marks.index("✘ 第一处不同")] == "reason"
    html = lab11_3.compare_builds(None, _always_within_budget).to_html()
    assert "border: 2px solid #D55E00" in html  # the first difference is still outlined
    broken = lab11_3.compare_table(None, lambda active_path, **options: 42)
    assert broken[""][0] == "你的 build_context"
    assert "返回了 int，它不是 ContextResult" in broken["你的结果"][0]


def test_budget_widget_labels_are_chinese(chinese: None) -> None:
    box = lab11_3.build_budget_widget()
    descriptions = [s.description for s in box.controls.values()]
    assert descriptions == [
        "总窗口 max_tokens",
        "回答预留 reserved_output",
        "安全余量 safety_margin",
    ]
    assert box.outputs["reason"].value == "结果原因 reason：trimmed"
    assert box.outputs["kept"].value.startswith("保留（kept_entry_ids）：u2, a2")
    box.controls["max_tokens"].value = 50
    assert box.outputs["reason"].value.endswith("within_budget")
    assert "决定" in box.outputs["ledger"].value


def test_budget_checks_answer_in_chinese(chinese: None) -> None:
    assert lab11_3.check_available(31).ok
    assert _chinese(lab11_3.check_available(40).hint)
    assert _chinese(lab11_3.check_kept_ids(["sys", "u3"]).title)
    assert lab11_3.check_smallest_budget_for_all(38).ok
    assert "trimmed" in lab11_3.check_smallest_budget_for_all(37).title
    assert _chinese(lab11_3.check_smallest_budget_for_all(39).title)


# -- 11.4 ------------------------------------------------------------------------------------------


def test_first_kept_tables_are_chinese(chinese: None) -> None:
    table = lab11_4.first_kept_table(fixtures.opening_path(), extra_ids=["u9"])
    assert list(table.columns) == ["id", "类型", "组", "可作保留起点？", "错误"]
    valid = dict(zip(table["id"], table["可作保留起点？"], strict=True))
    assert [i for i, mark in valid.items() if mark == "✔"] == ["u1", "u2", "u3"]
    assert table["类型"].tolist()[-1] == "（不在路径上）"
    fields = lab11_4.compaction_fields(fixtures.compact1())
    assert list(fields.columns) == ["字段", "值"]
    assert dict(zip(fields["字段"], fields["值"], strict=True))["summary.unresolved"] == "（无）"
    costs = lab11_4.first_kept_costs()
    assert costs["保留的 token"].tolist() == [29, 22, 15]


def test_first_kept_figure_is_drawn_in_chinese(chinese: None) -> None:
    fig = lab11_4.first_kept_figure()
    ax = fig.axes[0]
    assert ax.get_title(loc="left") == lab11_4.FIRST_KEPT_FIGURE_TEXT_ZH["title"]
    assert _chinese(ax.get_xlabel())
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        "保留：原消息",
        "摘要替代：这部分由摘要代替",
    ]


def test_first_kept_widget_and_checks_are_chinese(chinese: None) -> None:
    box = lab11_4.build_first_kept_widget()
    assert box.dropdown.description == "保留起点"
    assert "✔ u2 是一个 interaction 的首条消息" in box.verdict.value
    box.dropdown.value = "u3"
    assert "恢复时摘要替代：u1, a1, u2, a2" in box.verdict.value
    assert lab11_4.check_valid_first_kept({"u1", "u2", "u3"}).ok
    wrong = lab11_4.check_valid_first_kept({"u1", "u2", "a2"})
    assert not wrong.ok and _chinese(wrong.title) and "不合法：a2" in wrong.detail
    assert _chinese(lab11_4.check_store_count(10, 11).title)
    assert lab11_4.check_compact1(fixtures.compact1()).title == "这正是本章的 compact-1"


def test_compact_2_is_ctxlabs_not_the_chapters(chinese: None) -> None:
    """The chapter gives only compact-2's first kept entry (u3): the verdict says so."""
    title = lab11_4.check_compact2(fixtures.compact2()).title
    assert "本章只给出它的保留起点 u3" in title
    assert "这正是本章" not in title
