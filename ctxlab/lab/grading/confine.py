"""How the sandboxed child is confined (issue 25), and what this platform lacks.

:func:`prepare_launch` says how a :class:`~.child.Child` starts: ``python -I -S`` (no
``PYTHONPATH``, user site, ``site-packages``, ``.pth`` or ``sitecustomize``) from a fresh
temporary working directory and home, with a minimal environment carrying the run's
:data:`MARKER`, under ``resource`` limits (CPU time, address space, file size, open files,
processes, no core file) and, on Linux where this process may make one, in a ``pids``
cgroup of its own (:data:`CGROUP_TASKS` tasks; it cannot leave it; emptied after the lab
by :func:`end_cgroup`). On Linux with bubblewrap (``bwrap``) the child runs in new user,
pid, network, IPC and UTS namespaces (no network; no view of the grader's process, so no
``/proc/PPID/mem``, ``ptrace`` or signal to it), with ``/`` mounted read-only, a private
``/tmp``, the repository and ctxlab's own folder hidden, and ``--die-with-parent``; run as
root, it first becomes ``nobody`` (uid 65534). After the lab, every process that still
carries the run's marker is killed (:func:`sweep`), and so is one the grader inherits as a
subreaper (:func:`guard_parent`, :func:`reap_strays`). :func:`missing_protections` says, in
plain words, what this platform lacks.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import ctxlab

__all__ = [
    "LIVE",
    "MARKER",
    "MEMORY_LIMIT",
    "NOBODY",
    "Launch",
    "bwrap_works",
    "child_as_nobody",
    "end_cgroup",
    "guard_parent",
    "missing_protections",
    "own_children",
    "package_dir",
    "prepare_launch",
    "reap_strays",
    "repository_dir",
    "sweep",
]

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
#: The user the child becomes when the grader runs as root (POSIX).
NOBODY: Final = 65534
#: The environment variable that marks every process of one run (to find leftovers).
MARKER: Final = "CTXLAB_SANDBOX_RUN"


# ----------------------------------------------------------------------------------------
# Where ctxlab is (hidden from the child)


def package_dir() -> Path:
    """ctxlab's own folder (the grader's package)."""
    return Path(ctxlab.__file__).resolve().parent


def repository_dir() -> Path | None:
    """The repository ctxlab runs from (None: an installed ctxlab)."""
    root = package_dir().parent
    return root if (root / "pyproject.toml").is_file() else None


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
                    preexec_fn=_become_nobody if child_as_nobody() else None,
                    check=False,
                ).returncode
                == 0
            )
    _BWRAP_WORKS.append(works)
    return works


def _is_root() -> bool:
    return os.name == "posix" and os.geteuid() == 0


def child_as_nobody() -> bool:
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
    if _is_root() and not child_as_nobody() and _pids_cgroup_parent() is None:
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
        if not child_as_nobody():
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
    hidden = {package_dir()}
    repository = repository_dir()
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


def end_cgroup(folder: Path) -> None:
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
class Launch:
    """How to start one child: its command, folder, environment and ``preexec``; the run's
    marker ``token``; whether it is in bubblewrap; its own cgroup (None: none)."""

    command: list[str]
    cwd: str
    env: dict[str, str]
    preexec: Callable[[], None] | None
    token: str
    sandboxed: bool
    cgroup: Path | None


def prepare_launch(
    work: Path, lib: Path, submission: str, keyword: str, lab: str, cpu: int
) -> Launch:
    """How to start the child on ``work/submission`` (``lib``: the ctxlab it imports) with
    ``cpu`` seconds of CPU time: bubblewrap where it works, limits, a cgroup where one can
    be made, a minimal environment carrying a fresh marker."""
    token = hashlib.sha256(os.urandom(16)).hexdigest()[:24]
    as_nobody = child_as_nobody()
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
    return Launch(command, str(work), env, preexec, token, sandboxed, cgroup)


# ----------------------------------------------------------------------------------------
# Ending what the child left


def _processes(needle: bytes | None = None) -> Iterator[tuple[int, bytes, bytes]]:
    """(pid, state, parent's pid) of every process (Linux); with ``needle``, of those
    whose environment holds it."""
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                if needle is not None:
                    with open(f"/proc/{entry.name}/environ", "rb") as stream:
                        if needle not in stream.read(1 << 20).split(b"\0"):
                            continue
                with open(f"/proc/{entry.name}/stat", "rb") as stream:
                    fields = stream.read().rsplit(b")", 1)[-1].split()
            except OSError:
                continue
            if len(fields) > 1:
                yield int(entry.name), fields[0], fields[1]


def sweep(token: str, seconds: float = 3.0) -> int:
    """Kill every process whose environment carries ``token`` (Linux), and wait until
    none is left (at most ``seconds``); how many were killed."""
    if not sys.platform.startswith("linux"):
        return 0
    needle = f"{MARKER}={token}".encode()
    killed = 0
    deadline = time.monotonic() + seconds
    while True:  # what forks while we look, or is still dying, is found by the next round
        found = [
            pid
            for pid, state, _ in _processes(needle)
            if state not in (b"Z", b"X") and pid != os.getpid()  # live, not this process
        ]
        if not found or time.monotonic() > deadline:
            return killed
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGSTOP)
                os.kill(pid, signal.SIGKILL)
                killed += 1
        time.sleep(0.01)


_PARENT_GUARDED: list[bool] = []
#: The pids of the child processes this process started and has not ended yet (every thread's).
LIVE: set[int] = set()
_PR_SET_DUMPABLE: Final = 4
_PR_SET_CHILD_SUBREAPER: Final = 36


def _prctl(option: int, value: int) -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def guard_parent() -> None:
    """Linux: this process is not dumpable (a process of the same user can neither
    ``ptrace`` it nor open its ``/proc/PID/mem``), and it is a *subreaper*: a process that
    the child leaves behind (a double fork, a new session, an emptied environment) becomes
    this process's child when its parent dies, where :func:`reap_strays` finds it."""
    if _PARENT_GUARDED or not sys.platform.startswith("linux"):
        return
    _PARENT_GUARDED.append(True)
    _prctl(_PR_SET_DUMPABLE, 0)
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def own_children() -> set[int]:
    """The pids whose parent is this process (Linux)."""
    me = str(os.getpid()).encode()
    return {pid for pid, _, parent in _processes() if parent == me}


def reap_strays(before: set[int]) -> int:
    """Kill and reap this process's children that were not there before the run and are
    no live sandbox child (a grandchild the submission left, reparented here)."""
    if not sys.platform.startswith("linux"):
        return 0
    killed = 0
    for _ in range(20):
        strays = own_children() - before - LIVE
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
