"""``nbsource.py stats``: the share of Chinese (Han) characters in each edition's prose.

Issue 12's closing note gives, per edition, Han characters / all non-space characters of
the markdown cells. The counting is checked on small texts whose answer is known by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nbsource_module import load_nbsource

REPO = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.teaching


nbsource = load_nbsource()

SOURCE = """:::notebook 99.9-example lab=99.9 languages=en,zh
:::cell c-0 markdown slide=slide
:::en
# Lab 99.9 — 摘要
:::zh
# 实验 99.9 — 摘要
:::cell c-1 code
print("不计入：代码单元格")
:::cell c-2 markdown
:::student-en
Write `f`.
:::instructor-en
The answer.
:::student-zh
写出 `f`。
:::instructor-zh
答案：f。
"""


def test_han_count_counts_han_among_non_space_characters() -> None:
    count = nbsource.han_count("# 实验 11.3 — 预算\n\n`build_context`，共 31 个 token。")
    # Han: 实 验 预 算 共 个 = 6. Non-space: "#", "实验", "11.3", "—", "预算",
    # "`build_context`，共", "31", "个", "token。" = 1 + 2 + 4 + 1 + 2 + 17 + 2 + 1 + 6 = 36.
    assert (count.han, count.characters) == (6, 36)
    assert count.share == pytest.approx(6 / 36)
    assert nbsource.han_count(" \n\t ") == nbsource.HanCount(0, 0)
    assert nbsource.han_count("").share == 0.0
    # Full-width punctuation and kana are not Han; extension B ideographs are.
    assert nbsource.han_count("，。：「」ひら").han == 0
    assert nbsource.han_count("𠀀㐀中").han == 3
    assert nbsource.han_count("Context 上下文").share == pytest.approx(3 / 10)


def test_prose_count_takes_only_the_markdown_of_that_edition() -> None:
    source = nbsource.parse_source(SOURCE)
    count = nbsource.prose_count
    Edition = nbsource.Edition
    # en: "#", "Lab", "99.9", "—", "摘要" -> 2 Han of 11; "Write", "`f`." -> 0 of 9.
    assert count(source, Edition("en", "student")) == nbsource.HanCount(2, 20)
    # en/instructor: "The answer." -> 0 of 10 instead of 9.
    assert count(source, Edition("en", "instructor")) == nbsource.HanCount(2, 21)
    # zh: "#实验99.9—摘要" -> 4 Han of 10; "写出`f`。" -> 2 of 6; the code cell never counts.
    assert count(source, Edition("zh", "student")) == nbsource.HanCount(6, 16)
    # zh/instructor: "答案：f。" -> 2 Han of 5.
    assert count(source, Edition("zh", "instructor")) == nbsource.HanCount(6, 15)


def test_stats_prints_one_line_per_edition_of_the_languages_the_sources_have() -> None:
    source = nbsource.parse_source(SOURCE)
    lines = nbsource.stats([source], per_notebook=True)
    assert lines[0].split() == ["edition", "notebooks", "Han", "non-space", "share"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[1:] if not line.startswith(" ")}
    assert rows == {
        "en/student": ["1", "2", "20", "10.0%"],
        "en/instructor": ["1", "2", "21", "9.5%"],
        "zh/student": ["1", "6", "16", "37.5%"],
        "zh/instructor": ["1", "6", "15", "40.0%"],
    }
    assert sum(1 for line in lines if line.startswith("  99.9")) == 4
    english_only = nbsource.parse_source(
        ":::notebook 99.8-example lab=99.8 languages=en\n:::cell c-0 markdown\n# Lab 99.8\n"
    )
    assert [line.split()[0] for line in nbsource.stats([english_only])[1:]] == [
        "en/student",
        "en/instructor",
    ]


def test_stats_command_runs_on_the_repository(capsys: pytest.CaptureFixture[str]) -> None:
    assert nbsource.main(["stats"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[0] == "edition"
    editions = {line.split()[0] for line in out[1:]}
    assert {"en/student", "en/instructor"} <= editions
    for line in out[1:]:
        assert line.split()[-1].endswith("%")
