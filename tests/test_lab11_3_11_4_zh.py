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
    budget = lab11_3.Budget(max_tokens=31, reserved_output=4, safety_margin=2)
    frame = lab11_3.ledger_styler(None, budget).data
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
    assert "决定" in lab11_3.ledger_styler().data.columns


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
    assert box.outputs["reason"].value == "原因（reason）：trimmed"
    assert box.outputs["kept"].value.startswith("保留（kept_entry_ids）：u2, a2")
    box.controls["max_tokens"].value = 50
    assert box.outputs["reason"].value.endswith("within_budget")
    assert "决定" in box.outputs["ledger"].value


# -- 11.4 ------------------------------------------------------------------------------------------


def test_first_kept_figure_is_drawn_in_chinese(chinese: None) -> None:
    fig = lab11_4.first_kept_figure()
    ax = fig.axes[0]
    assert ax.get_title(loc="left") == "每个合法的保留起点：保留的 token 与摘要替代的 token"
    assert _chinese(ax.get_xlabel())
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        "保留：原消息",
        "摘要替代：这部分由摘要代替",
    ]


def test_first_kept_checks_are_chinese(chinese: None) -> None:
    assert lab11_4.check_valid_first_kept({"u1", "u2", "u3"}).ok
    wrong = lab11_4.check_valid_first_kept({"u1", "u2", "a2"})
    assert not wrong.ok and _chinese(wrong.title) and "不合法：a2" in wrong.detail
    assert _chinese(lab11_4.check_store_count(10, 11).title)


def test_compact_2_is_ctxlabs_not_the_chapters(chinese: None) -> None:
    """The chapter gives only compact-2's first kept entry (u3): the verdict says so."""
    title = lab11_4.check_compact2(fixtures.compact2()).title
    assert "本章只给出它的保留起点 u3" in title
    assert "这正是本章" not in title
