"""The mutator of ``make mutants`` (tests/mutation_audit.py), on its own: fast, no mutant is run."""

from __future__ import annotations

import textwrap

import pytest

from mutation_audit import LABS, OPERATORS, generate, judge, load_equivalents, solution

pytestmark = pytest.mark.teaching

TINY = textwrap.dedent(
    '''
    LIMIT = 3


    def pick(items, key):
        """A docstring is never mutated."""
        kept = []
        for item in reversed(items):
            if item < LIMIT and not key in item or item is None:
                continue
            if item >= 1:
                kept.append(max(item, 1) + item - 2)
            while False:
                break
        name = f"{key}!"
        ok = True if kept else False
        return kept[1:], any(kept), isinstance(name, str), ok


    def last(active_path, index):
        entry = active_path[index]
        total = sum(active_path)
        return entry
    '''
)


def test_every_operator_is_generated_on_a_tiny_function() -> None:
    mutants = generate(TINY, "tiny")
    assert {m.operator for m in mutants} == set(OPERATORS)
    texts = {(m.operator, m.original, m.mutated) for m in mutants}
    assert ("compare", "item < LIMIT", "item <= LIMIT") in texts
    assert ("compare", "item >= 1", "item > 1") in texts
    assert ("compare", "item is None", "item is not None") in texts
    assert ("compare", "key in item", "key not in item") in texts
    assert ("builtin", "max(item, 1)", "min(item, 1)") in texts
    assert ("builtin", "any(kept)", "all(kept)") in texts
    assert ("swap-args", "max(item, 1)", "max(1, item)") in texts
    assert ("drop-call", "reversed(items)", "items") in texts
    assert ("constant", "True", "False") in texts
    assert ("constant", "3", "4") in texts and ("constant", "3", "2") in texts
    assert ("constant", "f'{key}!'", "''") in texts
    assert ("slice", "1:", ":") in texts
    assert ("remove-not", "not key in item", "key in item") in texts
    assert any(m.operator == "delete" and m.original == "continue" for m in mutants)
    assert any(m.operator == "delete" and m.original == "break" for m in mutants)
    # (a misconception shape run first in a function keeps the function's docstring whole)
    whole = ("strip", "in-place")
    assert not any("docstring" in m.original for m in mutants if m.operator not in whole)
    assert all(
        m.mutated.count("A docstring is never mutated.") == 1
        for m in mutants
        if m.operator in whole and m.original.startswith("def pick")
    )
    # The misconception shapes of issue 24.
    assert ("int-wrap", "return entry", "return int(entry)") in texts
    assert ("int-wrap", "total = sum(active_path)", "total = int(sum(active_path))") in texts
    assert ("or-empty", "entry = active_path[index]", "entry = active_path[index] or ()") in texts
    shapes = {
        (m.operator, line.strip())
        for m in mutants
        if m.operator in whole
        for line in set(m.mutated.split("\n")) - set(m.original.split("\n"))
    }
    assert ("strip", "items = items.strip()") in shapes
    assert ("strip", "index = index.strip()") in shapes
    assert (
        "in-place",
        "active_path[:] = [e for e in active_path if getattr(e, 'type', None) == 'message']",
    ) in shapes


def test_ids_are_unique_and_do_not_depend_on_line_numbers() -> None:
    first = generate(TINY, "tiny")
    moved = generate("\n\n# a comment and blank lines above\n\n" + TINY, "tiny")
    assert len({m.id for m in first}) == len(first)
    assert [m.id for m in first] == [m.id for m in moved]
    assert [m.lineno for m in first] != [m.lineno for m in moved]
    for mutant in first:  # every mutant is valid Python that differs from the original
        compile(mutant.source, mutant.id, "exec")
        assert mutant.original != mutant.mutated


def test_every_equivalent_is_still_generated() -> None:
    generated = {(lab, m.id) for lab in LABS for m in generate(solution(lab)[1], lab)}
    stale = sorted(set(load_equivalents()) - generated)
    assert not stale, f"tests/mutants_equivalent.json lists mutants no longer generated: {stale}"


@pytest.mark.parametrize("lab", LABS)
def test_the_unmutated_solution_passes_its_lab(lab: str) -> None:
    killed, why = judge(lab, solution(lab)[1], time_limit=10.0)
    assert not killed, why
