"""The feedback corpora (tests/feedback_corpus, _2 to _10): wrong functions written blind.

Each file under ``<corpus>/lab11_N/`` is one student's build-it for Lab 11.N with
exactly one mistake, and a ``WITNESS()`` giving one input on which it differs from ctxlab's
reference where the chapter decides the answer. These tests make sure the corpus stays what
it claims to be:

* every wrong function differs from the reference on its witness (the returned value as plain
  data, or "raised" vs "returned", or what the call left of its input);
* each correct version in ``correct/`` agrees with the reference on every witness of its lab
  (so a witness asks about the chapter's rule, not about a quirk of the reference) and
  passes the lab's check (``check_implementation(...).passed``); round 6's students follow
  the chapter only, so their correct version is ``tests/chapter_only/`` and 11.2's
  ``tool_pairs`` (a ctxlab extra they leave empty) is not compared;
* no wrong function calls its own lab's reference.

* the lab's check catches every wrong function (round 6's: on the chapter's rows, since they
  skip ctxlab's extras), and a hint it shows names a misconception the file's label in
  ``labels.json`` gives it (a wrong hint is worse than none).

How often a hint is shown is measured by ``benchmarks/feedback.py``.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import importlib.util
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import ctxlab

CORPUS = Path(__file__).parent / "feedback_corpus"
#: Round 1 (50 files, with the correct versions rounds 2 to 5 and 7 to 10 start from),
#: rounds 2 to 10 (25 each).
CORPORA = (CORPUS, *(Path(__file__).parent / f"feedback_corpus_{n}" for n in range(2, 11)))
#: Round 6: students who follow the chapter only, starting from ``tests/chapter_only/``.
CHAPTER_ONLY = Path(__file__).parent / "feedback_corpus_6"
LABS = ("11.1", "11.2", "11.3", "11.4", "11.5")

#: lab -> (the keyword of check_implementation, the name of ctxlab's reference)
KEYWORDS = {
    "11.1": ("parse_compaction_entry", "parse_session_entry"),
    "11.2": ("group_interactions", "group_interactions"),
    "11.3": ("build_context", "build_context"),
    "11.4": ("create_compaction_entry", "create_compaction_entry"),
    "11.5": ("build_context", "build_context"),
}


def _folder(lab: str, corpus: Path = CORPUS) -> Path:
    return corpus / f"lab{lab.replace('.', '_')}"


def _wrong_files() -> list[tuple[str, Path]]:
    found = (sorted(_folder(lab, corpus).glob("*.py")) for corpus in CORPORA for lab in LABS)
    return [(f"11.{path.parent.name[-1]}", path) for paths in found for path in paths]


def _load(path: Path) -> ModuleType:
    name = "_".join(path.relative_to(CORPUS.parent).with_suffix("").parts)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _reference(lab: str) -> Callable[..., Any]:
    function: Callable[..., Any] = getattr(ctxlab, KEYWORDS[lab][1])
    return function


def plain(value: Any) -> Any:
    """``value`` as plain data, keeping exact types (a tuple is not a list, 29 is not 29.0)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return (type(value).__name__, fields)
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [plain(item) for item in value])
    if isinstance(value, Mapping):
        items = sorted((repr(k), plain(v)) for k, v in value.items())
        return (type(value).__name__, items)
    if value is None or isinstance(value, (bool, int, float, str)):
        return (type(value).__name__, value)
    if callable(value):  # an estimator passed as an option
        return ("callable", getattr(value, "__qualname__", type(value).__name__))
    return (type(value).__name__, repr(value))


def _chapters(data: Any) -> Any:
    """:func:`plain` data without ctxlab's choices: 11.2's ``tool_pairs``, and in a context
    that sent a summary, its timestamp and tokens.availableForMessages (11.5's course_ledger)."""
    if isinstance(data, tuple) and len(data) == 2 and isinstance(data[1], dict):
        fields = {k: _chapters(v) for k, v in data[1].items()}
        if data[0] == "InteractionGroup":
            fields.pop("tool_pairs", None)
        if data[0] == "ContextResult":
            fields = _summary_choices_aside(fields)
        return (data[0], fields)
    if isinstance(data, tuple) and len(data) == 2 and isinstance(data[1], list):
        return (data[0], [_chapters(item) for item in data[1]])
    return data


def _summary_choices_aside(fields: dict[str, Any]) -> dict[str, Any]:
    sent, kept = fields["messages"][1], fields["kept_entry_ids"][1]
    at = 1 if sent and sent[0][0] == "SystemMessage" else 0
    if len(sent) - len(kept) != at + 1:
        return fields
    name, summary = sent[at]
    summary = (name, {k: v for k, v in summary.items() if k != "timestamp"})
    tokens = {k: v for k, v in fields["tokens"][1].items() if k != "available_for_messages"}
    return {
        **fields,
        "messages": (fields["messages"][0], [*sent[:at], summary, *sent[at + 1 :]]),
        "tokens": (fields["tokens"][0], tokens),
    }


def outcome(
    function: Callable[..., Any], witness: Callable[[], Any], path: Path | None = None
) -> tuple[Any, ...]:
    """What one call shows: returned value (plain data) or "raised", and its input after;
    for a file of round 6 (``path``), without 11.2's ``tool_pairs``."""
    args, kwargs = witness()
    try:
        result: tuple[Any, ...] = ("returned", plain(function(*args, **kwargs)))
    except Exception:  # a wrong function may fail in any way; only "it raised" is compared
        result = ("raised",)
    if path is not None and CHAPTER_ONLY in path.parents:
        result = tuple(_chapters(item) for item in result)
    return (result, plain(args), plain(kwargs))


def _correct(lab: str, path: Path) -> ModuleType:
    """The correct version ``path``'s mistake was put into."""
    name = f"lab{lab.replace('.', '_')}.py"
    if CHAPTER_ONLY in path.parents:
        return _load(CORPUS.parent / "chapter_only" / name)
    return _load(CORPUS / "correct" / name)


def _witness_copy(module: ModuleType) -> Callable[[], Any]:
    # A fresh input for every call, and a deep copy in case WITNESS shares objects.
    witness: Callable[[], Any] = module.WITNESS
    return lambda: copy.deepcopy(witness())


WRONG = _wrong_files()
_IDS = [f"{path.parents[1].name}/{lab}/{path.stem}" for lab, path in WRONG]


def test_corpus_size() -> None:
    counts = {lab: len(list(_folder(lab).glob("*.py"))) for lab in LABS}
    assert all(8 <= n <= 10 for n in counts.values()), counts
    assert sum(counts.values()) >= 45, counts
    for later in CORPORA[1:]:
        five = {lab: len(list(_folder(lab, later).glob("*.py"))) for lab in LABS}
        assert all(n == 5 for n in five.values()), (later.name, five)


@pytest.mark.parametrize(("lab", "path"), WRONG, ids=_IDS)
def test_wrong_function_differs_on_its_witness(lab: str, path: Path) -> None:
    module = _load(path)
    student = getattr(module, KEYWORDS[lab][0])
    witness = _witness_copy(module)
    assert outcome(student, witness, path) != outcome(_reference(lab), witness, path)


@pytest.mark.parametrize(("lab", "path"), WRONG, ids=_IDS)
def test_correct_version_agrees_on_the_witness(lab: str, path: Path) -> None:
    witness = _witness_copy(_load(path))
    function = getattr(_correct(lab, path), KEYWORDS[lab][0])
    assert outcome(function, witness, path) == outcome(_reference(lab), witness, path)


@pytest.mark.parametrize(("lab", "path"), WRONG, ids=_IDS)
def test_wrong_file_shape(lab: str, path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    docstring = ast.get_docstring(tree)
    assert docstring, "a module docstring saying the mistake"
    assert docstring.splitlines()[0].strip(), "its first line says the mistake"
    assert "「" in docstring and "」" in docstring, "it quotes the chapter's rule"
    names = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert {KEYWORDS[lab][0], "WITNESS"} <= names
    # The student's function must not call (or be) its own lab's reference.
    reference = KEYWORDS[lab][1]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ctxlab"):
            assert reference not in {alias.name for alias in node.names}, ast.unparse(node)
        if isinstance(node, ast.Attribute) and node.attr == reference:
            raise AssertionError(f"{path.name} uses {ast.unparse(node)}")


@pytest.mark.parametrize("lab", LABS)
def test_correct_version_passes_the_lab(lab: str) -> None:
    from ctxlab.lab import check_implementation

    module = _load(CORPUS / "correct" / f"lab{lab.replace('.', '_')}.py")
    keyword = KEYWORDS[lab][0]
    report = check_implementation(lab, **{keyword: getattr(module, keyword)})
    assert report.passed, [r.behaviour for r in report.results if not r.passed]


@pytest.mark.parametrize(("lab", "path"), WRONG, ids=_IDS)
def test_a_hint_names_the_files_own_mistake(lab: str, path: Path) -> None:
    """A wrong hint is worse than none: the check catches the file, and when its report shows
    a hint, the hint's misconception is one ``labels.json`` gives the file."""
    from ctxlab.lab import check_implementation

    labels = json.loads((path.parents[1] / "labels.json").read_text(encoding="utf-8"))
    keyword = KEYWORDS[lab][0]
    report = check_implementation(lab, **{keyword: getattr(_load(path), keyword)})
    if CHAPTER_ONLY in path.parents:  # its extras fail anyway: the chapter's rows must
        assert not report.passed
    assert not (report.passed and report.extras_passed)
    if report.hint:
        wanted = labels[f"{path.parent.name}/{path.stem}"]["ids"]
        assert report.misconceptions[0] in wanted, (report.misconceptions, wanted)
