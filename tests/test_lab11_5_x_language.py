"""The Chinese edition of labs 11.5 and 11.x (issue 12): figures, verdicts and tables of
``ctxlab.lab.lab11_5`` and ``ctxlab.lab.lab11_x`` render in Chinese when the notebook asks
for it, and stay English otherwise."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from ctxlab import fixtures
from ctxlab.lab import lab11_5, lab11_x
from ctxlab.lab.language import set_figure_language, set_language

pytestmark = pytest.mark.teaching

HAN = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def zh() -> Iterator[None]:
    set_language("zh")
    set_figure_language(None)  # figures follow the language (a CJK font is not needed here)
    try:
        yield
    finally:
        set_language("en")
        set_figure_language(None)


def test_the_migration_table_speaks_chinese(zh: None) -> None:
    draft = lab11_x.draft_table()
    assert list(draft.columns) == ["草案记录", "严格 parser", "迁移"]
    assert any(value.startswith("拒绝：") for value in draft["严格 parser"])


def test_the_figures_draw_chinese_text(zh: None) -> None:
    fig = lab11_5.resume_comparison_figure(31)
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend == ["system + 预留 + 安全余量", "摘要", "保留的组", "丢弃的组"]
    assert fig.axes[0].get_xlabel() == "token 数"
    diagram = lab11_5.resume_diagram(fixtures.resumed_path(), title="compact-1 points back to u2")
    assert diagram.axes[0].get_title(loc="left") == "compact-1 指回 u2"
    words = {t.get_text() for t in diagram.axes[0].texts}
    assert {"已由 compact-1 摘要", "最新 compaction：读取它的摘要"} <= words


def test_figures_fall_back_to_english_text_when_asked(zh: None) -> None:
    set_figure_language("en")  # what setup_notebook does without a CJK font
    diagram = lab11_5.resume_diagram(fixtures.resumed_path(), title="compact-1 points back to u2")
    assert diagram.axes[0].get_title(loc="left") == "compact-1 points back to u2"
    assert not any(HAN.search(t.get_text()) for t in diagram.axes[0].texts)


def test_the_self_checks_answer_in_chinese(zh: None) -> None:
    verdicts = [
        lab11_5.check_resume_kept(["u4", "a4"]),
        lab11_5.check_resume_kept(["u1", "a1"]),
        lab11_5.check_replayed_prompt("RULE v1"),
        lab11_5.check_newest_summary("compact-1"),
        lab11_x.check_summary_renames(lambda summary: summary),
        lab11_x.check_migration(lambda wire, earlier: (wire, [])),
    ]
    assert [v.ok for v in verdicts] == [True, False, False, False, False, False]
    for verdict in verdicts:
        assert HAN.search(verdict.title + verdict.detail + verdict.hint), verdict
