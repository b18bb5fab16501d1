"""ctxlab's error messages in Chinese, for the Chinese edition (issue 18). The core stays
English: every :class:`~ctxlab.errors.CtxlabError` says ``"<where>: <problem>"``;
:func:`error_text` renders place and problem in Chinese from ``data/errors_zh.json``
(pattern of the core's text → Chinese template; the first full match wins). A problem the
table does not know is shown as the core wrote it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ctxlab.errors import CtxlabError
from ctxlab.lab.language import get_language

if TYPE_CHECKING:
    from ctxlab.migration import MigrationChange

__all__ = ["change_text", "error_text", "place_zh", "problem_zh"]

_DATA = json.loads(Path(__file__).with_name("data").joinpath("errors_zh.json").read_text("utf-8"))
#: ``{F}`` and ``{ID}`` in a pattern stand for a field path and an entry id.
_NAMES = {"{F}": r"(?P<f>[\w.\[\]-]+)", "{ID}": r"(?P<id>[\w.-]+)"}

_Table = list[tuple[re.Pattern[str], str]]


def _table(key: str) -> _Table:
    rows = []
    for pattern, template in _DATA[key]:
        for name, group in _NAMES.items():
            pattern = pattern.replace(name, group)
        rows.append((re.compile(pattern), template))
    return rows


_PROBLEMS, _PLACES, _DETAILS = _table("problems"), _table("places"), _table("details")


def _kind_zh(got: str) -> str:
    """The core's description of a wrong value (``_kind`` in ctxlab.entries) in Chinese."""
    if got in _DATA["kinds"]:
        return str(_DATA["kinds"][got])
    if got.startswith("the number "):
        return f"数字 {got.removeprefix('the number ')}"
    return f" {got}"


def _render(text: str, table: _Table) -> str | None:
    """The template of the first row whose pattern matches all of ``text``, filled in. The
    groups ``kind`` (a wrong value), ``what`` (what the estimator priced) and ``inner`` (a
    nested message) are rendered in Chinese themselves."""
    for pattern, template in table:
        match = pattern.fullmatch(text)
        if match:
            values = {k: v or "" for k, v in match.groupdict().items()}
            if "kind" in values:
                values["kind"] = _kind_zh(values["kind"])
            if "what" in values:
                values["what"] = _DATA["subjects"].get(values["what"], f" {values['what']} ")
            if "inner" in values:
                values["inner"] = message_zh(values["inner"])
            return template.format(**values)
    return None


def problem_zh(problem: str) -> str | None:
    """The Chinese rendering of one of the core's problem texts, or ``None`` if unknown."""
    return _render(problem, _PROBLEMS)


def place_zh(where: str) -> str:
    """The Chinese rendering of an error's place (``session entry u2`` → ``entry u2``)."""
    rendered = _render(where, _PLACES)
    return where if rendered is None else rendered


def message_zh(message: str) -> str:
    """A whole ``"<where>: <problem>"`` message in Chinese (unknown parts stay English)."""
    rendered = problem_zh(message)
    if rendered is not None:
        return rendered
    if ": " in message:
        where, problem = message.split(": ", 1)
        rendered = problem_zh(problem)
        if rendered is not None:
            return f"{place_zh(where)}：{rendered}"
    return message


def error_text(error: CtxlabError) -> str:
    """``error`` as a table shows it: the core's English message, or in the Chinese edition
    its place and problem in Chinese (the English message when the problem is unknown)."""
    if get_language() != "zh":
        return str(error)
    rendered = problem_zh(error.problem)
    if rendered is None:
        return str(error)
    return f"{place_zh(error.where)}：{rendered}" if error.where else rendered


def change_text(change: MigrationChange) -> str:
    """One migration change as a table shows it, in the notebook's language."""
    if get_language() != "zh":
        return str(change)
    detail = _render(change.detail, _DETAILS)
    action = _DATA["actions"].get(change.action)
    if detail is None or action is None:
        return str(change)
    return f"{change.field}：{action}（{detail}）"
