"""One glossary for the Chinese edition (issue 18): ``notebooks/GLOSSARY.zh.md``.

The glossary's table "不用的写法 — ruled-out variants" lists renderings the Chinese edition
does not use (线上形式, 控件, 首条保留, 章节 for "the chapter", 价格 for cost, 点名, …). This
test builds every Chinese edition (student and instructor) in memory from the sources and
fails when a ruled-out variant stands in a markdown cell (outside inline code and code
blocks) or in a comment or string literal of a code cell. A variant written in ASCII (such as
``store``) is a word, matched whole and case-sensitively, in markdown prose only: in code it
is an identifier.
"""

from __future__ import annotations

import io
import re
import tokenize
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from chapter_text import chapter_path
from nbsource_module import load_nbsource

pytestmark = pytest.mark.teaching

REPO = Path(__file__).resolve().parent.parent
GLOSSARY = REPO / "notebooks" / "GLOSSARY.zh.md"
RULED_OUT_HEADING = "## 不用的写法 — ruled-out variants"

nbsource = load_nbsource()
ZH_SOURCES = [s for s in nbsource.load_sources() if "zh" in s.languages]


def ruled_out(text: str) -> dict[str, str]:
    """variant -> what to use instead, from the glossary's ruled-out table."""
    section = text.split(RULED_OUT_HEADING, 1)[1].split("\n## ", 1)[0]
    found: dict[str, str] = {}
    for line in section.splitlines():
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if cells[0] == "ruled out":
            continue
        found[cells[0]] = cells[1]
    return found


@cache
def _variants() -> dict[str, str]:
    return ruled_out(GLOSSARY.read_text(encoding="utf-8"))


def _prose(markdown: str) -> str:
    """Markdown without fenced code blocks and inline code spans."""
    without_blocks = re.sub(r"^```.*?^```", "", markdown, flags=re.MULTILINE | re.DOTALL)
    return re.sub(r"`[^`\n]*`", "", without_blocks)


def _code_text(code: str) -> str:
    """The comments and string literals of a code cell (magics dropped)."""
    lines = [line for line in code.split("\n") if not line.lstrip().startswith("%")]
    parts: list[str] = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline))
    except (tokenize.TokenError, SyntaxError):  # pragma: no cover - a cell that is not Python
        return code
    for token in tokens:
        if token.type in (tokenize.COMMENT, tokenize.STRING) or tokenize.tok_name.get(
            token.type, ""
        ).startswith("FSTRING_MIDDLE"):
            parts.append(token.string)
    return "\n".join(parts)


def offending(text: str, variants: dict[str, str], *, markdown: bool) -> list[str]:
    """The ruled-out variants ``text`` uses (ASCII variants only when ``markdown``)."""
    found = []
    for variant in variants:
        if variant.isascii():
            if markdown and re.search(rf"(?<![\w`./-]){re.escape(variant)}(?![\w`./(-])", text):
                found.append(variant)
        elif variant in text:
            found.append(variant)
    return found


def _editions(source: Any) -> list[Any]:
    return [nbsource.build_notebook(source, nbsource.Edition("zh", r)) for r in nbsource.ROLES]


def test_the_glossary_rules_out_the_known_variants() -> None:
    variants = _variants()
    for variant in ("线上形式", "控件", "首条保留", "章节", "价格", "点名", "点出", "条目"):
        assert variant in variants, variant
    text = GLOSSARY.read_text(encoding="utf-8")
    for term in ("本章", "保留起点", "成本", "小部件", "ctxlab 扩展", "wire 形式"):
        assert term in text, term


@pytest.mark.parametrize("source", ZH_SOURCES, ids=lambda s: s.name)
def test_no_chinese_cell_uses_a_ruled_out_variant(source: Any) -> None:
    variants = _variants()
    problems = []
    for notebook in _editions(source):
        for cell in notebook.cells:
            if cell.cell_type == "markdown":
                found = offending(_prose(cell.source), variants, markdown=True)
            else:
                found = offending(_code_text(cell.source), variants, markdown=False)
            problems += [f"{source.name} cell {cell.id}: {v!r} (use {variants[v]})" for v in found]
    assert not problems, "\n".join(sorted(set(problems)))


def test_a_ruled_out_variant_is_found_where_it_matters() -> None:
    variants = {"控件": "小部件", "store": "Store"}
    assert offending(_prose("用这个控件试试"), variants, markdown=True) == ["控件"]
    assert offending(_prose("写进 store 里"), variants, markdown=True) == ["store"]
    assert offending(_prose("调用 `store.append` 写入 Store"), variants, markdown=True) == []
    assert offending(_code_text('store.append(e)  # 控件\nprint("x")'), variants,
                     markdown=False) == ["控件"]  # fmt: skip
    assert offending(_code_text("store.append(e)"), variants, markdown=False) == []


# ----------------------------------------------------------------------------- issue 27

#: The chapter's text lies outside the repository (tests/chapter_text.py finds it).
READMES_ZH = [REPO / "README.zh.md", REPO / "notebooks" / "README.zh.md"]
#: Terms the chapter defines, in the chapter's words: the glossary's first table has each.
CHAPTER_TERMS = (
    "active path", "活动路径", "message entries", "leaf", "测试估算器", "context projection",
    "临时视图", "保留起点", "切点", "成本", "消息额度", "回答预留", "安全余量", "固定成本",
    "重放", "工具往返", "终态回答", "最小单位", "压缩前规模", "保留后缀", "最新摘要",
    "二次压缩", "深副本", "深相等", "公开副本隔离", "四个范围", "本章验收", "parser",
    "Store", "synthetic user message", "组首", "目标", "约束", "已完成事项", "决策",
    "变更文件", "未解决事项", "下一步", "single_group_overflow", "上层生命周期",
)  # fmt: skip


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


@pytest.fixture(scope="module")
def chapter() -> str:
    return _squeeze(chapter_path().read_text(encoding="utf-8"))


def _first_table() -> str:
    text = GLOSSARY.read_text(encoding="utf-8")
    return text.split("## 本章的术语", 1)[1].split("\n## ", 1)[0]


def test_every_glossary_quote_is_the_chapters_verbatim(chapter: str) -> None:
    quotes = re.findall(r"「(.+?)」", GLOSSARY.read_text(encoding="utf-8"))
    assert len(quotes) >= 15
    wrong = [quote for quote in quotes if _squeeze(quote) not in chapter]
    assert not wrong, f"not in the chapter (whitespace aside): {wrong}"


def test_the_glossary_covers_every_term_the_chapter_defines(chapter: str) -> None:
    assert [t for t in CHAPTER_TERMS if _squeeze(t) not in chapter] == []
    table = _first_table()
    missing = [term for term in CHAPTER_TERMS if term not in table]
    assert not missing, f"the glossary's first table lacks: {missing}"


def test_a_misquote_is_found(chapter: str) -> None:
    assert _squeeze("整体保留") in chapter and _squeeze("整组保留") not in chapter


@pytest.mark.parametrize("readme", READMES_ZH, ids=lambda p: str(p.relative_to(REPO)))
def test_the_chinese_readmes_use_the_glossarys_terms(readme: Path) -> None:
    text = _prose(readme.read_text(encoding="utf-8"))
    variants = _variants()
    found = offending(text, variants, markdown=True)
    assert not found, f"{readme.name}: " + ", ".join(f"{v!r} (use {variants[v]})" for v in found)
