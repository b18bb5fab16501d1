"""One student's file, one lab, judged here, run somewhere it cannot hurt (issue 25).

A submission may forge a reply, call ctxlab's solution, rewrite the grader's files, leave a
process, flood memory or disk, or hang. :func:`grade_file` runs it only in a spawned child
(:mod:`.child`, walled in by :mod:`.confine`) whose copy of ctxlab has the lab's solution
replaced by a stub that raises; every verdict is made here; the grader's files are
fingerprinted before and after (a change: ``"refused"``).
"""

from __future__ import annotations

import ast
import contextlib
import math
import os
import re
import shutil
import struct
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ctxlab.lab.grading import drawn
from ctxlab.lab.grading.child import Child, InChild, Spawn, Status, escape
from ctxlab.lab.grading.confine import (
    guard_parent,
    own_children,
    package_dir,
    reap_strays,
    repository_dir,
    sandbox_folder,
)
from ctxlab.lab.grading.engine import get_time_limit, lab_report, run_rows
from ctxlab.lab.grading.labs import load
from ctxlab.lab.grading.report import LabReport
from ctxlab.lab.grading.usage import GradingUsageError

SUBMISSION_LIMIT: Final = 1024 * 1024  # bytes


@dataclass(frozen=True)
class GradeOutcome:
    """One submission, one lab, through the sandbox. ``status``: ``ok`` (every check ran),
    ``timeout``, ``crashed`` (the child died), ``refused`` (it touched the grader's files,
    or is not allowed), ``invalid`` (no such function, a syntax or import error);
    ``reason``: one escaped line; ``report`` when checks ran; wall and CPU seconds."""

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
    package) that the child's copy of ctxlab stubs: the lab's ``stubbed`` solution."""
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
                        d for d in node.decorator_list if "cache" not in ast.unparse(d)
                    ]
            elif isinstance(node, ast.ClassDef):
                visit(node.body, prefix + node.name + ".")

    visit(tree.body, "")
    if missing := wanted - found:  # the solution moved: a grader bug, never the student's
        raise GradingUsageError(
            f"the sandbox cannot find {', '.join(sorted(missing))} in ctxlab/{module}",
            option="lab",
        )
    return ast.unparse(ast.fix_missing_locations(tree))


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
        shutil.copytree(
            source, target, ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True
        )
        for module, names in stubs(lab).items():
            text = (source / module).read_text(encoding="utf-8")
            (target / module).write_text(_stub_source(text, names, lab, module), "utf-8")
        import compileall

        compileall.compile_dir(str(target), quiet=2, workers=1)
        for path in [lib, *lib.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        _TREES[lab] = lib
        return lib


# ----------------------------------------------------------------------------------------
# What the grader's files are (before and after each submission)

_WATCHED_NAME = re.compile(r"(.*\.(py|pyc|pth)|conftest.*|sitecustomize.*|usercustomize.*|ctxlab)$")


def fingerprint() -> dict[str, tuple[int, ...]]:
    """``{path: (size, mtime, ctime, inode, mode)}`` of every file a later run uses (no
    process can set ``st_ctime`` back: a forged ``__pycache__`` file still shows)."""
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
    import sysconfig

    paths = sysconfig.get_paths()
    site = [Path(paths[key]) for key in ("purelib", "platlib") if key in paths]  # top level
    repository = repository_dir()
    for place in [*site, *([] if repository is None else [repository, repository / "tests"])]:
        add(place)
        with contextlib.suppress(OSError):
            for entry in os.scandir(place):
                if place in site or _WATCHED_NAME.match(entry.name):
                    add(Path(entry.path))
    for executable in {sys.executable, os.path.realpath(sys.executable)}:
        add(Path(executable))
    return seen


def _compiled_from_source(path: str) -> bool:
    """Is ``path`` a ``__pycache__`` file Python itself would write for its source (the
    grader's own first import): the same code, the source's mtime and size?"""
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
    # no flags (checked by mtime and size), the source's mtime and size
    stamp = struct.pack("<4xII", int(st.st_mtime) & 0xFFFFFFFF, st.st_size & 0xFFFFFFFF)
    if data[:16] != importlib.util.MAGIC_NUMBER + stamp:
        return False
    optimize = 2 if ".opt-2." in cache.name else 1 if ".opt-1." in cache.name else 0
    try:
        code = marshal.loads(data[16:])
        expected = compile(source, str(source_path), "exec", dont_inherit=True, optimize=optimize)
    except (ValueError, EOFError, TypeError, SyntaxError):
        return False
    return bool(code == expected)


def _touched(before: dict[str, tuple[int, ...]], after: dict[str, tuple[int, ...]]) -> list[str]:
    """The files that changed, appeared or went, and the folders that appeared (a folder's
    times are not compared); a ``__pycache__`` file Python wrote is no change."""
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
    """This process's CPU seconds and its ended children's (Windows: its own only), to the
    microsecond (``os.times`` counts in 10 ms ticks: too coarse for a 0.1 s submission)."""
    if os.name != "posix":
        return time.process_time()
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def grade_file(
    path: Path, lab: str, *, time_limit: float | None = None, seed: int | None = None
) -> GradeOutcome:
    """Run lab ``lab``'s checks on the function defined in the file ``path``, sandboxed;
    the random rows draw from ``seed`` (None: ``CTXLAB_SEED``, else a fresh one; threads
    grading at once must share one). Never raises for what the submission does. On Linux
    a new child of this process that is no sandbox child is killed as a leftover: start
    no other subprocess from another thread meanwhile."""
    spec = load(lab)  # the lab's module is imported here, before the fingerprint
    limit = get_time_limit() if time_limit is None else float(time_limit)
    seed = drawn.use(drawn.fresh_seed(seed), limit)
    started, cpu_start = time.monotonic(), _cpu_now()
    guard_parent()

    def outcome(status: Status, reason: str, report: LabReport | None = None) -> GradeOutcome:
        reason = escape(" ".join(reason.split()), newlines=True)[:500]  # one line
        return GradeOutcome(
            lab, status, reason, report, time.monotonic() - started, _cpu_now() - cpu_start
        )

    path = Path(path)
    try:
        size = path.stat().st_size
        if not path.is_file():
            return outcome("refused", f"{path} is not a file")
    except OSError as error:
        return outcome("invalid", f"cannot read {path}: {error.strerror}")
    if size > SUBMISSION_LIMIT:
        return outcome("refused", f"{path} is larger than {SUBMISSION_LIMIT:,} bytes")
    try:
        compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
    except SyntaxError as error:
        return outcome("invalid", f"syntax error in {path.name} line {error.lineno}: {error.msg}")
    except (ValueError, OSError, RecursionError, MemoryError) as error:
        return outcome("invalid", f"{path.name} cannot be read as Python: {error}")

    lib = child_tree(lab)
    before = fingerprint()
    children = own_children()  # empty where there is no /proc
    cpu = _cpu_budget(limit, len(spec.steps))
    caller = InChild(Child(spec.arg_names, Spawn(path, lab, spec.keyword, cpu, lib)))
    try:
        with caller:
            results, _ = run_rows(spec.steps, caller, limit)
    finally:
        reap_strays(children)
    after = fingerprint()
    touched = _touched(before, after)
    report = lab_report(spec, results, seed)
    if touched:
        shown = ", ".join(escape(p) for p in touched[:8])
        more = f" and {len(touched) - 8} more" if len(touched) > 8 else ""
        why = f"{path} changed the grader's files: {shown}{more}; grading stops here"
        return outcome("refused", why, None if caller.invalid else report)
    if caller.invalid is not None:
        return outcome("invalid", caller.invalid.en)
    return outcome(caller.status, caller.reason, report)


def _cpu_budget(limit: float, checks: int) -> int:
    """The child's CPU seconds for its life: never below what its checks may take by the
    clock on two cores (the CPU limit only ends what escapes the clock)."""
    return max(2, math.ceil(2 * limit * checks) + 1)
