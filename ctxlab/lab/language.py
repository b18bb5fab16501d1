"""The language the teaching layer speaks: English (the default) or Chinese.

The course is Chinese-first; ctxlab's notebooks come in an English and a Chinese edition.
Text that a student reads in a report (for now the rows of
:func:`ctxlab.lab.check_implementation`) exists in both languages, and rendering picks the
one set here::

    from ctxlab.lab import set_language
    set_language("zh")

This is process-wide state on purpose: a notebook sets it once, in its first cell.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from ctxlab.errors import CtxlabError, shown

__all__ = ["LANGUAGES", "Language", "get_language", "set_language"]

Language: TypeAlias = Literal["en", "zh"]

#: The languages every student-facing text exists in.
LANGUAGES: tuple[Language, ...] = ("en", "zh")

_current: list[Language] = ["en"]


def set_language(language: Language) -> None:
    """Render the teaching layer's reports in ``"en"`` (English) or ``"zh"`` (Chinese)."""
    if language == "en" or language == "zh":
        _current[0] = language
        return
    raise CtxlabError(f"set_language: language must be 'en' or 'zh', got {shown(language)}")


def get_language() -> Language:
    """The language reports are rendered in (``"en"`` unless :func:`set_language` changed it)."""
    return _current[0]
