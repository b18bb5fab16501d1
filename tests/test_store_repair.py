"""Torn writes, repair without loss, failed writes, and ``scan_jsonl`` (chapter 10 store).

A line counts only once its newline is written. A torn last line (a crash in the middle of
a write, a full disk, a power cut) is an *unterminated tail*: reported as a warning with its
line number, appends refused until ``JsonlSessionStore.repair`` moves its bytes into
``<name>.tail-<n>``. Repair deletes no byte, is idempotent, and appends work after it.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from ctxlab import JsonlSessionStore, SessionStoreError, fixtures
from ctxlab.store import encode_entry_line, scan_jsonl

pytestmark = pytest.mark.store


def opening_bytes() -> bytes:
    return b"".join(encode_entry_line(entry) for entry in fixtures.opening_path())


def side_files(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".tail-*"))


def u4(parent: str = "a3", entry_id: str = "u4") -> dict[str, object]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": 11,
        "message": {"role": "user", "content": [{"type": "text", "text": "more"}], "timestamp": 11},
    }


@pytest.mark.parametrize("seed", range(6))
def test_a_torn_last_line_is_reported_repaired_without_loss_and_appends_resume(
    tmp_path: Path, seed: int
) -> None:
    good = opening_bytes()
    last = encode_entry_line(fixtures.compact1())
    cut = random.Random(seed).randrange(1, len(last) - 1)  # never the whole line
    path = tmp_path / "session.jsonl"
    original = good + last[:cut]
    path.write_bytes(original)

    store = JsonlSessionStore.open(path)
    read = store.read()
    assert [e.id for e in read.entries] == [e.id for e in fixtures.opening_path()]
    (warning,) = read.warnings
    assert (warning.code, warning.line) == ("unterminated_tail", 11)
    assert "line 11" in warning.message
    with pytest.raises(SessionStoreError, match="line 11 is an unterminated tail") as refused:
        store.append(u4())
    assert refused.value.line == 11 and refused.value.entry_id == "u4"
    assert path.read_bytes() == original  # a refused append writes nothing

    result = JsonlSessionStore.repair(path)
    assert result.side_file == tmp_path / "session.jsonl.tail-1"
    assert (result.line, result.bytes_moved) == (11, cut)
    assert path.read_bytes() + result.side_file.read_bytes() == original  # no byte lost
    assert path.read_bytes() == good

    again = JsonlSessionStore.repair(path)  # idempotent
    assert (again.side_file, again.line, again.bytes_moved) == (None, None, 0)
    assert path.read_bytes() == good and side_files(path) == [result.side_file]

    store.append(u4())  # the very store object that saw the tail appends now
    reopened = JsonlSessionStore.open(path).read()
    assert reopened.warnings == ()
    assert reopened.entries[-1].id == "u4"


def test_every_repair_gets_its_own_side_file_and_all_bytes_survive(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(opening_bytes())
    pieces = [path.read_bytes()]
    for n in range(1, 4):
        torn = encode_entry_line(fixtures.compact1())[: 10 * n]
        with open(path, "ab") as handle:
            handle.write(torn)
        pieces.append(torn)
        assert JsonlSessionStore.repair(path).side_file == path.with_name(f"s.jsonl.tail-{n}")
    kept = path.read_bytes() + b"".join(p.read_bytes() for p in side_files(path))
    assert kept == b"".join(pieces)


def test_a_side_file_name_already_taken_is_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(opening_bytes() + b'{"type":')
    taken = path.with_name("s.jsonl.tail-1")
    taken.write_bytes(b"someone else's bytes")
    result = JsonlSessionStore.repair(path)
    assert result.side_file == path.with_name("s.jsonl.tail-2")
    assert taken.read_bytes() == b"someone else's bytes"
    assert result.side_file.read_bytes() == b'{"type":'


def test_white_space_after_the_last_newline_is_layout_not_a_tail(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(opening_bytes() + b"\n  \n \t")
    store = JsonlSessionStore.open(path)
    assert store.read().warnings == ()
    assert JsonlSessionStore.repair(path).side_file is None
    store.append(u4())
    assert [e.id for e in JsonlSessionStore.open(path).entries()][-1] == "u4"


def test_a_torn_line_in_the_middle_is_an_error_with_its_line_number(tmp_path: Path) -> None:
    lines = opening_bytes().split(b"\n")
    lines[4] = lines[4][:20]  # torn, then more lines were written after it
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(SessionStoreError, match="line 5") as error:
        JsonlSessionStore.open(path)
    assert error.value.line == 5
    assert JsonlSessionStore.repair(path).side_file is None  # repair only moves a tail


def test_repair_of_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SessionStoreError, match="no such file"):
        JsonlSessionStore.repair(tmp_path / "nope.jsonl")
    assert not (tmp_path / "nope.jsonl").exists()


def test_another_store_sees_the_repair_and_appends_again(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(opening_bytes() + b'{"type":"mess')
    first, second = JsonlSessionStore.open(path), JsonlSessionStore.open(path)
    assert first.read().warnings and second.read().warnings
    JsonlSessionStore.repair(path)
    first.append(u4())
    second.append(u4("u4", "a4-of-second"))
    assert [e.id for e in first.entries()][-2:] == ["u4", "a4-of-second"]


def test_a_failed_write_taints_the_store_until_reopened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(opening_bytes())
    store = JsonlSessionStore.open(path)
    real_write = os.write

    def torn_write(fd: int, data: bytes) -> int:  # a full disk: half the line gets out
        return real_write(fd, data[: len(data) // 2])

    monkeypatch.setattr(os, "write", torn_write)
    with pytest.raises(SessionStoreError, match="writing entry u4 failed") as error:
        store.append(u4())
    assert error.value.entry_id == "u4"
    monkeypatch.setattr(os, "write", real_write)
    with pytest.raises(SessionStoreError, match="refuses further appends"):
        store.append(u4())
    assert [e.id for e in store.entries()][-1] == "a3"  # the torn entry was never taken in

    reopened = JsonlSessionStore.open(path)
    (warning,) = reopened.read().warnings
    assert warning.line == 11
    JsonlSessionStore.repair(path)
    reopened.append(u4())
    assert JsonlSessionStore.open(path).entries()[-1].id == "u4"


def test_scan_reports_every_problem_with_its_line(tmp_path: Path) -> None:
    corrupt = fixtures.compaction_corruptions()["files instead of changedFiles"]
    path = tmp_path / "s.jsonl"
    import json

    lines = [
        *opening_bytes().splitlines(),  # lines 1-10
        json.dumps(corrupt).encode(),  # 11: the chapter's corrupted compact-1
        b'{"type":"metadata","id":"m1","parentId":"a3","timestamp":NaN,"key":"k","value":1}',
        b'{"type":"metadata","id":"m2","parentId":"a3","timestamp":1,"key":"k","key":"v"}',
        b"\xff\xfe not utf-8",  # 14
        b"",  # 15: blank lines are layout
        b'{"type":"metadata","id":"m3","parentId":"ghost","timestamp":1,"key":"k","value":1}',
        encode_entry_line(fixtures.opening_path()[1]).rstrip(b"\n"),  # 17: u1 again
        b"[1, 2",  # 18
        b'{"type":"metadata","id":"m4","parentId":"m5","timestamp":1,"key":"k","value":1}',
        b'{"type":"metadata","id":"m5","parentId":"a3","timestamp":1,"key":"k","value":1}',
    ]
    path.write_bytes(b"\n".join(lines) + b'\n{"type":"message","id":"u9"')
    scan = scan_jsonl(path)
    found = [(p.line, p.code) for p in scan.problems]
    assert found == [
        (11, "invalid_entry"),
        (12, "invalid_json"),
        (13, "invalid_json"),
        (14, "invalid_utf8"),
        (16, "unknown_parent"),
        (17, "duplicate_id"),
        (18, "invalid_json"),
        (19, "unknown_parent"),
        (21, "unterminated_tail"),
    ]
    messages = {p.line: p.message for p in scan.problems}
    assert "summary.files" in messages[11] and "compact-1" in messages[11]
    assert "NaN" in messages[12]
    assert "duplicate key 'key'" in messages[13]
    assert "ghost" in messages[16] and "no line of this file" in messages[16]
    assert "line 2 already has it" in messages[17]
    assert "line 20" in messages[19]
    assert scan.problems[0].entry_id == "compact-1"
    assert [e.id for e in scan.entries][-3:] == ["m3", "m4", "m5"]
    # The store itself stops at the first bad committed line, naming it.
    with pytest.raises(SessionStoreError, match="line 11"):
        JsonlSessionStore.open(path)


def test_scan_of_a_clean_file_and_of_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(opening_bytes())
    scan = scan_jsonl(path)
    assert scan.problems == () and len(scan.entries) == 10
    with pytest.raises(SessionStoreError, match="no such file"):
        scan_jsonl(tmp_path / "missing.jsonl")
