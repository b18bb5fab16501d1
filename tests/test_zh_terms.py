"""The course's Chinese, everywhere a student reads it (issue 32, item 8; issue 33, item 4).

One check over every text of the Chinese edition:

* every zh notebook: the markdown of both roles' editions (built from the sources), the
  comments of their code cells, and the stored outputs of the executed zh instructor editions;
* every zh title and hint of the labs' misconception catalogues (the common-mistakes list);
* every zh check table: each lab's checks run, with the language set to zh, on the unwritten
  stub, on ctxlab's own solution and on each buggy function of ``tests/misconceptions/``
  (twice, so that the hint's second rung shows too): the row labels, the failure details and
  the hints.

Each text fails on

(a) **English words** outside code: a word is code when it is inline code or a code block of
    markdown, an identifier (a digit, ``_ . - [ ]`` or camelCase in it), a word the chapter's
    own Chinese text uses (``entry``, ``parser``, ``Provider`` …: read from the chapter), or
    one of :data:`NAMES` (a product or Python name, each with its reason);
(b) **banned term variants**: the third table of ``notebooks/GLOSSARY.zh.md``, which follows
    the chapter (a word the chapter uses is never banned there: tested below).

The catalogue and the check rows belong to ``ctxlab/lab/grading``; the lab notebooks to the
labs' sources: a failure names the text, so that its owner can fix it.
"""

from __future__ import annotations

import html
import io
import json
import re
import runpy
import tokenize
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from chapter_text import WRAP_SPACE, chapter_path
from nbsource_module import load_nbsource
from test_glossary import GLOSSARY, _prose, offending, ruled_out
from test_zh_edition import KEPT_WORDS

pytestmark = pytest.mark.teaching

ROOT = Path(__file__).resolve().parents[1]
MISCONCEPTIONS = ROOT / "tests" / "misconceptions"
nbsource = load_nbsource()
ZH_SOURCES = [s for s in nbsource.load_sources() if "zh" in s.languages]
GRADED = ("11.1", "11.2", "11.3", "11.4", "11.5")

#: Names that are no English prose in a Chinese sentence, each with its reason.
NAMES: dict[str, str] = {
    "ctxlab": "the product's name",
    "JupyterLab": "a product's name",
    "JupyterLite": "a product's name",
    "Python": "a language's name",
    "TypeScript": "a language's name (the chapter's code)",
    "pandas": "a library's name",
    "matplotlib": "a library's name",
    "pytest": "a command",
    "notebook": "the course's word for the lab file (GLOSSARY.zh.md)",
    "wire": "「wire 形式」, ctxlab's term (GLOSSARY.zh.md)",
    "import": "Python's keyword (「连同它的 import」)",
    "seed": "check_implementation's keyword (「check_implementation(..., seed=N)」)",
    "True": "a Python value",
    "False": "a Python value",
    "None": "a Python value",
    "bool": "a Python type",
    "int": "a Python type",
    "float": "a Python type",
    "str": "a Python type",
    "dict": "a Python type",
    "list": "a Python type",
    "tuple": "a Python type",
    "NaN": "a number's name",
    "inf": "a number's name",
    "JSON": "a format's name",
    "id": "the chapter's field (entry id)",
    "ids": "the chapter's field, plural",
    "nan": "Python's repr of a NaN",
    "true": "a JSON literal",
    "false": "a JSON literal",
    "strip": "Python's str.strip",
    "dataclass": "a Python term (a frozen dataclass)",
    "agent": "the course's subject (the chapter's AgentMessage)",
    "status": "a column of grades.csv",
    "between": "an entry id of a check's path",
    "tip": "an entry id of a check's path",
    "note": "an entry id of a check's path",
    "nope": "an entry id of a check's path",
}

#: Pieces of code or program output inside a Chinese line, taken out before the words are
#: read: a regex -> why it is code.
CODE_PIECES: dict[str, str] = {
    r"\b[A-Z]\w*(?:Error|Exception|Warning)\b: [^；。\n✔✘（]*": "an exception's own text, quoted",
    r"\"[^\"\n]*\"|'[^'\n]*'": "a value, quoted",
    r"\bfrom [\w.]+ import \w+": "a Python import",
    r"\bpython -m ctxlab grade [^（(\n]*": "the grading command line",
    r"\bpytest -m [^（(\n]*": "the terminal route's command line",
    r"\bexport function \w+": "TypeScript code: a read tool's result in the fixtures",
    r"\bPASS \S+": "a test runner's output: a tool result in the fixtures",
}

#: A segment of a line between Chinese characters (and Chinese punctuation).
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.\-\[\]']*")


@cache
def code_words() -> frozenset[str]:
    """Identifiers the texts name: the wire form's field names and every check row's key."""
    from ctxlab.lab.grading import behaviour_keys
    from test_zh_outputs import WIRE_KEYS

    return frozenset(WIRE_KEYS) | {key for lab in GRADED for key in behaviour_keys(lab)}


@cache
def chapter_words() -> frozenset[str]:
    """The ASCII words of the chapter's Chinese text: the English it keeps."""
    path = chapter_path()  # skips (or, under CTXLAB_REQUIRE_CHAPTER, fails) without it
    return frozenset(re.findall(r"[A-Za-z]+", path.read_text(encoding="utf-8")))


def is_code(word: str, names: frozenset[str] = frozenset()) -> bool:
    """An identifier, a name, or a word the chapter keeps in English: not prose."""
    bare = word.strip("'.-")
    chapter = chapter_words()
    return (
        len(bare) < 2
        or bool(re.search(r"[\d_.\-\[\]]", bare))
        or bool(re.search(r"[a-z][A-Z]", bare))
        or bare in KEPT_WORDS
        or bare in NAMES
        or bare in names
        or bare in code_words()
        or bare in chapter
        or f"{bare}s" in chapter  # the singular of a word the chapter uses (sections)
    )


#: A word of a path, an option, an attribute, a call, a key, or a word cut short (``JSO…``).
_IN_CODE = re.compile(r"[./\-]$|^[./+]|^…|^\.\.\.")


def english_words(text: str, names: frozenset[str] = frozenset()) -> list[str]:
    """The English prose words of a text (its code taken out: :data:`CODE_PIECES`, paths,
    attributes, calls, id lists, words cut short, and ``names``)."""
    text = re.sub(r"https?://\S+", " ", text)
    for piece in CODE_PIECES:
        text = re.sub(piece, " ", text)
    found = []
    for match in _WORD.finditer(text):
        before, after = text[max(0, match.start() - 1) : match.start()], text[match.end() :]
        if _IN_CODE.search(before) or re.match(r"[/(+,…]|\.\.\.|\.\w", after) or before == ",":
            continue
        if not is_code(match.group(0), names):
            found.append(match.group(0).strip("'.-"))
    return found


def markdown_prose(markdown: str) -> str:
    """Markdown without code blocks, inline code, HTML comments, tags and link targets."""
    text = re.sub(r"<!--.*?-->", " ", markdown, flags=re.S)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    text = re.sub(r"<[^>]+>", " ", text)
    return _prose(text)


def code_comments(code: str) -> str:
    lines = [line for line in code.split("\n") if not line.lstrip().startswith(("%", "!"))]
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline))
    except (tokenize.TokenError, SyntaxError):  # pragma: no cover
        return ""
    return "\n".join(t.string.lstrip("#") for t in tokens if t.type == tokenize.COMMENT)


def output_text(output: dict[str, Any]) -> str:
    """What a reader sees of an output: its stream, its table (tags dropped) or its repr."""
    if output.get("output_type") == "stream":
        return "".join(output["text"])
    data = output.get("data", {})
    if "application/vnd.jupyter.widget-view+json" in data or "image/png" in data:
        return ""
    if "text/html" in data:
        markup = re.sub(r"<style.*?</style>", " ", "".join(data["text/html"]), flags=re.S)
        markup = re.sub(r"<code>.*?</code>", " ", markup, flags=re.S)
        return html.unescape(re.sub(r"<[^>]+>", " ", markup))
    return "".join(data.get("text/plain", ""))


@cache
def banned() -> dict[str, str]:
    return ruled_out(GLOSSARY.read_text(encoding="utf-8"))


def _context(text: str, word: str) -> str:
    found = re.search(rf"(?<![A-Za-z]){re.escape(word)}(?![A-Za-z])", text)
    if found is None:  # pragma: no cover
        return ""
    return " ".join(text[max(0, found.start() - 18) : found.end() + 18].split())


def problems_of(
    where: str, text: str, *, markdown: bool = False, names: frozenset[str] = frozenset()
) -> list[str]:
    """(a) the English words and (b) the banned variants of one text (``names``: the
    identifiers of the notebook it belongs to)."""
    prose = markdown_prose(text) if markdown else text
    found = [
        f"{where}: English {word!r} in …{_context(prose, word)}…"
        for word in dict.fromkeys(english_words(prose, names))
    ]
    variants = banned()
    found += [
        f"{where}: {variant!r} (the glossary says {variants[variant]})"
        for variant in offending(prose, variants, markdown=markdown)
    ]
    return found


# ----------------------------------------------------------------------------- the texts


def notebook_names(source: Any) -> frozenset[str]:
    """The identifiers of a notebook's code: its names, and its strings that are one word."""
    names: set[str] = set()
    for cell in source.cells:
        if cell.cell_type != "code":
            continue
        for _, code in cell.variants:
            lines = [ln for ln in code.split("\n") if not ln.lstrip().startswith(("%", "!"))]
            try:
                tokens = list(tokenize.generate_tokens(io.StringIO("\n".join(lines)).readline))
            except (tokenize.TokenError, SyntaxError):  # pragma: no cover
                continue
            for token in tokens:
                if token.type == tokenize.NAME:
                    names.add(token.string)
                elif token.type == tokenize.STRING:
                    names.update(re.findall(r"^[rbf]*['\"](\w+)['\"]$", token.string))
    return frozenset(names)


def notebook_texts(source: Any) -> Iterator[tuple[str, str, bool]]:
    """``(where, text, is_markdown)`` of one zh notebook: both roles' prose and comments,
    and the stored outputs of the executed instructor edition."""
    for role in nbsource.ROLES:
        for cell in nbsource.build_notebook(source, nbsource.Edition("zh", role)).cells:
            where = f"{source.name} zh/{role} cell {cell.id}"
            if cell.cell_type == "markdown":
                yield where, cell.source, True
            else:
                yield f"{where} (comment)", code_comments(cell.source), False
    path = nbsource.NOTEBOOKS / "zh" / "instructor" / f"{source.name}.ipynb"
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        for output in cell.get("outputs", []):
            text = output_text(output)
            if text:
                yield f"{source.name} zh/instructor cell {cell.get('id')} (output)", text, False


def catalogue_texts(lab: str) -> Iterator[tuple[str, str]]:
    """Each zh title and hint of a lab's misconception catalogue."""
    from ctxlab.lab.grading.labs import catalogue

    for item in catalogue(lab):
        for name in ("title_zh", "hint_zh", "smallest_input_zh"):
            text = getattr(item, name, "")
            if text:
                yield f"{item.id} {name}", str(text)


def wrong_functions(lab: str) -> Iterator[tuple[str, Callable[..., Any]]]:
    """The lab's unwritten stub, ctxlab's solution and each buggy file of the catalogue."""
    from ctxlab.lab.grading import lab_keyword, reference_functions

    keyword = lab_keyword(lab)

    def stub(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"在这里写 {keyword}")

    yield "the unwritten stub", stub
    yield "ctxlab's solution", reference_functions(lab)[keyword]
    for path in sorted((MISCONCEPTIONS / f"lab{lab.replace('.', '_')}").glob("*.py")):
        yield path.stem, runpy.run_path(str(path), run_name="misconception")[keyword]


def check_table_texts(lab: str) -> Iterator[tuple[str, str]]:
    """The zh check table of each wrong function (run twice: the hint's second rung)."""
    from ctxlab.lab.grading import check_implementation, lab_keyword
    from ctxlab.lab.language import get_language, set_language

    before = get_language()
    set_language("zh")
    try:
        for name, function in wrong_functions(lab):
            for run in (1, 2):
                report = check_implementation(lab, **{lab_keyword(lab): function})
                yield f"{lab} check table of {name} (run {run})", str(report)
    finally:
        set_language(before)


# ----------------------------------------------------------------------------- the tests


@pytest.mark.parametrize("source", ZH_SOURCES, ids=lambda s: s.name)
def test_every_zh_notebook_is_chinese_in_the_chapters_terms(source: Any) -> None:
    names = notebook_names(source)
    problems = [
        problem
        for where, text, markdown in notebook_texts(source)
        for problem in problems_of(where, text, markdown=markdown, names=names)
    ]
    assert not problems, "\n".join(dict.fromkeys(problems))


@pytest.mark.parametrize("lab", GRADED)
def test_every_zh_hint_and_check_row_is_chinese_in_the_chapters_terms(lab: str) -> None:
    texts = [*catalogue_texts(lab), *check_table_texts(lab)]
    assert len(texts) >= 2 * 2 + 8
    problems = [problem for where, text in texts for problem in problems_of(where, text)]
    # one line per (text kind, problem): the same row fails alike for many functions
    assert not problems, "\n".join(dict.fromkeys(problems))


# ----------------------------------------------------------------------------- the check


def test_english_prose_is_found_and_code_is_not() -> None:
    assert english_words("groupInteractions() 跳过 sys，以 user 消息为起点") == []
    assert english_words("还没有写：stub 仍然抛出 NotImplementedError") == ["stub"]
    assert english_words("Goal: 调用者准备摘要") == ["Goal"]
    assert english_words("r-test、compact-1、a1|u2 和 max_tokens=31") == []
    assert english_words("用 ctxlab 在 JupyterLab 里检查 notebook") == []
    prose = markdown_prose("看 `the system message` 和 <!-- checks: a b -->[开课须知](x.ipynb)")
    assert english_words(prose) == []
    assert english_words(markdown_prose("# a list of entry ids")) == ["of"]


def test_banned_variants_are_found_and_the_chapters_words_are_not() -> None:
    assert problems_of("x", "这个控件的价格") == [
        "x: '控件' (the glossary says 小部件)",
        "x: '价格' (the glossary says 成本)",
    ]
    assert problems_of("x", "解析器返回新对象；goal 不能为空") == []


def test_the_glossary_bans_no_word_of_the_chapter() -> None:
    """A word the chapter uses is never ruled out (the glossary follows the chapter)."""
    path = chapter_path()
    chapter = path.read_text(encoding="utf-8")
    used = offending(chapter, banned(), markdown=True)  # an ASCII word: prose, not code
    assert not used, f"the glossary bans the chapter's own words: {used}"
    glossary = GLOSSARY.read_text(encoding="utf-8")
    assert "不能为空" in glossary and "空白" in glossary  # the chapter's rule and ctxlab's


# ----------------------------------------------------------------------------- spacing

_CJK = "[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]"
#: A line break inside a paragraph between two Chinese characters (Chromium renders it as a
#: space), or a space between two Han characters (the chapter file's line-wrap spaces).
_GAP = re.compile(rf"(?<={_CJK})\n[ \t]*(?={_CJK})|{WRAP_SPACE.pattern}")


def cjk_gaps(text: str) -> list[str]:
    """Each stray gap between Chinese characters in ``text`` (code blocks apart), in context."""
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    return [repr(prose[max(m.start() - 8, 0) : m.end() + 8]) for m in _GAP.finditer(prose)]


@pytest.mark.parametrize("source", nbsource.load_sources(), ids=lambda s: s.name)
def test_no_stray_gap_between_chinese_characters_in_the_notebooks(source: Any) -> None:
    """JupyterLab in Chromium shows a soft line break between two Chinese characters as a
    space (「再加第一 组」): a Chinese sentence is one source line (either language's cells:
    the English ones quote the chapter too)."""
    gaps = [
        f"{source.name} {cell.id} {key}: {gap}"
        for cell in source.cells
        if cell.cell_type == "markdown"
        for key, text in cell.variants
        for gap in cjk_gaps(text)
    ]
    assert not gaps, "\n".join(gaps)


def test_a_stray_gap_is_found() -> None:
    assert cjk_gaps("再加第一\n组会变成 29") and cjk_gaps("四个配置数值 和估算器")
    assert cjk_gaps("换行\n    缩进之后")
    assert not cjk_gaps("开篇路径只有 sys 一条\n`u1` 开启") and not cjk_gaps("```\n第一\n组\n```")


@pytest.mark.parametrize("lab", GRADED)
def test_no_stray_gap_between_chinese_characters_in_the_checks(lab: str) -> None:
    """The check rows' titles, quotes and whys and the catalogue's texts (a quote is the
    chapter's sentence without its file's line-wrap spaces: ``chapter_text``)."""
    from ctxlab.lab.grading.labs import catalogue, load

    texts = [
        (f"{row.key} {name}", getattr(row, name))
        for row in load(lab).checks
        for name in ("behaviour_zh", "quote_zh", "why_zh")
    ]
    texts += [
        (f"{item.id} {name}", str(getattr(item, name)))
        for item in catalogue(lab)
        for name in ("title_zh", "hint_zh", "quote_zh", "smallest_input_zh")
    ]
    gaps = [f"{where}: {gap}" for where, text in texts for gap in cjk_gaps(text)]
    assert len(texts) > 40 and not gaps, "\n".join(gaps)
