"""Bilingual text and plain descriptions: what a check says about a student's function.

Every sentence a student reads exists in English and Chinese (:class:`Text`, shown in the
language of :mod:`ctxlab.lab.language`). Values and exceptions are described
deterministically (no memory addresses, bounded), so a stored notebook output never changes.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import ClassVar

from ctxlab.lab.errors_zh import message_zh
from ctxlab.lab.language import get_language


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


#: What joins a case's label and what happened in it (the language's own colon).
COLON = Text(": ", "：")


def same(text: str) -> Text:
    """A text that reads the same in both languages (ids, numbers, code)."""
    return Text(text, text)


_ADDRESS = re.compile(r" at 0x[0-9A-Fa-f]+")


def clean(text: str) -> str:
    """Deterministic text: no memory addresses, bounded length."""
    text = _ADDRESS.sub("", text)
    return text if len(text) <= 600 else text[:597] + "..."


def bounded_output(output: str, cut: int = 0) -> tuple[str, int]:
    """What a function printed, cut to 2,000 characters and 40 lines (shown per row), and
    the count of characters cut (``cut`` before, plus these)."""
    text = output.replace("\r\n", "\n")
    kept = "\n".join(text[:2000].split("\n")[:40]).rstrip("\n")
    rest = text[len(kept) :]
    dropped = len(rest) if rest.strip("\n") else 0  # trailing newlines are not "cut"
    return kept, max(cut, 0) + dropped


def kind(value: object) -> str:
    """A short, deterministic description of a value's type: ``type(value).__name__``, even
    when a student's metaclass makes that fail (never raises)."""
    if value is None:
        return "None"
    return _guarded(lambda: type(value).__name__, "object")


class StopStudent(BaseException):
    """The runner's stop, raised into a check that overran its time limit: no description
    of a student's value swallows it. A caught stop, let go, calls ``released`` with the
    frame it was let go in (the trace hook arms itself again: :mod:`.runner`)."""

    released: ClassVar[Callable[[FrameType | None], None] | None] = None

    def __del__(self) -> None:
        if StopStudent.released is not None:
            StopStudent.released(sys._getframe(1))


def _guarded(get: Callable[[], object], fallback: str) -> str:
    """``get()`` as a plain str, or ``fallback`` when it raises anything (even ``SystemExit``)
    or is not a str; only the runner's stop goes through."""
    try:
        value = get()
    except StopStudent:
        raise
    except BaseException:
        return fallback
    if not isinstance(value, str):
        return fallback
    return str.__str__(value)  # a str subclass: its own methods are the student's


def exception_text(error: BaseException) -> str:
    """``TypeName: message`` of an exception a student's code raised (never raises itself)."""
    name = kind(error)
    message = message_of(error)
    return clean(f"{name}: {message}" if message else name)


def message_of(error: BaseException) -> str:
    """``str(error)`` as a plain str, or a placeholder when the student's ``__str__`` fails."""
    return _guarded(lambda: str(error), "<the message could not be shown>")


def raised(error: BaseException) -> Text:
    """How a student's function failed by raising (the stub's NotImplementedError by name)."""
    if issubclass(type(error), NotImplementedError):
        return Text(
            "not written yet: the stub still raises NotImplementedError",
            "还没有写：占位函数仍然抛出 NotImplementedError",
        )
    text, message = exception_text(error), message_of(error)
    zh = clean(f"{kind(error)}: {message_zh(message[:1000])}") if message else text
    return Text(f"raised {text}", f"抛出了 {zh}")
