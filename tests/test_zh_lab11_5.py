"""Lab 11.5 in the Chinese edition (issue 18): what the notebook prints comes out in Chinese.

* The check table names each case's path in the report's language: "路径 sys..a4（compact-1
  从 u2 开始保留），预算 100/4/2" in Chinese, "path sys..a4 (compact-1 keeps u2), budget
  100/4/2" in English, exactly as before -- also for the cases built by Lab 11.3's shared
  loops (bad options, bad estimates).
* Cell ``11-5-f12`` prints the parser's refusal of a ``system`` field through
  ``lab11_5.error_text``: Chinese in the zh edition, the core's message in English.
"""

from __future__ import annotations

import html
import re

import pytest

import ctxlab
from ctxlab import fixtures
from ctxlab.lab import check_implementation, lab11_5

pytestmark = pytest.mark.teaching


def _not_written(active_path: object, **options: object) -> object:
    raise NotImplementedError


def _report_text() -> str:
    """The text of Lab 11.5's check table for a function that is not written yet (every row
    shows its first case's label)."""
    markup = check_implementation("11.5", build_context=_not_written)._repr_html_()
    markup = re.sub(r"<style.*?</style>", " ", markup, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", markup)))


def test_the_chinese_check_table_names_the_paths_in_chinese(zh: None) -> None:
    text = _report_text()
    for label in (
        "路径 sys..a4（compact-1 从 u2 开始保留），预算 100/4/2",
        "路径 sys..compact-2（compact-2 从 u3 开始保留），预算 100/4/2",
        "路径 sys..a4（插入 note-1 和 note-2），预算 100/4/2",
        "路径 sys..a3（带 system patch，compact-1 从 u2 开始保留），预算 100/4/2",
        "路径 sys..compact-3（compact-3 从 u4 开始保留），预算 100/4/2",
        "路径 u1..a4（没有 sys，compact-1 从 u2 开始保留），预算 31/4/2",
        # built by Lab 11.3's shared loops
        "路径 sys..a4（compact-1 从 u2 开始保留），max_tokens=nan",
        "路径 sys..a4（compact-1 从 u2 开始保留），预算 500/4/2，"
        "估算器对 compact-1 抛出 RuntimeError",
    ):
        assert label in text
    for english in ("keeps", " with note", "no sys", "system patches", "Lab 11.3"):
        assert english not in text


def test_the_english_check_table_is_unchanged() -> None:
    text = _report_text()
    for label in (
        "path sys..a4 (compact-1 keeps u2), budget 100/4/2",
        "path sys..compact-2 (compact-2 keeps u3), budget 100/4/2",
        "path sys..a4 with note-1 and note-2, budget 100/4/2",
        "path sys..a3 (system patches, compact-1 keeps u2), budget 100/4/2",
        "path sys..compact-3 (compact-3 keeps u4), budget 100/4/2",
        "path u1..a4 (no sys, compact-1 keeps u2), budget 31/4/2",
        "path sys..a4 (compact-1 keeps u2), max_tokens=nan",
        "path sys..a4 (compact-1 keeps u2), budget 500/4/2, the estimator raises RuntimeError"
        " for compact-1",
    ):
        assert label in text
    assert not re.search(r"[\u4e00-\u9fff]", text)


def _system_field_error() -> ctxlab.CtxlabError:
    try:
        ctxlab.parse_session_entry({**fixtures.compact1().to_json(), "system": "BASE"})
    except ctxlab.CtxlabError as error:
        return error
    raise AssertionError("the parser accepted a system field")


def test_a_system_field_is_refused_in_chinese(zh: None) -> None:
    assert lab11_5.error_text(_system_field_error()) == "entry compact-1：system 不是已知字段"


def test_a_system_field_is_refused_in_english() -> None:
    assert (
        lab11_5.error_text(_system_field_error())
        == "session entry compact-1: system is not a known field"
    )
