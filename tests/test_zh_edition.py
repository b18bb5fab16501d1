"""Chinese all the way down in the zh edition (issue 18, item 4).

Two things are checked here:

1. **Labels and captions.** Every Chinese edition (student and instructor) is built in memory
   from the sources; in every code cell, each string literal that is *shown* -- an argument
   of ``print(...)``, the caption of ``display.show(frame, name, caption)``, a ``title=`` or
   ``caption=`` keyword -- is Chinese, or is made only of code: ids (``compact-1``), field
   names (``firstKeptEntryId``), names with ``_ . - [ ]`` or a digit in them, exception
   class names, and the few English words the chapter keeps in its Chinese text
   (:data:`KEPT_WORDS`, from ``notebooks/GLOSSARY.zh.md``).
2. **ctxlab's errors in zh tables.** Every core error message that reaches a table of the
   Chinese edition (the corruptions of compact-1, the grouping errors, the first-kept
   tables, the draft records) has a Chinese rendering in
   :mod:`ctxlab.lab.errors_zh`, and the English edition shows the core's own message.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterator
from typing import Any

import pytest

from ctxlab import create_compaction_entry, fixtures, group_interactions, parse_session_entry
from ctxlab.errors import CtxlabError
from ctxlab.interactions import message_entries
from ctxlab.lab import lab11_x
from ctxlab.lab.errors_zh import change_text, error_text, message_zh, problem_zh
from ctxlab.lab.language import set_language
from ctxlab.migration import MigrationError, migrate_draft_entry
from nbsource_module import load_nbsource

pytestmark = pytest.mark.teaching

nbsource = load_nbsource()
ZH_SOURCES = [s for s in nbsource.load_sources() if "zh" in s.languages]
HAN = re.compile(r"[\u4e00-\u9fff]")
WORD = re.compile(r"[A-Za-z_][\w.\-\[\]]*")

#: English words the chapter keeps in its Chinese text (glossary: entry, leaf, parser, Store,
#: summary, ...), the message roles and the core's ``reason`` values.
KEPT_WORDS = frozenset(
    [
        "entry",
        "entries",
        "message",
        "messages",
        "leaf",
        "parser",
        "Store",
        "store",
        "summary",
        "compaction",
        "interaction",
        "token",
        "tokens",
        "system",
        "user",
        "assistant",
        "tool",
        "call",
        "result",
        "reason",
        "trimmed",
        "within_budget",
        "overflow",
        "sections",
        "content",
        "timestamp",
        "goal",
        "next",
        "max_tokens",
        "id",
        "ids",
        "JSON",
        "sys",
        "calls",
    ]
)


def is_code(word: str) -> bool:
    """A word that is code, not English prose: an id, a field, a name with ``_ . - [ ]``
    or a digit, a camelCase or CamelCase name, or a word the chapter keeps in English."""
    return (
        word in KEPT_WORDS
        or bool(re.search(r"[\d_.\-\[\]]", word))
        or bool(re.search(r"[a-z][A-Z]", word))
    )


def english_label(text: str) -> bool:
    """``text`` is an English label: it has a prose word in it and no Chinese."""
    if HAN.search(text):
        return False
    return any(not is_code(word) for word in WORD.findall(text))


def _shown_strings(call: ast.Call) -> list[ast.expr]:
    func = call.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
    shown: list[ast.expr] = []
    if name == "print":
        shown += call.args
    if name == "show" and len(call.args) >= 3:
        shown.append(call.args[2])
    shown += [k.value for k in call.keywords if k.arg in ("title", "caption")]
    return shown


def _literals(node: ast.expr) -> Iterator[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.JoinedStr):
        for part in node.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                yield part.value
            elif isinstance(part, ast.FormattedValue):
                yield from _literals(part.value)
    elif isinstance(node, ast.IfExp):
        yield from _literals(node.body)
        yield from _literals(node.orelse)
    elif isinstance(node, ast.BinOp):
        yield from _literals(node.left)
        yield from _literals(node.right)


def english_labels(code: str) -> list[str]:
    """The shown string literals of a code cell that are English labels."""
    lines = [line for line in code.split("\n") if not line.lstrip().startswith(("%", "!"))]
    tree = ast.parse("\n".join(lines))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for arg in _shown_strings(node):
                found += [text for text in _literals(arg) if english_label(text)]
    return found


def _zh_cells(source: Any) -> Iterator[tuple[str, Any]]:
    for role in nbsource.ROLES:
        notebook = nbsource.build_notebook(source, nbsource.Edition("zh", role))
        for cell in notebook.cells:
            if cell.cell_type == "code":
                yield role, cell


@pytest.mark.parametrize("source", ZH_SOURCES, ids=lambda s: s.name)
def test_the_chinese_edition_prints_no_english_label(source: Any) -> None:
    problems = [
        f"{source.name} ({role}) cell {cell.id}: {label!r}"
        for role, cell in _zh_cells(source)
        for label in english_labels(cell.source)
    ]
    assert not problems, "\n".join(sorted(set(problems)))


def test_english_labels_are_found_and_code_is_not() -> None:
    assert english_labels('print("total cost of the path:", n)') == ["total cost of the path:"]
    assert english_labels('display.show(t, "ledger-40", "resumed path, max_tokens = 40")') == [
        "resumed path, max_tokens = 40"
    ]
    assert english_labels('f(path, title="compact-1 points back to u2")') == [
        "compact-1 points back to u2"
    ]
    assert english_labels("print(f\"{label:15} {'legal' if ok else 'inside'}\")") == [
        "legal",
        "inside",
    ]
    assert english_labels('print("路径的总成本：", n)') == []
    code = 'print("TypeError:", e); print("tokens.system:", 3, "| reason:", r)'
    assert english_labels(code) == []
    assert english_labels('print(" → ".join(ids)); print("parentId：", p)') == []
    assert english_labels('x = {"goal": "Ship it."}') == []  # data, not a label


# -- ctxlab's errors in the tables of the Chinese edition ----------------------------------


def _table_errors() -> list[CtxlabError]:
    """Every core error the zh tables show (the same calls the tables make)."""
    errors: list[CtxlabError] = []
    for wire in fixtures.compaction_corruptions().values():
        try:
            parse_session_entry(wire)
        except CtxlabError as error:
            errors.append(error)
    grouping_errors = (
        fixtures.unknown_call_path(),
        fixtures.missing_result_path(),
        fixtures.duplicate_result_path(),
        fixtures.duplicate_call_path(),
    )
    for path in grouping_errors:
        try:
            group_interactions(message_entries(path))
        except CtxlabError as error:
            errors.append(error)
    for path, compaction_id, extra in (
        (fixtures.opening_path(), "compact-1", ["u9"]),
        (fixtures.system_patch_path(), "compact-2", []),
    ):
        for entry_id in [*(e.id for e in path), *extra]:
            try:
                create_compaction_entry(
                    path,
                    id=compaction_id,
                    timestamp=100,
                    summary=fixtures.compact1_summary(),
                    first_kept_entry_id=entry_id,
                    tokens_before=29,
                )
            except CtxlabError as error:
                errors.append(error)
    for wire in fixtures.draft_records().values():
        try:
            parse_session_entry(wire)
        except CtxlabError as error:
            errors.append(error)
        try:
            migrate_draft_entry(wire, earlier=fixtures.opening_path())
        except MigrationError as error:
            errors.append(error)
    return errors


def test_every_core_error_in_a_zh_table_has_a_chinese_rendering(zh: None) -> None:
    errors = _table_errors()
    assert len(errors) > 30
    missing = sorted({e.problem for e in errors if problem_zh(e.problem) is None})
    assert not missing, "no Chinese rendering for:\n" + "\n".join(missing)
    for error in errors:
        text = error_text(error)
        assert HAN.search(text), text
        for name in (error.entry_id, error.field, error.call_id):
            if name is not None:
                assert name in text or name in str(error).split(": ", 1)[0], (name, text)


def test_the_option_errors_of_11_3_have_chinese_renderings() -> None:
    """「四个配置数值和估算器的每次返回值都要是非负有限数」, broken one at a time: every
    error build_context raises has a Chinese rendering."""
    from ctxlab import build_context

    def returns(value: object) -> Any:
        return lambda message: value

    option_errors: list[dict[str, Any]] = [
        {"max_tokens": -1},
        {"max_tokens": math.nan},
        {"reserved_output": math.inf},
        {"safety_margin": True},
        {"safety_margin": "2"},
        {"estimate_tokens": returns(-1)},
        {"estimate_tokens": returns(math.nan)},
    ]
    for changes in option_errors:
        options: dict[str, Any] = {
            "max_tokens": 31,
            "reserved_output": 4,
            "safety_margin": 2,
            "estimate_tokens": fixtures.opening_estimator,
            **changes,
        }
        with pytest.raises(CtxlabError) as caught:
            build_context(fixtures.opening_path(), **options)
        rendered = problem_zh(caught.value.problem)
        assert rendered is not None and HAN.search(rendered), caught.value.problem


def test_the_zh_tables_show_chinese_errors(zh: None) -> None:
    drafts = lab11_x.draft_table()
    assert all(HAN.search(text) for text in drafts.iloc[:, 1] if text != "接受")
    assert all(HAN.search(text) for text in drafts.iloc[:, 2])


def test_the_english_edition_shows_the_core_message() -> None:
    set_language("en")
    for error in _table_errors():
        assert error_text(error) == str(error)
    change = migrate_draft_entry(
        fixtures.draft_records()["files instead of changedFiles"], earlier=fixtures.opening_path()
    ).changes[0]
    assert change_text(change) == str(change)


def test_an_unknown_problem_falls_back_to_english(zh: None) -> None:
    error = CtxlabError("something new went wrong", where="session entry u2", entry_id="u2")
    assert error_text(error) == "session entry u2: something new went wrong"
    assert message_zh("session entry u2: summary.goal is missing") == "entry u2：缺少 summary.goal"
