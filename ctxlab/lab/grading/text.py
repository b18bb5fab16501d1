"""Bilingual text and plain descriptions: what a check says about a student's function.

Every sentence a student reads in a lab report exists in English and Chinese (the course is
Chinese-first, see :mod:`ctxlab.lab.language`); :class:`Text` holds both and picks one when
shown. The helpers below describe values and exceptions deterministically: no memory
addresses, bounded length, so a stored notebook output never changes from run to run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ctxlab.lab.language import get_language

__all__ = ["Text", "clean", "exception_text", "kind", "raised", "same"]


@dataclass(frozen=True)
class Text:
    """One text in English and Chinese; ``+`` joins two texts language by language."""

    en: str
    zh: str

    def __add__(self, other: Text) -> Text:
        return Text(self.en + other.en, self.zh + other.zh)

    def pick(self) -> str:
        """The text in the language of :func:`ctxlab.lab.set_language`."""
        return self.zh if get_language() == "zh" else self.en


def same(text: str) -> Text:
    """A text that reads the same in both languages (ids, numbers, code)."""
    return Text(text, text)


_ADDRESS = re.compile(r" at 0x[0-9A-Fa-f]+")


def clean(text: str) -> str:
    """Deterministic text: no memory addresses, bounded length."""
    text = _ADDRESS.sub("", text)
    return text if len(text) <= 600 else text[:597] + "..."


def kind(value: object) -> str:
    """A short, deterministic description of a returned value's type."""
    if value is None:
        return "None"
    return type(value).__name__


def exception_text(error: BaseException) -> str:
    """``TypeName: message`` of an exception a student's code raised (never raises itself)."""
    try:
        message = str(error)
    except Exception:
        message = "<the message could not be shown>"
    return clean(f"{type(error).__name__}: {message}" if message else type(error).__name__)


def raised(error: BaseException) -> Text:
    """How a student's function failed by raising (the stub's NotImplementedError by name)."""
    if isinstance(error, NotImplementedError):
        return Text(
            "not written yet: the stub still raises NotImplementedError",
            "还没有写：stub 仍然抛出 NotImplementedError",
        )
    text = exception_text(error)
    return Text(f"raised {text}", f"抛出了 {text}")
