"""How the sandboxed child is confined (issue 25), and what this platform lacks.

:func:`prepare_launch`: ``python -I -S`` in a fresh folder and home, a minimal environment
carrying the run's :data:`MARKER`, ``resource`` limits, a ``pids`` cgroup where one can be
made and, on Linux with bubblewrap, new namespaces (no network, no view of the grader), ``/``
read-only, a private ``/tmp``, ctxlab and the repository hidden; run as root, it becomes
``nobody``. After the lab, what carries the marker is killed (:func:`sweep`), and so is what
the grader inherits as a subreaper (:func:`reap_strays`); a killed grader's folder and
cgroups go with the next one (:func:`sandbox_folder`).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import ctxlab

MEMORY_LIMIT: Final = 1024 * 1024 * 1024  # address space (RLIMIT_AS), bytes
FILE_LIMIT: Final = 16 * 1024 * 1024  # the largest file written (RLIMIT_FSIZE)
DISK_LIMIT: Final = 64 * 1024 * 1024  # the private /tmp under bubblewrap
CPU_GRACE: Final = 2  # seconds from the CPU soft limit (SIGXCPU) to the hard one
OPEN_FILES: Final = 256
PROCESSES: Final = 32  # RLIMIT_NPROC, beyond what the user has
CGROUP_TASKS: Final = 64  # tasks in the child's own pids cgroup
NOBODY: Final = 65534  # the user the child becomes when the grader runs as root
#: The environment variable that marks every process of one run (to find leftovers).
MARKER: Final = "CTXLAB_SANDBOX_RUN"
#: A sandbox folder's lock: its owner holds it for its life (written once held).
_OWNER: Final = "owner.lock"


@functools.cache
def sandbox_folder() -> Path:
    """This process's folder of sandbox files, removed at exit, else (killed) by the next
    process that makes one: the folders whose owner's lock is free go first."""
    for folder in Path(tempfile.gettempdir()).glob("ctxlab-sandbox-*"):
        fd = _lock(folder / _OWNER, new=False)
        if fd is not None and os.fstat(fd).st_size > 0:  # else its owner is making it
            _remove(folder, fd)
        elif fd is not None:
            os.close(fd)
    base = Path(tempfile.mkdtemp(prefix="ctxlab-sandbox-"))
    base.chmod(0o711)
    fd = _lock(base / _OWNER, new=True)
    if fd is not None:
        os.write(fd, str(os.getpid()).encode())
    atexit.register(_remove, base, fd)
    return base


def _lock(path: Path, *, new: bool) -> int | None:
    """``path`` opened (``new``: made) and locked by this process; None when another process
    holds it or it cannot be opened."""
    flags = os.O_RDWR | getattr(os, "O_NOFOLLOW", 0) | (os.O_CREAT | os.O_EXCL if new else 0)
    try:
        fd = os.open(path, flags, 0o600)
    except OSError:
        return None
    try:
        if sys.platform == "win32":
            import msvcrt

            msvcrt.locking(fd, msvcrt.LK_LOCK if new else msvcrt.LK_NBLCK, 1)
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | (0 if new else fcntl.LOCK_NB))
    except OSError:
        os.close(fd)
        return None
    return fd


def _remove(folder: Path, fd: int | None = None) -> None:
    """Remove a sandbox folder (``fd``: its lock, held here) and its children's cgroups."""
    if fd is not None:
        os.close(fd)
    parent = _pids_cgroup_parent()
    for cgroup in [] if parent is None else parent.glob(f"{folder.name}-*"):
        end_cgroup(cgroup)
    shutil.rmtree(folder, ignore_errors=True)


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
    chosen = os.environ.get("CTXLAB_BWRAP") or "bwrap"
    return None if chosen == "none" else shutil.which(chosen)


@functools.cache
def bwrap_works() -> bool:
    """Can bubblewrap make its namespaces here (tried once per process)?"""
    bwrap = _bwrap()
    if bwrap is None or not sys.platform.startswith("linux"):
        return False
    command = [*_bwrap_args(bwrap, None, None), _python(), "-I", "-S", "-c", "pass"]
    preexec = _become_nobody if child_as_nobody() else None
    try:
        run = subprocess.run(
            command, stdin=subprocess.DEVNULL, capture_output=True, timeout=20, preexec_fn=preexec
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return run.returncode == 0


def _is_root() -> bool:
    return os.name == "posix" and os.geteuid() == 0


def child_as_nobody() -> bool:
    """Run as root: can the child become ``nobody`` and still run Python?"""
    if not _is_root():
        return False
    targets = (Path(_python()), Path(os.__file__).resolve())
    try:  # others may read or run each target, and enter each folder above it
        return all(
            path.stat().st_mode & (0o005 if path == target else 0o001)
            for target in targets
            for path in (target, *target.parents)
        )
    except OSError:
        return False


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
    "from ctxlab.lab.grading.child import main;raise SystemExit(main())"
)


def _bwrap_args(bwrap: str, lib: Path | None, submission: Path | None) -> list[str]:
    """bubblewrap's arguments: new namespaces, ``/`` read-only, ctxlab and the repository
    hidden, a private ``/tmp`` holding the work folder."""
    args = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    args += ["--ro-bind", "/", "/", "--dev", "/dev", "--size", str(DISK_LIMIT // 4)]
    args += ["--tmpfs", "/dev/shm", "--proc", "/proc"]
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


def _limits(
    cpu_seconds: int, processes: int, as_nobody: bool, cgroup: Path | None
) -> Callable[[], None]:
    """The function run in the child before ``exec``: its cgroup, limits, ``nobody``."""
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
                # CPU: SIGXCPU at the soft limit (a timeout), SIGKILL at the hard one
                want = value + CPU_GRACE if which == resource.RLIMIT_CPU else value
                top = want if hard == resource.RLIM_INFINITY else min(want, hard)
                resource.setrlimit(which, (min(value, top), top))
        if as_nobody:
            _become_nobody()

    return preexec


def _pids_cgroup_parent() -> Path | None:
    """Linux: this process's cgroup folder where its children may use ``pids`` (v1 or v2)."""
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
    """A new cgroup of at most :data:`CGROUP_TASKS` tasks (named after the sandbox folder), or
    None when none can be made."""
    parent = _pids_cgroup_parent()
    if parent is None:
        return None
    folder = parent / f"{sandbox_folder().name}-{token}"
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

    def inside() -> set[int]:
        try:
            return {int(pid) for pid in (folder / "cgroup.procs").read_text().split()}
        except (OSError, ValueError):
            return set()

    _kill_while(inside)
    with contextlib.suppress(OSError):
        folder.rmdir()


@dataclass
class Launch:
    """How to start one child in ``work``: the run's marker ``token``, in bubblewrap or not."""

    command: list[str]
    work: Path
    env: dict[str, str]
    preexec: Callable[[], None] | None
    token: str
    sandboxed: bool
    cgroup: Path | None

    def end(self) -> None:
        """Kill what the child left (its cgroup, its marker) and remove its folder."""
        if self.cgroup is not None:
            end_cgroup(self.cgroup)
        sweep(self.token)
        shutil.rmtree(self.work, ignore_errors=True)


def prepare_launch(path: Path, lib: Path, keyword: str, cpu: int) -> Launch:
    """How to start the child on a copy of the file ``path`` in a new folder (``lib``: the
    ctxlab it imports) with ``cpu`` seconds of CPU time."""
    work = Path(tempfile.mkdtemp(prefix="run-", dir=sandbox_folder()))
    submission = "submission.py"
    for sub in ("home", "tmp"):
        (work / sub).mkdir()
    shutil.copyfile(path, work / submission)
    as_nobody = child_as_nobody()
    if as_nobody:
        for made in (work, work / "home", work / "tmp", work / submission):
            os.chown(made, NOBODY, NOBODY)
    token = os.urandom(12).hex()
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
    python = [_python(), "-I", "-S", "-B", "-c", _BOOT.format(lib=inside_lib)]
    python += [f"{inside_work}/{submission}", keyword]
    processes = PROCESSES
    if os.name == "posix" and not as_nobody:  # RLIMIT_NPROC counts all the user's processes
        processes += sum(owner == os.getuid() for *_, owner in _processes())
    cgroup = _new_pids_cgroup(token)
    preexec = _limits(cpu, processes, as_nobody, cgroup) if os.name == "posix" else None
    bwrap = _bwrap() if sandboxed else None
    command = python if bwrap is None else [*_bwrap_args(bwrap, lib, work / submission), *python]
    return Launch(command, work, env, preexec, token, sandboxed, cgroup)


# ----------------------------------------------------------------------------------------
# Ending what the child left


def _processes(needle: bytes | None = None) -> Iterator[tuple[int, bytes, bytes, int]]:
    """(pid, state, parent's pid, user) of every process (Linux) whose environment has
    ``needle``."""
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
                    owner = os.fstat(stream.fileno()).st_uid
            except OSError:
                continue
            if len(fields) > 1:
                yield int(entry.name), fields[0], fields[1], owner


def _kill_while(find: Callable[[], set[int]], *, reap: bool = False) -> None:
    """Kill what ``find()`` names (stopped first: it forks no more), again until it names
    none (what forks while we look, or is still dying, is found by the next round) or 3 s
    have passed; ``reap``: wait for each (this process's children)."""
    deadline = time.monotonic() + 3.0
    while (found := find()) and time.monotonic() <= deadline:
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGSTOP)
                os.kill(pid, signal.SIGKILL)
        if reap:  # waited for: look again at once
            for pid in found:
                with contextlib.suppress(OSError):
                    os.waitpid(pid, 0)
        else:  # still dying: look again in a moment
            time.sleep(0.01)


def sweep(token: str) -> None:
    """Kill every process whose environment carries ``token`` (Linux)."""
    needle = f"{MARKER}={token}".encode()
    me = os.getpid()
    _kill_while(
        lambda: {p for p, state, *_ in _processes(needle) if state not in (b"Z", b"X") and p != me}
    )


#: The pids of the child processes this process started and has not ended yet (every thread's).
LIVE: set[int] = set()


@functools.cache
def guard_parent() -> None:
    """Linux: this process is not dumpable (no ``ptrace``, no ``/proc/PID/mem``), and is a
    subreaper: what the child leaves behind becomes its child (:func:`reap_strays`)."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE: no
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: yes


def own_children() -> set[int]:
    """The pids whose parent is this process (Linux)."""
    me = str(os.getpid()).encode()
    return {pid for pid, _, parent, _ in _processes() if parent == me}


def reap_strays(before: set[int]) -> None:
    """Kill and reap this process's new children that are no live sandbox child."""
    _kill_while(lambda: own_children() - before - LIVE, reap=True)
