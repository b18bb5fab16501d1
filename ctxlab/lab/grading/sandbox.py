"""The sandboxed runner: one student's file, one lab, judged here, run somewhere it cannot hurt.

Threat model (issue 25): a submission is *untrusted code run on the lecturer's machine*. It
may try to pass without doing the work (forge a reply, call ctxlab's own solution, reach
into the grader), to hurt the machine or later runs (rewrite the grader's files, leave a
process behind, flood memory, disk or the terminal), or simply hang. :func:`grade_file`

* runs the file only in a child process (:mod:`.worker`), in its own session, started by
  ``python -I -S`` (no ``PYTHONPATH``, user site, ``site-packages``, ``.pth`` or
  ``sitecustomize``) from a fresh temporary working directory and home, with a minimal
  environment, under ``resource`` limits (CPU time, address space, file size, open files,
  processes, no core file) and, on Linux where this process may make one, in a ``pids``
  cgroup of its own (:data:`CGROUP_TASKS` tasks; it cannot leave it; emptied after the lab);
* gives the child a *copy* of ctxlab in which the lab's solution (and its private helpers)
  is replaced by a stub that raises :class:`~ctxlab.errors.CtxlabError`: whatever the child
  does to a watch, there is no solution to call (the earlier labs' functions that the
  notebooks allow stay). The child's own claim about that (``"reference"``) is ignored;
* on Linux with bubblewrap (``bwrap``), runs the child in new user, pid, network, IPC and
  UTS namespaces (no network; no view of the grader's process, so no ``/proc/PPID/mem``,
  ``ptrace`` or signal to it), with ``/`` mounted read-only, a private ``/tmp``, the
  repository and ctxlab's own folder hidden, and ``--die-with-parent``; run as root, it
  first becomes ``nobody`` (uid 65534);
* makes every verdict in this process from the plain JSON of each call, on a bounded
  channel (reply size, replies only when asked, standard error drained by a thread into a
  bounded buffer, never a file), with control characters escaped before anything is shown;
* kills the child's whole process group after the lab (``killpg``), and every process that
  still carries the run's marker in its environment (a double fork into a new session);
* fingerprints the grader's files (ctxlab's package with its ``__pycache__``, the
  repository's and ``tests/``'s ``conftest.py`` and top-level modules, the top level of
  ``site-packages`` with its ``.pth``/``sitecustomize``, the interpreter) before and after
  the submission: a change is the outcome ``"refused"``, naming the files.

The time limit holds for the start-up too: the lab's checks run one after another, each
within the time limit (the child's start counted in it); the first check that does not end
in time ends the lab (the rest: "not run"), and checks lost to a child that died share one
time limit between them: a lab costs at most one time limit for a hang, however the child
dies. :func:`missing_protections` says, in plain words, what this platform lacks.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

import ctxlab
from ctxlab.lab.grading import drawn
from ctxlab.lab.grading.calls import Failed, Trial
from ctxlab.lab.grading.declare import Row
from ctxlab.lab.grading.engine import get_time_limit, run_rows
from ctxlab.lab.grading.labs import load
from ctxlab.lab.grading.misconceptions import DIAGNOSIS
from ctxlab.lab.grading.report import LabReport, diagnosed
from ctxlab.lab.grading.runner import NOT_RUN, Outcome, at, hung, unreadable
from ctxlab.lab.grading.text import Text, same
from ctxlab.lab.grading.usage import GradingUsageError
from ctxlab.lab.grading.worker import pack

__all__ = [
    "MEMORY_LIMIT",
    "ChildGone",
    "GradeOutcome",
    "Status",
    "escape",
    "grade_file",
    "missing_protections",
    "read_record",
]

Status = Literal["ok", "timeout", "crashed", "refused", "invalid"]

#: The child's address space (RLIMIT_AS), in bytes.
MEMORY_LIMIT: Final = 1024 * 1024 * 1024
#: The largest file the child may write (RLIMIT_FSIZE), in bytes.
FILE_LIMIT: Final = 16 * 1024 * 1024
#: The size of the private /tmp (with the work folder) under bubblewrap, in bytes.
DISK_LIMIT: Final = 64 * 1024 * 1024
#: Seconds between the CPU soft limit (SIGXCPU) and the hard one (SIGKILL).
CPU_GRACE: Final = 2
#: Open files (RLIMIT_NOFILE) and processes (RLIMIT_NPROC, beyond what the user has).
OPEN_FILES: Final = 256
PROCESSES: Final = 32
#: Tasks (processes and threads) in the child's own cgroup, where one can be made (Linux).
CGROUP_TASKS: Final = 64
#: The largest submission accepted, in bytes.
SUBMISSION_LIMIT: Final = 1024 * 1024
#: How much of the child's standard error is kept (the start and the end), in bytes.
STDERR_KEEP: Final = 4096
#: The user the child becomes when the grader runs as root (POSIX).
NOBODY: Final = 65534
#: The environment variable that marks every process of one run (to find leftovers).
MARKER: Final = "CTXLAB_SANDBOX_RUN"

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def escape(text: str, *, newlines: bool = False) -> str:
    """``text`` with every control character (terminal escapes, bidi overrides) shown as
    ``\\xNN``/``\\uNNNN``; newlines kept unless ``newlines`` (then ``\\n``)."""
    text = _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)
    if newlines:
        text = text.replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t")
    return text


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
    root = _package_dir()
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
_BASE: list[Path] = []


def _base() -> Path:
    """This process's folder of sandbox files (removed at exit)."""
    if not _BASE:
        base = Path(tempfile.mkdtemp(prefix="ctxlab-sandbox-"))
        base.chmod(0o711)
        _BASE.append(base)
        import atexit

        atexit.register(shutil.rmtree, base, True)
    return _BASE[0]


def _package_dir() -> Path:
    return Path(ctxlab.__file__).resolve().parent


def child_tree(lab: str) -> Path:
    """The folder the child imports ``ctxlab`` from for ``lab`` (made once per process)."""
    with _TREES_LOCK:
        if lab in _TREES:
            return _TREES[lab]
        source = _package_dir()
        lib = _base() / f"lib-{lab.replace('.', '_')}"
        target = lib / "ctxlab"
        stubbed = stubs(lab)
        for path in sorted(source.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            relative = path.relative_to(source)
            destination = target / relative
            destination.parent.mkdir(parents=True, exist_ok=True)
            text = path.read_text(encoding="utf-8")
            names = stubbed.get(relative.as_posix())
            if names:
                text = _stub_source(text, names, lab, relative.as_posix())
            destination.write_text(text, encoding="utf-8")
        for path in sorted(source.glob("lab/grading/catalogue/*.json")):  # read by a lab's file
            destination = target / path.relative_to(source)
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_bytes(path.read_bytes())
        import compileall

        compileall.compile_dir(str(target), quiet=2, workers=1)
        for path in [lib, *lib.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        _TREES[lab] = lib
        return lib


# ----------------------------------------------------------------------------------------
# What the grader's files are (before and after each submission)


def _repository() -> Path | None:
    root = _package_dir().parent
    return root if (root / "pyproject.toml").is_file() else None


def _watched_roots() -> list[Path]:
    roots = [_package_dir()]
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

    package = _package_dir()
    add(package)
    for folder, dirs, files in os.walk(package):
        for name in [*dirs, *files]:
            add(Path(folder) / name)
    for root in _watched_roots()[1:]:  # the top level of site-packages
        add(root)
        with contextlib.suppress(OSError):
            for entry in os.scandir(root):
                add(Path(entry.path))
    repository = _repository()
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
# What this platform can do


def _bwrap() -> str | None:
    # CTXLAB_BWRAP: another bwrap, or "none" to grade without it (the tests of both ways)
    chosen = os.environ.get("CTXLAB_BWRAP", "")
    if chosen:
        return shutil.which(chosen) if chosen != "none" else None
    return shutil.which("bwrap")


_BWRAP_WORKS: list[bool] = []


def bwrap_works() -> bool:
    """Can bubblewrap make its namespaces here (tried once per process)?"""
    if _BWRAP_WORKS:
        return _BWRAP_WORKS[0]
    works = False
    bwrap = _bwrap()
    if bwrap is not None and sys.platform.startswith("linux"):
        command = [*_bwrap_args(bwrap, None, None), _python(), "-I", "-S", "-c", "pass"]
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            works = (
                subprocess.run(
                    command,
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    timeout=20,
                    preexec_fn=_become_nobody if _as_nobody() else None,
                    check=False,
                ).returncode
                == 0
            )
    _BWRAP_WORKS.append(works)
    return works


def _is_root() -> bool:
    return os.name == "posix" and os.geteuid() == 0


def _as_nobody() -> bool:
    """Run as root: can the child become ``nobody`` and still run Python (every folder
    up to the interpreter and the standard library open to others)?"""
    if not _is_root():
        return False
    for target in (Path(_python()), Path(os.__file__).resolve()):
        for path in (target, *target.parents):
            try:
                if not path.stat().st_mode & 0o005 & (0o005 if path == target else 0o001):
                    return False
            except OSError:
                return False
    return True


def missing_protections() -> tuple[str, ...]:
    """What this platform lacks, each in plain words with how to get it ('' none)."""
    container = (
        "or grade inside a throwaway container (README, 'Grading untrusted code: the"
        " sandbox': docker run --security-opt seccomp=unconfined ... with bubblewrap"
        " installed in it; podman run works the same)"
    )
    if os.name != "posix":
        return (
            "Windows: no process group kill of grandchildren, no resource limits, no"
            " namespaces; a submission can reach the grader and your files (only the"
            f" fingerprint check after each submission stands) -- {container}",
        )
    lines: list[str] = []
    if not sys.platform.startswith("linux"):
        lines.append(
            f"{sys.platform}: no bubblewrap, so no private network, /tmp or read-only"
            " files, and a process a submission leaves in a new session without the"
            f" run's marker is not found -- {container}"
        )
        if not _is_root():
            lines.append(
                "the submission runs as your own user: it can signal (SIGSTOP) the grader"
                " and write your files (the fingerprint check refuses it afterwards)"
            )
        return tuple(lines)
    if _is_root() and not _as_nobody() and _pids_cgroup_parent() is None:
        lines.append(
            "run as root, with the interpreter in a folder other users cannot open: the"
            " submission cannot become nobody, so the process-count limit does not hold"
            " (root is exempt) -- run the grader as an ordinary user, or use a Python"
            " installed under /usr or /opt"
        )
    if not bwrap_works():
        why = "is not installed" if _bwrap() is None else "cannot create namespaces here"
        lines.append(
            f"bubblewrap (bwrap) {why}: no private network, pid namespace, read-only"
            " files, private /tmp or disk quota; ctxlab's source stays readable -- install"
            " it (Debian/Ubuntu: sudo apt-get install bubblewrap; Fedora: sudo dnf install"
            f" bubblewrap), {container}"
        )
        if not _as_nobody():
            lines.append(
                "without bubblewrap the submission runs as your own user"
                + (" (root)" if _is_root() else "")
                + ": it can SIGSTOP or kill the grader"
                + (", write its memory" if _is_root() else "")
                + " and write your files (the fingerprint check refuses it afterwards)"
            )
    return tuple(lines)


# ----------------------------------------------------------------------------------------
# Starting the child


def _python() -> str:
    """The interpreter the child runs (the base one: ``-S`` needs no venv)."""
    base = getattr(sys, "_base_executable", None) or sys.executable
    return os.path.realpath(base) if os.path.exists(base) else sys.executable


_BOOT = (
    "import sys;sys.path.insert(0,{lib!r});"
    "sys.stderr.reconfigure(line_buffering=True);"
    "from ctxlab.lab.grading.worker import main;raise SystemExit(main())"
)


def _bwrap_args(bwrap: str, lib: Path | None, submission: Path | None) -> list[str]:
    """bubblewrap's arguments: new namespaces, ``/`` read-only, ctxlab and the repository
    hidden, a private ``/tmp`` of :data:`DISK_LIMIT` bytes holding the work folder."""
    args = [
        bwrap,
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--size",
        str(DISK_LIMIT // 4),
        "--tmpfs",
        "/dev/shm",
        "--proc",
        "/proc",
    ]
    hidden = {_package_dir()}
    repository = _repository()
    if repository is not None:
        hidden.add(repository)
    python = Path(_python())
    for folder in sorted(hidden):
        if folder != Path("/") and folder not in python.parents:
            args += ["--tmpfs", str(folder)]
    args += ["--size", str(DISK_LIMIT), "--tmpfs", "/tmp"]
    if lib is not None:
        args += ["--ro-bind", str(lib), "/tmp/lib"]
    args += ["--dir", "/tmp/work/home", "--dir", "/tmp/work/tmp", "--chdir", "/tmp/work"]
    if submission is not None:
        args += ["--ro-bind", str(submission), "/tmp/work/submission.py"]
    return args


def _become_nobody() -> None:  # pragma: no cover - runs in the forked child
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def _user_processes(uid: int) -> int:
    count = 0
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                with contextlib.suppress(OSError):
                    if entry.stat().st_uid == uid:
                        count += 1
    return count


def _limits(
    cpu_seconds: int, processes: int, as_nobody: bool, cgroup: Path | None
) -> Callable[[], None]:
    """The function run in the child before ``exec``: its own cgroup (where there is one),
    resource limits, and ``nobody``."""
    import resource

    wanted = [
        (resource.RLIMIT_CPU, cpu_seconds),
        (resource.RLIMIT_AS, MEMORY_LIMIT),
        (resource.RLIMIT_FSIZE, FILE_LIMIT),
        (resource.RLIMIT_NOFILE, OPEN_FILES),
        (resource.RLIMIT_NPROC, processes),
        (resource.RLIMIT_CORE, 0),
    ]

    procs = None if cgroup is None else str(cgroup / "cgroup.procs")

    def preexec() -> None:  # pragma: no cover - runs in the forked child
        if procs is not None:
            with contextlib.suppress(OSError), open(procs, "w", encoding="ascii") as stream:
                stream.write(str(os.getpid()))
        for which, value in wanted:
            with contextlib.suppress(ValueError, OSError):
                _, hard = resource.getrlimit(which)
                # CPU time: the soft limit ends the child by SIGXCPU (read as a timeout);
                # the hard one, two seconds later, by SIGKILL if it ignores that signal
                want = value + CPU_GRACE if which == resource.RLIMIT_CPU else value
                top = want if hard == resource.RLIM_INFINITY else min(want, hard)
                resource.setrlimit(which, (min(value, top), top))
        if as_nobody:
            _become_nobody()

    return preexec


def _pids_cgroup_parent() -> Path | None:
    """Linux: the folder of this process's cgroup in the ``pids`` hierarchy (cgroup v1),
    or in the unified one (v2) when its children may use ``pids``; None otherwise."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        lines = Path("/proc/self/cgroup").read_text(encoding="ascii").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for line in lines:
        _, controllers, relative = [*line.split(":", 2), "", ""][:3]
        if "pids" in controllers.split(","):
            folder = Path("/sys/fs/cgroup/pids") / relative.lstrip("/")
            return folder if folder.is_dir() else None
    for line in lines:
        if line.startswith("0::"):
            folder = Path("/sys/fs/cgroup") / line[3:].lstrip("/")
            try:
                enabled = (folder / "cgroup.subtree_control").read_text(encoding="ascii")
            except OSError:
                return None
            return folder if "pids" in enabled.split() else None
    return None


def _new_pids_cgroup(token: str) -> Path | None:
    """A new cgroup of at most :data:`CGROUP_TASKS` tasks for one child, or None when
    this process may not make one (an ordinary user without delegation)."""
    parent = _pids_cgroup_parent()
    if parent is None:
        return None
    folder = parent / f"ctxlab-{token}"
    try:
        folder.mkdir()
        (folder / "pids.max").write_text(str(CGROUP_TASKS), encoding="ascii")
    except OSError:
        with contextlib.suppress(OSError):
            folder.rmdir()
        return None
    return folder


def _end_cgroup(folder: Path) -> None:
    """Kill every process in ``folder`` (it cannot leave it), then remove it."""
    for _ in range(300):
        try:
            pids = [int(p) for p in (folder / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            break
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)
    with contextlib.suppress(OSError):
        folder.rmdir()


@dataclass
class _Launch:
    command: list[str]
    cwd: str
    env: dict[str, str]
    preexec: Callable[[], None] | None
    token: str
    sandboxed: bool
    cgroup: Path | None


def _launch(work: Path, lib: Path, submission: str, keyword: str, lab: str, cpu: int) -> _Launch:
    token = hashlib.sha256(os.urandom(16)).hexdigest()[:24]
    as_nobody = _as_nobody()
    sandboxed = bwrap_works()
    inside_lib, inside_work = ("/tmp/lib", "/tmp/work") if sandboxed else (str(lib), str(work))
    env = {
        "HOME": f"{inside_work}/home",
        "TMPDIR": f"{inside_work}/tmp",
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        MARKER: token,
    }
    python = [
        _python(),
        "-I",
        "-S",
        "-B",
        "-c",
        _BOOT.format(lib=inside_lib),
        f"{inside_work}/{submission}",
        keyword,
        lab,
    ]
    processes = PROCESSES
    if os.name == "posix" and not as_nobody:  # RLIMIT_NPROC counts all the user's processes
        processes += _user_processes(os.getuid())
    cgroup = _new_pids_cgroup(token)
    preexec = _limits(cpu, processes, as_nobody, cgroup) if os.name == "posix" else None
    if sandboxed:
        bwrap = _bwrap()
        assert bwrap is not None
        command = [*_bwrap_args(bwrap, lib, work / submission), *python]
    else:
        command = python
    return _Launch(command, str(work), env, preexec, token, sandboxed, cgroup)


def _marked(needle: bytes) -> list[int]:
    """The live (not zombie) processes whose environment holds ``needle`` (Linux)."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                with open(f"/proc/{entry.name}/environ", "rb") as stream:
                    environ = stream.read(1 << 20)
                if needle not in environ.split(b"\0"):
                    continue
                with open(f"/proc/{entry.name}/stat", "rb") as stream:
                    stat = stream.read()
            except OSError:
                continue
            if stat[stat.rfind(b")") + 2 :][:1] not in (b"Z", b"X"):
                found.append(int(entry.name))
    return found


def _sweep(token: str, seconds: float = 3.0) -> int:
    """Kill every process whose environment carries ``token`` (Linux), and wait until
    none is left (at most ``seconds``); how many were killed."""
    if not sys.platform.startswith("linux"):
        return 0
    needle = f"{MARKER}={token}".encode()
    killed = 0
    deadline = time.monotonic() + seconds
    while True:  # what forks while we look, or is still dying, is found by the next round
        found = _marked(needle)
        if not found or time.monotonic() > deadline:
            return killed
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGSTOP)
                os.kill(pid, signal.SIGKILL)
                killed += 1
        time.sleep(0.01)


_PARENT_GUARDED: list[bool] = []
#: The pids of the children this process started and has not ended yet (every thread's).
_LIVE: set[int] = set()
_PR_SET_DUMPABLE: Final = 4
_PR_SET_CHILD_SUBREAPER: Final = 36


def _prctl(option: int, value: int) -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _guard_parent() -> None:
    """Linux: this process is not dumpable (a process of the same user can neither
    ``ptrace`` it nor open its ``/proc/PID/mem``), and it is a *subreaper*: a process that
    the child leaves behind (a double fork, a new session, an emptied environment) becomes
    this process's child when its parent dies, where :func:`_reap_strays` finds it."""
    if _PARENT_GUARDED or not sys.platform.startswith("linux"):
        return
    _PARENT_GUARDED.append(True)
    _prctl(_PR_SET_DUMPABLE, 0)
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def _children() -> set[int]:
    """The pids whose parent is this process (Linux)."""
    me = str(os.getpid())
    found: set[int] = set()
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as stream:
                    stat = stream.read().decode("ascii", "replace")
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2 :].split()
            if len(fields) > 1 and fields[1] == me:
                found.add(int(entry.name))
    return found


def _reap_strays(before: set[int]) -> int:
    """Kill and reap this process's children that were not there before the run and are
    no live sandbox child (a grandchild the submission left, reparented here)."""
    if not sys.platform.startswith("linux"):
        return 0
    killed = 0
    for _ in range(20):
        strays = _children() - before - _LIVE
        if not strays:
            break
        for pid in strays:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
        for pid in strays:
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)
    return killed


# ----------------------------------------------------------------------------------------
# The child, seen from here


class ChildGone(BaseException):
    """The child cannot answer (a ``BaseException``: no check's ``except`` takes it).
    ``out_of_cpu``: it was ended by its CPU-time limit (a timeout, not a crash)."""

    def __init__(self, why: str, *, out_of_cpu: bool = False) -> None:
        super().__init__(why)
        self.why = why
        self.out_of_cpu = out_of_cpu


class _Child:
    """One sandboxed child serving one lab's calls."""

    MAX_REPLY: Final = 16 * 1024 * 1024

    def __init__(self, path: Path, lab: str, cpu: int) -> None:
        self.path = path
        self.lab = lab
        self.cpu = cpu
        self.keyword = load(lab).keyword
        self.process: subprocess.Popen[bytes] | None = None
        self.launch: _Launch | None = None
        self.work: Path | None = None
        self._replies: list[dict[str, Any] | ChildGone] = []
        self._wake = threading.Condition()
        self._asked = 0
        self._head = bytearray()
        self._tail = bytearray()
        self.stderr_bytes = 0
        self.started = False

    # -------------------------------------------------------------- start and stop

    def start(self, limit: float) -> dict[str, Any]:
        """Start the child; its first reply (``ready``/``import_error``/``missing``)."""
        self.stop()
        work = Path(tempfile.mkdtemp(prefix="run-", dir=_base()))
        for sub in ("home", "tmp"):
            (work / sub).mkdir()
        shutil.copyfile(self.path, work / "submission.py")
        if _as_nobody():
            for path in (work, work / "home", work / "tmp", work / "submission.py"):
                os.chown(path, NOBODY, NOBODY)
        self.work = work
        lib = child_tree(self.lab)
        self.launch = launch = _launch(work, lib, "submission.py", self.keyword, self.lab, self.cpu)
        self._replies = []
        self._asked = 1  # the hello
        self._head, self._tail, self.stderr_bytes = bytearray(), bytearray(), 0
        self.process = subprocess.Popen(
            launch.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=launch.cwd,
            env=launch.env,
            start_new_session=os.name == "posix",
            preexec_fn=launch.preexec,
            close_fds=True,
        )
        _LIVE.add(self.process.pid)
        threading.Thread(
            target=self._read, args=(self.process, launch.sandboxed), daemon=True
        ).start()
        threading.Thread(target=self._drain, args=(self.process,), daemon=True).start()
        return self.reply(limit)

    def stop(self, *, graceful: bool = False) -> None:
        """Kill the child, everything it started, and remove its folder. ``graceful``: first
        close its channel and give it a moment to exit by itself (so that its CPU time is
        counted: a killed pid namespace's processes are not reaped here)."""
        process, launch = self.process, self.launch
        if process is not None and graceful and process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(0.5)
        if process is not None:
            if os.name == "posix":
                with contextlib.suppress(OSError):
                    os.killpg(process.pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(5)
            _LIVE.discard(process.pid)
            for stream in (process.stdin,):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
        if launch is not None:
            if launch.cgroup is not None:
                _end_cgroup(launch.cgroup)
            _sweep(launch.token)
        if self.work is not None:
            shutil.rmtree(self.work, ignore_errors=True)
        self.process = self.launch = self.work = None

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    # -------------------------------------------------------------- the channel

    def _read(self, process: subprocess.Popen[bytes], bwrap: bool) -> None:
        import json

        stream = process.stdout
        assert stream is not None
        while True:
            try:
                line = stream.readline(self.MAX_REPLY + 1)
            except (OSError, ValueError):
                line = b""
            message: dict[str, Any] | ChildGone
            if not line:
                message = _gone(process, bwrap)
            elif len(line) > self.MAX_REPLY or not line.endswith(b"\n"):
                message = ChildGone(f"it sent a reply larger than {self.MAX_REPLY:,} bytes")
            else:
                try:
                    parsed = json.loads(line.decode("ascii"))
                except (ValueError, RecursionError):
                    parsed = None
                message = (
                    parsed
                    if isinstance(parsed, dict)
                    else ChildGone("it sent a reply that is not a JSON object")
                )
            with self._wake:
                if not isinstance(message, ChildGone) and len(self._replies) >= self._asked:
                    message = ChildGone("it sent a reply nobody asked for")
                self._replies.append(message)
                self._wake.notify_all()
            if isinstance(message, ChildGone):
                with contextlib.suppress(OSError):
                    stream.close()
                return

    def _drain(self, process: subprocess.Popen[bytes]) -> None:
        stream = process.stderr
        assert stream is not None
        with contextlib.suppress(OSError, ValueError):
            while chunk := os.read(stream.fileno(), 65536):
                self.stderr_bytes += len(chunk)
                room = STDERR_KEEP - len(self._head)
                if room > 0:
                    self._head += chunk[:room]
                    chunk = chunk[room:]
                self._tail = (self._tail + chunk)[-STDERR_KEEP:]
        with contextlib.suppress(OSError):
            stream.close()

    def reply(self, limit: float) -> dict[str, Any]:
        deadline = time.monotonic() + max(limit, 0.0)
        index = self._asked - 1
        with self._wake:
            while len(self._replies) <= index:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ChildGone(f"it did not answer within {limit:g} s")
                self._wake.wait(left)
            reply = self._replies[index]
        if isinstance(reply, ChildGone):
            raise reply
        return reply

    def stderr_text(self) -> str:
        head = self._head.decode("utf-8", "replace")
        if self.stderr_bytes <= STDERR_KEEP:
            return head
        tail = bytes(self._tail)[-(STDERR_KEEP - len(self._head) or STDERR_KEEP) :]
        cut = self.stderr_bytes - len(self._head) - len(tail)
        middle = f"\n[... {cut:,} bytes cut ...]\n" if cut > 0 else ""
        return head + middle + tail.decode("utf-8", "replace")

    def call(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        process = self.process
        if process is None or process.stdin is None:
            raise ChildGone("it is not running")
        request = pack((tuple(args), dict(kwargs), load(self.lab).arg_names))
        with self._wake:
            self._asked += 1
        try:
            process.stdin.write(request)
            process.stdin.flush()
        except (OSError, ValueError):
            raise _gone(process, self.launch is not None and self.launch.sandboxed) from None
        # the check's own time limit ends this wait (the child is killed)
        return read_record(self.reply(3600.0))


_RECORD_KEYS: Final = {
    "returned",
    "raised",
    "too_large",
    "changed",
    "output",
    "output_cut",
    "reference",
}


def read_record(reply: dict[str, Any]) -> dict[str, Any]:
    """A reply as the call's record :class:`Trial` reads (``reference`` always False: the
    child's word is never taken for it), or :class:`ChildGone` when it is not one."""
    if "worker_error" in reply:
        raise ChildGone(f"it failed: {escape(str(reply['worker_error']))[:600]}")
    if not set(reply) <= _RECORD_KEYS or len({"returned", "raised", "too_large"} & set(reply)) != 1:
        raise ChildGone("it sent a reply that is not a call's record")
    changed = reply.get("changed", [])
    raised = reply.get("raised")
    if (
        not isinstance(reply.get("output", ""), str)
        or type(reply.get("output_cut", 0)) is not int
        or type(reply.get("reference", False)) is not bool
        or not isinstance(changed, list)
        or not all(isinstance(name, str) for name in changed)
        or ("raised" in reply and not _is_error(raised))
        or ("too_large" in reply and not isinstance(reply["too_large"], str))
    ):
        raise ChildGone("it sent a reply that is not a call's record")
    return {**reply, "reference": False, "output": escape(reply.get("output", ""))}


def _is_error(data: object) -> bool:
    return (
        isinstance(data, dict)
        and isinstance(data.get("type"), str)
        and isinstance(data.get("base"), str)
        and isinstance(data.get("message"), str)
        and isinstance(data.get("attributes", {}), dict)
    )


def _gone(process: subprocess.Popen[bytes], bwrap: bool) -> ChildGone:
    """Why the child's channel closed, from how its process ended (``bwrap``: it is
    bubblewrap, which passes a signal's end on as the exit code 128 + its number)."""
    try:
        code = process.wait(2)
    except subprocess.TimeoutExpired:
        return ChildGone("it closed its channel")
    signalled = -code if code < 0 else code - 128 if code > 128 and bwrap else 0
    if signalled:
        xcpu = getattr(signal, "SIGXCPU", None)
        if xcpu is not None and signalled == xcpu:
            return ChildGone("it used up its CPU time", out_of_cpu=True)
        try:
            name = signal.Signals(signalled).name
        except ValueError:
            name = f"signal {signalled}"
        return ChildGone(f"the process running your file was ended by {name}")
    if code == 0:
        return ChildGone("the process running your file ended")
    return ChildGone(f"the process running your file exited with code {code}")


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
    _guard_parent()

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

    child_tree(lab)
    before = fingerprint()
    children = _children() if sys.platform.startswith("linux") else set()
    cpu = _cpu_budget(limit, len(spec.steps))
    child = _Child(path, lab, cpu)
    caller = _InSandbox(child)
    try:
        results, _ = run_rows(spec.steps, caller, limit)
    finally:
        child.stop(graceful=True)
        _reap_strays(children)
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


def _plain(detail: Text | None) -> str:
    return "" if detail is None else detail.en


_KEPT_DYING = Text(
    "not run: the process running your file kept dying (one time limit spent)",
    "未运行：运行你的文件的进程一再退出（已用完一个时间限制）",
)


class _InSandbox:
    """The sandboxed caller (:class:`~.engine.Caller`): each row's calls answered by the
    child; what ended the lab early (``status``, ``reason``, ``invalid``) kept for the
    outcome. Checks lost to a child that died share one time limit between them."""

    def __init__(self, child: _Child) -> None:
        self.child = child
        self.status: Status = "ok"
        self.reason = ""
        self.invalid: Text | None = None
        self.lost = 0.0  # seconds of checks lost to a dying child

    def run(self, row: Row, limit: float) -> Outcome:
        begun = time.monotonic()
        detail, how, output = _run_check(self.child, row, limit - self.lost)
        spent = time.monotonic() - begun
        stop: Text | None = None
        if row.key == DIAGNOSIS:  # a known mistake looked for: never the verdict
            detail = detail if how == "ran" else None
        elif how == "invalid":
            self.invalid = stop = detail or same("")
        elif how == "hung" and self.status == "crashed":  # out of the time its deaths left
            stop = _KEPT_DYING
        elif how == "hung":
            self.status, self.reason = "timeout", f"{row.key}: {_plain(detail)}"
            stop = NOT_RUN
        elif how == "gone":
            self.lost += spent
            if self.status == "ok":
                self.status, self.reason = "crashed", f"{row.key}: {_plain(detail)}"
            if self.lost >= limit - 0.05:
                stop = _KEPT_DYING
            output = f"{output}\n{self.child.stderr_text()}".strip("\n")
        said = None if detail is None else Text(escape(detail.en), escape(detail.zh))
        return Outcome("pass" if said is None else "fail", said, escape(output), stop=stop)


def _cpu_budget(limit: float, checks: int) -> int:
    """The child's CPU time, in whole seconds, for its whole life: every check it serves.
    Never below what those checks may take by the clock (each check's time limit, on two
    cores): the clock ends a slow check; the CPU limit only ends what escapes the clock."""
    return max(2, math.ceil(2 * limit * checks) + 1)


def _run_check(
    child: _Child, check: Any, limit: float
) -> tuple[Text | None, Literal["ran", "hung", "gone", "invalid"], str]:
    """One check within ``limit`` seconds, the child's start counted in it: its detail
    (None: passed), how it ended, and what the student's function printed meanwhile."""
    begun = time.monotonic()
    if not child.alive():
        first = not child.started
        try:
            hello = child.start(limit)
        except ChildGone as gone:
            child.stop()
            if "did not answer" in gone.why or gone.out_of_cpu:
                within = f"{child.cpu} s of CPU time" if gone.out_of_cpu else f"{limit:g} s"
                within_zh = f"{child.cpu} 秒 CPU 时间" if gone.out_of_cpu else f"{limit:g} 秒"
                return (
                    Text(
                        f"importing your file did not end within {within}",
                        f"导入你的文件没有在 {within_zh}内结束",
                    ),
                    "hung",
                    "",
                )
            tail = escape(child.stderr_text()[-600:])
            return (
                Text(
                    f"importing your file failed: {gone.why}\n{tail}".strip(),
                    f"导入你的文件失败：{gone.why}\n{tail}".strip(),
                ),
                "gone",
                "",
            )
        if not _is_hello(hello):
            child.stop()
            return (
                Text(
                    "the process running your file sent something else than its greeting",
                    "运行你的文件的进程发来的不是它的问候",
                ),
                "gone",
                "",
            )
        if "ready" not in hello:
            child.stop()
            if "import_error" in hello:
                why = f"importing {child.path} failed: {escape(str(hello['import_error']))}"
            else:
                got = escape(str(hello.get("got", "None")))
                flag = f"-m lab{child.lab.replace('.', '_')}"
                why = (
                    f"{child.path} defines no function {child.keyword}(), which Lab"
                    f" {child.lab} checks (it is {got}). Define it, or choose the lab with {flag}."
                )
            return Text(why, why), ("invalid" if first else "gone"), ""
        child.started = True
    remaining = limit - (time.monotonic() - begun)
    trial = Trial(_not_here, load(child.lab).arg_names, caller=child.call)
    box: list[Text | None] = []
    lost: list[ChildGone] = []

    def target() -> None:
        try:
            check.run(trial)
            box.append(None)
        except Failed as failure:
            box.append(failure.text)
        except ChildGone as gone:
            lost.append(gone)
        except BaseException as error:
            box.append(at(trial) + unreadable(error))

    thread = threading.Thread(target=target, name=f"ctxlab-sandbox-{check.key}", daemon=True)
    thread.start()
    thread.join(max(remaining, 0.0))
    if thread.is_alive():
        child.stop()  # the call it waits for then ends
        thread.join(5)
        return hung(trial, limit), "hung", trial.output
    if lost and lost[0].out_of_cpu:
        child.stop()
        cpu = f"{child.cpu} s"
        return (
            at(trial)
            + Text(
                f"the process running your file used up its CPU time ({cpu} for the whole lab;"
                " an endless loop? busy threads?)",
                f"运行你的文件的进程用完了它的 CPU 时间（整个实验共 {cpu}；死循环？忙碌的线程？）",
            ),
            "hung",
            trial.output,
        )
    if lost:
        child.stop()
        return (
            at(trial)
            + Text(
                f"the call did not come back: {lost[0].why} (os._exit? a crash? a limit?)",
                f"这次调用没有返回结果：{lost[0].why}（os._exit？程序崩溃？超出限制？）",
            ),
            "gone",
            trial.output,
        )
    return (box[0] if box else same("the check ended without a result")), "ran", trial.output


def _is_hello(reply: dict[str, Any]) -> bool:
    """The worker's first line: ``{"ready": true}``, ``{"import_error": str}`` or
    ``{"missing": str, "got": str}``, and nothing else."""
    if reply == {"ready": True}:
        return True
    if set(reply) == {"import_error"}:
        return isinstance(reply["import_error"], str)
    if set(reply) == {"missing", "got"}:
        return isinstance(reply["missing"], str) and isinstance(reply["got"], str)
    return False


def _not_here(*args: Any, **kwargs: Any) -> Any:  # pragma: no cover - never called
    raise AssertionError("the student's function runs in the sandboxed child")
