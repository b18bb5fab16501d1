"""The misconception catalogue, tested against its evidence (issue 24; like Pedal's ``verify``).

Every catalogued misconception has a buggy implementation in
``tests/misconceptions/lab11_N/<slug>.py`` and every such file is catalogued. Each file is
run through ``check_implementation`` as a student's cell would be: it must be caught (the
lab is not passed), matched (its id comes first in ``LabReport.misconceptions``), and its
own hint must open the report in English and in Chinese (text and HTML). A second run adds
the chapter's sentence and the smallest failing input; a pass or another failure starts the
ladder again. One file per lab also goes through the terminal route
(``pytest -m lab11_N --ctxlab-impl=FILE``), which must fail and print the same hint. Every
``quote_zh`` is the chapter's text verbatim, and no hint states a value the failed rows
expected. A match needs evidence (issue 33): failing the same rows as a mistake is not
enough (``test_a_hint_needs_evidence_not_the_same_failed_rows``).
"""

from __future__ import annotations

import dataclasses
import html
import json
import re
import runpy
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import ctxlab
from chapter_text import chapter_text
from ctxlab.lab import check_implementation, set_language
from ctxlab.lab.grading import (
    LABS,
    LabReport,
    behaviour_keys,
    behaviour_source,
    check_behaviour,
    engine,
    lab_keyword,
    reference_functions,
)
from ctxlab.lab.grading.labs import catalogue
from ctxlab.lab.grading.misconceptions import Misconception, explaining, ordered
from pytest_runs import ROOT, pytest_command, pytest_env

pytestmark = [pytest.mark.teaching, pytest.mark.misconceptions]

EVIDENCE = ROOT / "tests" / "misconceptions"


def _catalogue() -> dict[str, Misconception]:
    found: dict[str, Misconception] = {}
    for lab in LABS:
        found.update((item.id, item) for item in catalogue(lab))
    return found


CATALOGUE = _catalogue()


def _file(item: Misconception) -> Path:
    return EVIDENCE / f"lab{item.lab.replace('.', '_')}" / f"{item.slug}.py"


def _function(item: Misconception) -> Callable[..., Any]:
    namespace = runpy.run_path(str(_file(item)), run_name="misconception")
    function = namespace[lab_keyword(item.lab)]
    assert callable(function)
    return function


@pytest.fixture(autouse=True)
def _fresh_ladder() -> Iterator[None]:
    """Each test starts at the foot of every lab's ladder, in English."""
    engine._LADDER.clear()
    set_language("en")
    yield
    engine._LADDER.clear()
    set_language("en")


def _run(item: Misconception) -> LabReport:
    return check_implementation(item.lab, **{lab_keyword(item.lab): _function(item)})


def test_each_lab_has_at_least_eight_misconceptions_each_with_its_buggy_file() -> None:
    for lab in LABS:
        assert len(catalogue(lab)) >= 8, lab
        assert {item.lab for item in catalogue(lab)} == {lab}, lab  # each in its lab's file
    files = {
        f"11.{path.parent.name.removeprefix('lab11_')}/{path.stem}"
        for path in EVIDENCE.glob("lab11_*/*.py")
    }
    assert files == set(CATALOGUE), (
        f"buggy files without an entry: {sorted(files - set(CATALOGUE))}; "
        f"entries without a buggy file: {sorted(set(CATALOGUE) - files)}"
    )
    for item in CATALOGUE.values():
        assert item.signature <= set(behaviour_keys(item.lab)), item.id
        # Its rule is the chapter's when a chapter row is in its signature, else ctxlab's.
        kinds = {behaviour_source(item.lab, key) for key in item.signature}
        assert item.rule == ("chapter" if "chapter" in kinds else "ctxlab"), item.id
        assert all((item.hint_en, item.hint_zh, item.quote_en, item.smallest_input_en)), item.id
        assert re.search(r"[\u4e00-\u9fff]", item.hint_zh + item.smallest_input_zh), item.id


def test_every_quote_is_the_chapters_text_verbatim() -> None:
    chapter = chapter_text()
    missing = [item.id for item in CATALOGUE.values() if item.quote_zh not in chapter]
    assert not missing, f"quote_zh not found verbatim in the chapter: {missing}"


@pytest.mark.parametrize("misconception", sorted(CATALOGUE), ids=str)
def test_the_buggy_file_is_caught_matched_and_shown_its_hint(misconception: str) -> None:
    item = CATALOGUE[misconception]
    report = _run(item)
    # A misconception of a chapter rule fails the lab; one of ctxlab's own rules fails an
    # extra row (the lab may still be passed: extras are optional).
    if item.rule == "chapter":
        assert not report.passed, f"{item.id}: passes the chapter's rows"
    else:
        assert not report.extras_passed, f"{item.id}: passes ctxlab's extras"
    failed = {result.key for result in report.failed}
    assert item.signature <= failed, f"{item.id}: fails {sorted(failed)}"
    assert report.misconceptions[:1] == (item.id,), report.misconceptions
    assert report.hint_rung == 1
    for language, hint in (("en", item.hint_en), ("zh", item.hint_zh)):
        set_language(language)
        text = str(report)
        first = text.splitlines()[0]
        assert first.endswith(hint), text  # the report opens with it
        # A hint about ctxlab's own rule is labelled as about the optional extras (it says
        # so itself too); a hint about the chapter's is a plain hint.
        label = _EXTRA_LABEL[language] if item.rule == "ctxlab" else _HINT_LABEL[language]
        assert first.startswith(f"💡 {label}"), first
        if item.rule == "ctxlab":
            assert "ctxlab" in hint, item.id
        assert text.count(hint) == 1
        assert html.escape(hint) in report._repr_html_()
        assert item.smallest_input_zh not in report.hint
        assert item.smallest_input_en not in report.hint
        assert "本章原文" not in text and "The chapter: “" not in text  # the second rung's
    # One mistake, one message: where a crafted row quotes the sentence the hint quotes, the
    # table opens with such a row (a lecturer saw it open with a rule the student kept).
    sentence = item.quote_zh.rstrip("。")
    quoting = [
        result.key
        for result in report.failed
        if result.quote_zh
        and (sentence in result.quote_zh or result.quote_zh.rstrip("。") in sentence)
        and not result.detail_en.startswith("random case")
    ]
    lead = report.lead[0]
    assert lead is not None
    assert not quoting or lead.key in quoting, (lead.key, quoting)


def _chapter_style(function: Callable[..., Any]) -> Callable[..., Any]:
    """The same mistake by a student who takes the chapter's side of what it leaves open
    and skips ctxlab's optional extras: every refusal a plain ValueError (the chapter asks
    no more), and groups without ``tool_pairs``."""

    def student(*args: Any, **kwargs: Any) -> Any:
        try:
            result = function(*args, **kwargs)
        except ctxlab.CtxlabError as error:
            raise ValueError(str(error)) from None
        if isinstance(result, list) and all(
            isinstance(group, ctxlab.InteractionGroup) for group in result
        ):
            return [ctxlab.InteractionGroup(entries=group.entries) for group in result]
        return result

    return student


CHAPTER_RULES = sorted(key for key, item in CATALOGUE.items() if item.rule == "chapter")


@pytest.mark.parametrize("misconception", CHAPTER_RULES, ids=str)
def test_a_chapter_mistake_gets_its_hint_also_without_ctxlabs_extras(misconception: str) -> None:
    """The evidence of a chapter mistake asks only what the chapter decides: a student who
    raises plain ValueErrors and leaves out 11.2's tool_pairs is shown the same hint."""
    item = CATALOGUE[misconception]
    student = _chapter_style(_function(item))
    report = check_implementation(item.lab, seed=1, **{lab_keyword(item.lab): student})
    assert not report.passed
    assert report.misconceptions[:1] == (item.id,), report.misconceptions


_HINT_LABEL = {"en": "Hint: ", "zh": "提示："}
_EXTRA_LABEL = {"en": "Hint on ctxlab's optional extras", "zh": "提示（关于 ctxlab 的选做扩展检查"}


def test_a_report_passed_by_the_chapters_rows_opens_with_a_hint_on_the_optional_extras() -> None:
    passed_labs = 0
    for item in CATALOGUE.values():
        report = _run(item)
        if not report.passed:
            continue
        passed_labs += 1
        assert item.rule == "ctxlab", item.id
        for language in ("en", "zh"):
            set_language(language)
            first = str(report).splitlines()[0]
            assert first.startswith(f"💡 {_EXTRA_LABEL[language]}"), first
            assert html.escape(_EXTRA_LABEL[language]) in report._repr_html_()
            # The lab's verdict still reads passed.
            assert report.headline().endswith("✔")
        set_language("en")
    assert passed_labs >= 5  # the ctxlab-rule entries whose files pass the chapter's rows


def test_a_chapter_misconception_is_shown_before_a_ctxlab_one() -> None:
    behaviour_keys("11.4")
    # 11.4/value-error (ctxlab's rule) comes after the chapter's mistake, whatever the
    # catalogue's order: the chapter's is why the lab is not passed.
    found = ordered(catalogue("11.4"), ["11.4/value-error", "11.4/first-kept-system-allowed"])
    assert [item.id for item in found] == ["11.4/first-kept-system-allowed", "11.4/value-error"]


def test_the_parser_rows_of_11_4_name_the_field_and_its_wrong_value() -> None:
    chapter_only = runpy.run_path(str(ROOT / "tests" / "chapter_only" / "lab11_4.py"))
    create = chapter_only["create_compaction_entry"]

    def negative_kept(active_path: Any, **options: Any) -> Any:
        """Right, except that a negative tokensBefore is stored instead of refused."""
        if options["tokens_before"] == -1:
            entry = create(active_path, **{**options, "tokens_before": 0})
            return dataclasses.replace(entry, tokens_before=-1)
        return create(active_path, **options)

    result = check_behaviour("11.4", "parsed_result", create_compaction_entry=negative_kept)
    assert not result.passed
    assert "with tokensBefore = -1" in result.detail_en, result.detail_en
    assert "其中 tokensBefore = -1" in result.detail_zh, result.detail_zh
    wrong = runpy.run_path(str(EVIDENCE / "lab11_4" / "summary-object-only.py"))
    result = check_behaviour(
        "11.4", "summary_forms", create_compaction_entry=wrong[lab_keyword("11.4")]
    )
    assert not result.passed and "summary = a mapping" in result.detail_en, result.detail_en


def test_a_failed_ledger_row_of_11_5_says_the_estimator_prices_the_summary_too() -> None:
    item = CATALOGUE["11.5/ledger-without-summary"]
    result = check_behaviour("11.5", "ledger_on_resumed_paths", build_context=_function(item))
    assert not result.passed
    assert "the estimator prices the summary message too" in result.detail_en, result.detail_en
    assert "估算器也给摘要消息计价" in result.detail_zh, result.detail_zh


#: A value a failed row expected: a number, an id with digits, a list of ids.
_EXPECTED = re.compile(r"expected (?:[A-Za-z.]+ )?([^\s;:()]+)")


@pytest.mark.parametrize("misconception", sorted(CATALOGUE), ids=str)
def test_the_hint_does_not_state_the_expected_value(misconception: str) -> None:
    item = CATALOGUE[misconception]
    report = _run(item)
    values = {
        value
        for result in report.failed
        for found in _EXPECTED.findall(result.detail_en)
        for value in found.strip("',").split(",")
        if re.search(r"\d", value)
    }
    for hint in (item.hint_en, item.hint_zh, item.title_en, item.title_zh):
        for value in values:
            pattern = rf"(?<![\w.-]){re.escape(value)}(?![\w-]|\.\d)"
            assert not re.search(pattern, hint), f"{item.id}: the hint or title states {value}"


_HAN = re.compile(r"[\u4e00-\u9fff]")


def test_every_misconception_has_a_one_line_title_in_both_languages() -> None:
    """The title says what students do (the classroom kit's "common mistakes" line): one
    line in each language, the Chinese one in Chinese, and no two alike within a lab."""
    for item in CATALOGUE.values():
        for title in (item.title_en, item.title_zh):
            assert title.strip() == title and title and "\n" not in title, item.id
            assert len(title) <= 90, item.id
        assert not _HAN.search(item.title_en), item.id
        assert _HAN.search(item.title_zh), item.id
        assert item.title_en != item.hint_en and item.title_zh != item.hint_zh, item.id
    for lab in LABS:
        titles = [(i.title_en, i.title_zh) for i in CATALOGUE.values() if i.lab == lab]
        assert len({en for en, _ in titles}) == len({zh for _, zh in titles}) == len(titles), lab


def test_the_second_run_climbs_one_rung_and_a_pass_or_another_failure_starts_again() -> None:
    item = CATALOGUE["11.3/int-truncation"]
    other = CATALOGUE["11.3/options-unchecked"]
    first, second, third = _run(item), _run(item), _run(item)
    assert (first.hint_rung, second.hint_rung, third.hint_rung) == (1, 2, 2)
    for language, quote, smallest in (
        ("en", item.quote_en, item.smallest_input_en),
        ("zh", item.quote_zh, item.smallest_input_zh),
    ):
        set_language(language)
        assert quote in second.hint and quote in str(second)
        assert smallest in str(second) and smallest in second._repr_html_()
        assert smallest in second.hint and smallest not in first.hint
    assert _run(other).hint_rung == 1  # another failure: its own first rung
    assert _run(item).hint_rung == 1
    passed = check_implementation("11.3", **reference_functions("11.3"))
    assert passed.passed and passed.hint_rung == 0 and passed.misconceptions == ()
    assert "💡" not in str(passed) and "ctxlab-lab-report-hint" not in passed._repr_html_()
    assert _run(item).hint_rung == 1  # after a pass, the ladder starts again
    assert _run(CATALOGUE["11.2/pair-by-position"]).hint_rung == 1  # one ladder per lab
    assert _run(item).hint_rung == 2


def test_a_hint_needs_evidence_not_the_same_failed_rows() -> None:
    """Issue 33: a function that fails rows a catalogued mistake also fails, but does not
    behave like it on its evidence, gets no hint; the failing rows speak alone."""
    reference = reference_functions("11.3")["build_context"]

    def refuses_zero_reserve(active_path: Any, **options: Any) -> Any:
        if options["reserved_output"] == 0:
            raise ValueError("reserved_output must be > 0")
        return reference(active_path, **options)

    report = check_implementation("11.3", build_context=refuses_zero_reserve)
    assert report.failed and report.misconceptions == () and report.hint == ""
    assert "💡" not in str(report)

    # The same mistake written another way (a new function, not the catalogue's file)
    # behaves like it, and is matched.
    def truncates(active_path: Any, **options: Any) -> Any:
        def estimate(message: Any) -> int:
            return int(options["estimate_tokens"](message))

        return reference(active_path, **{**options, "estimate_tokens": estimate})

    halving = check_implementation("11.3", build_context=truncates)
    assert halving.misconceptions[:1] == ("11.3/int-truncation",), halving.misconceptions


#: One buggy file per lab through ``pytest -m lab11_N --ctxlab-impl=FILE``.
TERMINAL_SAMPLE = (
    "11.1/snake-case-aliases",
    "11.2/pair-by-tool-name",
    "11.3/int-truncation",
    "11.4/id-stripped",
    "11.5/summary-not-priced",
)


@pytest.mark.parametrize("misconception", TERMINAL_SAMPLE, ids=str)
def test_the_terminal_route_fails_and_prints_the_same_hint(misconception: str) -> None:
    item = CATALOGUE[misconception]
    marker = "lab" + item.lab.replace(".", "_")
    run = subprocess.run(
        pytest_command("-m", marker, f"--ctxlab-impl={_file(item)}"),
        cwd=ROOT,
        env=pytest_env(),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        check=False,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"({item.id})" in run.stdout, run.stdout
    assert item.hint_en in run.stdout and item.hint_zh in run.stdout, run.stdout
    assert f"{_HINT_LABEL['en']}{item.hint_en}" in run.stdout, run.stdout


def test_the_terminal_route_labels_a_hint_on_ctxlabs_optional_extras() -> None:
    item = CATALOGUE["11.4/duplicate-id-allowed"]  # passes the chapter's rows
    run = subprocess.run(
        pytest_command("-m", "lab11_4", f"--ctxlab-impl={_file(item)}"),
        cwd=ROOT,
        env=pytest_env(),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        check=False,
    )
    assert f"({item.id})" in run.stdout, run.stdout
    for language, hint in (("en", item.hint_en), ("zh", item.hint_zh)):
        assert _EXTRA_LABEL[language] in run.stdout and hint in run.stdout, run.stdout


def _stub(*args: object, **kwargs: object) -> object:
    raise NotImplementedError("write it here")


def _crash(*args: object, **kwargs: object) -> object:
    raise KeyError("summary")


@pytest.mark.parametrize("function", [_stub, _crash], ids=["stub", "crash"])
def test_an_unwritten_or_always_crashing_function_gets_no_hint(
    function: Callable[..., Any],
) -> None:
    for lab in LABS:
        report = check_implementation(lab, **{lab_keyword(lab): function})
        assert not report.passed and len(report.failed) == len(report.results)
        assert report.misconceptions == () and report.hint_rung == 0, lab
        assert "💡" not in str(report)


@pytest.mark.parametrize("lab", LABS)
@pytest.mark.parametrize(
    "placeholder",
    [None, [], (), "", {}, 0, False, "first argument"],
    ids=["None", "list", "tuple", "str", "dict", "zero", "False", "first-argument"],
)
def test_a_placeholder_answer_gets_no_hint(lab: str, placeholder: object) -> None:
    """A student's first draft that returns a placeholder (``pass``, ``return []``, its input
    unchanged) is no known mistake: a hint would point at one it never made."""

    def draft(*args: object, **kwargs: object) -> object:
        return args[0] if placeholder == "first argument" else placeholder

    report = check_implementation(lab, seed=1, **{lab_keyword(lab): draft})
    assert not report.passed
    assert report.misconceptions == (), (lab, [item.id for item in report.misconceptions])


#: The error each lab's reference refuses most inputs with.
_LAB_ERRORS = {
    "11.1": ctxlab.EntryParseError,
    "11.2": ctxlab.InteractionError,
    "11.3": ctxlab.ContextOptionError,
    "11.4": ctxlab.CompactionError,
    "11.5": ctxlab.CompactionError,
}


@pytest.mark.parametrize("lab", LABS)
@pytest.mark.parametrize("error", ["ValueError", "the lab's error"])
def test_a_function_that_refuses_everything_gets_no_hint(lab: str, error: str) -> None:
    """A draft that refuses every input, the chapter's own example too, gets no hint (it
    fails the refusal rows as well, whose errors must name the entry: no mistake explains
    that; the evidence side is held by the test after this one)."""
    kind = ValueError if error == "ValueError" else _LAB_ERRORS[lab]

    def refuses(*args: object, **kwargs: object) -> object:
        raise kind("refused")

    report = check_implementation(lab, seed=1, **{lab_keyword(lab): refuses})
    assert not report.passed
    assert report.misconceptions == (), (lab, report.misconceptions)


@pytest.mark.parametrize("lab", LABS)
def test_no_evidence_is_the_references_refusal_alone(lab: str) -> None:
    """A function that refuses every valid input with an error the reference raises, and
    refuses invalid ones correctly (an over-strict check: 11.1's refusing every record that
    carries decisions), answers that refusal wherever the evidence asks for one: so no
    mistake's evidence is that refusal alone."""
    from ctxlab.lab.grading.labs import load
    from ctxlab.lab.grading.misconceptions import canonical, probe_call
    from ctxlab.lab.grading.perform import perform

    spec = load(lab)
    refusals = set()
    for data in spec.inputs.values():
        args, kwargs = probe_call(data)
        answer = canonical(perform(spec.reference, args, kwargs, arg_names=spec.arg_names))
        refusals.add(answer.get("raised"))
    for item in spec.catalogue:
        answers = [json.loads(answer) for _, answer in item.evidence]
        alone = [{"raised": error} for error in refusals - {None}]
        assert not any(all(a == refusal for a in answers) for refusal in alone), item.id


def test_a_hint_is_shown_only_for_a_mistake_that_explains_what_failed() -> None:
    """A mistake explains a failed row and every failed chapter row but one (random rows
    apart); one on ctxlab's rules only when no chapter row failed."""
    base = catalogue("11.1")[0]

    def item(rule: str, *rows: str) -> Misconception:
        return dataclasses.replace(base, rule=rule, signature=frozenset(rows))

    chapter = item("chapter", "a", "b")
    extra = item("ctxlab", "x")

    def shown(*failed: tuple[str, str]) -> tuple[Misconception, ...]:
        return explaining((chapter, extra), failed)

    assert shown(("a", "chapter"), ("b", "chapter")) == (chapter,)
    assert shown(("a", "chapter"), ("c", "chapter")) == (chapter,)  # one left unexplained
    assert shown(("a", "chapter"), ("c", "chapter"), ("d", "chapter")) == ()
    assert shown(("a", "chapter"), ("random_entries", "chapter"), ("c", "chapter")) == (chapter,)
    assert shown(("c", "chapter")) == ()  # explains no failed row
    assert shown(("x", "ctxlab")) == (extra,)
    assert shown(("x", "ctxlab"), ("c", "chapter")) == ()  # an extra while the chapter fails
    assert shown(("x", "ctxlab"), ("random_entries", "chapter")) == ()  # a random row too
    assert shown(("a", "chapter"), ("x", "ctxlab")) == (chapter,)


def test_the_evidence_of_a_mistake_that_cannot_explain_the_failures_is_not_asked() -> None:
    """Given the failed rows, the last step calls the function only on the evidence of the
    mistakes that explain them (fewer calls), and names only those."""
    from ctxlab.lab.grading.calls import Failed, Trial
    from ctxlab.lab.grading.labs import load
    from ctxlab.lab.grading.misconceptions import diagnose, found_in

    spec = load("11.1")
    own = next(item for item in spec.catalogue if item.id == "11.1/negative-tokens-accepted")
    buggy = runpy.run_path(str(EVIDENCE / "lab11_1" / "negative-tokens-accepted.py"))
    calls: list[object] = []

    def watched(value: object) -> object:
        calls.append(value)
        return buggy["parse_compaction_entry"](value)

    def last_step(failed: list[tuple[str, str]] | None) -> tuple[str, ...]:
        calls.clear()
        with pytest.raises(Failed) as ended:
            diagnose(spec.catalogue, spec.inputs, Trial(watched, spec.arg_names), failed)
        return found_in(ended.value.text.en)

    everything = last_step(None)
    asked_of_all = len(calls)
    failed = [(key, spec.row(key).source) for key in sorted(own.signature)]
    assert last_step(failed) == (own.id,)
    assert own.id in everything and len(calls) < asked_of_all
    assert last_step([("rejects_wrong_types", "chapter"), ("accepts_compact_1", "chapter")]) == ()


def test_without_a_match_a_chapter_row_folds_none_of_ctxlabs_optional_rows() -> None:
    """A student who follows the chapter only fails ctxlab's extras by choice. With one
    uncatalogued chapter mistake (here: tokensBefore 0 refused), the table opens with that
    row and folds no extra under it: fixing it would not mend them (before, five were)."""
    parser = runpy.run_path(str(ROOT / "tests" / "chapter_only" / "lab11_1.py"))
    chapter_only = parser["parse_compaction_entry"]

    def zero_refused(value: Any) -> Any:
        entry = chapter_only(value)
        if entry.tokens_before == 0:
            raise ValueError("tokensBefore must be > 0")
        return entry

    report = check_implementation("11.1", parse_compaction_entry=zero_refused, seed=1)
    assert not report.matches()
    head, folded = report.lead
    assert head is not None and head.source == "chapter", head
    chapter_rows = {r.key for r in report.failed if r.source == "chapter"}
    assert chapter_rows <= {head.key, "random_entries"}, chapter_rows  # it may draw a 0
    assert all(r.source == "chapter" for r in folded), [r.key for r in folded]
    extras = [r for r in report.failed if r.source == "ctxlab"]
    assert len(extras) >= 6  # they still fail, in their own part of the table
    set_language("en")
    text = str(report)
    below = text.index(report.extras_headline())
    assert all(text.index(f"✘ {r.behaviour_en}") > below for r in extras)


def test_without_a_match_the_first_failed_chapter_row_leads() -> None:
    """A mistake the catalogue does not know opens the table with the first chapter row it
    fails: each lab declares the chapter's own example first. Here a function that refuses a
    CompactionSummary fails compact-1's call, and that call leads with what went wrong,
    not a row on a NaN tokensBefore that 'should name tokensBefore' (its lead before)."""

    def refuses_objects(active_path: Any, **options: Any) -> Any:
        if not isinstance(options.get("summary"), dict):
            raise ValueError("summary must be an object")
        return ctxlab.create_compaction_entry(active_path, **options)

    report = check_implementation("11.4", create_compaction_entry=refuses_objects, seed=1)
    assert not report.matches()
    head = report.lead[0]
    assert head is not None and head is report.failed[0] and head.key == "compact_1", head
    assert "expected a result, but it raised ValueError: summary must be an object" in (
        head.detail_en
    )
