"""The optional migration exercise ("可选迁移练习"): early-draft records are migrated OUTSIDE
the parser boundary, with a record of every change, and the parser is never loosened.

It belongs to the strict-parsing lab 11.1 ("旧记录需要先在边界外迁移成当前形状"); these are
tests of ctxlab's own implementation (marker ``reference``).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, NoReturn

import pytest
from hypothesis import HealthCheck, given, settings

from ctxlab import (
    CompactionSessionEntry,
    CtxlabError,
    EntryParseError,
    JsonlSessionStore,
    SessionEntry,
    migration,
    parse_session_entry,
    path_to,
)
from ctxlab import fixtures as fx
from ctxlab.fixtures import NOT_MIGRATABLE, draft_records
from ctxlab.lab.lab11_x import (
    check_migration,
    check_summary_renames,
    draft_table,
    reference_calls,
)
from ctxlab.migration import MigrationError, migrate_draft_entry, migrate_jsonl
from strategies import sessions

pytestmark = pytest.mark.reference

MIGRATABLE = [name for name in draft_records() if name not in NOT_MIGRATABLE]

#: The draft field paths each migratable record must report, in order.
EXPECTED_CHANGES: dict[str, list[tuple[str, str]]] = {
    "files instead of changedFiles": [("summary.files", "renamed")],
    "nextSteps instead of next": [("summary.nextSteps", "renamed")],
    "invariants instead of constraints": [("summary.invariants", "renamed")],
    "compactedEntryIds instead of firstKeptEntryId": [("compactedEntryIds", "dropped")],
    "compactedEntryIds beside firstKeptEntryId": [("compactedEntryIds", "dropped")],
    "every draft name at once": [
        ("summary.files", "renamed"),
        ("summary.nextSteps", "renamed"),
        ("summary.invariants", "renamed"),
        ("compactedEntryIds", "dropped"),
    ],
    "already current": [],
}

#: Where each unmigratable record must be refused.
EXPECTED_FIELDS: dict[str, str] = {
    "files and changedFiles disagree": "summary.files",
    "invariants beside other constraints": "summary.invariants",
    "compactedEntryIds ends inside an interaction": "compactedEntryIds",
    "compactedEntryIds names an unknown entry": "compactedEntryIds[1]",
    "compactedEntryIds disagrees with firstKeptEntryId": "compactedEntryIds",
    "goal missing (the parser still refuses)": "summary.goal",
}


def test_the_record_lists_cover_every_draft() -> None:
    assert set(EXPECTED_CHANGES) == set(MIGRATABLE)
    assert set(EXPECTED_FIELDS) == set(NOT_MIGRATABLE)
    assert set(draft_records()) > NOT_MIGRATABLE


@pytest.mark.parametrize("name", MIGRATABLE)
def test_a_migratable_draft_becomes_compact_1(name: str) -> None:
    wire = draft_records()[name]
    result = migrate_draft_entry(wire, earlier=fx.opening_path())
    assert result.entry == fx.compact1()
    assert result.entry_wire == fx.compact1().to_json()
    assert [(c.field, c.action) for c in result.changes] == EXPECTED_CHANGES[name]
    # The migrated record passes the unchanged, strict parser.
    assert parse_session_entry(result.entry_wire) == fx.compact1()


@pytest.mark.parametrize("name", [n for n in MIGRATABLE if n != "already current"])
def test_the_parser_still_refuses_every_draft(name: str) -> None:
    with pytest.raises(EntryParseError, match="migrate old records before parsing"):
        parse_session_entry(draft_records()[name])


@pytest.mark.parametrize("name", sorted(NOT_MIGRATABLE))
def test_an_unmigratable_draft_is_refused_with_its_entry_and_field(name: str) -> None:
    with pytest.raises(MigrationError) as caught:
        migrate_draft_entry(draft_records()[name], earlier=fx.opening_path())
    error = caught.value
    assert isinstance(error, CtxlabError)
    assert error.entry_id == "compact-1"
    assert error.field == EXPECTED_FIELDS[name]
    assert "compact-1" in str(error)
    assert EXPECTED_FIELDS[name] in str(error)


@pytest.mark.parametrize("name", list(draft_records()))
def test_migration_never_edits_its_input(name: str) -> None:
    wire = draft_records()[name]
    before = copy.deepcopy(wire)
    earlier = fx.opening_path()
    try:
        result = migrate_draft_entry(wire, earlier=earlier)
    except MigrationError:
        pass
    else:
        result.entry_wire["summary"]["goal"] = "edited"
        assert result.entry.summary.goal != "edited"
    assert wire == before
    assert earlier == fx.opening_path()


def test_the_change_notes_say_what_happened() -> None:
    result = migrate_draft_entry(
        draft_records()["compactedEntryIds instead of firstKeptEntryId"], earlier=fx.opening_path()
    )
    (change,) = result.changes
    assert str(change) == "compactedEntryIds: dropped (firstKeptEntryId derived from it: u2)"
    result = migrate_draft_entry(
        draft_records()["files instead of changedFiles"], earlier=fx.opening_path()
    )
    assert [str(c) for c in result.changes] == ["summary.files: renamed (now summary.changedFiles)"]


def test_entries_that_need_no_migration_pass_through_unchanged() -> None:
    for entry in fx.resumed_path():
        result = migrate_draft_entry(entry.to_json())
        assert result.entry == entry
        assert result.changes == ()


def test_derivation_skips_system_patches_after_the_compacted_ids() -> None:
    path = fx.system_patch_path()
    index = next(i for i, e in enumerate(path) if isinstance(e, CompactionSessionEntry))
    wire = path[index].to_json()
    del wire["firstKeptEntryId"]
    wire["compactedEntryIds"] = ["sys", "u1", "a1"]  # patch-1 follows a1, then u2
    result = migrate_draft_entry(wire, earlier=path[:index])
    assert result.entry == path[index]
    assert result.entry.first_kept_entry_id == "u2"


@pytest.mark.parametrize(
    ("compacted", "field", "words"),
    [
        (["u1", "a1", "u2", "a2", "u3", "calls", "r-test", "r-read", "a3"], "compactedEntryIds",
         "no interaction is left"),
        ([], "compactedEntryIds", "non-empty array"),
        ("u1", "compactedEntryIds", "non-empty array"),
        (["u1", "  "], "compactedEntryIds[1]", "non-blank"),
        (["u1", 7], "compactedEntryIds[1]", "non-blank"),
    ],
)  # fmt: skip
def test_bad_compacted_entry_ids_are_named(compacted: Any, field: str, words: str) -> None:
    wire = draft_records()["compactedEntryIds instead of firstKeptEntryId"]
    wire["compactedEntryIds"] = compacted
    with pytest.raises(MigrationError, match=words) as caught:
        migrate_draft_entry(wire, earlier=fx.opening_path())
    assert caught.value.field == field
    assert caught.value.entry_id == "compact-1"


def test_derivation_needs_the_earlier_entries() -> None:
    wire = draft_records()["compactedEntryIds instead of firstKeptEntryId"]
    with pytest.raises(MigrationError, match="parentId") as caught:
        migrate_draft_entry(wire)
    assert caught.value.field == "parentId"


@pytest.mark.parametrize("value", [None, 3, "compact-1", ["a"]])
def test_a_record_that_is_not_an_object_is_refused(value: object) -> None:
    with pytest.raises(MigrationError, match="must be an object"):
        migrate_draft_entry(value)


def test_a_summary_of_the_wrong_kind_is_left_to_the_parser() -> None:
    wire = draft_records()["already current"]
    wire["summary"] = ["not", "an", "object"]
    with pytest.raises(MigrationError, match="summary must be an object") as caught:
        migrate_draft_entry(wire, earlier=fx.opening_path())
    assert isinstance(caught.value.__cause__, EntryParseError)


# -- whole files --------------------------------------------------------------------------------


def _write_jsonl(path: Path, records: list[dict[str, Any]], *, tail: str = "\n") -> bytes:
    lines = [json.dumps(record, ensure_ascii=False) for record in records]
    data = ("\n".join(lines) + tail).encode("utf-8")
    path.write_bytes(data)
    return data


def _draft_session() -> list[dict[str, Any]]:
    wires = [entry.to_json() for entry in fx.resumed_path()]
    wires[10] = draft_records()["every draft name at once"]
    return wires


def test_migrate_jsonl_writes_a_new_file_and_leaves_the_old_one(tmp_path: Path) -> None:
    src, dst = tmp_path / "old.jsonl", tmp_path / "new" / "session.jsonl"
    original = _write_jsonl(src, _draft_session())
    report = migrate_jsonl(src, dst)
    assert src.read_bytes() == original
    assert JsonlSessionStore.open(dst).entries() == fx.resumed_path()
    assert report.entries == 13
    assert (report.source, report.destination) == ("old.jsonl", "session.jsonl")
    assert [(c.line, c.entry_id, c.change.field) for c in report.changes] == [
        (11, "compact-1", "summary.files"),
        (11, "compact-1", "summary.nextSteps"),
        (11, "compact-1", "summary.invariants"),
        (11, "compact-1", "compactedEntryIds"),
    ]
    assert str(report.changes[0]) == (
        "line 11 (compact-1) summary.files: renamed (now summary.changedFiles)"
    )


def test_migrate_jsonl_keeps_blank_lines_out_and_reports_no_changes_for_current_files(
    tmp_path: Path,
) -> None:
    src, dst = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    lines = [json.dumps(entry.to_json()) for entry in fx.opening_path()]
    src.write_text("\n\n".join(lines) + "\n", encoding="utf-8")
    report = migrate_jsonl(src, dst)
    assert report.changes == ()
    assert JsonlSessionStore.open(dst).entries() == fx.opening_path()


def test_migrate_jsonl_never_overwrites(tmp_path: Path) -> None:
    src = tmp_path / "old.jsonl"
    original = _write_jsonl(src, _draft_session())
    for dst in (src, tmp_path / "taken.jsonl"):
        dst.touch()
        with pytest.raises(MigrationError, match="already exists") as caught:
            migrate_jsonl(src, dst)
        assert caught.value.field == "dst"
    assert src.read_bytes() == original


@pytest.mark.parametrize("name", sorted(NOT_MIGRATABLE))
def test_an_unmigratable_line_stops_before_anything_is_written(tmp_path: Path, name: str) -> None:
    src, dst = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    records = _draft_session()
    records[10] = draft_records()[name]
    _write_jsonl(src, records)
    with pytest.raises(MigrationError, match=r"old\.jsonl line 11") as caught:
        migrate_jsonl(src, dst)
    assert (caught.value.line, caught.value.entry_id) == (11, "compact-1")
    assert caught.value.field == EXPECTED_FIELDS[name]
    assert not dst.exists()


def test_migrate_jsonl_names_broken_lines(tmp_path: Path) -> None:
    src, dst = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    _write_jsonl(src, _draft_session(), tail="")
    with pytest.raises(MigrationError, match="line 13: the last line has no newline") as caught:
        migrate_jsonl(src, dst)
    assert caught.value.line == 13
    src.write_text('{"type": "message"\n', encoding="utf-8")
    with pytest.raises(MigrationError, match="line 1: not valid JSON"):
        migrate_jsonl(src, dst)
    wires = _draft_session()
    _write_jsonl(src, [wires[0], wires[0]])
    with pytest.raises(MigrationError, match="line 2: duplicate id") as caught:
        migrate_jsonl(src, dst)
    assert caught.value.entry_id == "sys"
    assert not dst.exists()


def _as_draft(path: list[SessionEntry]) -> list[dict[str, Any]]:
    """Every compaction of ``path`` rewritten in the early-draft shape."""
    wires: list[dict[str, Any]] = []
    for index, entry in enumerate(path):
        wire = entry.to_json()
        if isinstance(entry, CompactionSessionEntry):
            summary = wire["summary"]
            summary["files"] = summary.pop("changedFiles")
            summary["nextSteps"] = summary.pop("next")
            summary["invariants"] = summary.pop("constraints")
            ids = [e.id for e in path[:index]]
            before = ids[: ids.index(entry.first_kept_entry_id)]
            if before:
                wire["compactedEntryIds"] = before
                del wire["firstKeptEntryId"]
        wires.append(wire)
    return wires


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(path=sessions())
def test_migrating_a_drafted_session_gives_the_session_back(
    tmp_path_factory: pytest.TempPathFactory, path: list[SessionEntry]
) -> None:
    folder = tmp_path_factory.mktemp("draft")
    src, dst = folder / "old.jsonl", folder / "new.jsonl"
    _write_jsonl(src, _as_draft(path)) if path else src.write_bytes(b"")
    report = migrate_jsonl(src, dst)
    assert JsonlSessionStore.open(dst).entries() == path
    compactions = sum(isinstance(e, CompactionSessionEntry) for e in path)
    assert len({c.line for c in report.changes}) == compactions


# -- the notebook's self-checks -----------------------------------------------------------------


# A migration written from the chapter, the way a student would (no call of the reference).
_RENAMES = {"files": "changedFiles", "nextSteps": "next", "invariants": "constraints"}


def _own(wire: dict[str, Any], earlier: list[Any]) -> tuple[dict[str, Any], list[str]]:
    entry_id = wire.get("id")

    def refuse(field: str, problem: str) -> NoReturn:
        raise MigrationError(
            f"session entry {entry_id}: {field} {problem}; not migratable",
            entry_id=entry_id,
            field=field,
        )

    record = dict(wire)  # a new record: the draft stays as it was
    notes: list[str] = []
    if record.get("type") == "compaction" and isinstance(record.get("summary"), dict):
        summary = dict(record["summary"])
        for draft, current in _RENAMES.items():
            if draft not in summary:
                continue
            value = summary.pop(draft)
            if current in summary and summary[current] != value:
                refuse(f"summary.{draft}", f"and summary.{current} disagree")
            summary[current] = value
            notes.append(f"summary.{draft}")
        record["summary"] = summary

    if "compactedEntryIds" in record:
        compacted = record.pop("compactedEntryIds")
        path = path_to(earlier, record["parentId"])  # the path the compaction follows
        ids = [entry.id for entry in path]
        for item in compacted:
            if item not in ids:
                refuse("compactedEntryIds", f"names {item}, which is not on the path")
        last = max(ids.index(item) for item in compacted)
        first_kept: str | None = None
        for entry in path[last + 1 :]:  # the first interaction after the compacted ids
            if entry.type != "message" or entry.message.role == "system":
                continue  # system messages belong to no interaction
            if entry.message.role != "user":
                refuse("compactedEntryIds", f"ends inside an interaction ({entry.id} follows)")
            first_kept = entry.id
            break
        if first_kept is None:
            refuse("compactedEntryIds", "leaves no interaction to keep")
        if record.setdefault("firstKeptEntryId", first_kept) != first_kept:
            refuse("compactedEntryIds", f"points to {first_kept}, not to firstKeptEntryId")
        notes.append("compactedEntryIds")

    try:
        parse_session_entry(record)  # the strict parser is never loosened
    except CtxlabError as error:
        refuse(getattr(error, "field", "") or "record", f"is still refused by the parser ({error})")
    return record, notes


def _as_pair(wire: dict[str, Any], earlier: list[Any]) -> tuple[dict[str, Any], list[str]]:
    record, notes = _own(wire, earlier)
    return record, [f"{note}: changed" for note in notes]


def _reference(wire: dict[str, Any], earlier: list[Any]) -> Any:
    return migrate_draft_entry(wire, earlier=earlier)


def _renames_only(wire: dict[str, Any], earlier: list[Any]) -> tuple[dict[str, Any], list[str]]:
    record = dict(wire)
    summary = dict(record["summary"])
    notes = []
    for old, new in (
        ("files", "changedFiles"),
        ("nextSteps", "next"),
        ("invariants", "constraints"),
    ):
        if old in summary:
            summary[new] = summary.pop(old)
            notes.append(f"summary.{old}")
    record["summary"] = summary
    return record, notes


def _edits_in_place(wire: dict[str, Any], earlier: list[Any]) -> Any:
    result = _own(wire, earlier)
    wire.clear()
    return result


def _bare_key_error(wire: dict[str, Any], earlier: list[Any]) -> Any:
    try:
        return _own(wire, earlier)
    except MigrationError:
        raise KeyError("summary") from None


def _no_notes(wire: dict[str, Any], earlier: list[Any]) -> Any:
    return _own(wire, earlier)[0], []


def _placeholder(wire: dict[str, Any], earlier: list[Any]) -> Any: ...


@pytest.mark.parametrize(
    ("student", "ok", "words"),
    [
        (_own, True, "matches the reference"),
        (_as_pair, True, "matches the reference"),
        (_reference, False, "calls ctxlab's reference migration (migration.migrate_draft_entry)"),
        (_renames_only, False, "compactedEntryIds"),
        (_edits_in_place, False, "changed its input"),
        (_bare_key_error, False, "bare KeyError"),
        (_no_notes, False, "change notes"),
        (_placeholder, False, "not answered yet"),
        (None, False, "not answered yet"),
        ("migrate", False, "expected your function"),
    ],
)
def test_check_migration(student: Any, ok: bool, words: str) -> None:
    verdict = check_migration(student)
    assert verdict.ok is ok
    assert words in str(verdict)
    assert "Traceback" not in str(verdict)


# -- the exercise may not pass by calling the reference (issue 10) -------------------------------


def _via_module(wire: dict[str, Any], earlier: list[Any]) -> Any:
    return migration.migrate_draft_entry(wire, earlier=earlier)


def _helper(wire: dict[str, Any], earlier: list[Any]) -> Any:
    return migrate_draft_entry(wire, earlier=earlier).entry_wire, []


def _through_a_helper(wire: dict[str, Any], earlier: list[Any]) -> Any:
    return _helper(wire, earlier)


def _hidden_name(wire: dict[str, Any], earlier: list[Any]) -> Any:
    function = getattr(migration, "migrate_" + "draft_entry")  # not visible in the code
    return function(wire, earlier=earlier)


def _in_a_closure() -> Any:
    reference = migrate_draft_entry

    def student(wire: dict[str, Any], earlier: list[Any]) -> Any:
        return reference(wire, earlier=earlier)

    return student


@pytest.mark.parametrize(
    "student",
    [_reference, _via_module, _through_a_helper, _hidden_name, _in_a_closure()],
    ids=["imported", "module attribute", "helper", "getattr", "closure"],
)
def test_check_migration_refuses_the_reference_itself(student: Any) -> None:
    verdict = check_migration(student)
    assert not verdict.ok
    assert "calls ctxlab's reference migration (migration.migrate_draft_entry)" in str(verdict)
    assert "use your own code" in str(verdict).lower()
    # the stand-ins are gone again: the reference works as before
    assert migration.migrate_draft_entry is migrate_draft_entry
    assert migrate_draft_entry(draft_records()["files instead of changedFiles"]).entry == (
        fx.compact1()
    )


def test_reference_calls_looks_through_code_not_names() -> None:
    assert reference_calls(_reference) == ["migration.migrate_draft_entry"]
    assert reference_calls(_through_a_helper) == ["migration.migrate_draft_entry"]
    assert reference_calls(_own) == []  # MigrationError, path_to, the parser are allowed
    assert reference_calls(_hidden_name) == []  # caught while it runs instead


def test_check_summary_renames_refuses_the_reference_helper() -> None:
    def student(summary: dict[str, Any]) -> Any:
        return migration._rename_summary_fields(summary, "compact-1")[0]

    verdict = check_summary_renames(student)
    assert not verdict.ok
    assert "migration._rename_summary_fields" in str(verdict)


def _summary_renames(summary: dict[str, Any]) -> dict[str, Any]:
    renamed = dict(summary)
    for old, new in (
        ("files", "changedFiles"),
        ("nextSteps", "next"),
        ("invariants", "constraints"),
    ):
        if old in renamed:
            renamed[new] = renamed.pop(old)
    return renamed


def _summary_in_place(summary: dict[str, Any]) -> dict[str, Any]:
    if "files" in summary:
        summary["changedFiles"] = summary.pop("files")
    return summary


def _summary_files_only(summary: dict[str, Any]) -> dict[str, Any]:
    renamed = dict(summary)
    if "files" in renamed:
        renamed["changedFiles"] = renamed.pop("files")
    return renamed


@pytest.mark.parametrize(
    ("student", "ok", "words"),
    [
        (_summary_renames, True, "seven current fields"),
        (_summary_in_place, False, "changed its input"),
        (_summary_files_only, False, "Still there: nextSteps"),
        (lambda summary: None, False, "not answered yet"),
        (lambda summary: ["goal"], False, "expected a dict"),
        (..., False, "not answered yet"),
    ],
)
def test_check_summary_renames(student: Any, ok: bool, words: str) -> None:
    verdict = check_summary_renames(student)
    assert verdict.ok is ok
    assert words in str(verdict)


def test_the_draft_table_pairs_the_parser_with_the_migration() -> None:
    frame = draft_table()
    rows = dict(zip(frame["draft record"], frame.to_dict("records"), strict=True))
    assert set(rows) == set(draft_records())
    assert rows["already current"]["strict parser"] == "accepted"
    assert rows["files instead of changedFiles"]["strict parser"].startswith(
        "refused: session entry compact-1: summary.files is not a known field"
    )
    assert rows["files instead of changedFiles"]["migration"] == (
        "✔ summary.files: renamed (now summary.changedFiles)"
    )
    for name in NOT_MIGRATABLE:
        assert rows[name]["migration"].startswith("✘ ")
