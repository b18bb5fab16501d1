"""The teaching layer's longer texts (``ctxlab/lab/data/texts.json``, read by
:class:`ctxlab.lab.language.Texts`): every key a module asks for exists in its section, every
text is used, and the English and Chinese templates take the same values."""

from __future__ import annotations

import json
import re
import string
from pathlib import Path

import pytest

import ctxlab.lab
from ctxlab.lab.language import Texts, set_language

LAB = Path(ctxlab.lab.__file__).parent
TEXTS = json.loads((LAB / "data" / "texts.json").read_text("utf-8"))
_SECTION = re.compile(r'^say = Texts\("(\w+)"\)$', re.M)
_KEY = re.compile(r'\bsay(?:\.figure)?\(\s*"(\w+)"')


def _used() -> dict[str, set[str]]:
    used: dict[str, set[str]] = {}
    for module in sorted(LAB.glob("*.py")):
        source = module.read_text("utf-8")
        section = _SECTION.search(source)
        if section:
            used.setdefault(section.group(1), set()).update(_KEY.findall(source))
    return used


def _values(template: str) -> set[str]:
    """The values a template takes, the language's variants as one (``line_en``/``line_zh``;
    a draft record's ``name`` is shown in Chinese as its ``label``)."""
    names = {name.split(".")[0] for _, name, _, _ in string.Formatter().parse(template) if name}
    return {re.sub(r"_(en|zh)$", "", name).replace("label", "name") for name in names}


def test_every_key_asked_for_exists_and_every_text_is_used() -> None:
    used = _used()
    assert set(used) == set(TEXTS)
    for section, keys in used.items():
        assert keys == set(TEXTS[section]), section


@pytest.mark.parametrize("section", sorted(TEXTS))
def test_english_and_chinese_take_the_same_values(section: str) -> None:
    for key, (en, zh) in TEXTS[section].items():
        assert _values(en) == _values(zh), key


def test_a_text_is_picked_when_rendered() -> None:
    say = Texts("lab11_2")
    try:
        set_language("zh")
        assert (
            say("is_not_a_cut_write", item="x")
            == "'x' 不是一个切点；请写成 'a1|u2' 或 ('a1', 'u2')"
        )
        set_language("en")
        assert say("is_not_a_cut_write", item="x").startswith("'x' is not a cut")
    finally:
        set_language("en")
