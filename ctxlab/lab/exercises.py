"""Self-checks for the exercises of labs 11.1-11.3.

Every checker is wrapped in :func:`~ctxlab.lab.checks.friendly`: it returns a
:class:`~ctxlab.lab.checks.Verdict` for any answer -- the placeholder ``...``, a value of
the wrong kind, a record the core rejects -- and never shows a traceback. The right answers
are computed by the core (``parse_session_entry``, ``group_interactions``,
``build_context``), never stored here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ctxlab import fixtures
from ctxlab.context import build_context
from ctxlab.entries import parse_session_entry
from ctxlab.errors import CtxlabError, InteractionError
from ctxlab.interactions import group_interactions
from ctxlab.lab.checks import Verdict, friendly
from ctxlab.lab.tables import cut_points

__all__ = [
    "check_available",
    "check_error_entry",
    "check_group_of_u3",
    "check_kept_ids",
    "check_legal_cuts",
    "check_my_summary",
    "check_repaired_compaction",
    "check_smallest_budget_for_all",
]

# -- Lab 11.1 ---------------------------------------------------------------------------------


def _mapping(answer: object, what: str) -> Mapping[str, Any]:
    if not isinstance(answer, Mapping):
        raise TypeError(f"{what} should be a dict, got {type(answer).__name__}")
    return answer


@friendly
def check_repaired_compaction(answer: object) -> Verdict:
    """Exercise 11.1-A: repair the chapter's corrupted ``compact-1`` (``files``)."""
    wire = _mapping(answer, "the repaired record")
    entry = parse_session_entry(wire)
    expected = fixtures.compact1()
    if entry == expected:
        return Verdict(
            True,
            "the parser accepts it, and it is exactly compact-1 again",
            "The old name was migrated outside the parser; the parser stayed strict.",
        )
    differences = [
        name for name, value in expected.to_json().items() if entry.to_json().get(name) != value
    ]
    return Verdict(
        False,
        "the parser accepts it, but it is not the original compact-1",
        f"These fields differ from compact-1: {', '.join(differences)}",
        "Only rename the field: keep its value ['context.ts'] and change nothing else.",
    )


@friendly
def check_my_summary(answer: object) -> Verdict:
    """Exercise 11.1-B: write a seven-field summary of your own that the parser accepts."""
    summary = _mapping(answer, "your summary")
    wire = fixtures.compact1().to_json()
    wire["summary"] = dict(summary)
    entry = parse_session_entry(wire)
    assert entry.type == "compaction"
    if dict(summary) == fixtures.compact1_summary().to_json():
        return Verdict(
            False,
            "that is compact-1's own summary",
            hint="Write a summary of your own: any goal, and six lists of strings.",
        )
    items = sum(len(v) for v in summary.values() if isinstance(v, list))
    return Verdict(
        True,
        "the parser accepts your seven-field summary",
        f"goal: {entry.summary.goal!r}; {items} list items in six lists",
    )


# -- Lab 11.2 ---------------------------------------------------------------------------------


def _id_list(answer: object, what: str) -> list[str]:
    if isinstance(answer, str) or not isinstance(answer, Iterable):
        raise TypeError(f"{what} should be a list of entry ids, got {type(answer).__name__}")
    ids = list(answer)
    for item in ids:
        if not isinstance(item, str):
            raise TypeError(f"{what}: {item!r} is not an entry id (a string)")
    return ids


@friendly
def check_group_of_u3(answer: object) -> Verdict:
    """Exercise 11.2-A: the ids of the group ``u3`` starts, in path order."""
    ids = _id_list(answer, "your group")
    groups = group_interactions(fixtures.opening_path())
    expected = list(next(g for g in groups if g.head.id == "u3").entry_ids)
    if ids == expected:
        return Verdict(True, f"the group is {', '.join(expected)}", "Path order is kept.")
    missing = [i for i in expected if i not in ids]
    extra = [i for i in ids if i not in expected]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing: {', '.join(missing)}")
        if extra:
            parts.append(f"not in this group: {', '.join(extra)}")
        return Verdict(
            False,
            "the group has other members",
            "; ".join(parts),
            "A group runs from its user message up to the next user message; "
            "system messages belong to no group.",
        )
    return Verdict(
        False,
        "right members, wrong order",
        hint="group_interactions keeps the path order: r-test stands before r-read.",
    )


def _cut_label(item: object) -> str:
    if isinstance(item, str):
        return item.replace(" ", "")
    if isinstance(item, Sequence) and len(item) == 2 and all(isinstance(x, str) for x in item):
        return f"{item[0]}|{item[1]}"
    raise TypeError(f"{item!r} is not a cut; write it as 'a1|u2' or ('a1', 'u2')")


@friendly
def check_legal_cuts(answer: object) -> Verdict:
    """Exercise 11.2-B: every place where the budget may cut the opening path."""
    if isinstance(answer, str) or not isinstance(answer, Iterable):
        raise TypeError("the cuts should be a list such as ['x|y', ...]")
    chosen = {_cut_label(item) for item in answer}
    cuts = {cut.label: cut for cut in cut_points(fixtures.opening_path())}
    unknown = sorted(label for label in chosen if label not in cuts)
    if unknown:
        return Verdict(
            False,
            f"not neighbouring entries: {', '.join(unknown)}",
            hint="A cut lies between two neighbouring entries of the path, e.g. 'u1|a1'.",
        )
    illegal = [label for label in cuts if label in chosen and not cuts[label].legal]
    legal = [label for label in cuts if cuts[label].legal]
    if illegal:
        return Verdict(
            False,
            f"these cuts fall inside a group: {', '.join(illegal)}",
            "Cutting there would keep part of an interaction and drop the rest, e.g. a "
            "tool call without its result.",
            "Only a cut between two groups keeps every interaction whole.",
        )
    missed = [label for label in legal if label not in chosen]
    if missed:
        return Verdict(
            False,
            f"{len(missed)} legal cut(s) missing",
            hint="Look at the timeline: where does one group end and the next begin?",
        )
    return Verdict(True, f"the legal cuts are {', '.join(legal)}")


@friendly
def check_error_entry(answer: object) -> Verdict:
    """Exercise 11.2-C: which entry does the error for the ``unknown-1`` corruption name?"""
    if not isinstance(answer, str):
        raise TypeError(f"the answer should be an entry id (a string), got {answer!r}")
    try:
        group_interactions(fixtures.unknown_call_path())
    except InteractionError as error:
        expected = error.entry_id
        if answer == expected:
            return Verdict(True, f"the error names {expected}", str(error))
        return Verdict(
            False,
            f"the error does not name {answer!r}",
            hint="Which entry carries toolCallId unknown-1? That is the fact that is wrong.",
        )
    return Verdict(False, "the corrupted path was accepted -- is the core unchanged?")


# -- Lab 11.3 ---------------------------------------------------------------------------------


def _number(answer: object, what: str) -> int | float:
    if isinstance(answer, bool) or not isinstance(answer, (int, float)):
        raise TypeError(f"{what} should be a number, got {answer!r}")
    return answer


def _context(
    max_tokens: int | float, reserved_output: int | float, safety_margin: int | float
) -> Any:
    return build_context(
        fixtures.opening_path(),
        max_tokens=max_tokens,
        reserved_output=reserved_output,
        safety_margin=safety_margin,
        estimate_tokens=fixtures.opening_estimator,
    )


@friendly
def check_available(
    answer: object, *, max_tokens: int = 40, reserved_output: int = 4, safety_margin: int = 2
) -> Verdict:
    """Exercise 11.3-A: ``available_for_messages`` for another budget (default 40/4/2)."""
    value = _number(answer, "available_for_messages")
    tokens = _context(max_tokens, reserved_output, safety_margin).tokens
    if value == tokens.available_for_messages:
        return Verdict(
            True,
            f"available_for_messages is {tokens.available_for_messages:g}",
            f"max(0, {max_tokens} − system {tokens.system:g} − {reserved_output}"
            f" − {safety_margin})",
        )
    return Verdict(
        False,
        f"{value:g} is not what build_context computes",
        hint="Subtract the replayed system message, reserved_output and safety_margin from "
        "max_tokens; never below 0.",
    )


@friendly
def check_kept_ids(
    answer: object, *, max_tokens: int = 20, reserved_output: int = 4, safety_margin: int = 2
) -> Verdict:
    """Exercise 11.3-B: ``kept_entry_ids`` for another budget (default 20/4/2)."""
    ids = _id_list(answer, "your kept ids")
    result = _context(max_tokens, reserved_output, safety_margin)
    if tuple(ids) == result.kept_entry_ids:
        return Verdict(True, f"kept: {', '.join(ids)}; reason {result.reason}")
    if "sys" in ids:
        return Verdict(
            False,
            "sys is not a kept entry",
            hint="The replayed system message is always sent but never listed in kept_entry_ids.",
        )
    return Verdict(
        False,
        "that is not what build_context keeps",
        hint=f"Available for messages is {result.tokens.available_for_messages:g}. Start from "
        "the newest group; what happens when even that one does not fit?",
    )


@friendly
def check_smallest_budget_for_all(
    answer: object, *, reserved_output: int = 4, safety_margin: int = 2
) -> Verdict:
    """Exercise 11.3-C: the smallest ``max_tokens`` that keeps all three groups."""
    value = _number(answer, "max_tokens")
    if value < 0:
        raise CtxlabError(f"max_tokens must be >= 0, got {value:g}")
    result = _context(value, reserved_output, safety_margin)
    if result.reason != "within_budget":
        return Verdict(
            False,
            f"with max_tokens {value:g} the reason is {result.reason}",
            f"kept: {', '.join(result.kept_entry_ids)}",
            "Add the cost of every group to the fixed costs.",
        )
    smaller = _context(value - 1, reserved_output, safety_margin)
    if smaller.reason == "within_budget":
        return Verdict(
            False,
            f"{value:g} keeps all three groups, but so does {value - 1:g}",
            hint="Look for the smallest budget.",
        )
    return Verdict(True, f"{value:g} is the smallest max_tokens that keeps every group")
