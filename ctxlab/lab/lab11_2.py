"""Lab 11.2 "两个 tool result 仍属于 u3 开始的同一组": the teaching layer of notebook
``11.2-interaction-groups.ipynb``.

Every group, pairing and error shown is the core's (``group_interactions``), never
re-computed: :func:`cut_points` and :func:`group_label` (reused by the 11.3 ledger),
:func:`timeline_figure` (each possible cut marked legal or not) and the self-checks of
exercises 11.2-A to 11.2-C.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from ctxlab import fixtures
from ctxlab.entries import SessionEntry
from ctxlab.errors import InteractionError
from ctxlab.interactions import InteractionGroup, group_interactions, message_entries
from ctxlab.lab.checks import Verdict, exercise, id_list
from ctxlab.lab.display import (
    FIGSIZE,
    PALETTE,
    default_path,
    group_colour,
    group_numbers,
    new_figure,
    styled,
)
from ctxlab.lab.errors_zh import error_text
from ctxlab.lab.language import Texts, figure_language, tr, tr_figure

say = Texts("lab11_2")

__all__ = [
    "CutPoint",
    "check_error_entry",
    "check_group_of_u3",
    "check_legal_cuts",
    "cut_points",
    "group_label",
    "timeline_figure",
]


def group_label(number: int, group: InteractionGroup, *, figure: bool = False) -> str:
    """``group 3: u3…a3`` (Chinese: ``第 3 组：u3…a3``); ``figure``: in the figure language."""
    ids = group.entry_ids
    span = ids[0] if len(ids) == 1 else f"{ids[0]}…{ids[-1]}"
    return (tr_figure if figure else tr)(f"group {number}: {span}", f"第 {number} 组：{span}")


@dataclass(frozen=True)
class CutPoint:
    """A place between two neighbouring message entries; legal only between two groups."""

    before: str
    after: str
    legal: bool

    @property
    def label(self) -> str:
        return f"{self.before}|{self.after}"


def cut_points(path: Sequence[SessionEntry] | None = None) -> tuple[CutPoint, ...]:
    """Every place between two neighbouring grouped entries; legal exactly between groups."""
    groups = group_interactions(message_entries(default_path(path)))
    flat = [(n, entry_id) for n, g in enumerate(groups) for entry_id in g.entry_ids]
    pairs = itertools.pairwise(flat)
    return tuple(CutPoint(left, right, n1 != n2) for (n1, left), (n2, right) in pairs)


_NO_GROUP = "#DDDDDD"


def _symbol_fallback() -> dict[str, Any]:
    """Text properties for ✔ and ✘ in a Chinese figure: the CJK font lacks them, and
    matplotlib falls back glyph by glyph only across a text's families."""
    if figure_language() != "zh":
        return {}
    return {"fontfamily": list(matplotlib.rcParams["font.sans-serif"])}


@styled
def timeline_figure(path: Sequence[SessionEntry] | None = None) -> Figure:
    """The path's message entries in order, coloured by group, with every cut point marked."""
    entries = message_entries(default_path(path))
    groups = group_interactions(entries)
    number = group_numbers(entries)
    x_of = {entry.id: float(i) for i, entry in enumerate(entries)}

    fig, ax = new_figure(FIGSIZE)
    symbols = _symbol_fallback()
    width, height = 0.86, 0.8
    for entry in entries:
        x = x_of[entry.id]
        n = number.get(entry.id)
        ax.add_patch(
            FancyBboxPatch(
                (x - width / 2, 0),
                width,
                height,
                boxstyle="round,pad=0.02,rounding_size=0.08",
                facecolor=group_colour(n) if n else _NO_GROUP,
                edgecolor=PALETTE["black"],
                linewidth=1.2,
                linestyle="-" if n else ":",
            )
        )
        ax.text(x, height / 2, entry.id, ha="center", va="center", fontsize=14)
        ax.text(x, -0.22, entry.message.role.replace("toolResult", "result"), ha="center",
                va="center", fontsize=14, color="#444444", rotation=0)  # fmt: skip

    for n, group in enumerate(groups, 1):
        first, last = x_of[group.entry_ids[0]], x_of[group.entry_ids[-1]]
        y = -0.55
        ax.plot([first - 0.4, last + 0.4], [y, y], color=group_colour(n), linewidth=5,
                solid_capstyle="butt")  # fmt: skip
        label = tr_figure(f"group {n}", f"第 {n} 组")
        ax.text((first + last) / 2, y - 0.25, label, ha="center", va="center",
                fontsize=15, fontweight="bold")  # fmt: skip

    for cut in cut_points(entries):
        x = (x_of[cut.before] + x_of[cut.after]) / 2
        if cut.legal:
            ax.plot([x, x], [-0.05, height + 0.3], color=PALETTE["bluish_green"], linewidth=3)
            ax.text(x, height + 0.45, "✔", ha="center", va="center", fontsize=20,
                    color=PALETTE["bluish_green"], fontweight="bold", **symbols)  # fmt: skip
        else:
            ax.plot([x, x], [height + 0.05, height + 0.3], color=PALETTE["vermillion"],
                    linewidth=2, linestyle=":")  # fmt: skip
            ax.text(x, height + 0.45, "✘", ha="center", va="center", fontsize=16,
                    color=PALETTE["vermillion"], **symbols)  # fmt: skip

    ax.set_xlim(-0.6, len(entries) - 0.4)
    ax.set_ylim(-1.0, height + 0.75)
    ax.set_axis_off()
    title = say.figure("where_may_the_budget_cut")
    ax.set_title(title, loc="left", **symbols)
    return fig


@exercise("group of u3", "u3 所在的组")
def check_group_of_u3(answer: object) -> Verdict:
    """Exercise 11.2-A: the ids of the group ``u3`` starts, in path order."""
    ids = id_list(answer, tr("your group", "你写的组"))
    groups = group_interactions(fixtures.opening_path())
    expected = list(next(g for g in groups if g.head.id == "u3").entry_ids)
    if ids == expected:
        return Verdict(
            True,
            tr(f"the group is {', '.join(expected)}", f"这一组是 {', '.join(expected)}"),
            tr("Path order is kept.", "组内保持原路径顺序。"),
        )
    missing = [i for i in expected if i not in ids]
    extra = [i for i in ids if i not in expected]
    if missing or extra:
        parts = []
        if missing:
            parts.append(tr(f"missing: {', '.join(missing)}", f"缺少：{', '.join(missing)}"))
        if extra:
            parts.append(
                tr(f"not in this group: {', '.join(extra)}", f"不属于这一组：{', '.join(extra)}")
            )
        return Verdict(
            False,
            tr("the group has other members", "这一组的成员不是这些"),
            tr("; ", "；").join(parts),
            say("a_group_runs_from_its"),
        )
    return Verdict(
        False,
        tr("right members, wrong order", "成员对了，顺序不对"),
        hint=say("group_interactions_keeps_the_path"),
    )


def _cut_label(item: object) -> str:
    if isinstance(item, str):
        return item.replace(" ", "")
    if isinstance(item, Sequence) and len(item) == 2 and all(isinstance(x, str) for x in item):
        return f"{item[0]}|{item[1]}"
    raise TypeError(say("is_not_a_cut_write", item=item))


@exercise("legal cuts", "合法的切点")
def check_legal_cuts(answer: object) -> Verdict:
    """Exercise 11.2-B: every place where the budget may cut the opening path."""
    if isinstance(answer, str) or not isinstance(answer, Iterable):
        raise TypeError(say("the_cuts_should_be_a"))
    chosen = {_cut_label(item) for item in answer}
    cuts = {cut.label: cut for cut in cut_points(fixtures.opening_path())}
    unknown = sorted(label for label in chosen if label not in cuts)
    if "sys|u1" in unknown:  # neighbours on the path, but sys belongs to no group
        return Verdict(False, say("sys_is_in_no_group"), hint=say("only_a_cut_between_two"))
    if unknown:
        return Verdict(
            False,
            say("not_neighbouring_entries", unknown=", ".join(unknown)),
            hint=say("a_cut_lies_between_two"),
        )
    illegal = [label for label in cuts if label in chosen and not cuts[label].legal]
    legal = [label for label in cuts if cuts[label].legal]
    if illegal:
        return Verdict(
            False,
            say("these_cuts_fall_inside_a", illegal=", ".join(illegal)),
            say("cutting_there_would_keep_part"),
            say("only_a_cut_between_two"),
        )
    missed = [label for label in legal if label not in chosen]
    if missed:
        return Verdict(
            False,
            tr(f"{len(missed)} legal cut(s) missing", f"还少了 {len(missed)} 个合法切点"),
            hint=say("look_at_the_timeline_where"),
        )
    return Verdict(
        True, tr(f"the legal cuts are {', '.join(legal)}", f"合法切点是 {', '.join(legal)}")
    )


def _named_entries(message: str, path: Sequence[SessionEntry]) -> list[str]:
    """The ids of ``path``'s entries that the error ``message`` names, in path order."""
    words = set(re.findall(r"[\w.-]+", message))
    return [entry.id for entry in path if entry.id in words]


@exercise("error entry", "错误信息指出的 entry")
def check_error_entry(answer: object) -> Verdict:
    """Exercise 11.2-C: the entry carrying the ``toolCallId`` the grouping cannot pair in the
    ``unknown-1`` corruption (r-test). Lenient: u3, the interaction the error also names, is
    accepted too, and the title says which entry carries the call id."""
    if not isinstance(answer, str):
        raise TypeError(say("the_answer_should_be_an", answer=answer))
    path = fixtures.unknown_call_path()
    try:
        group_interactions(message_entries(path))
    except InteractionError as error:
        carrier, call_id = error.entry_id, error.call_id  # r-test, unknown-1
        if answer == carrier:
            title = tr(
                f"{answer} carries toolCallId {call_id}, which no call of its group declares",
                f"{answer} 带着 toolCallId {call_id}，它所在的组里没有声明这个 call",
            )
            return Verdict(True, title, error_text(error))
        if answer in _named_entries(str(error), path):
            title = tr(
                f"the error names {answer} too; the entry carrying {call_id} is {carrier}",
                f"错误信息也指出了 {answer}；带着 {call_id} 的 entry 是 {carrier}",
            )
            return Verdict(True, title, error_text(error))
        a_call_id = answer in re.findall(r"[\w.-]+", str(error))  # unknown-1: not an entry
        title = (
            tr(
                f"{answer} is a call id, not an entry's id",
                f"{answer} 是 call id，不是 entry 的 id",
            )
            if a_call_id
            else tr(
                f"{answer!r} does not carry toolCallId {call_id}",
                f"{answer!r} 没有带着 toolCallId {call_id}",
            )
        )
        return Verdict(False, title, hint=say("which_entry_carries_toolcallid_unknown"))
    return Verdict(False, say("the_corrupted_path_was_accepted"))
