"""Lab 11.5 "恢复时把最新摘要接在保留后缀前面" and "system 状态跨过 compaction 边界": the
teaching layer of notebook ``11.5-resume-from-summary.ipynb``.

The lesson is computed in the notebook's cells with the core; this module draws
(:func:`resume_diagram`, :func:`resume_comparison_figure` and its widget), compares the
student's resuming ``build_context`` with the reference (:func:`compare_builds`) and holds
the self-checks.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch, Patch, Rectangle

from ctxlab import fixtures
from ctxlab.context import resume_candidates
from ctxlab.entries import CompactionSessionEntry, SessionEntry
from ctxlab.interactions import message_entries
from ctxlab.lab.checks import Verdict, exercise, id_list
from ctxlab.lab.display import (
    DROPPED,
    KEPT,
    MAX_FIGURE_HEIGHT,
    PALETTE,
    entry_kind,
    figure_html,
    figure_widget,
    group_colour,
    group_numbers,
    new_figure,
    relinked,
    slider,
    widget_box,
)
from ctxlab.lab.errors_zh import error_text
from ctxlab.lab.lab11_3 import compare_builds as compare_budget
from ctxlab.lab.language import Texts, tr, tr_figure
from ctxlab.lab.ledger import Budget, budget_ledger
from ctxlab.messages import current_system_message, text_of

say = Texts("lab11_5")

__all__ = [
    "COMPARISON_SIZE",
    "DIAGRAM_SIZE",
    "build_resume_widget",
    "check_newest_summary",
    "check_replayed_prompt",
    "check_resume_kept",
    "compare_builds",
    "error_text",
    "latest_compaction",
    "render_resume_figure",
    "resume_comparison_figure",
    "resume_diagram",
    "without_compaction",
]

DIAGRAM_SIZE: tuple[float, float] = (10.0, MAX_FIGURE_HEIGHT)
COMPARISON_SIZE: tuple[float, float] = (10.0, 3.6)

_SYSTEM_FILL = "#DDDDDD"
_DROPPED: dict[str, Any] = dict(DROPPED)
_SUMMARY_FILL = PALETTE["yellow"]
#: The comparison figure's bars (and legend patches) for the fixed costs and the summary.
_FIXED_BAR: dict[str, Any] = {"facecolor": _SYSTEM_FILL, "edgecolor": PALETTE["grey"]}
_SUMMARY_BAR: dict[str, Any] = {"facecolor": _SUMMARY_FILL, "edgecolor": "black"}


def latest_compaction(path: Sequence[SessionEntry]) -> CompactionSessionEntry | None:
    """The newest compaction on ``path`` (the only one a resume reads), or None."""
    return resume_candidates(path)[0]


# -- the diagram -----------------------------------------------------------------------------------


def _status(path: Sequence[SessionEntry]) -> dict[str, tuple[str, str]]:
    """Each entry's role in a resume -- ``system``, ``newest``, ``older`` (compaction),
    ``metadata``, ``summarised`` or ``kept`` -- and its label in the figure's language. The
    kept suffix starts at the newest compaction's first kept entry (the core's rule)."""
    latest, candidates = resume_candidates(path)
    first = candidates[0].id if candidates else None
    start = next((i for i, entry in enumerate(path) if entry.id == first), 0)
    status: dict[str, tuple[str, str]] = {}
    for index, entry in enumerate(path):
        kind = entry_kind(entry)
        if kind == "system":
            state, label = "system", say.figure("system_replayed_from_the_whole")
        elif isinstance(entry, CompactionSessionEntry) and entry is latest:
            state, label = "newest", say.figure("newest_compaction_its_summary_is")
        elif isinstance(entry, CompactionSessionEntry):
            state, label = "older", say.figure("older_compaction_not_read_any")
        elif kind == "metadata":
            state, label = "metadata", tr_figure("metadata: never sent", "metadata：从不发送")
        elif latest is not None and index < start:
            state = "summarised"
            label = tr_figure(f"summarised by {latest.id}", f"已由 {latest.id} 摘要")
        else:
            state, label = "kept", tr_figure("original message: may be kept", "原消息：可被保留")
        status[entry.id] = (state, label)
    return status


#: The diagram titles the notebook passes, in English and Chinese: either is drawn in the
#: figure language (ctxlab.lab.fonts); any other title is drawn as given.
DIAGRAM_TITLES_ZH: dict[str, str] = {
    "compact-1 points back to u2": "compact-1 指回 u2",
    "compact-2 keeps from u3; compact-1 is no longer read": (
        "compact-2 从 u3 开始保留；不再读取 compact-1"
    ),
}


def resume_diagram(path: Sequence[SessionEntry], *, title: str = "") -> Figure:
    """The path top to bottom; each compaction's arrow points back to its first kept entry
    (the newest solid, older ones dashed); summarised entries hatched."""
    fig, ax = new_figure(DIAGRAM_SIZE)
    status = _status(path)
    groups = group_numbers(path)
    latest = latest_compaction(path)
    n = len(path)
    row = {entry.id: -index for index, entry in enumerate(path)}
    box_x, box_w, box_h = 2.2, 1.9, 0.72
    for entry in path:
        y = row[entry.id]
        state, label = status[entry.id]
        style: dict[str, Any]
        if state == "system":
            style = {"facecolor": _SYSTEM_FILL, "edgecolor": PALETTE["grey"], "linewidth": 1.2}
        elif isinstance(entry, CompactionSessionEntry):
            newest = entry is latest
            style = {
                "facecolor": _SUMMARY_FILL if newest else "#FFFFFF",
                "edgecolor": PALETTE["black"] if newest else PALETTE["grey"],
                "linewidth": 2.0 if newest else 1.2,
                "linestyle": "-" if newest else "--",
            }
        elif state == "summarised":
            style = dict(DROPPED)
        else:
            style = {**KEPT, "facecolor": group_colour(groups.get(entry.id, 1))}
        ax.add_patch(
            FancyBboxPatch(
                (box_x, y - box_h / 2),
                box_w,
                box_h,
                boxstyle="round,pad=0,rounding_size=0.12",
                **style,
            )
        )
        ax.text(box_x + box_w / 2, y, entry.id, ha="center", va="center", fontsize=16,
                fontweight="bold", bbox=_LABEL_BOX)  # fmt: skip
        ax.text(box_x + box_w + 0.25, y, entry_kind(entry), ha="left", va="center", fontsize=14)
        ax.text(5.85, y, label, ha="left", va="center", fontsize=14,
                color=PALETTE["black"] if state in ("kept", "newest") else "#444444")  # fmt: skip
    compactions = [e for e in path if isinstance(e, CompactionSessionEntry)]
    for depth, compaction in enumerate(reversed(compactions)):
        newest = compaction is latest
        if compaction.first_kept_entry_id not in row:
            continue
        colour = PALETTE["vermillion"] if newest else PALETTE["grey"]
        line: dict[str, Any] = {
            "color": colour,
            "linewidth": 2.4 if newest else 1.6,
            "linestyle": "-" if newest else "--",
        }
        y_from, y_to = row[compaction.id], row[compaction.first_kept_entry_id]
        x_bar = box_x - 0.35 - 0.75 * depth
        ax.plot([box_x, x_bar, x_bar], [y_from, y_from, y_to], **line)
        ax.annotate(
            "",
            xy=(box_x, y_to),
            xytext=(x_bar, y_to),
            arrowprops={"arrowstyle": "-|>,head_width=0.35,head_length=0.6", "shrinkA": 0,
                        "shrinkB": 0, **line},
        )  # fmt: skip
        ax.text(
            x_bar - 0.08,
            (y_from + y_to) / 2,
            f"firstKeptEntryId = {compaction.first_kept_entry_id}",
            rotation=90,
            ha="right",
            va="center",
            fontsize=14,
            color=colour if newest else "#555555",
        )
    ax.set_xlim(0, 10.4)
    ax.set_ylim(-n + 0.4, 0.6)
    ax.axis("off")
    if title:
        english = {zh: en for en, zh in DIAGRAM_TITLES_ZH.items()}.get(title, title)
        drawn = tr_figure(english, DIAGRAM_TITLES_ZH.get(english, title))
        ax.set_title(drawn, loc="left", fontsize=17, fontweight="bold")
    return fig


def _json_text(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


# -- with and without the compaction ---------------------------------------------------------------


def without_compaction(path: Sequence[SessionEntry]) -> list[SessionEntry]:
    """The same conversation with every compaction entry left out (parents relinked)."""
    return relinked(e for e in path if not isinstance(e, CompactionSessionEntry))


#: A white, borderless box behind a label drawn on a hatched (or coloured) patch.
_LABEL_BOX: dict[str, Any] = {
    "boxstyle": "round,pad=0.15",
    "facecolor": "#FFFFFF",
    "edgecolor": "none",
    "alpha": 0.9,
}


def resume_comparison_figure(
    max_tokens: int,
    *,
    path: Sequence[SessionEntry] | None = None,
    reserved_output: int = 4,
    safety_margin: int = 2,
) -> Figure:
    """Two token bars at one budget: with the compaction (summary + kept suffix) and
    without it. Kept groups are solid, dropped groups hatched to the right of the total."""
    with_path = list(fixtures.resumed_path() if path is None else path)
    latest = latest_compaction(with_path)
    named = say.figure("comparison_with", id=latest.id) if latest else None
    variants = [
        (named or say.figure("comparison_with_any"), with_path),
        (say.figure("comparison_without"), without_compaction(with_path)),
    ]
    fig, ax = new_figure(COMPARISON_SIZE)
    right = float(max_tokens)
    for row, (_label, variant) in enumerate(variants):
        y = len(variants) - 1 - row
        view = budget_ledger(variant, Budget(max_tokens, reserved_output, safety_margin))
        t = view.result.tokens
        fixed = t.system + t.reserved_output + t.safety_margin
        segments: list[tuple[float, str, dict[str, Any]]] = [
            (fixed, say.figure("comparison_fixed_bar"), _FIXED_BAR)
        ]
        if variant is with_path and latest is not None:
            segments.append((view.summary_cost, say.figure("comparison_summary_bar"), _SUMMARY_BAR))
        # every kept group in the legend's "kept" green, in path order, named by its first entry
        segments += [
            (g.cost, g.interaction.head.id, dict(KEPT)) for g in view.groups[::-1] if g.kept
        ]
        # the dropped ones in the order the budget gave up on them (newest first)
        dropped = [(g.cost, g.interaction.head.id) for g in view.groups if not g.kept]
        x = 0.0
        for width, name, style in segments:
            ax.barh(y, width, left=x, height=0.55, **style)
            if width >= 3:
                ax.text(x + width / 2, y, name, ha="center", va="center", fontsize=14)
            x += width
        for width, name in dropped:
            ax.barh(y, width, left=x, height=0.55, **_DROPPED)
            ax.text(x + width / 2, y, name, ha="center", va="center", fontsize=14,
                    bbox=_LABEL_BOX)  # fmt: skip
            x += width
        right = max(right, x)
    ax.axvline(max_tokens, color=PALETTE["vermillion"], linewidth=2.5)
    limit = say.figure("comparison_max_tokens", n=max_tokens)
    ax.text(max_tokens, len(variants) - 0.45, limit, ha="left", va="bottom", fontsize=14,
            color=PALETTE["vermillion"])  # fmt: skip
    ax.set_yticks(range(len(variants)), [label for label, _ in reversed(variants)])
    ax.set_xlim(0, max(60.0, right + 1))
    ax.set_ylim(-0.6, len(variants) - 0.1)
    ax.set_xlabel(say.figure("comparison_xlabel"))
    ax.set_title(
        say.figure("comparison_title", n=max_tokens), loc="left", fontsize=17, fontweight="bold"
    )
    ax.legend(
        handles=[
            Patch(**_FIXED_BAR, label=say.figure("comparison_fixed")),
            Patch(**_SUMMARY_BAR, label=say.figure("comparison_summary")),
            Patch(**KEPT, label=say.figure("comparison_kept")),  # type: ignore[arg-type]
            Rectangle((0, 0), 1, 1, **_DROPPED, label=say.figure("comparison_dropped")),
        ],
        loc="upper center",
        bbox_to_anchor=(0.5, -0.28),
        ncol=4,
        frameon=False,
        fontsize=14,
        columnspacing=1.0,
        handlelength=1.6,
    )
    return fig


def render_resume_figure(max_tokens: int) -> str:
    """What the resume widget shows at ``max_tokens``: :func:`resume_comparison_figure` as
    an ``<img>`` (inline PNG) whose ``alt`` is the figure's alt text."""
    return figure_html(resume_comparison_figure(max_tokens))


def compare_builds(
    student: Callable[..., Any],
    max_tokens: int = 31,
    *,
    path: Sequence[SessionEntry] | None = None,
    reserved_output: int = 4,
    safety_margin: int = 2,
    seconds: float = 5.0,
) -> Any:
    """Lab 11.3's :func:`~ctxlab.lab.lab11_3.compare_builds` on the resumed path (default)."""
    return compare_budget(
        fixtures.resumed_path() if path is None else path,
        student,
        Budget(max_tokens, reserved_output, safety_margin),
        seconds=seconds,
    )


def build_resume_widget() -> Any:
    """A ``max_tokens`` slider (0-60, starts at 31) that redraws :func:`resume_comparison_figure`
    when it is released. Controls: ``box.slider``; output: ``box.figure``."""
    budget = slider("max_tokens", 31, 60)
    image = figure_widget()

    def update(_change: object = None) -> None:
        image.value = render_resume_figure(int(budget.value))

    budget.observe(update, names="value")
    update()
    box = widget_box([budget, image], controls={"max_tokens": budget}, outputs={"figure": image})
    box.slider = budget
    box.figure = image
    return box


# -- self-checks -----------------------------------------------------------------------------------


@exercise("resume kept", "恢复后保留的 entry")
def check_resume_kept(answer: object, max_tokens: int = 31) -> Verdict:
    """Exercise: ``kept_entry_ids`` after u4/a4 on the resumed path at ``max_tokens``."""
    ids = id_list(answer, tr("your kept ids", "你的答案"))
    ledger = budget_ledger(fixtures.resumed_path(), Budget(max_tokens))
    result = ledger.result
    expected = list(result.kept_entry_ids)
    if ids == expected:
        return Verdict(
            True,
            f"kept_entry_ids = {', '.join(expected)} ({result.reason})",
            say("the_summary_costs_first_the"),
        )
    if sorted(ids) == sorted(expected):
        return Verdict(False, say("the_right_ids_but_not"), say("kept_entry_ids_keep_the_path"))
    if "compact-1" in ids or any(i in ("sys",) for i in ids):
        return Verdict(
            False,
            say("kept_entry_ids_lists_original"),
            say("the_replayed_system_message_and"),
            tr("Leave out sys and compact-1.", "去掉 sys 和 compact-1。"),
        )
    if set(ids) & {"u1", "a1"}:
        return Verdict(
            False,
            tr("u1 and a1 are no longer candidates", "u1 和 a1 已经不是候选"),
            say("compact_1_s_summary_stands"),
            say("start_collecting_at_u2_and"),
        )
    return Verdict(
        False,
        tr("not the ids build_context keeps", "这不是 build_context 保留的 id"),
        say(
            "at_max_tokens_the_message",
            max_tokens=max_tokens,
            system=result.tokens.system,
            reserved=result.tokens.reserved_output,
            margin=result.tokens.safety_margin,
            available=result.tokens.available_for_messages,
            summary=ledger.summary_cost,
            left=max(0, result.tokens.available_for_messages - ledger.summary_cost),
        ),
        say("keep_whole_groups_newest_first"),
    )


@exercise("replayed prompt", "重放出的 system prompt")
def check_replayed_prompt(answer: object) -> Verdict:
    """Exercise: the replayed system ``content`` of the system-patch path (the chapter's
    ``"BASE\n\nPrefer small diffs."``). A hint is given only on evidence of its mistake (a
    section written into the content, BASE or patch-2 left out, another separator or order);
    any other wrong answer gets none."""
    if not isinstance(answer, str):
        raise TypeError(say("expected_the_content_as_a", kind=type(answer).__name__))
    path = fixtures.system_patch_path()
    systems = [e.message for e in message_entries(path) if e.message.role == "system"]
    state = current_system_message(systems)
    assert state is not None
    sections = json.dumps(dict(state.sections or {}), ensure_ascii=False)
    content = _json_text(state.content)
    if answer == state.content:
        return Verdict(
            True,
            tr(f"the replayed content is {content}", f"重放出的 content 是 {content}"),
            say("as_in_the_chapter_the", sections=sections),
        )
    separate = say("the_sections_are_a_separate", sections=sections)
    prompt = text_of(state)
    if answer == prompt:
        title = say("that_is_the_rendered_prompt", prompt_json=_json_text(prompt))
        return Verdict(False, title, "", separate)
    if "RULE v1" in answer:
        title = tr("patch-1 replaced the rules section", "patch-1 已经替换了 rules 段落")
        return Verdict(False, title, "", separate)
    if "base" not in answer.casefold():
        return Verdict(
            False,
            tr("the base prompt is missing", "缺少基础 prompt"),
            say("sys_stands_before_compact_1"),
            tr("Start with BASE.", "从 BASE 开始。"),
        )
    for name, text in (state.sections or {}).items():
        if text and text in answer:
            title = say("a_section_is_not_content", name=name, text=text)
            return Verdict(False, title, "", separate)
    contents = [m.content for m in systems if m.content]  # sys's BASE, then patch-2's
    words = answer.split()
    if words == contents[0].split():
        return Verdict(False, say("patch_2_s_content_is"), "", say("patch_2_stands_after_compact"))
    title = say("not_the_replayed_content", answer_json=_json_text(answer))
    if words == state.content.split():
        return Verdict(False, title, "", say("join_the_non_empty_contents"))
    if words == " ".join(reversed(contents)).split():
        return Verdict(False, title, "", say("append_the_contents_in_path"))
    return Verdict(False, title)  # no evidence of a known mistake: no hint beats a wrong one


@exercise("newest summary", "最新的摘要")
def check_newest_summary(answer: object) -> Verdict:
    """Exercise: which compaction's summary reaches the model on the recompacted path."""
    if not isinstance(answer, str):
        raise TypeError(say("expected_a_compaction_id_such", answer=answer))
    latest = latest_compaction(fixtures.recompacted_path())
    assert latest is not None
    if answer == latest.id:
        return Verdict(
            True,
            tr(f"only {latest.id}'s summary is read", f"只读取 {latest.id} 的摘要"),
            say("older_summaries_stay_in_the"),
        )
    return Verdict(
        False, say("is_not_the_summary_the", answer=answer), "", say("build_context_scans_the_path")
    )
