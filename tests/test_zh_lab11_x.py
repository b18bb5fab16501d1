"""Lab 11.x in Chinese (issue 18): what the migration lab prints comes out in Chinese in the
zh edition -- the draft records' names, the migration notes and every refusal of
:mod:`ctxlab.migration` -- and exactly as before in the English edition."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from ctxlab import fixtures, migration
from ctxlab.errors import CtxlabError
from ctxlab.lab import lab11_x
from ctxlab.lab.errors_zh import error_text, problem_zh
from ctxlab.lab.language import set_language
from ctxlab.migration import LineChange, MigrationChange

pytestmark = pytest.mark.teaching

HAN = re.compile(r"[\u4e00-\u9fff]")
#: Three English words in a row: prose the Chinese edition must not show.
ENGLISH_RUN = re.compile(r"\b[a-z]{2,}\b \b[a-z]{2,}\b \b[a-z]{2,}\b")


def _base() -> dict[str, Any]:
    return fixtures.draft_records()["compactedEntryIds instead of firstKeptEntryId"]


#: Records ``migrate_draft_entry`` refuses, beyond the fixtures' NOT_MIGRATABLE ones.
REFUSED: dict[str, object] = {
    "empty compactedEntryIds": {**_base(), "compactedEntryIds": []},
    "blank id in compactedEntryIds": {**_base(), "compactedEntryIds": ["u1", " "]},
    "no parentId": {**_base(), "parentId": None},
    "parentId not in the session": {**_base(), "parentId": "nope"},
    "nothing left to keep": {
        **_base(),
        "compactedEntryIds": ["u1", "a1", "u2", "a2", "u3", "calls", "r-test", "r-read", "a3"],
    },
    "not an object": [],
}


def _refusals() -> dict[str, migration.MigrationError]:
    records: dict[str, object] = {
        name: fixtures.draft_records()[name] for name in sorted(fixtures.NOT_MIGRATABLE)
    }
    records.update(REFUSED)
    errors = {}
    for name, record in records.items():
        with pytest.raises(migration.MigrationError) as caught:
            migration.migrate_draft_entry(record, earlier=fixtures.opening_path())
        errors[name] = caught.value
    return errors


def _file_refusals(tmp_path: Path) -> list[migration.MigrationError]:
    torn = tmp_path / "torn.jsonl"
    torn.write_text('{"id": "u1"}', encoding="utf-8")  # no newline at the end
    existing = tmp_path / "existing.jsonl"
    existing.write_text("", encoding="utf-8")
    errors = []
    for src, dst in [(torn, tmp_path / "new.jsonl"), (torn, existing)]:
        with pytest.raises(migration.MigrationError) as caught:
            migration.migrate_jsonl(src, dst)
        errors.append(caught.value)
    return errors


def test_every_refusal_of_the_migration_is_known_to_the_phrase_table(tmp_path: Path) -> None:
    errors = [*_refusals().values(), *_file_refusals(tmp_path)]
    unknown = [error.problem for error in errors if problem_zh(error.problem) is None]
    assert unknown == []


def test_every_refusal_reads_chinese_in_the_zh_edition(zh: None, tmp_path: Path) -> None:
    for error in [*_refusals().values(), *_file_refusals(tmp_path)]:
        text = error_text(error)
        assert HAN.search(text), text
        assert not ENGLISH_RUN.search(text), text


def test_the_refusals_say_what_they_say_in_chinese(zh: None, tmp_path: Path) -> None:
    errors = _refusals()
    assert error_text(errors["empty compactedEntryIds"]) == (
        "entry compact-1：compactedEntryIds 必须是非空的 entry id 数组；无法迁移"
    )
    assert error_text(errors["parentId not in the session"]) == (
        "entry compact-1：从 parentId 找不到一条路径（leaf 'nope' 不在 session 里）；无法迁移"
    )
    assert error_text(errors["nothing left to keep"]) == (
        "entry compact-1：compactedEntryIds 停在 a3：后面已经没有可以保留的组；无法迁移"
    )
    assert error_text(errors["not an object"]) == "entry 必须是对象，这里是 list；无法迁移"
    torn, existing = _file_refusals(tmp_path)
    assert error_text(existing) == "existing.jsonl 已经存在；迁移只写新文件，从不覆盖已有的文件"
    assert error_text(torn) == (
        "torn.jsonl 第 1 行：最后一行没有换行符（写入被截断了）；先修复文件，再迁移"
    )


def test_the_english_edition_shows_the_core_s_own_messages(tmp_path: Path) -> None:
    for error in [*_refusals().values(), *_file_refusals(tmp_path)]:
        assert isinstance(error, CtxlabError)
        assert error_text(error) == str(error)


def test_every_draft_record_has_a_chinese_name() -> None:
    names = set(fixtures.draft_records())
    assert set(lab11_x.DRAFT_LABELS_ZH) == names
    for label in lab11_x.DRAFT_LABELS_ZH.values():
        assert HAN.search(label), label
        assert not ENGLISH_RUN.search(label), label
    assert len(set(lab11_x.DRAFT_LABELS_ZH.values())) == len(names)  # no two alike


def test_draft_labels_follow_the_language(zh: None) -> None:
    assert lab11_x.draft_label("every draft name at once") == "所有旧字段名一起出现"
    frame = lab11_x.draft_table()
    assert list(frame["草案记录"]) == [lab11_x.DRAFT_LABELS_ZH[n] for n in fixtures.draft_records()]
    set_language("en")
    assert lab11_x.draft_label("every draft name at once") == "every draft name at once"
    assert list(lab11_x.draft_table()["draft record"]) == list(fixtures.draft_records())


def test_migration_notes_in_both_languages(zh: None) -> None:
    change = MigrationChange("compactedEntryIds", "dropped", "firstKeptEntryId derived from it: u2")
    line = LineChange(11, "compact-1", change)
    assert lab11_x.note_text(change) == "compactedEntryIds：已删除（由它推出 firstKeptEntryId：u2）"
    assert lab11_x.note_text(line) == (
        "第 11 行（compact-1）compactedEntryIds：已删除（由它推出 firstKeptEntryId：u2）"
    )
    set_language("en")
    assert lab11_x.note_text(change) == str(change)
    assert lab11_x.note_text(line) == (
        "line 11 (compact-1) compactedEntryIds: dropped (firstKeptEntryId derived from it: u2)"
    )
