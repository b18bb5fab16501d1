"""Lab 11.1 in Chinese (issue 18): what the zh edition prints, its code comments, and the
chapter-vs-ctxlab line the lab draws (only ``files`` is the chapter's early-draft name).

* the torn-last-line warning and refusal of a JSONL store (a ctxlab extension) have Chinese
  renderings that keep every number and id;
* the exercise checks show the parser's refusal in Chinese;
* every case label of the 11.1 check table has a Chinese text;
* the zh code cells carry Chinese comments and docstrings, and the zh exercise answer
  (11-1-28) is a Chinese summary.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path
from typing import Any

import pytest

import ctxlab
from ctxlab import fixtures
from ctxlab.lab import lab11_1
from ctxlab.lab.errors_zh import message_zh
from ctxlab.lab.grading import lab11_1 as grading
from ctxlab.lab.grading.text import Text
from nbsource_module import load_nbsource
from test_zh_outputs import SEGMENT, _prose_words

pytestmark = pytest.mark.teaching

HAN = re.compile(r"[\u4e00-\u9fff]")
nbsource = load_nbsource()
SOURCE = next(s for s in nbsource.load_sources() if s.lab == "11.1")


def _torn_store(tmp_path: Path) -> tuple[Any, ctxlab.SessionStoreError]:
    """The notebook's scene: the opening path and compact-1, then 64 bytes of u4 without
    their newline. Returns the store's read() result and its refusal to append u4."""
    path = fixtures.opening_path()
    session_file = tmp_path / "session.jsonl"
    store = ctxlab.JsonlSessionStore.open(session_file)
    for entry in [*path, fixtures.compact1(path)]:
        store.append(entry)
    with open(session_file, "ab") as f:
        f.write(b'{"type": "message", "id": "u4", "parentId": "compact-1", "timest')
    torn = ctxlab.JsonlSessionStore.open(session_file)
    u4 = ctxlab.MessageSessionEntry(
        "u4", "compact-1", 101, ctxlab.UserMessage((ctxlab.TextContent("x"),), 101)
    )
    with pytest.raises(ctxlab.SessionStoreError) as caught:
        torn.append(u4)
    return torn.read(), caught.value


def _no_english_run(text: str, longest: int = 1) -> bool:
    """No segment between Chinese characters holds more than ``longest`` prose words."""
    return all(len(_prose_words(seg.strip())) <= longest for seg in SEGMENT.findall(text))


# -- the torn last line (ctxlab extension) ---------------------------------------------------------


def test_the_store_patterns_keep_every_number_and_id() -> None:
    warning = (
        "other.jsonl line 7 has no newline: it is an unterminated tail (3 bytes, probably a torn"
        " write); it is not read as an entry. Appends are refused until"
        " JsonlSessionStore.repair() moves it aside."
    )
    assert message_zh(warning).startswith("other.jsonl 第 7 行没有换行符")
    assert "（3 字节" in message_zh(warning)
    refusal = (
        "s.jsonl line 4 is an unterminated tail; entry a9 was not appended. Run"
        " JsonlSessionStore.repair(path) first."
    )
    assert message_zh(refusal).startswith("s.jsonl 第 4 行是被截断的最后一行，entry a9 没有")
    # a message that is only close to the pattern is left as the core wrote it
    assert message_zh(refusal.replace("first.", "now.")) == refusal.replace("first.", "now.")


# -- the exercise checks ---------------------------------------------------------------------------


# -- the exercise checks ---------------------------------------------------------------------------


def test_an_exercise_refusal_shows_the_parser_message_in_chinese(zh: None) -> None:
    mine = lab11_1.check_my_summary({"goal": "目标"})
    assert (mine.ok, mine.title) == (False, "parser 拒绝了这个答案")
    assert mine.detail == "EntryParseError: entry compact-1：缺少 summary.constraints"


def test_an_exercise_refusal_in_english_is_what_it_was() -> None:
    verdict = lab11_1.check_my_summary({"goal": "Ship it"})
    assert (verdict.ok, verdict.title) == (False, "ctxlab rejected the answer")
    assert verdict.detail.startswith("EntryParseError: session entry compact-1: ")
    assert "summary.constraints" in verdict.detail
    assert verdict.hint == "Read the message: it names the entry id, field or option at fault."


# -- the check table's case labels -----------------------------------------------------------------


class _Recorder:
    """A stand-in for the grader's Trial: it records every case label a check uses and
    answers with the reference (so every case of every check is reached)."""

    def __init__(self) -> None:
        self.labels: list[Text] = []

    def returns(self, label: Text, *args: Any, **kwargs: Any) -> Any:
        self.labels.append(label)
        return grading.parse_compaction_entry(*args, **kwargs)

    def rejects(self, label: Text, names: Any, *args: Any, **kwargs: Any) -> None:
        self.labels.append(label)

    def outcome(self, label: Text, *args: Any, **kwargs: Any) -> tuple[bool, Any]:
        return True, self.returns(label, *args, **kwargs)


def _labels() -> list[Text]:
    recorder = _Recorder()
    for check in grading.LAB.checks:
        check.run(recorder)  # type: ignore[arg-type]
    return recorder.labels


def test_every_case_label_of_the_check_table_reads_chinese(zh: None) -> None:
    labels = _labels()
    assert len(labels) > 60
    # a random case's entry is shown in wire form, JSON: data, not prose
    english = [
        label.zh for label in labels if not _no_english_run(re.sub(r"\{.*\}", "{…}", label.zh))
    ]
    assert not english, english
    by_en = {label.en: label.zh for label in labels}
    assert (
        by_en["compact-1 with files instead of changedFiles"]
        == "compact-1（用 files 代替 changedFiles）"
    )
    assert (
        by_en["compact-1 with an extra key summary.notes"]
        == "compact-1（多了一个键 summary.notes）"
    )
    assert by_en["compact-1 with all six lists empty"] == "compact-1（六个列表全为空）"
    assert "compact-1（summary = '让上下文保持精简。'）" in by_en.values()


def test_the_case_labels_stay_english_in_en() -> None:
    labels = {label.en for label in _labels()}
    assert "compact-1 with summary = 'Keep the context small.'" in labels
    assert "compact-1 with summary.changedFiles missing" in labels


def test_the_check_table_names_only_files_as_the_chapters_early_draft_name() -> None:
    checks = {c.key: c for c in grading.LAB.checks}
    draft = checks["rejects_draft_names"]  # the chapter's row: files, and no migration name
    assert draft.source == "chapter"
    assert draft.behaviour_en.startswith("the chapter's early-draft name files")
    assert "nextSteps" not in draft.behaviour_en and "nextSteps" not in draft.behaviour_zh
    unknown = checks["rejects_unknown_keys"]  # the migration exercise's names: ctxlab's row
    assert unknown.source == "ctxlab"
    assert "nextSteps" in unknown.behaviour_en and "nextSteps" in unknown.behaviour_zh


# -- the source: zh code cells, and who owns the old names -----------------------------------------


def _edition(lang: str, role: str) -> dict[str, str]:
    notebook = nbsource.build_notebook(SOURCE, nbsource.Edition(lang, role))
    return {cell.id: cell.source for cell in notebook.cells}


def _comments_and_docstrings(code: str) -> list[str]:
    lines = [line for line in code.split("\n") if not line.startswith("%")]
    found = []
    for token in tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline):
        docstring = token.type == tokenize.STRING and token.string.startswith('"""')
        if token.type == tokenize.COMMENT or docstring:
            found.append(token.string)
    return found


@pytest.mark.parametrize("role", ["student", "instructor"])
def test_every_comment_and_docstring_of_the_zh_code_cells_is_chinese(role: str) -> None:
    cells = _edition("zh", role)
    for cell_id in ("11-1-12", "11-1-28", "11-1-b02"):
        comments = _comments_and_docstrings(cells[cell_id])
        if cell_id in ("11-1-12", "11-1-b02"):
            assert comments, cell_id
        for comment in comments:
            assert HAN.search(comment), (cell_id, comment)
            assert _no_english_run(comment, longest=2), (cell_id, comment)


def test_the_zh_answer_of_exercise_b_is_a_chinese_summary() -> None:
    zh_cell = _edition("zh", "instructor")["11-1-28"]
    en_cell = _edition("en", "instructor")["11-1-28"]
    assert "Ship the budgeted context builder." in en_cell
    assert "Ship" not in zh_cell
    namespace: dict[str, Any] = {}
    exec(zh_cell.split("lab11_1.check_my_summary")[0], namespace)
    summary = namespace["my_summary"]
    assert HAN.search(summary["goal"])
    for key in ("constraints", "completed", "decisions", "next"):
        assert summary[key] and all(HAN.search(item) for item in summary[key]), key


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_migration_names_are_never_the_chapters_early_draft(lang: str) -> None:
    """A markdown cell that calls something early-draft and names ``nextSteps`` (or another
    old name of the migration exercise) also says whose name it is."""
    draft, exercise = {"en": ("early-draft", "migration exercise"), "zh": ("早期草案", "迁移练习")}[
        lang
    ]
    for role in ("student", "instructor"):
        for cell_id, text in _edition(lang, role).items():
            if draft in text and re.search(r"nextSteps|invariants|compactedEntryIds", text):
                assert exercise in text, (lang, role, cell_id)
