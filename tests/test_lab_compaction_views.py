"""The teaching layer of labs 11.4 and 11.5 (no kernel): figures, widgets, checks, and the
chapter's first-kept rule on the core."""

from __future__ import annotations

import statistics
import time

import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

from ctxlab import (
    CompactionSessionEntry,
    InMemorySessionStore,
    build_context,
    create_compaction_entry,
)
from ctxlab import fixtures as fx
from ctxlab.errors import CtxlabError
from ctxlab.lab import display
from ctxlab.lab import lab11_4 as cv
from ctxlab.lab import lab11_5 as rv

pytestmark = pytest.mark.teaching


def _texts(fig: Figure) -> list[Text]:
    FigureCanvasAgg(fig).draw()
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


# -- 11.4 ------------------------------------------------------------------------------------


def _first_kept_errors(
    path: list[object], extra: tuple[str, ...] = (), compaction_id: str = "compact-1"
) -> dict[str, str]:
    """Each entry id of ``path`` (and ``extra``) tried as ``first_kept_entry_id`` of the
    core's create_compaction_entry: "" where it is accepted, else its error."""
    errors = {}
    for entry_id in [*(e.id for e in path), *extra]:  # type: ignore[attr-defined]
        try:
            create_compaction_entry(
                path,  # type: ignore[arg-type]
                id=compaction_id, timestamp=100, summary=fx.compact1_summary(),
                first_kept_entry_id=entry_id, tokens_before=29,
            )  # fmt: skip
            errors[entry_id] = ""
        except CtxlabError as error:
            errors[entry_id] = str(error)
    return errors


def test_only_the_group_heads_are_valid_first_kept_entries() -> None:
    errors = _first_kept_errors(fx.opening_path(), ("u9",))  # type: ignore[arg-type]
    assert [i for i, error in errors.items() if not error] == ["u1", "u2", "u3"]
    for entry_id, head in (("a2", "u2"), ("calls", "u3"), ("r-test", "u3")):
        assert errors[entry_id].startswith(f"compaction compact-1: firstKeptEntryId {entry_id}")
        assert f"inside the interaction that {head} starts" in errors[entry_id]
    assert "system message" in errors["sys"]
    assert "not on the active path" in errors["u9"]
    assert errors["u2"] == ""


def test_first_kept_table_refuses_the_system_patch() -> None:
    errors = _first_kept_errors(fx.system_patch_path(), compaction_id="compact-2")  # type: ignore[arg-type]
    assert "patch-2 is a system message" in errors["patch-2"]
    assert "compact-1 is a compaction entry" in errors["compact-1"]
    assert errors["u3"] == ""


def test_shown_table_has_a_stable_text_and_html_form() -> None:
    def fields() -> pd.DataFrame:
        wire = fx.compact1().to_json()
        return pd.DataFrame({"field": list(wire), "value": [str(v) for v in wire.values()]})

    shown = display.show(fields(), "compact-1-fields", "compact-1")
    again = display.show(fields(), "compact-1-fields", "compact-1")
    assert repr(shown) == repr(again)
    assert "0x" not in repr(shown)
    assert shown._repr_html_() == again._repr_html_()
    assert "T_compact-1-fields" in shown._repr_html_()


def test_create_compaction_entry_is_pure_as_the_notebook_shows() -> None:
    path = fx.opening_path()
    store = InMemorySessionStore(path)
    entry = create_compaction_entry(
        path,
        id="compact-1",
        timestamp=100,
        summary=fx.compact1_summary(),
        first_kept_entry_id="u2",
        tokens_before=29,
    )
    assert path == fx.opening_path()
    assert len(store.entries()) == 10
    store.append(entry)
    assert len(store.entries()) == 11


@pytest.mark.parametrize(
    ("answer", "ok"),
    [({"u1", "u2", "u3"}, True), (["u3", "u2", "u1"], True), ({"u2"}, False),
     ({"u1", "u2", "a2"}, False), ({"u1", "u2", "u3", "u9"}, False), (..., False),
     ("u2", False), ([2], False)],
)  # fmt: skip
def test_check_valid_first_kept(answer: object, ok: bool) -> None:
    verdict = cv.check_valid_first_kept(answer)
    assert verdict.ok is ok
    assert "Traceback" not in str(verdict)


def test_check_valid_first_kept_explains_a_wrong_id() -> None:
    verdict = cv.check_valid_first_kept({"u1", "u2", "a2"})
    assert "a2 is inside the interaction that u2 starts" in verdict.detail
    assert "u3" in verdict.detail


@pytest.mark.parametrize(
    ("counts", "ok"),
    [((10, 11), True), ((11, 11), False), ((10, 10), False), ((..., ...), False),
     (("10", 11), False), ((True, 11), False)],
)  # fmt: skip
def test_check_store_count(counts: tuple[object, object], ok: bool) -> None:
    assert cv.check_store_count(*counts).ok is ok


# -- 11.5 ------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [fx.resumed_path(), fx.recompacted_path(), fx.system_patch_path()])
def test_the_resume_diagram_is_fixed_size_and_readable(path: list[object]) -> None:
    fig = rv.resume_diagram(path, title="a title")  # type: ignore[arg-type]
    assert tuple(fig.get_size_inches()) == rv.DIAGRAM_SIZE
    texts = _texts(fig)
    assert min(t.get_fontsize() for t in texts) >= 14
    words = {t.get_text() for t in texts}
    assert {e.id for e in path} <= words  # type: ignore[attr-defined]


def test_the_resume_diagram_points_each_compaction_back() -> None:
    words = {t.get_text() for t in _texts(rv.resume_diagram(fx.recompacted_path()))}
    assert {"firstKeptEntryId = u2", "firstKeptEntryId = u3"} <= words
    assert "summarised by compact-2" in words
    assert "older compaction: not read any more" in words


def test_the_comparison_figure_is_fixed_size_and_readable() -> None:
    fig = rv.resume_comparison_figure(31)
    assert tuple(fig.get_size_inches()) == rv.COMPARISON_SIZE
    texts = _texts(fig)
    assert min(t.get_fontsize() for t in texts) >= 14
    assert "max_tokens = 31" in {t.get_text().strip() for t in texts}


def _notebook_cells(language: str) -> dict[str, str]:
    """The code cells of Lab 11.5's student edition in ``language``, built from the source."""
    from nbsource_module import load_nbsource

    nbsource = load_nbsource()
    source = next(s for s in nbsource.load_sources() if s.lab == "11.5")
    notebook = nbsource.build_notebook(source, nbsource.Edition(language, "student"))
    return {cell.id: cell.source for cell in notebook.cells if cell.cell_type == "code"}


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_notebooks_own_ledger_agrees_with_build_context(language: str) -> None:
    """Issue 32: the ledger is a pandas DataFrame built in the notebook's cells (11-5-07,
    11-5-08, 11-5-10): the newest compaction, its summary message, the candidates and the
    newest-first walk that stops at the first group that does not fit. At every budget where
    the reference neither overflows nor keeps everything, the rows marked kept are its
    kept entries and the summary's row is its summary cost."""
    import pandas as pd

    import ctxlab

    cells = _notebook_cells(language)
    kept_word = "kept" if language == "en" else "保留"
    checked = 0
    for max_tokens in range(12, 61):
        namespace: dict[str, object] = {
            "ctxlab": ctxlab, "fixtures": fx, "pd": pd, "display": display,
            "path": fx.resumed_path(),
        }  # fmt: skip
        for cell_id in ("11-5-07", "11-5-08"):
            exec(cells[cell_id], namespace)
        ledger_cell = cells["11-5-10"]
        assert "max_tokens = 40\n" in ledger_cell
        exec(ledger_cell.replace("max_tokens = 40\n", f"max_tokens = {max_tokens}\n"), namespace)
        result = build_context(fx.resumed_path(), max_tokens=max_tokens, reserved_output=4,
                               safety_margin=2, estimate_tokens=fx.opening_estimator)  # fmt: skip
        if result.reason != "trimmed":
            continue
        rows = namespace["ledger"].to_dict("records")  # type: ignore[attr-defined]
        first, *groups = rows
        assert list(first.values())[2] == result.tokens.messages - sum(
            fx.opening_estimator(m) for m in result.messages[2:]
        )
        kept = [e for row in groups if list(row.values())[4] == kept_word
                for e in list(row.values())[1].split(", ")]  # fmt: skip
        assert sorted(kept) == sorted(result.kept_entry_ids), max_tokens
        assert list(rows[-1].values())[4] != kept_word  # the walk stopped at a group
        checked += 1
    assert checked >= 10


def test_without_compaction_relinks_the_same_conversation() -> None:
    plain = rv.without_compaction(fx.resumed_path())
    assert [e.id for e in plain] == [e.id for e in fx.resumed_path() if e.id != "compact-1"]
    assert not any(isinstance(e, CompactionSessionEntry) for e in plain)
    assert [e.parent_id for e in plain][1:] == [e.id for e in plain][:-1]


def test_the_resume_slider_redraws_the_bars() -> None:
    box = rv.build_resume_widget()
    assert "ctxlab-widget" in box._dom_classes
    assert "ctxlab-figure" in box.figure._dom_classes
    slider = box.slider
    assert (slider.description, slider.min, slider.max, slider.value) == ("max_tokens", 0, 60, 31)
    assert slider.continuous_update is False  # one redraw per release, not per pixel
    assert box.figure.value == rv.render_resume_figure(31)
    slider.value = 60
    assert box.figure.value == rv.render_resume_figure(60)


def test_one_slider_update_is_fast_enough_for_a_projector() -> None:
    timings = []
    for value in range(0, 60, 12):
        start = time.perf_counter()
        rv.render_resume_figure(value)
        timings.append(time.perf_counter() - start)
    assert statistics.median(timings) < 1.0


@pytest.mark.parametrize(
    ("answer", "ok"),
    [(["u4", "a4"], True), (("u4", "a4"), True), (["u3", "calls", "r-test", "r-read", "a3",
      "u4", "a4"], False), (["compact-1", "u4", "a4"], False), (["u1", "a1"], False),
     (..., False), ("u4", False)],
)  # fmt: skip
def test_check_resume_kept(answer: object, ok: bool) -> None:
    assert rv.check_resume_kept(answer).ok is ok


def test_check_resume_kept_accepts_another_budget() -> None:
    assert rv.check_resume_kept(["u3", "calls", "r-test", "r-read", "a3", "u4", "a4"], 40).ok


def test_check_resume_kept_names_the_order_or_the_budget_numbers() -> None:
    assert "not in path order" in rv.check_resume_kept(["a4", "u4"]).title
    at_31 = rv.check_resume_kept(["u4"]).detail
    assert "31 − 3 (system) − 4 (reserved_output) − 2 (safety_margin) = 22" in at_31
    assert "the summary takes 4 first, which leaves 18 for the groups" in at_31
    at_40 = rv.check_resume_kept(["u4"], 40).detail
    assert "= 31; the summary takes 4 first, which leaves 27" in at_40


@pytest.mark.parametrize(
    ("answer", "ok", "words"),
    [("BASE\n\nPrefer small diffs.", True, "As in the chapter"),
     ("BASE\n\nPrefer small diffs.\n\nRULE v2", False, "rendered prompt"),
     ("BASE\n\nPrefer small diffs.\n", False, "not the replayed content"),
     ("BASE\n\nPrefer small diffs.\n\nRULE v1", False, "patch-1"),
     ("Prefer small diffs.\n\nRULE v2", False, "WHOLE path"),
     ("BASE Prefer small diffs. RULE v2", False, "blank line"),
     ("BASE\n\nRULE v2\n\nPrefer small diffs.", False, "RULE v2 is the rules section"),
     ("BASE", False, "patch-2 stands after compact-1"),
     ("BASE\nPrefer small diffs.", False, "Join the non-empty contents"),
     ("Prefer small diffs.\n\nBASE", False, "in path order"),
     (..., False, "not answered"), (3, False, "kind of value")],
)  # fmt: skip
def test_check_replayed_prompt(answer: object, ok: bool, words: str) -> None:
    verdict = rv.check_replayed_prompt(answer)
    assert verdict.ok is ok
    assert words in str(verdict)


@pytest.mark.parametrize(
    "answer", ["BASE\n\nPrefer small diff", "base\n\nprefer small diffs.", "BASE\n\nBASE"]
)
def test_check_replayed_prompt_gives_no_hint_without_evidence(answer: str) -> None:
    """A wrong answer that shows none of the known mistakes gets no hint: no hint beats a
    wrong one (the join hint would describe what the student already did)."""
    verdict = rv.check_replayed_prompt(answer)
    assert not verdict.ok and verdict.hint == ""


@pytest.mark.parametrize(
    ("answer", "ok"), [("compact-2", True), ("compact-1", False), (..., False), (2, False)]
)
def test_check_newest_summary(answer: object, ok: bool) -> None:
    assert rv.check_newest_summary(answer).ok is ok


def test_the_instructor_key_of_exercise_3_is_the_chapters_content() -> None:
    """11-5-26's answer key is the replayed ``content`` of the chapter, without the sections
    (the old key, ``"BASE\\n\\nPrefer small diffs.\\n\\nRULE v2"``, is refused)."""
    import ast
    import re
    from pathlib import Path

    source = (
        Path(__file__).resolve().parent.parent / "notebooks/_src/11.5-resume-from-summary.md"
    ).read_text(encoding="utf-8")
    cell = source.split(":::cell 11-5-26 code\n", 1)[1].split("\n:::cell ", 1)[0]
    instructor = cell.split(":::instructor\n", 1)[1]
    found = re.search(r"^answer = (.+)$", instructor, flags=re.MULTILINE)
    assert found is not None
    key = ast.literal_eval(found.group(1))
    assert key == "BASE\n\nPrefer small diffs."
    assert rv.check_replayed_prompt(key).ok
    assert not rv.check_replayed_prompt(key + "\n\nRULE v2").ok
