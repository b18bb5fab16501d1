"""Mutation audit of the lab checks (issue 17): ``make mutants``.

For each lab, the instructor solution of its build-it cell (``:::cell 11-N-b02``, variant
``:::instructor`` of ``notebooks/_src/11.N-*.md``) is mutated automatically, and each mutant
is judged by ``ctxlab.lab.check_implementation`` exactly as a student's cell would be: the
mutated cell is exec'd in a fresh namespace and the lab's function is taken from it. A
mutant is *killed* when any row fails -- a chapter row (the lab is not passed) or one of
ctxlab's extras (the instructor solution passes those too) --, when the cell does not run, when the
function is missing, or when it crashes or overruns the wall-clock bound. A mutant that
survives is either a gap in the checks or listed in ``tests/mutants_equivalent.json`` with
a one-line reason why no input the chapter's contract allows can tell it apart.

Why a small AST mutator and not mutmut or cosmic-ray: both mutate ``.py`` files of an
importable package in place (mutmut 3 rewrites ``src`` into trampolines, cosmic-ray keeps
a session of (module, line, column) mutations) and judge each mutant by the exit status of
a test command. Here the code under test is not a module: it is a code cell inside a
markdown notebook source, run by ``exec`` the way the notebook runs it, and the judge is
``check_implementation`` with its per-check time limit, not a test run. Extracting the
cells to files, writing a test command that re-reads them and mapping the tools'
line-based mutation ids back to the cells would be more code than this mutator, and their
ids shift whenever a line moves. Here a mutant's id is its enclosing function, the
operator and the changed text (with a counter only for identical repeats), so it stays
the same when the cell is edited elsewhere, and the equivalents file can name it.

Each mutant runs in its own process forked from a parent that has already imported ctxlab
and the lab's checks (a few ms per fork, nothing shared back): a mutant that loops,
recurses, exits or corrupts module state cannot affect another, and the parent kills any
mutant that is not done within ``--timeout`` seconds. ``--workers`` (2) run at once.

Besides the classic operators (flipped comparisons, swapped arguments, deleted statements,
...), the mutator applies the misconception shapes of issue 24 (:func:`_misconceptions`):
``int()`` around an estimate, ``.strip()`` on the arguments, metadata removed from the
caller's ``active_path`` in place, ``or ()`` for a ``null`` value.

Run: ``python tests/mutation_audit.py [--lab 11.3] [--sample N --seed S]`` (``make mutants
MUTANTS_ARGS=...``). Prints a table per lab, writes ``artifacts/mutants/survivors.md``,
and exits 1 when a lab has survivors, 2 when the equivalents file is stale or wrong.
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import multiprocessing
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
EQUIVALENTS = REPO / "tests" / "mutants_equivalent.json"
ARTIFACTS = REPO / "artifacts" / "mutants"
LABS = ("11.1", "11.2", "11.3", "11.4", "11.5")
if __name__ == "__main__" and str(REPO) not in sys.path:
    # Run as a script: judge this checkout's ctxlab, whatever the venv has installed.
    sys.path.insert(0, str(REPO))

# ---------------------------------------------------------------------------- mutants

COMPARE_FLIPS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
BUILTIN_SWAPS = {"max": "min", "min": "max", "any": "all", "all": "any"}
DROPPABLE_CALLS = {"reversed", "sorted"}

#: operator -> what it does (the descriptions of survivors.md).
OPERATORS = {
    "compare": "comparison flipped",
    "bool-op": "and/or swapped",
    "negate": "condition negated",
    "remove-not": "`not` removed",
    "delete": "statement replaced by pass",
    "return-none": "return value replaced by None",
    "constant": "constant changed",
    "swap-args": "positional arguments swapped",
    "builtin": "builtin swapped",
    "drop-call": "call removed, argument kept",
    "arith": "arithmetic operator swapped",
    "slice": "slice bound removed",
    # The misconception shapes of issue 24: what a student who misread the chapter writes.
    "int-wrap": "an estimate or returned value truncated with int()",
    "strip": "an argument stripped of white space",
    "in-place": "metadata removed from the caller's active_path in place",
    "or-empty": "a null value read as empty (`or ()`)",
}

Path_ = tuple[tuple[str, int | None], ...]  # a node's place: (field, index) from the root


@dataclass(frozen=True)
class Mutant:
    lab: str
    id: str  # stable: scope/operator/changed text[#n]; no line numbers
    operator: str
    scope: str  # enclosing function ("build_context.price"), or "<module>"
    lineno: int  # where the mutated node is in the cell: first and last line, columns
    end_lineno: int
    col: int
    end_col: int
    in_place: bool  # False: the node has no position (a comprehension), these are its parent's
    original: str  # the node's text before and after (ast.unparse)
    mutated: str
    source: str  # the whole mutated cell

    @property
    def description(self) -> str:
        return (
            f"line {self.lineno} in {self.scope}: {OPERATORS[self.operator]}: "
            f"`{_oneline(self.original, 80)}` -> `{_oneline(self.mutated, 80)}`"
        )


def _oneline(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _delta(before: str, after: str, context: int = 20, limit: int = 40) -> str:
    """``…context [old->new] context…``: the changed part of a node's text, for an id."""
    a, b = " ".join(before.split()), " ".join(after.split())
    prefix = 0
    while prefix < min(len(a), len(b)) and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(a), len(b)) - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    head = a[max(0, prefix - context) : prefix]
    head = ("…" if prefix > context else "") + head
    tail = a[len(a) - suffix :]
    tail = tail[:context] + ("…" if len(tail) > context else "")
    old, new = (
        _oneline(a[prefix : len(a) - suffix], limit),
        _oneline(b[prefix : len(b) - suffix], limit),
    )
    return f"{head}[{old}->{new}]{tail}"


def _is_docstring(node: ast.AST, parent: ast.AST | None, index: int | None) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        and index == 0
        and isinstance(parent, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    )


def _walk(
    node: ast.AST,
    path: Path_,
    scope: str,
    parent: ast.AST | None,
    index: int | None,
    located: ast.AST,
) -> Iterator[tuple[ast.AST, Path_, str, ast.AST | None, ast.AST]]:
    """Every node worth mutating, with its place, enclosing function, parent and where it
    stands in the source (itself, or the nearest enclosing node that has a line number);
    skips docstrings and the inside of f-strings (only an f-string as a whole is changed)."""
    if _is_docstring(node, parent, index):
        return
    if hasattr(node, "lineno"):
        located = node
    yield node, path, scope, parent, located
    if isinstance(node, ast.JoinedStr):
        return
    inner = scope
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        inner = node.name if scope == "<module>" else f"{scope}.{node.name}"
    for name, value in ast.iter_fields(node):
        if isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, ast.AST):
                    yield from _walk(item, (*path, (name, i)), inner, node, i, located)
        elif isinstance(value, ast.AST):
            yield from _walk(value, (*path, (name, None)), inner, node, None, located)


def _negated(test: ast.expr) -> ast.expr:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return test.operand
    return ast.UnaryOp(op=ast.Not(), operand=copy.deepcopy(test))


def _constants(value: Any) -> list[Any]:
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, (int, float)):
        return list(dict.fromkeys(v for v in (value + 1, value - 1, 0) if v != value))
    if isinstance(value, str):
        return ["" if value else "mutant"]
    return []


def _replacements(node: ast.AST, parent: ast.AST | None) -> Iterator[tuple[str, ast.AST]]:
    """(operator, replacement node) for every mutation of ``node`` itself."""
    new: Any  # a deep copy of ``node``, changed in one place
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            flip = COMPARE_FLIPS.get(type(op))
            if flip is not None:
                new = copy.deepcopy(node)
                new.ops[i] = flip()
                yield "compare", new
    elif isinstance(node, ast.BoolOp):
        new = copy.deepcopy(node)
        new.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        yield "bool-op", new
    elif isinstance(node, (ast.If, ast.While, ast.IfExp)):
        new = copy.deepcopy(node)
        new.test = _negated(node.test)
        yield "negate", new
    elif isinstance(node, ast.comprehension):
        for i, test in enumerate(node.ifs):
            new = copy.deepcopy(node)
            new.ifs[i] = _negated(test)
            yield "negate", new
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "remove-not", copy.deepcopy(node.operand)
    elif isinstance(node, ast.Constant) and not isinstance(parent, ast.JoinedStr):
        for value in _constants(node.value):
            yield "constant", ast.Constant(value=value)
    elif isinstance(node, ast.JoinedStr):
        yield "constant", ast.Constant(value="")
    elif isinstance(node, ast.Call):
        args = node.args
        for i in range(len(args) - 1):
            a, b = args[i], args[i + 1]
            starred = isinstance(a, ast.Starred) or isinstance(b, ast.Starred)
            if not starred and ast.dump(a) != ast.dump(b):
                new = copy.deepcopy(node)
                new.args[i], new.args[i + 1] = new.args[i + 1], new.args[i]
                yield "swap-args", new
        if isinstance(node.func, ast.Name):
            other = BUILTIN_SWAPS.get(node.func.id)
            if other is not None:
                new = copy.deepcopy(node)
                new.func = ast.Name(id=other, ctx=ast.Load())
                yield "builtin", new
            if node.func.id in DROPPABLE_CALLS and len(args) == 1 and not node.keywords:
                yield "drop-call", copy.deepcopy(args[0])
    elif isinstance(node, (ast.BinOp, ast.AugAssign)) and isinstance(node.op, (ast.Add, ast.Sub)):
        new = copy.deepcopy(node)
        new.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
        yield "arith", new
    elif isinstance(node, ast.Slice):
        for bound in ("lower", "upper", "step"):
            if getattr(node, bound) is not None:
                new = copy.deepcopy(node)
                setattr(new, bound, None)
                yield "slice", new
    returns_none = isinstance(node, ast.Return) and (
        node.value is None or (isinstance(node.value, ast.Constant) and node.value.value is None)
    )
    if isinstance(node, ast.Return) and not returns_none:
        yield "return-none", ast.Return(value=ast.Constant(value=None))
    yield from _misconceptions(node, parent)
    if isinstance(node, ast.stmt) and not isinstance(
        node,
        (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom, ast.Pass),
    ):
        yield "delete", ast.Pass()


def _call(name: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=list(args), keywords=[])


def _with_first(node: ast.FunctionDef, statement: ast.stmt) -> ast.FunctionDef:
    """``node`` with ``statement`` run first (after its docstring, if any)."""
    new = copy.deepcopy(node)
    at = 1 if _is_docstring(new.body[0], new, 0) else 0
    new.body.insert(at, statement)
    return new


def _misconceptions(node: ast.AST, parent: ast.AST | None) -> Iterator[tuple[str, ast.AST]]:
    """The misconception shapes of issue 24 (each a mistake a student draws from the chapter).

    * ``int-wrap``: ``return x`` -> ``return int(x)``, ``cost = sum(...)`` -> ``int(sum(...))``
      (an estimate counted in whole tokens: 2.5 -> 2);
    * ``strip``: a top-level function strips each argument first (``id = id.strip()``);
    * ``in-place``: a top-level function taking ``active_path`` removes its non-message
      entries from the caller's list (``active_path[:] = [...]``);
    * ``or-empty``: ``x = y[k]`` -> ``x = y[k] or ()`` (a ``null`` read as an empty list).
    """
    if isinstance(node, ast.Return) and isinstance(node.value, ast.Name):
        yield "int-wrap", ast.Return(value=_call("int", copy.deepcopy(node.value)))
    if (
        isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id == "sum"
    ):
        new = copy.deepcopy(node)
        new.value = _call("int", new.value)
        yield "int-wrap", new
    if (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Subscript)
    ):
        new = copy.deepcopy(node)
        new.value = ast.BoolOp(op=ast.Or(), values=[new.value, ast.Tuple(elts=[], ctx=ast.Load())])
        yield "or-empty", new
    if isinstance(node, ast.FunctionDef) and isinstance(parent, ast.Module):
        names = [a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)]
        for name in names:
            strip = ast.parse(f"{name} = {name}.strip()").body[0]
            yield "strip", _with_first(node, strip)
        if "active_path" in names:
            in_place = ast.parse(
                "active_path[:] = [e for e in active_path if getattr(e, 'type', None) == 'message']"
            ).body[0]
            yield "in-place", _with_first(node, in_place)


def _replace(tree: ast.Module, path: Path_, new: ast.AST) -> ast.Module:
    mutated = copy.deepcopy(tree)
    holder: Any = mutated
    for name, index in path[:-1]:
        holder = getattr(holder, name) if index is None else getattr(holder, name)[index]
    name, index = path[-1]
    if index is None:
        setattr(holder, name, new)
    else:
        getattr(holder, name)[index] = new
    return ast.fix_missing_locations(mutated)


def generate(code: str, lab: str = "") -> list[Mutant]:
    """Every mutant of ``code`` (a cell), in source order, each with a unique stable id."""
    tree = ast.parse(code)
    seen: Counter[str] = Counter()
    mutants = []
    for node, path, scope, parent, where in _walk(tree, (), "<module>", None, None, tree):
        for operator, new in _replacements(node, parent):
            before, after = ast.unparse(node), ast.unparse(new)
            if before == after:
                continue
            key = f"{scope}/{operator}/{_delta(before, after)}"
            seen[key] += 1
            mutant_id = key if seen[key] == 1 else f"{key}#{seen[key]}"
            mutants.append(
                Mutant(
                    lab=lab,
                    id=mutant_id,
                    operator=operator,
                    scope=scope,
                    lineno=getattr(where, "lineno", 1),
                    end_lineno=getattr(where, "end_lineno", None) or 1,
                    col=getattr(where, "col_offset", 0),
                    end_col=getattr(where, "end_col_offset", None) or 0,
                    in_place=where is node,
                    original=before,
                    mutated=after,
                    source=ast.unparse(_replace(tree, path, new)),
                )
            )
    return mutants


# ---------------------------------------------------------------------------- the labs


def solution(lab: str) -> tuple[str, str]:
    """(cell id, code) of the instructor variant of ``lab``'s build-it cell."""
    sys.path.insert(0, str(REPO / "tests"))
    from nbsource_module import load_nbsource

    for source in load_nbsource().load_sources([lab]):
        if source.lab != lab:
            continue
        cells = [c for c in source.cells if c.id.endswith("-b02") and c.cell_type == "code"]
        if len(cells) == 1:
            return cells[0].id, dict(cells[0].variants)["instructor"]
    raise LookupError(f"lab {lab}: no build-it cell (…-b02) with an instructor variant")


def judge(lab: str, code: str, time_limit: float) -> tuple[bool, str]:
    """(killed, why): exec ``code`` in a fresh namespace, check the lab's function."""
    from ctxlab.lab import check_implementation
    from ctxlab.lab.grading import lab_keyword, set_time_limit

    keyword = lab_keyword(lab)
    namespace: dict[str, Any] = {"__name__": "__main__"}
    try:
        exec(compile(code, f"<lab {lab} build-it cell>", "exec"), namespace)
    except BaseException as error:  # any failure of the cell kills it
        return True, f"the cell raises {type(error).__name__}"
    function = namespace.get(keyword)
    if not callable(function):
        return True, f"the cell defines no {keyword}"
    previous = set_time_limit(time_limit)
    try:
        report = check_implementation(lab, **{keyword: function})
    finally:
        set_time_limit(previous)
    if report.passed and report.extras_passed:  # every row: the chapter's and ctxlab's
        return False, "every check passes"
    kind = "a chapter row" if not report.passed else "only ctxlab's extras"
    return True, f"fails {kind}: " + ", ".join(r.key for r in report.results if not r.passed)


def _child(conn: Connection, lab: str, code: str, time_limit: float) -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    try:
        conn.send(judge(lab, code, time_limit))
    finally:
        os._exit(0)  # no waiting for a check's thread that still runs


@dataclass(frozen=True)
class Job:
    lab: str
    code: str
    tag: str  # the mutant's id, or "" for the unmutated solution


def run_jobs(
    jobs: Sequence[Job], *, workers: int, time_limit: float, timeout: float
) -> dict[tuple[str, str], tuple[bool, str]]:
    """Judge every job in its own forked process, ``workers`` at a time."""
    from ctxlab.lab.grading import lab_keyword

    for lab in {job.lab for job in jobs}:
        lab_keyword(lab)  # import the lab's checks once, before forking
    context = multiprocessing.get_context("fork")
    pending = list(reversed(jobs))
    running: dict[Any, tuple[Job, Any, Connection, float]] = {}
    results: dict[tuple[str, str], tuple[bool, str]] = {}
    while pending or running:
        while pending and len(running) < workers:
            job = pending.pop()
            receive, send = context.Pipe(duplex=False)
            process = context.Process(target=_child, args=(send, job.lab, job.code, time_limit))
            process.start()
            send.close()
            running[process.sentinel] = (job, process, receive, time.monotonic() + timeout)
        soonest = min(deadline for *_, deadline in running.values())
        wait(list(running), timeout=max(0.0, soonest - time.monotonic()))
        for sentinel, (job, process, receive, deadline) in list(running.items()):
            if process.exitcode is None and time.monotonic() < deadline:
                continue
            if process.exitcode is None:
                process.kill()
                outcome = (True, f"killed after {timeout:g} s (wall clock)")
            elif receive.poll():
                outcome = receive.recv()
            else:
                outcome = (True, f"the process died (exit code {process.exitcode})")
            process.join()
            receive.close()
            results[job.lab, job.tag] = outcome
            del running[sentinel]
    return results


# ---------------------------------------------------------------------------- equivalents


def load_equivalents(path: Path | None = None) -> dict[tuple[str, str], str]:
    """(lab, id) -> reason, from the committed equivalents file."""
    path = path or EQUIVALENTS
    entries = json.loads(path.read_text(encoding="utf-8"))
    found: dict[tuple[str, str], str] = {}
    for entry in entries:
        key = (entry["lab"], entry["id"])
        if key in found:
            raise ValueError(f"{path.name}: {key} is listed twice")
        if not entry.get("reason", "").strip():
            raise ValueError(f"{path.name}: {key} has no reason")
        found[key] = entry["reason"]
    return found


# ---------------------------------------------------------------------------- report


def _context(code: str, mutant: Mutant, around: int = 2) -> str:
    lines = code.split("\n")
    first, last = mutant.lineno, mutant.end_lineno
    out = []
    for number in range(max(1, first - around), min(len(lines), last + around) + 1):
        mark = "-" if first <= number <= last else " "
        out.append(f"{mark}{number:4} {lines[number - 1]}")
        if number == last:
            out += [f"+     {line}" for line in _mutated_lines(lines, mutant)]
    return "\n".join(out)


def _mutated_lines(lines: Sequence[str], mutant: Mutant) -> list[str]:
    """The mutated node's lines as they would read in the cell."""
    first, last = lines[mutant.lineno - 1], lines[mutant.end_lineno - 1]
    new = mutant.mutated.split("\n")
    if not mutant.in_place:
        return [f"{first[: len(first) - len(first.lstrip())]}… {line} …" for line in new]
    if mutant.lineno == mutant.end_lineno and len(new) == 1:
        return [first[: mutant.col] + new[0] + first[mutant.end_col :]]
    indent = first[: len(first) - len(first.lstrip())]
    new[0] = first[: mutant.col] + new[0]
    new[1:] = [indent + line for line in new[1:]]
    new[-1] += last[mutant.end_col :]
    return new


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lab", action="append", choices=LABS, help="only this lab (repeatable)")
    parser.add_argument(
        "--sample", type=int, help="judge a fixed random sample of N mutants per lab"
    )
    parser.add_argument("--seed", type=int, default=17, help="the sample's seed (17)")
    parser.add_argument("--workers", type=int, default=2, help="processes at once (2)")
    parser.add_argument("--time-limit", type=float, default=1.5, help="per check, s (1.5)")
    parser.add_argument(
        "--timeout", type=float, default=60.0, help="per mutant, wall clock, s (60)"
    )
    parser.add_argument("--list", action="store_true", help="list the mutants' ids, judge nothing")
    args = parser.parse_args(argv)
    labs = args.lab or list(LABS)
    started = time.monotonic()

    equivalents = load_equivalents()
    codes = {lab: solution(lab)[1] for lab in LABS}
    generated = {lab: generate(codes[lab], lab) for lab in LABS}
    ids = {(lab, m.id) for lab in LABS for m in generated[lab]}
    stale = sorted(set(equivalents) - ids)
    if stale:
        for lab, mutant_id in stale:
            print(f"error: {EQUIVALENTS.name}: lab {lab} mutant {mutant_id!r} is no longer "
                  "generated (the solution or the mutator changed): remove or update the entry",
                  file=sys.stderr)  # fmt: skip
        return 2
    if args.list:
        for lab in labs:
            for m in generated[lab]:
                print(f"{lab}\t{m.id}")
        return 0

    chosen: dict[str, list[Mutant]] = {}
    for lab in labs:
        mutants = generated[lab]
        if args.sample is not None and args.sample < len(mutants):
            mutants = sorted(random.Random(f"{args.seed}/{lab}").sample(mutants, args.sample),
                             key=generated[lab].index)  # fmt: skip
        chosen[lab] = mutants
    jobs = [Job(lab, codes[lab], "") for lab in labs]
    jobs += [Job(lab, m.source, m.id) for lab in labs for m in chosen[lab]]
    results = run_jobs(jobs, workers=args.workers, time_limit=args.time_limit, timeout=args.timeout)

    status = 0
    survivors: list[Mutant] = []
    rows = []
    for lab in labs:
        killed_solution, why = results[lab, ""]
        if killed_solution:
            print(f"error: lab {lab}: the instructor solution itself fails: {why}", file=sys.stderr)
            status = 2
        counts = Counter[str]()
        for m in chosen[lab]:
            killed, why = results[lab, m.id]
            if (lab, m.id) in equivalents:
                counts["equivalent"] += 1
                if killed:
                    print(f"error: lab {lab}: {m.id!r} is listed as equivalent but the checks "
                          f"kill it ({why}): a wrong entry, or a check rejects correct code",
                          file=sys.stderr)  # fmt: skip
                    status = 2
            elif killed:
                counts["killed"] += 1
            else:
                survivors.append(m)
                counts["survived"] += 1
        judged = len(chosen[lab]) - counts["equivalent"]
        score = f"{100 * counts['killed'] / judged:.1f}%" if judged else "-"
        rows.append((lab, len(chosen[lab]), counts["killed"], counts["equivalent"],
                     counts["survived"], score))  # fmt: skip

    header = ("lab", "mutants", "killed", "equivalent", "survived", "score")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(str(cell) for cell in row) + " |")
    elapsed = time.monotonic() - started
    sample = f", a sample of {args.sample} per lab (seed {args.seed})" if args.sample else ""
    print(f"{sum(len(chosen[lab]) for lab in labs)} mutants in {elapsed:.0f} s "
          f"with {args.workers} workers{sample}")  # fmt: skip

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    report = ["# Surviving mutants", ""]
    if not survivors:
        report.append("None.")
    for m in survivors:
        report += [f"## {m.lab} `{m.id}`", "", m.description, "", "```diff",
                   _context(codes[m.lab], m), "```", ""]  # fmt: skip
    (ARTIFACTS / "survivors.md").write_text("\n".join(report) + "\n", encoding="utf-8")
    if survivors:
        print(f"{len(survivors)} survivors: see {(ARTIFACTS / 'survivors.md').relative_to(REPO)}")
        status = status or 1
    return status


if __name__ == "__main__":
    sys.exit(main())
