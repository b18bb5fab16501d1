"""One student's file, one lab, judged here, run somewhere it cannot hurt (issue 25).

A submission is *untrusted code run on the lecturer's machine*: it may try to pass without
the work (forge a reply, call ctxlab's solution, reach into the grader), hurt the machine
or later runs (rewrite the grader's files, leave a process, flood memory, disk or the
terminal), or hang. :func:`grade_file` runs the file only in a spawned child
(:class:`~.child.Child`, walled in as :mod:`.confine` says) whose copy of ctxlab has the
lab's solution replaced by a stub that raises; makes every verdict here from each call's
plain record (:class:`~.child.InChild`: the time limit counts the child's start, the first
check out of time ends the lab, checks lost to a dying child share one limit); and
fingerprints the grader's files (ctxlab with its ``__pycache__``, the repository's and
``tests/``'s top level, ``site-packages``' top level, the interpreter) before and after:
a change is the outcome ``"refused"``, naming the files.
"""

from __future__ import annotations

import ast
import contextlib
import math
import os
import re
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ctxlab.lab.grading import drawn
from ctxlab.lab.grading.child import (
    Child,
    ChildGone,
    InChild,
    Spawn,
    Status,
    escape,
    read_record,
    sandbox_folder,
)
from ctxlab.lab.grading.confine import (
    MARKER,
    MEMORY_LIMIT,
    bwrap_works,
    guard_parent,
    missing_protections,
    own_children,
    package_dir,
    reap_strays,
    repository_dir,
)
from ctxlab.lab.grading.engine import get_time_limit, run_rows
from ctxlab.lab.grading.labs import load
from ctxlab.lab.grading.report import LabReport, diagnosed
from ctxlab.lab.grading.usage import GradingUsageError

__all__ = [
    "MARKER",
    "MEMORY_LIMIT",
    "ChildGone",
    "GradeOutcome",
    "Status",
    "bwrap_works",
    "escape",
    "grade_file",
    "missing_protections",
    "read_record",
]

#: The largest submission accepted, in bytes.
SUBMISSION_LIMIT: Final = 1024 * 1024


@dataclass(frozen=True)
class GradeOutcome:
    """One submission, one lab, through the sandbox.

    ``status``: ``ok`` every check ran (passed or not); ``timeout`` a check hit the time
    limit; ``crashed`` the child died; ``refused`` the submission touched what it must not
    (the grader's files) or is not allowed; ``invalid`` a syntax or import error, or no
    function of the lab's name. ``reason``: one line, plain words, control characters
    escaped (``''`` when ok). ``report``: the lab's report when checks ran (also for
    timeout/crashed: the rows not run are failed "not run"). ``seconds``: wall time;
    ``cpu_seconds``: CPU time of the grader and the child for this submission-lab.
    """

    lab: str
    status: Status
    reason: str
    report: LabReport | None
    seconds: float
    cpu_seconds: float


# ----------------------------------------------------------------------------------------
# The child's ctxlab: a copy without the lab's solution


def stubs(lab: str) -> dict[str, tuple[str, ...]]:
    """The functions (``name`` or ``Class.method``) of each module (a path inside the
    package) whose body the child's copy of ctxlab replaces with a stub: the lab's
    ``stubbed`` solution, as its file declares it."""
    found: dict[str, tuple[str, ...]] = {}
    root = package_dir()
    for function in load(lab).stubbed:
        source = sys.modules[function.__module__].__file__ or ""
        module = Path(source).resolve().relative_to(root).as_posix()
        found[module] = (*found.get(module, ()), function.__qualname__)
    return found


def _stub_source(source: str, names: tuple[str, ...], lab: str, module: str) -> str:
    """``source`` with the body of each function in ``names`` replaced by a raise."""
    tree = ast.parse(source)
    wanted = set(names)
    found: set[str] = set()

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + node.name
                if name in wanted:
                    found.add(name)
                    message = (
                        f"ctxlab's {name} is not available while Lab {lab} is graded:"
                        " the grader runs your own code only"
                    )
                    node.body = ast.parse(
                        "raise __import__('ctxlab.errors', fromlist=['CtxlabError'])"
                        f".CtxlabError({message!r})"
                    ).body
                    node.decorator_list = [
                        d for d in node.decorator_list if not _is_cache_decorator(d)
                    ]
            elif isinstance(node, ast.ClassDef):
                visit(node.body, prefix + node.name + ".")

    visit(tree.body, "")
    missing = wanted - found
    if missing:  # the solution moved: a grader bug, never the student's
        raise GradingUsageError(
            f"the sandbox cannot find {', '.join(sorted(missing))} in ctxlab/{module}",
            option="lab",
        )
    return ast.unparse(ast.fix_missing_locations(tree))


def _is_cache_decorator(node: ast.expr) -> bool:
    text = ast.unparse(node)
    return "cache" in text


_TREES: dict[str, Path] = {}
_TREES_LOCK = threading.Lock()


def child_tree(lab: str) -> Path:
    """The folder the child imports ``ctxlab`` from for ``lab`` (made once per process)."""
    with _TREES_LOCK:
        if lab in _TREES:
            return _TREES[lab]
        source = package_dir()
        lib = sandbox_folder() / f"lib-{lab.replace('.', '_')}"
        target = lib / "ctxlab"
        stubbed = stubs(lab)
        for path in sorted(source.rglob("*")):  # the modules and their data files
            if "__pycache__" in path.parts or not path.is_file():
                continue
            relative = path.relative_to(source)
            destination = target / relative
            destination.parent.mkdir(parents=True, exist_ok=True)
            names = stubbed.get(relative.as_posix())
            if names:
                text = path.read_text(encoding="utf-8")
                destination.write_text(_stub_source(text, names, lab, relative.as_posix()), "utf-8")
            else:
                destination.write_bytes(path.read_bytes())
        import compileall

        compileall.compile_dir(str(target), quiet=2, workers=1)
        for path in [lib, *lib.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        _TREES[lab] = lib
        return lib


# ----------------------------------------------------------------------------------------
# What the grader's files are (before and after each submission)


def _watched_roots() -> list[Path]:
    roots = [package_dir()]
    import sysconfig

    for key in ("purelib", "platlib"):
        with contextlib.suppress(KeyError):
            roots.append(Path(sysconfig.get_paths()[key]))
    return roots


_WATCHED_NAME = re.compile(
    r"(.*\.(py|pyc|pth)|conftest.*|sitecustomize.*|usercustomize.*|ctxlab|__pycache__)$"
)


def fingerprint() -> dict[str, tuple[int, ...]]:
    """``{path: (size, mtime, ctime, inode, mode)}`` of every file a later run uses.

    The change time (``st_ctime``) cannot be set back by a process, so a forged
    ``__pycache__`` file with the source's mtime and size still shows.
    """
    seen: dict[str, tuple[int, ...]] = {}

    def add(path: Path) -> None:
        try:
            st = path.lstat()
        except OSError:
            return
        seen[str(path)] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode)

    package = package_dir()
    add(package)
    for folder, dirs, files in os.walk(package):
        for name in [*dirs, *files]:
            add(Path(folder) / name)
    for root in _watched_roots()[1:]:  # the top level of site-packages
        add(root)
        with contextlib.suppress(OSError):
            for entry in os.scandir(root):
                add(Path(entry.path))
    repository = repository_dir()
    if repository is not None:
        for place in (repository, repository / "tests"):
            add(place)
            with contextlib.suppress(OSError):
                for entry in os.scandir(place):
                    if _WATCHED_NAME.match(entry.name) and entry.name != "__pycache__":
                        add(Path(entry.path))
                        if entry.is_dir(follow_symlinks=False) and entry.name == "ctxlab":
                            for sub in Path(entry.path).rglob("*"):
                                add(sub)
    for executable in {sys.executable, os.path.realpath(sys.executable)}:
        add(Path(executable))
    return seen


def _compiled_from_source(path: str) -> bool:
    """Is ``path`` a ``__pycache__`` file that Python itself would write for its source
    (the grader's own import of a module it had not imported yet)? Its code must equal
    the source's, compiled here, and its header the source's mtime and size."""
    import importlib.util
    import marshal

    cache = Path(path)
    if cache.suffix != ".pyc" or cache.parent.name != "__pycache__":
        return False
    try:
        source_path = Path(importlib.util.source_from_cache(path))
        data = cache.read_bytes()
        source = source_path.read_bytes()
        st = source_path.stat()
    except (OSError, ValueError):
        return False
    if len(data) < 16 or data[:4] != importlib.util.MAGIC_NUMBER or data[4:8] != bytes(4):
        return False
    if data[8:12] != (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little"):
        return False
    if data[12:16] != (st.st_size & 0xFFFFFFFF).to_bytes(4, "little"):
        return False
    optimize = 2 if ".opt-2." in cache.name else 1 if ".opt-1." in cache.name else 0
    try:
        code = marshal.loads(data[16:])
        expected = compile(source, str(source_path), "exec", dont_inherit=True, optimize=optimize)
    except (ValueError, EOFError, TypeError, SyntaxError):
        return False
    return bool(code == expected)


def _touched(before: dict[str, tuple[int, ...]], after: dict[str, tuple[int, ...]]) -> list[str]:
    """The files that changed, appeared or went, and the folders that appeared. A folder's
    own times change with what is in it, so they are not compared: every file in it is.
    A ``__pycache__`` file that Python wrote for its unchanged source is no change."""
    changed: list[str] = []
    for path, stat in after.items():
        old = before.get(path)
        if old == stat:
            continue
        folder = stat[4] & 0o170000 == 0o040000
        if folder and (old is not None or Path(path).name == "__pycache__"):
            continue
        if old is None and _compiled_from_source(path):
            continue
        changed.append(path)
    changed += [path for path in before if path not in after]
    return sorted(changed)


# ----------------------------------------------------------------------------------------
# One lab


def _cpu_now() -> float:
    if os.name != "posix":
        return time.process_time()
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _one_line(text: str) -> str:
    return escape(" ".join(text.split()), newlines=True)[:500]


def grade_file(
    path: Path, lab: str, *, time_limit: float | None = None, seed: int | None = None
) -> GradeOutcome:
    """Run lab ``lab``'s checks on the function defined in the file ``path``, sandboxed.
    The random rows draw from ``seed`` (when None: ``CTXLAB_SEED``, else a fresh one); they
    run here, in the grader's process (the sandboxed child only answers the calls), so
    calls from several threads at once must share one seed.

    Never raises for anything the submission does (a wrong lab name is a
    :class:`~ctxlab.lab.grading.GradingUsageError`, the caller's mistake). Calls from
    several threads may run at once; but on Linux a process that becomes a child of this
    process during the call and is no sandbox child is taken for one the submission left
    behind and killed, so start no other subprocess from another thread meanwhile.
    """
    spec = load(lab)  # the lab's module is imported here, before the fingerprint
    limit = get_time_limit() if time_limit is None else float(time_limit)
    seed = drawn.use(drawn.fresh_seed(seed), limit)
    started, cpu_start = time.monotonic(), _cpu_now()
    guard_parent()

    def outcome(status: Status, reason: str, report: LabReport | None) -> GradeOutcome:
        return GradeOutcome(
            lab,
            status,
            _one_line(reason),
            report,
            time.monotonic() - started,
            _cpu_now() - cpu_start,
        )

    path = Path(path)
    try:
        size = path.stat().st_size
        if not path.is_file():
            return outcome("refused", f"{path} is not a file", None)
    except OSError as error:
        return outcome("invalid", f"cannot read {path}: {error.strerror}", None)
    if size > SUBMISSION_LIMIT:
        return outcome("refused", f"{path} is larger than {SUBMISSION_LIMIT:,} bytes", None)
    try:
        source = path.read_bytes()
        compile(source, str(path), "exec", dont_inherit=True)
    except SyntaxError as error:
        return outcome(
            "invalid", f"syntax error in {path.name} line {error.lineno}: {error.msg}", None
        )
    except (ValueError, OSError, RecursionError, MemoryError) as error:
        return outcome("invalid", f"{path.name} cannot be read as Python: {error}", None)

    lib = child_tree(lab)
    before = fingerprint()
    children = own_children() if sys.platform.startswith("linux") else set()
    cpu = _cpu_budget(limit, len(spec.steps))
    caller = InChild(Child(spec.arg_names, Spawn(path, lab, spec.keyword, cpu, lib)))
    try:
        with caller:
            results, _ = run_rows(spec.steps, caller, limit)
    finally:
        reap_strays(children)
    after = fingerprint()
    touched = _touched(before, after)
    rows, matched = diagnosed(results)
    cases = drawn.count(lab, (check.key for check in spec.checks))
    report = (
        None
        if caller.invalid
        else LabReport(
            spec.lab,
            spec.keyword,
            rows,
            facts=spec.facts,
            matched=matched,
            seed=seed,
            random_cases=cases,
        )
    )
    if touched:
        shown = ", ".join(escape(p) for p in touched[:8])
        more = f" and {len(touched) - 8} more" if len(touched) > 8 else ""
        return outcome(
            "refused",
            f"{path} changed the grader's files: {shown}{more}; grading stops here",
            report,
        )
    if caller.invalid is not None:
        return outcome("invalid", caller.invalid.en, None)
    return outcome(caller.status, caller.reason, report)


def _cpu_budget(limit: float, checks: int) -> int:
    """The child's CPU time, in whole seconds, for its whole life: every check it serves.
    Never below what those checks may take by the clock (each check's time limit, on two
    cores): the clock ends a slow check; the CPU limit only ends what escapes the clock."""
    return max(2, math.ceil(2 * limit * checks) + 1)
