"""Crash safety of the JSONL session store: SIGKILL a writer at random moments.

A child process appends entries in a loop and reports every acknowledged id (``append``
returned) to the parent through a pipe. The parent kills it with SIGKILL at a random moment,
then reopens the file and checks what chapter 10/11 promise: every acknowledged entry is
there, every committed line is valid, and there is at most one unterminated tail, reported
as the ``unterminated_tail`` warning with its line number. After a kill, ``repair`` moves
the tail aside without losing a byte, and the next writer appends again.

To keep 50 trials within a few seconds on a small CI box, the interpreter start and the
``import ctxlab`` are paid once: a launcher process imports the store and forks one fresh
writer per trial (POSIX only, like SIGKILL itself).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ctxlab import JsonlSessionStore

TRIALS = int(os.environ.get("CTXLAB_KILL_TRIALS", "50"))

pytestmark = [
    pytest.mark.store,
    pytest.mark.skipif(
        not (hasattr(os, "fork") and hasattr(signal, "SIGKILL")),
        reason="needs os.fork and SIGKILL (POSIX); Windows has neither",
    ),
]

# The launcher: imports ctxlab once, then forks one writer per "go" line. Every line it or a
# writer sends is a single os.write (< PIPE_BUF bytes, so lines never interleave), never
# Python's buffered stdout (a fork would duplicate its buffer).
LAUNCHER = r"""
import os, random, sys
from ctxlab.store import JsonlSessionStore

def say(text):
    os.write(1, (text + "\n").encode())

def writer(path, trial, seed):
    rng = random.Random(seed)
    say(f"pid {os.getpid()}")
    store = JsonlSessionStore.open(path)  # durable=True: fsync before append returns
    entries = store.entries()
    parent = entries[-1].id if entries else None
    for i in range(100_000):
        entry_id = f"t{trial}-{i}"
        if rng.random() < 0.15:
            size = 1_000_000
            say(f"big {entry_id}")  # lets the parent aim its kill at a long write
        else:
            size = rng.choice((10, 200, 5_000))
        store.append({
            "type": "message", "id": entry_id, "parentId": parent, "timestamp": i,
            "message": {
                "role": "user", "timestamp": i,
                "content": [{"type": "text", "text": f"{entry_id} " + "x" * size}],
            },
        })
        say(f"ack {entry_id}")
        parent = entry_id

say("ready")
for line in sys.stdin:
    words = line.split()
    if not words or words[0] == "quit":
        break
    _, path, trial, seed = words
    pid = os.fork()
    if pid == 0:
        try:
            writer(path, int(trial), int(seed))
            os._exit(0)
        except BaseException as exc:
            say(f"error {type(exc).__name__}: {exc}".replace("\n", " ")[:400])
            os._exit(3)
    _, status = os.waitpid(pid, 0)
    say(f"done {status}")
"""


class Launcher:
    """The launcher process and the line protocol above."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", LAUNCHER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert self.readline() == "ready"

    def readline(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            assert self.proc.stderr is not None
            pytest.fail(f"launcher died: {self.proc.stderr.read().decode(errors='replace')}")
        return line.decode().rstrip("\n")

    def send(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text.encode() + b"\n")
        self.proc.stdin.flush()

    def close(self) -> None:
        try:
            self.send("quit")
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


def run_trial(launcher: Launcher, path: Path, trial: int, rng: random.Random) -> list[str]:
    """One writer killed at a random moment; return the ids it acknowledged, in order."""
    launcher.send(f"go {path} {trial} {rng.randrange(2**32)}")
    first = launcher.readline()
    assert first.startswith("pid "), first
    pid = int(first.split()[1])
    acked: list[str] = []
    wanted = rng.randrange(0, 8)  # 0: kill while opening or during the very first append
    aim = rng.random() < 0.5  # then wait for a 1 MB append to start before the kill
    while len(acked) < wanted or aim:
        line = launcher.readline()
        if line.startswith("big "):
            aim = aim and len(acked) < wanted
            continue
        assert line.startswith("ack "), line
        acked.append(line.split()[1])
    time.sleep(rng.random() * 0.003)
    os.kill(pid, signal.SIGKILL)
    while True:
        line = launcher.readline()
        if line.startswith("done "):
            status = int(line.split()[1])
            break
        if line.startswith("big "):
            continue
        assert line.startswith("ack "), line  # written before it died: acknowledged too
        acked.append(line.split()[1])
    # The writer must have died of our SIGKILL, not of an error of its own.
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, status
    return acked


def test_sigkilled_writers_never_lose_an_acknowledged_entry(tmp_path: Path) -> None:
    rng = random.Random(20250611)
    launcher = Launcher()
    stats = {"trials": 0, "acked": 0, "torn": 0, "unacked_but_written": 0}
    known: list[str] = []  # ids on disk, in file order
    try:
        for trial in range(TRIALS):
            if trial % 10 == 0:  # a fresh file now and then keeps the reads small
                path = tmp_path / f"session-{trial // 10}.jsonl"
                known = []
            acked = run_trial(launcher, path, trial, rng)
            data = path.read_bytes()

            read = JsonlSessionStore.open(path).read()  # every committed line is valid
            ids = [entry.id for entry in read.entries]
            assert ids[: len(known)] == known, "an entry of an earlier trial changed"
            new = ids[len(known) :]
            # Every acknowledged entry is there, in order; at most the one entry whose
            # append was cut short after its write (before the ack) is there unacknowledged.
            assert new[: len(acked)] == acked
            assert len(new) - len(acked) in (0, 1), (new, acked)
            if len(new) > len(acked):
                assert new[-1] == f"t{trial}-{len(acked)}"
                stats["unacked_but_written"] += 1
            assert [e.parent_id for e in read.entries[1:]] == ids[:-1], "the chain broke"

            # At most one unterminated tail, reported with its line number.
            committed_lines = data.count(b"\n")
            assert len(read.warnings) <= 1
            if data.endswith(b"\n") or not data:
                assert read.warnings == ()
            else:
                (warning,) = read.warnings
                assert warning.code == "unterminated_tail"
                assert warning.line == committed_lines + 1
                stats["torn"] += 1

            # Repair (a no-op when there is no tail) loses no byte; the next trial's
            # writer then appends to the repaired file.
            result = JsonlSessionStore.repair(path)
            after = path.read_bytes()
            moved = result.side_file.read_bytes() if result.side_file else b""
            assert after + moved == data
            assert after.endswith(b"\n") or not after

            known = ids
            stats["trials"] += 1
            stats["acked"] += len(acked)
    finally:
        launcher.close()
    assert stats["trials"] == TRIALS
    assert stats["acked"] > 0
    print(f"\nkill trials passed: {stats}")
