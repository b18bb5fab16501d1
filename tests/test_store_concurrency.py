"""Concurrent writers on one JSONL session file (chapter 10's store, issue: never lose data).

Several processes -- and several threads in one process -- append to the same file at once.
Under the cross-process file lock each append first reads what the others added, then
validates (duplicate id, unknown parent) and writes its line with one ``write``. So lines
never interleave or tear, no id is stored twice, and every acknowledged entry is there.

Every writer picks its parents from the entries it reads (also other writers' entries), and
every tenth append all writers race for the same ``shared-<n>`` id: exactly one may win.
All appends are durable (fsync before ``append`` returns), as in real use.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest

from ctxlab import JsonlSessionStore, SessionStoreError
from ctxlab.entries import SessionEntry

pytestmark = pytest.mark.store

PROCESSES = 4
APPENDS = 500

WRITER = r"""
import json, random, sys
from ctxlab import JsonlSessionStore, SessionStoreError

path, name, count, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
store = JsonlSessionStore.open(path)  # durable
print("ready", flush=True)
sys.stdin.readline()  # wait for "go" so that all writers start together
acked, refused = [], 0
for i in range(count):
    pool = [entry.id for entry in store.entries()[-20:]]  # what the others wrote, too
    parent = rng.choice(pool) if pool else None
    entry_id = f"shared-{i // 10}" if i % 10 == 0 else f"{name}-{i}"
    entry = {"type": "metadata", "id": entry_id, "parentId": parent, "timestamp": i,
             "key": "writer", "value": {"writer": name, "i": i, "pad": "x" * rng.randrange(3000)}}
    try:
        store.append(entry)
    except SessionStoreError as exc:
        assert entry_id.startswith("shared-") and "duplicate id" in str(exc), exc
        refused += 1
        continue
    acked.append(entry_id)
print(json.dumps({"acked": acked, "refused": refused}), flush=True)
"""


def metadata(entry_id: str, parent: str | None, writer: str, i: int) -> dict[str, object]:
    return {
        "type": "metadata",
        "id": entry_id,
        "parentId": parent,
        "timestamp": i,
        "key": "writer",
        "value": {"writer": writer, "i": i},
    }


def check_file(path: Path, acked: list[str], writers: int, rounds: int) -> list[SessionEntry]:
    """The invariants every run must keep; returns the entries in file order."""
    data = path.read_bytes()
    assert data.endswith(b"\n")
    read = JsonlSessionStore.open(path).read()  # strict: any torn or mixed line raises
    assert read.warnings == ()
    entries = read.entries
    ids = [entry.id for entry in entries]
    assert data.count(b"\n") == len(entries), "a line holds more or less than one entry"
    assert len(set(ids)) == len(ids), "duplicate ids"
    assert len(set(acked)) == len(acked), "two writers were both told they stored one id"
    assert sorted(ids) == sorted(acked), "lost or unacknowledged entries"
    for n in range(rounds):  # every shared-<n> was won by exactly one writer
        assert ids.count(f"shared-{n}") == 1
    position = {entry_id: index for index, entry_id in enumerate(ids)}
    for index, entry in enumerate(entries):
        assert entry.parent_id is None or position[entry.parent_id] < index
    return list(entries)


def writer_of(entry: SessionEntry) -> str:
    value = getattr(entry, "value", None)
    assert value is not None
    return str(value["writer"])


def test_four_processes_append_500_each_without_loss(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    JsonlSessionStore.open(path)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), f"w{n}", str(APPENDS), str(n)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(PROCESSES)
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready"
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        reports = []
        for proc in procs:
            out, _ = proc.communicate(timeout=120)
            assert proc.returncode == 0
            reports.append(json.loads(out))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    acked = [entry_id for report in reports for entry_id in report["acked"]]
    refused = sum(report["refused"] for report in reports)
    rounds = APPENDS // 10
    assert refused == (PROCESSES - 1) * rounds  # every shared id refused by all but one
    assert len(acked) == PROCESSES * APPENDS - refused
    entries = check_file(path, acked, PROCESSES, rounds)
    # The writers really did run at the same time, and built on each other's entries.
    writers = [writer_of(entry) for entry in entries]
    switches = sum(1 for i in range(1, len(writers)) if writers[i] != writers[i - 1])
    # One writer after another would give PROCESSES - 1 switches.
    assert switches >= 2 * PROCESSES, f"writers hardly interleaved ({switches} switches)"
    by_id = {entry.id: entry for entry in entries}
    cross = sum(
        1
        for entry in entries
        if entry.parent_id is not None and writer_of(by_id[entry.parent_id]) != writer_of(entry)
    )
    assert cross >= PROCESSES - 1
    print(
        f"\nconcurrent appends checked: {PROCESSES}x{APPENDS} attempted, {len(acked)} stored,"
        f" {refused} duplicate ids refused, {switches} writer switches, {cross} cross parents"
    )


def run_threads(stores: list[JsonlSessionStore], threads: int, count: int) -> list[str]:
    """``threads`` threads, thread n using ``stores[n % len(stores)]``; acked ids."""
    acked: list[str] = []
    errors: list[BaseException] = []
    guard = threading.Lock()
    start = threading.Barrier(threads)

    def work(n: int) -> None:
        store = stores[n % len(stores)]
        rng = random.Random(n)
        name = f"t{n}"
        start.wait()
        try:
            for i in range(count):
                pool = [entry.id for entry in store.entries()[-10:]]
                parent = rng.choice(pool) if pool else None
                entry_id = f"shared-{i // 10}" if i % 10 == 0 else f"{name}-{i}"
                try:
                    store.append(metadata(entry_id, parent, name, i))
                except SessionStoreError as exc:
                    assert entry_id.startswith("shared-") and "duplicate id" in str(exc)
                    continue
                with guard:
                    acked.append(entry_id)
        except BaseException as exc:  # reported below; a thread must not die silently
            errors.append(exc)

    workers = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    return acked


@pytest.mark.parametrize("objects", [1, 4], ids=["one shared store", "a store per thread"])
def test_threads_append_safely(tmp_path: Path, objects: int) -> None:
    path = tmp_path / "session.jsonl"
    stores = [JsonlSessionStore.open(path) for _ in range(objects)]
    threads, count = 8, 100
    acked = run_threads(stores, threads, count)
    rounds = count // 10
    assert len(acked) == threads * count - (threads - 1) * rounds
    check_file(path, acked, threads, rounds)
    # Every store object sees every entry, whoever wrote it.
    for store in stores:
        assert Counter(entry.id for entry in store.entries()) == Counter(acked)
