"""Self-check verdicts for the lab exercises.

A checker never shows a student a traceback. It returns a :class:`Verdict`: ✔ or ✘, a short
title saying what was right or wrong, an optional detail and a hint. :func:`friendly` wraps a
checker so that anything going wrong while checking -- the placeholder ``...`` still in the
cell, a value of the wrong kind, a :class:`~ctxlab.errors.CtxlabError` from the core -- also
becomes a plain-words verdict.

The answer readers :func:`id_list`, :func:`as_number` and :func:`as_mapping` are shared by
every lab's checkers: each returns the answer in the expected shape or raises a
``TypeError`` naming what is wrong, which :func:`friendly` shows as a verdict.

This module needs neither pandas nor matplotlib, so ``import ctxlab.lab`` (which imports
it) stays cheap.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from ctxlab.errors import CtxlabError

__all__ = [
    "Verdict",
    "as_mapping",
    "as_number",
    "friendly",
    "id_list",
    "is_placeholder",
    "not_answered",
]


@dataclass(frozen=True, repr=False)
class Verdict:
    """The outcome of one self-check. ``str()`` and ``repr()`` give the same plain text."""

    ok: bool
    title: str
    detail: str = ""
    hint: str = ""

    @property
    def mark(self) -> str:
        return "✔ Correct" if self.ok else "✘ Not yet"

    def __str__(self) -> str:
        lines = [f"{self.mark} — {self.title}"]
        if self.detail:
            lines.append(self.detail)
        if self.hint:
            lines.append(f"Hint: {self.hint}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def __bool__(self) -> bool:
        return self.ok

    def _repr_html_(self) -> str:
        colour = "#009E73" if self.ok else "#D55E00"
        parts = [
            f'<div class="ctxlab-verdict" style="border-left: 6px solid {colour}; '
            f'padding: 0.3em 0.8em; font-size: 1.1em">',
            f"<strong>{html.escape(self.mark)}</strong> — {html.escape(self.title)}",
        ]
        if self.detail:
            parts.append(
                f'<br><span style="white-space: pre-wrap">{html.escape(self.detail)}</span>'
            )
        if self.hint:
            parts.append(f"<br><em>Hint:</em> {html.escape(self.hint)}")
        parts.append("</div>")
        return "".join(parts)


def is_placeholder(value: object) -> bool:
    """True for the values an exercise cell starts with: ``...`` and ``None``."""
    return value is ... or value is None


def not_answered(what: str) -> Verdict:
    """The verdict for an exercise cell that still holds its placeholder."""
    return Verdict(
        ok=False,
        title=f"not answered yet: {what}",
        detail="The cell still holds the placeholder `...`.",
        hint="Replace `...` with your answer, run the cell again, then run this check.",
    )


# -- reading an answer: each raises a TypeError that friendly() turns into a verdict ---------------


def id_list(answer: object, what: str) -> list[str]:
    """``answer`` as a list of entry ids, in the student's order (a list, tuple, set...)."""
    if isinstance(answer, str) or not isinstance(answer, Iterable):
        raise TypeError(f"{what} should be a list of entry ids, got {type(answer).__name__}")
    ids = list(answer)
    for item in ids:
        if not isinstance(item, str):
            raise TypeError(f"{what}: {item!r} is not an entry id (a string like 'u2')")
    return ids


def as_number(answer: object, what: str) -> int | float:
    """``answer`` as a number (``True``/``False`` are not numbers here)."""
    if isinstance(answer, bool) or not isinstance(answer, (int, float)):
        raise TypeError(f"{what} should be a number, got {answer!r}")
    return answer


def as_mapping(answer: object, what: str) -> Mapping[str, Any]:
    """``answer`` as a dict (a wire record, a summary)."""
    if not isinstance(answer, Mapping):
        raise TypeError(f"{what} should be a dict, got {type(answer).__name__}")
    return answer


F = TypeVar("F", bound=Callable[..., Verdict])


def _what(check: Callable[..., Any]) -> str:
    name = getattr(check, "__name__", "this exercise")
    return name.removeprefix("check_").replace("_", " ")


def friendly(check: F) -> F:
    """Wrap a checker so that it always returns a :class:`Verdict`, never raises.

    A placeholder argument (``...`` or ``None``) gives :func:`not_answered`; a
    :class:`CtxlabError`, a ``TypeError``/``ValueError``/``KeyError``/... raised while
    checking gives a failing verdict that names the problem in plain words.
    """

    @functools.wraps(check)
    def wrapper(*args: Any, **kwargs: Any) -> Verdict:
        if any(is_placeholder(value) for value in (*args, *kwargs.values())):
            return not_answered(_what(check))
        try:
            return check(*args, **kwargs)
        except CtxlabError as error:
            return Verdict(
                ok=False,
                title="ctxlab rejected the answer",
                detail=f"{type(error).__name__}: {error}",
                hint="Read the message: it names the entry id, field or option at fault.",
            )
        except (TypeError, AttributeError) as error:
            return Verdict(
                ok=False,
                title="the answer is not the kind of value this exercise expects",
                detail=f"{type(error).__name__}: {error}",
                hint="Check the exercise text for the expected type (a list of ids, a number...).",
            )
        except Exception as error:  # a checker must never show a traceback
            return Verdict(
                ok=False,
                title="the answer could not be checked",
                detail=f"{type(error).__name__}: {error}",
                hint="Re-run the cells above this one, then try again.",
            )

    return wrapper  # type: ignore[return-value]
