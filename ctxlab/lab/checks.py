"""Self-check verdicts for the lab exercises.

A checker never shows a student a traceback: it returns a :class:`Verdict` (✔ or ✘, a title,
a detail, a hint). :func:`exercise` wraps a checker so that the placeholder ``...``, a value
of the wrong kind or a :class:`~ctxlab.errors.CtxlabError` also becomes a verdict; the answer
readers (:func:`id_list`, :func:`as_number`, :func:`as_mapping`) raise the ``TypeError`` it
shows. Texts are picked when rendered, so a verdict made before ``set_language("zh")`` shows
in Chinese after it. No pandas or matplotlib: ``import ctxlab.lab`` stays cheap.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from ctxlab.errors import CtxlabError
from ctxlab.lab.errors_zh import error_text
from ctxlab.lab.language import Texts, tr

say = Texts("checks")

__all__ = ["Verdict", "as_mapping", "as_number", "exercise", "friendly", "id_list", "not_answered"]


@dataclass(frozen=True, repr=False)
class Verdict:
    """The outcome of one self-check. ``str()`` and ``repr()`` give the same plain text."""

    ok: bool
    title: str
    detail: str = ""
    hint: str = ""

    @property
    def mark(self) -> str:
        return tr("✔ Correct", "✔ 正确") if self.ok else tr("✘ Not yet", "✘ 还不对")

    def __str__(self) -> str:
        lines = [f"{self.mark} — {self.title}"]
        if self.detail:
            lines.append(self.detail)
        if self.hint:
            lines.append(tr("Hint: ", "提示：") + self.hint)
        return "\n".join(lines)

    __repr__ = __str__

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
            label = tr("<em>Hint:</em> ", "<em>提示：</em>")
            parts.append(f"<br>{label}{html.escape(self.hint)}")
        parts.append("</div>")
        return "".join(parts)


def not_answered(what: str) -> Verdict:
    """The verdict for an exercise cell that still holds its placeholder."""
    return Verdict(
        ok=False,
        title=tr(f"not answered yet: {what}", f"还没有作答：{what}"),
        detail=tr("The cell still holds the placeholder `...`.", "这个单元格里还是占位符 `...`。"),
        hint=say("replace_with_your_answer_run"),
    )


def id_list(answer: object, what: str) -> list[str]:
    """``answer`` as a list of entry ids, in the student's order (a list, tuple, set...)."""
    if isinstance(answer, str) or not isinstance(answer, Iterable):
        kind = type(answer).__name__
        raise TypeError(say("should_be_a_list_of", subject=_subject(what), kind=kind))
    ids = list(answer)
    for item in ids:
        if not isinstance(item, str):
            raise TypeError(say("is_not_an_entry_id", what=what, item=item))
    return ids


def _subject(what: str) -> str:
    """``what`` before the verb: a space after a Latin word, none after a Chinese one."""
    return what + " " if what[-1:].isascii() else what


def as_number(answer: object, what: str) -> int | float:
    """``answer`` as a number (``True``/``False`` are not numbers here)."""
    if isinstance(answer, bool) or not isinstance(answer, (int, float)):
        raise TypeError(say("should_be_a_number_got", subject=_subject(what), answer=answer))
    return answer


def as_mapping(answer: object, what: str) -> Mapping[str, Any]:
    """``answer`` as a dict (a wire record, a summary)."""
    if not isinstance(answer, Mapping):
        kind = type(answer).__name__
        raise TypeError(
            tr(f"{what} should be a dict, got {kind}", f"{what} 应当是一个 dict，实际是 {kind}")
        )
    return answer


F = TypeVar("F", bound=Callable[..., Verdict])


def _what(check: Callable[..., Any]) -> str:
    """The exercise a checker judges: its name in words (``check_my_summary`` → ``my
    summary``); the Chinese edition shows the checker's name itself, as code."""
    name = getattr(check, "__name__", None)
    if not isinstance(name, str):
        return tr("this exercise", "这道练习")
    return tr(name.removeprefix("check_").replace("_", " "), name)


def friendly(check: F) -> F:
    """Wrap a checker so that it always returns a :class:`Verdict`, never raises: a
    placeholder (``...``, ``None``) is "not answered", an error a verdict in plain words."""
    return _friendly(check, lambda: _what(check))


def exercise(en: str, zh: str) -> Callable[[F], F]:
    """:func:`friendly`, naming the exercise in ``en`` and ``zh`` when it is not answered."""
    return lambda check: _friendly(check, lambda: tr(en, zh))


def _friendly(check: F, what: Callable[[], str]) -> F:
    @functools.wraps(check)
    def wrapper(*args: Any, **kwargs: Any) -> Verdict:
        if any(value is ... or value is None for value in (*args, *kwargs.values())):
            return not_answered(what())
        try:
            return check(*args, **kwargs)
        except Exception as error:  # a checker must never show a traceback
            if isinstance(error, CtxlabError):
                title = tr("ctxlab rejected the answer", "ctxlab 拒绝了这个答案")
                detail, hint = error_text(error), say("read_the_message_it_names")
            elif isinstance(error, (TypeError, AttributeError)):
                title, detail = say("the_answer_is_not_the"), str(error)
                hint = say("check_the_exercise_text_for")
            else:
                title = tr("the answer could not be checked", "无法检查这个答案")
                detail, hint = str(error), say("re_run_the_cells_above")
            return Verdict(False, title, f"{type(error).__name__}: {detail}", hint)

    return wrapper  # type: ignore[return-value]
