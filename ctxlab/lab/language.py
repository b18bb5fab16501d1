"""The language the teaching layer speaks: English (the default) or Chinese.

Texts a student reads exist in both languages and are picked when rendered (:func:`tr`;
:func:`tr_figure` for figure text, which stays English without a CJK font); the longer ones
live in ``data/texts.json`` (:class:`Texts`). Process-wide state on purpose: a notebook sets
it once, in its first cell.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal, TypeAlias

from ctxlab.errors import CtxlabError, shown

__all__ = [
    "LANGUAGES",
    "Language",
    "Texts",
    "figure_language",
    "get_language",
    "set_figure_language",
    "set_language",
    "tr",
    "tr_figure",
]

Language: TypeAlias = Literal["en", "zh"]

#: The languages every student-facing text exists in.
LANGUAGES: tuple[Language, ...] = ("en", "zh")

_current: list[Language] = ["en"]
#: Figure text may have to stay English where no CJK font is installed (ctxlab.lab.fonts).
_figure: list[Language | None] = [None]


def set_language(language: Language) -> None:
    """Render the teaching layer's reports in ``"en"`` (English) or ``"zh"`` (Chinese)."""
    if language not in LANGUAGES:
        raise CtxlabError(f"set_language: language must be 'en' or 'zh', got {shown(language)}")
    _current[0] = language


def get_language() -> Language:
    """The language reports are rendered in (``"en"`` unless :func:`set_language` changed it)."""
    return _current[0]


def set_figure_language(language: Language | None) -> None:
    """Draw figure text in ``language`` (``"en"`` where no CJK font is installed); ``None``
    follows :func:`get_language`."""
    if language is not None and language not in LANGUAGES:
        raise CtxlabError(
            f"set_figure_language: language must be 'en', 'zh' or None, got {shown(language)}"
        )
    _figure[0] = language


def figure_language() -> Language:
    """The language figure text is drawn in."""
    return _figure[0] or _current[0]


def tr(en: str, zh: str) -> str:
    """``en`` or ``zh``, whichever the current language is (tables, widgets, verdicts)."""
    return zh if _current[0] == "zh" else en


def tr_figure(en: str, zh: str) -> str:
    """``en`` or ``zh`` for text drawn in a figure (see :func:`figure_language`)."""
    return zh if figure_language() == "zh" else en


_TEXTS: dict[str, dict[str, list[str]]] = json.loads(
    Path(__file__).with_name("data").joinpath("texts.json").read_text("utf-8")
)


class Texts:
    """One module's section of ``data/texts.json``: each key (the English text's first words)
    holds an English and a Chinese ``str.format`` template."""

    def __init__(self, section: str) -> None:
        self._texts = _TEXTS[section]

    def __call__(self, key: str, /, **values: object) -> str:
        """The text ``key`` in the current language (as :func:`tr`), filled with ``values``."""
        return tr(*self._texts[key]).format(**values)

    def figure(self, key: str, /, **values: object) -> str:
        """The text ``key`` in the figure language (as :func:`tr_figure`)."""
        return tr_figure(*self._texts[key]).format(**values)
