"""Lab 11.1 / chapter 10: basic behaviour of both session stores (spec section 3).

Crash, concurrency, fuzz and CLI tests of the JSONL store live in their own modules.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ctxlab import (
    CompactionSessionEntry,
    EntryParseError,
    InMemorySessionStore,
    JsonlSessionStore,
    MessageSessionEntry,
    SessionStoreError,
    SystemMessage,
)
from ctxlab import fixtures as fx
from ctxlab.store import scan_jsonl

pytestmark = pytest.mark.store

StoreFactory = Callable[[Path], Any]


def _memory(_: Path) -> InMemorySessionStore:
    return InMemorySessionStore()


def _jsonl(folder: Path) -> JsonlSessionStore:
    return JsonlSessionStore.open(folder / "session.jsonl")


STORES = pytest.mark.parametrize("make", [_memory, _jsonl], ids=["memory", "jsonl"])


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


@STORES
def test_append_returns_and_keeps_a_parsed_snapshot(make: StoreFactory, tmp_path: Path) -> None:
    store = make(tmp_path)
    wire = fx.opening_path()[0].to_json()
    stored = store.append(wire)
    assert stored == fx.opening_path()[0]
    wire["message"]["content"] = "changed"
    assert store.entries() == [fx.opening_path()[0]]
    listed = store.entries()
    listed.clear()
    assert len(store.entries()) == 1


@STORES
def test_entries_keep_append_order_including_compactions(
    make: StoreFactory, tmp_path: Path
) -> None:
    store = make(tmp_path)
    for entry in fx.recompacted_path():
        store.append(entry)
    assert store.entries() == fx.recompacted_path()
    kinds = [type(e).__name__ for e in store.entries()]
    assert kinds.count("CompactionSessionEntry") == 2


@STORES
def test_duplicate_id_is_rejected_and_nothing_changes(make: StoreFactory, tmp_path: Path) -> None:
    store = make(tmp_path)
    for entry in fx.opening_path():
        store.append(entry)
    twin = MessageSessionEntry("u2", "a3", 11, SystemMessage("again", 11))
    with pytest.raises(SessionStoreError, match="duplicate id 'u2'") as caught:
        store.append(twin)
    assert caught.value.entry_id == "u2"
    assert store.entries() == fx.opening_path()


@STORES
def test_unknown_parent_is_rejected(make: StoreFactory, tmp_path: Path) -> None:
    store = make(tmp_path)
    store.append(fx.opening_path()[0])
    orphan = fx.opening_path()[2]  # a1, whose parent u1 is not stored yet
    with pytest.raises(SessionStoreError, match=r"a1.*parentId 'u1'") as caught:
        store.append(orphan)
    assert caught.value.entry_id == "a1"
    assert [e.id for e in store.entries()] == ["sys"]


@STORES
def test_invalid_entries_are_refused_by_the_parser(make: StoreFactory, tmp_path: Path) -> None:
    store = make(tmp_path)
    store.append(fx.opening_path()[0])
    with pytest.raises(EntryParseError, match="session entry bad: timestamp"):
        store.append(
            {
                "type": "metadata",
                "id": "bad",
                "parentId": "sys",
                "timestamp": "x",
                "key": "k",
                "value": 1,
            }
        )
    assert [e.id for e in store.entries()] == ["sys"]


def test_in_memory_store_takes_initial_entries() -> None:
    store = InMemorySessionStore(fx.opening_path())
    assert store.entries() == fx.opening_path()
    with pytest.raises(SessionStoreError):
        InMemorySessionStore([fx.opening_path()[1]])  # u1's parent sys is missing


def test_jsonl_open_creates_file_and_folders(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "s.jsonl"
    store = JsonlSessionStore.open(target)
    assert target.exists()
    assert target.read_bytes() == b""
    assert store.entries() == []
    assert store.read().warnings == ()


def test_jsonl_writes_one_camel_case_line_per_entry_and_reopens(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    store = JsonlSessionStore.open(target)
    for entry in fx.resumed_path():
        store.append(entry)
    lines = _lines(target)
    assert len(lines) == len(fx.resumed_path())
    assert target.read_bytes().endswith(b"\n")
    compaction = json.loads(lines[10])
    assert compaction["id"] == "compact-1"
    assert compaction["firstKeptEntryId"] == "u2"
    assert compaction["summary"]["changedFiles"] == ["context.ts"]
    reopened = JsonlSessionStore.open(target)
    assert reopened.entries() == fx.resumed_path()
    assert isinstance(reopened.entries()[10], CompactionSessionEntry)


def test_jsonl_blank_lines_are_layout(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    lines = [json.dumps(e.to_json()) for e in fx.opening_path()[:3]]
    target.write_text(f"\n{lines[0]}\n   \n\n{lines[1]}\n{lines[2]}\n\n", encoding="utf-8")
    store = JsonlSessionStore.open(target)
    assert [e.id for e in store.entries()] == ["sys", "u1", "a1"]
    assert store.read().warnings == ()
    store.append(fx.opening_path()[3])
    assert [e.id for e in JsonlSessionStore.open(target).entries()] == ["sys", "u1", "a1", "u2"]


def test_jsonl_unterminated_tail_warns_with_line_and_refuses_appends(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    lines = [json.dumps(e.to_json()) for e in fx.opening_path()[:3]]
    torn = json.dumps(fx.opening_path()[3].to_json())[:25]
    target.write_text(f"{lines[0]}\n\n{lines[1]}\n{lines[2]}\n{torn}", encoding="utf-8")
    store = JsonlSessionStore.open(target)
    result = store.read()
    assert [e.id for e in result.entries] == ["sys", "u1", "a1"]
    assert len(result.warnings) == 1
    warning = result.warnings[0]
    assert warning.code == "unterminated_tail"
    assert warning.line == 5
    assert "line 5" in warning.message
    before = target.read_bytes()
    with pytest.raises(SessionStoreError, match="line 5") as caught:
        store.append(fx.opening_path()[3])
    assert caught.value.line == 5
    assert target.read_bytes() == before
    # Once repaired (the tail moved aside, never deleted) appends work again.
    repaired = JsonlSessionStore.repair(target)
    assert repaired.line == 5
    assert repaired.side_file is not None
    assert repaired.side_file.read_text(encoding="utf-8") == torn
    store.append(fx.opening_path()[3])
    assert [e.id for e in JsonlSessionStore.open(target).entries()] == ["sys", "u1", "a1", "u2"]


def test_jsonl_a_complete_json_tail_without_newline_is_still_unterminated(
    tmp_path: Path,
) -> None:
    target = tmp_path / "s.jsonl"
    first, second = (json.dumps(e.to_json()) for e in fx.opening_path()[:2])
    target.write_text(f"{first}\n{second}", encoding="utf-8")
    result = JsonlSessionStore.open(target).read()
    assert [e.id for e in result.entries] == ["sys"]
    assert [(w.code, w.line) for w in result.warnings] == [("unterminated_tail", 2)]


@pytest.mark.parametrize(
    ("bad_line", "expected"),
    [
        ("{not json", "not valid JSON"),
        ('{"type": "metadata", "id": "m", "parentId": "u1", "timestamp": NaN, "key": "k"}', "NaN"),
        ('{"type": "message", "id": "x"}', "session entry x"),
        ('{"type":"metadata","id":"m","parentId":"zzz","timestamp":1,"key":"k","value":1}', "zzz"),
        ('{"type":"metadata","id":"u1","parentId":"sys","timestamp":1,"key":"k","value":1}', "u1"),
    ],
)
def test_jsonl_bad_committed_line_is_an_error_naming_its_line(
    tmp_path: Path, bad_line: str, expected: str
) -> None:
    target = tmp_path / "s.jsonl"
    good = [json.dumps(e.to_json()) for e in fx.opening_path()[:2]]
    target.write_text(f"{good[0]}\n\n{good[1]}\n{bad_line}\n", encoding="utf-8")
    with pytest.raises(SessionStoreError) as caught:
        JsonlSessionStore.open(target)
    assert caught.value.line == 4
    assert "line 4" in str(caught.value)
    assert expected in str(caught.value)


def test_jsonl_failed_write_taints_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "s.jsonl"
    store = JsonlSessionStore.open(target, durable=False)
    path = fx.opening_path()
    store.append(path[0])

    def broken_write(fd: int, data: bytes) -> int:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(os, "write", broken_write)
        with pytest.raises(SessionStoreError, match="writing entry u1 failed") as caught:
            store.append(path[1])
    assert caught.value.entry_id == "u1"
    assert isinstance(caught.value.__cause__, OSError)
    # os.write works again, but this store object stays tainted ...
    with pytest.raises(SessionStoreError, match="refuses further appends"):
        store.append(path[1])
    assert [e.id for e in store.entries()] == ["sys"]
    # ... until the file is reopened.
    reopened = JsonlSessionStore.open(target, durable=False)
    reopened.append(path[1])
    assert [e.id for e in JsonlSessionStore.open(target).entries()] == ["sys", "u1"]


def test_jsonl_short_write_also_taints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "s.jsonl"
    store = JsonlSessionStore.open(target, durable=False)
    real_write = os.write

    def short_write(fd: int, data: bytes) -> int:
        return real_write(fd, data[:10])

    monkeypatch.setattr(os, "write", short_write)
    with pytest.raises(SessionStoreError, match="short write"):
        store.append(fx.opening_path()[0])
    monkeypatch.undo()
    with pytest.raises(SessionStoreError, match="refuses further appends"):
        store.append(fx.opening_path()[0])
    result = JsonlSessionStore.open(target).read()
    assert result.entries == ()
    assert [(w.code, w.line) for w in result.warnings] == [("unterminated_tail", 1)]


def test_jsonl_sees_lines_another_store_appended(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    first = JsonlSessionStore.open(target)
    second = JsonlSessionStore.open(target)
    path = fx.opening_path()
    first.append(path[0])
    second.append(path[1])
    first.append(path[2])
    assert [e.id for e in second.entries()] == ["sys", "u1", "a1"]
    with pytest.raises(SessionStoreError, match="duplicate id 'a1'"):
        second.append(path[2])


@pytest.mark.parametrize("layout", [b"", b"   ", b"\t\r"])
def test_only_json_white_space_makes_a_blank_line(tmp_path: Path, layout: bytes) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(layout + b"\n")
    assert JsonlSessionStore.open(path).entries() == []
    assert scan_jsonl(path).problems == ()


def test_a_line_of_unicode_space_is_not_blank_but_bad_json(tmp_path: Path) -> None:
    # U+0085 (NEL) is white space to str.strip() but not to JSON: the store and
    # scan_jsonl must both report line 1 (hypothesis found them disagreeing).
    path = tmp_path / "s.jsonl"
    path.write_bytes("\u0085\n".encode())
    with pytest.raises(SessionStoreError) as caught:
        JsonlSessionStore.open(path)
    assert caught.value.line == 1
    assert [problem.line for problem in scan_jsonl(path).problems] == [1]
