"""The ``ctxlab`` command: look at a session file from a shell.

Works on any session file in the course's wire format, also one the TypeScript course
wrote. ``check`` lists ALL problems of a file with their line numbers; ``context`` prints
the projection the chapter's ``buildContext()`` makes of a path ("31 个 token 怎样留下第二、三组"),
as tables or as the chapter's camelCase JSON; ``repair`` moves a torn last line into
``FILE.tail-<n>``, deleting no byte. ``grade`` (for lecturers, spec §11) is the teaching
layer's :mod:`ctxlab.lab.grading.batch`, imported only for that command. Each command's
``--help`` says the rest (see :func:`build_parser`).

Exit codes: 0 success (``check``: no problem), 1 the data has problems, 2 usage error
(bad options, missing file). Errors print ``ctxlab: <message>`` on stderr, never a
traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, TextIO

from ctxlab.context import ContextResult, build_context, resume_candidates
from ctxlab.entries import CompactionSessionEntry, MessageSessionEntry, SessionEntry
from ctxlab.errors import CtxlabError, EstimatorError
from ctxlab.estimators import chars_per_token
from ctxlab.interactions import group_interactions
from ctxlab.messages import SystemMessage
from ctxlab.store import JsonlSessionStore, scan_jsonl
from ctxlab.tree import path_to

__all__ = ["ESTIMATORS", "build_parser", "main"]

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_USAGE = 2


def _chapter() -> Callable[[Any], float]:
    from ctxlab.fixtures import opening_estimator  # builds the chapter's fixtures: only now

    return opening_estimator


#: ``--estimator`` choices: a name and how to make the estimator.
ESTIMATORS: dict[str, tuple[str, Callable[[], Callable[[Any], float]]]] = {
    "chars4": (
        "about four characters per token, rounded up (the default)",
        partial(chars_per_token, 4),
    ),
    "chapter": ("the chapter's test estimator: prices only the fixture messages", _chapter),
}


class _UsageError(Exception):
    """A problem with how the command was called (exit 2)."""


def _budget_number(text: str) -> int | float:
    """argparse ``type=`` for the budget options: a finite number >= 0."""
    try:
        value: int | float = int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number >= 0")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``ctxlab`` (``python -m ctxlab``)."""
    parser = argparse.ArgumentParser(
        prog="ctxlab",
        description="Check, inspect and repair chapter-11 session files (JSONL).",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = commands.add_parser(
        "check",
        help="validate every line and report all problems",
        description="Validate every line of a session file and report ALL problems with"
        " their line numbers. Exit 0 when clean, 1 when problems were found.",
    )
    check.add_argument("file", metavar="FILE", type=Path)

    context = commands.add_parser(
        "context",
        help="build the budgeted context projection of a path",
        description="Build the context projection of the active path ending at --leaf under"
        " a token budget (chapter 11, buildContext) and print it.",
    )
    context.add_argument("file", metavar="FILE", type=Path)
    context.add_argument("--leaf", metavar="ID", help="leaf entry id (default: the last entry)")
    for option in ("--max-tokens", "--reserved-output", "--safety-margin"):
        context.add_argument(option, metavar="N", type=_budget_number, required=True)
    context.add_argument(
        "--estimator",
        choices=sorted(ESTIMATORS),
        default="chars4",
        help="; ".join(f"{name}: {text}" for name, (text, _) in sorted(ESTIMATORS.items())),
    )
    context.add_argument(
        "--summary-language",
        choices=("en", "zh"),
        default="zh",
        help="language of a compaction's summary message (default: zh, the course's"
        " 【会话压缩摘要】 rendering; en: the English one)",
    )
    context.add_argument(
        "--json", action="store_true", help="print the chapter's camelCase result as JSON"
    )

    repair = commands.add_parser(
        "repair",
        help="move an unterminated tail into a side file",
        description="Move the bytes of an unterminated last line (a torn write) into"
        " FILE.tail-<n> beside the session, then cut them off. Deletes no byte.",
    )
    repair.add_argument("file", metavar="FILE", type=Path)

    # `ctxlab grade` lives in the teaching layer (ctxlab.lab.grading.batch) and is loaded
    # only when asked for: main() hands it its arguments before this parser reads them.
    commands.add_parser(
        "grade",
        help="grade a class's lab notebooks (ctxlab grade --help)",
        description="Grade student notebooks and .py files; see `ctxlab grade --help`.",
        add_help=False,
    )
    return parser


def _require_file(path: Path) -> None:
    if not path.exists():
        raise _UsageError(f"{path}: no such file")
    if not path.is_file():
        raise _UsageError(f"{path}: not a file")


# -- check ----------------------------------------------------------------------------------


def _check(args: argparse.Namespace, out: TextIO) -> int:
    path: Path = args.file
    scan = scan_jsonl(path)
    for problem in scan.problems:
        out.write(f"{path}:{problem.line}: {problem.code}: {problem.message}\n")
    if scan.problems:
        count = len(scan.problems)
        out.write(
            f"{path}: {count} problem{'s' if count != 1 else ''};"
            f" {len(scan.entries)} valid entries\n"
        )
        return EXIT_PROBLEMS
    out.write(f"{path}: ok, {len(scan.entries)} entries\n")
    return EXIT_OK


# -- repair ---------------------------------------------------------------------------------


def _repair(args: argparse.Namespace, out: TextIO) -> int:
    path: Path = args.file
    result = JsonlSessionStore.repair(path)
    if result.side_file is None:
        out.write(f"{path}: no unterminated tail; nothing to repair\n")
    else:
        out.write(
            f"{path}: moved the unterminated tail of line {result.line}"
            f" ({result.bytes_moved} bytes) to {result.side_file}\n"
        )
    return EXIT_OK


# -- context --------------------------------------------------------------------------------


def _context(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    path: Path = args.file
    store = JsonlSessionStore.open(path, durable=False)
    read = store.read()
    for warning in read.warnings:
        err.write(f"ctxlab: warning: {warning.message}\n")
    entries = list(read.entries)
    if not entries:
        raise CtxlabError(f"{path.name} has no entries")
    leaf = args.leaf if args.leaf is not None else entries[-1].id
    active_path = path_to(entries, leaf)
    estimate = ESTIMATORS[args.estimator][1]()
    result = build_context(
        active_path,
        max_tokens=args.max_tokens,
        reserved_output=args.reserved_output,
        safety_margin=args.safety_margin,
        estimate_tokens=estimate,
        summary_language=args.summary_language,
    )
    if args.json:
        out.write(json.dumps(result.to_json(), ensure_ascii=False, indent=2) + "\n")
    else:
        out.write(_context_report(path, active_path, result, estimate, args.estimator))
    return EXIT_OK


def _price(estimate: Callable[[Any], float], entry: MessageSessionEntry) -> int | float:
    try:
        return estimate(entry.message)
    except Exception as exc:
        raise EstimatorError(
            f"the estimator failed on entry {entry.id}: {exc}", subject=f"entry {entry.id}"
        ) from exc


def _table(rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [
            cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ]
        lines.append("  " + "  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def _number(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _context_report(
    path: Path,
    active_path: Sequence[SessionEntry],
    result: ContextResult,
    estimate: Callable[[Any], float],
    estimator_name: str,
) -> str:
    leaf = active_path[-1].id
    latest, candidates = resume_candidates(active_path)
    groups = group_interactions(candidates)
    group_of = {e.id: n for n, g in enumerate(groups, start=1) for e in g.entries}
    kept = set(result.kept_entry_ids)

    rows = [["#", "id", "type", "role", "group", "cost", "in context"]]
    for number, entry in enumerate(active_path, start=1):
        role = group_number = cost = ""
        if isinstance(entry, MessageSessionEntry):
            role = entry.message.role
            cost = _number(_price(estimate, entry))
        if isinstance(entry, MessageSessionEntry) and isinstance(entry.message, SystemMessage):
            status = "replayed into the system message"
        elif entry.id in group_of:
            group_number = str(group_of[entry.id])
            status = "kept" if entry.id in kept else "dropped (over budget)"
        elif entry is latest:
            status = "its summary is the synthetic user message"
        elif isinstance(entry, CompactionSessionEntry):
            status = "older compaction (not used)"
        elif isinstance(entry, MessageSessionEntry):
            status = "summarised by the latest compaction"
        else:
            status = "metadata (never sent)"
        rows.append([str(number), entry.id, entry.type, role, group_number, cost, status])

    group_rows = [["group", "first", "last", "entries", "cost", "in context"]]
    for number, group in enumerate(groups, start=1):
        first, last = group.entries[0].id, group.entries[-1].id
        cost = _number(sum(_price(estimate, entry) for entry in group.entries))
        in_context = "kept" if first in kept else "dropped"
        group_rows.append([str(number), first, last, str(len(group.entries)), cost, in_context])

    tokens = result.tokens.to_json()
    ledger_rows = [["item", "tokens"], *([name, _number(v)] for name, v in tokens.items())]

    sent: list[str] = []
    if result.messages and isinstance(result.messages[0], SystemMessage):
        sent.append("system (replayed)")
    if latest is not None:
        sent.append(f"summary of {latest.id}")
    sent.extend(result.kept_entry_ids)

    parts = [
        f"session {path}: active path to {leaf} ({len(active_path)} entries),"
        f" estimator {estimator_name}\n",
        "\nactive path\n",
        _table(rows, right=(0, 4, 5)),
        "\ninteraction groups (kept newest first, never split)\n",
        _table(group_rows, right=(0, 3, 4)) if groups else "  (no groups)\n",
        "\nledger\n",
        _table(ledger_rows, right=(1,)),
        f"\nreason: {result.reason}\n",
        f"kept ids: {', '.join(result.kept_entry_ids) or '(none)'}\n",
        f"messages sent: {' -> '.join(sent) or '(none)'}\n",
    ]
    return "".join(parts)


# -- entry point ----------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``ctxlab`` with ``argv`` (default: the process arguments); return the exit code."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:  # a lone surrogate in an id must not crash the output
            reconfigure(errors="backslashreplace")
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["grade"]:  # the teaching layer, loaded only now
        from ctxlab.lab.grading.batch import main as grade

        return grade(arguments[1:])
    parser = build_parser()
    args = parser.parse_args(arguments)
    if args.command is None:
        parser.print_usage(sys.stderr)
        sys.stderr.write("ctxlab: error: choose a command: check, context, repair or grade\n")
        return EXIT_USAGE
    try:
        _require_file(args.file)
        if args.command == "check":
            return _check(args, sys.stdout)
        if args.command == "repair":
            return _repair(args, sys.stdout)
        return _context(args, sys.stdout, sys.stderr)
    except CtxlabError as exc:
        sys.stderr.write(f"ctxlab: {exc}\n")
        return EXIT_PROBLEMS
    except (_UsageError, OSError) as exc:
        sys.stderr.write(f"ctxlab: {exc}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write("ctxlab: interrupted\n")
        return 130
