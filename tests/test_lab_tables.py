"""The tables of labs 11.2-11.3 (ctxlab.lab.lab11_N): right rows, right numbers, stable HTML."""

from __future__ import annotations

import pytest

pd = pytest.importorskip("pandas")

from ctxlab import fixtures  # noqa: E402
from ctxlab.lab import lab11_2, lab11_3  # noqa: E402

pytestmark = pytest.mark.teaching


def test_stylers_have_a_fixed_id_and_a_repr_without_an_address() -> None:
    styler = lab11_3.ledger_styler()
    assert repr(styler) == "<table ledger: 9 rows × 4 columns>"
    html = styler.to_html()
    assert "T_ledger" in html and html == lab11_3.ledger_styler().to_html()


def test_only_the_cuts_between_groups_are_legal() -> None:
    cuts = lab11_2.cut_points()
    assert [c.label for c in cuts if c.legal] == ["a1|u2", "a2|u3"]
    illegal = {c.label for c in cuts if not c.legal}
    assert {"calls|r-test", "r-test|r-read", "r-read|a3"} <= illegal


def test_ledger_reproduces_the_chapters_31_token_example() -> None:
    budget = lab11_3.Budget(max_tokens=31, reserved_output=4, safety_margin=2)
    frame = lab11_3.ledger_styler(None, budget).data
    rows = frame.set_index("item")
    assert rows.loc["max_tokens", "tokens"] == 31
    assert rows.loc["− system (replayed)", "tokens"] == 3
    assert rows.loc["− reserved_output", "tokens"] == 4
    assert rows.loc["− safety_margin", "tokens"] == 2
    assert rows.loc["= available for messages", "tokens"] == 22
    group3, group2, group1 = (frame.iloc[i] for i in (5, 6, 7))
    assert (group3["tokens"], group3["running total"], group3["decision"]) == (15, 15, "kept")
    assert (group2["tokens"], group2["running total"], group2["decision"]) == (7, 22, "kept")
    assert group1["tokens"] == 7 and group1["decision"] == "dropped: would make 29 > 22"
    assert frame.iloc[-1]["item"] == "reason: trimmed" and frame.iloc[-1]["tokens"] == 31


def test_ledger_shows_single_group_overflow_at_ten_tokens_for_messages() -> None:
    frame = lab11_3.ledger_styler(None, lab11_3.Budget(max_tokens=19)).data
    rows = frame.set_index("item")
    assert rows.loc["= available for messages", "tokens"] == 10
    assert frame.iloc[5]["decision"] == "kept whole: overflow, 15 > 10"
    assert frame.iloc[6]["decision"].startswith("dropped")
    assert frame.iloc[-1]["item"] == "reason: single_group_overflow"


def test_ledger_follows_build_context_not_its_own_selection() -> None:
    def doubled(message: object) -> int:
        return 2 * fixtures.opening_estimator(message)

    view = lab11_3.budget_ledger(None, lab11_3.Budget(max_tokens=60, estimate=doubled))
    assert view.result.tokens.system == 6
    kept = [g.number for g in view.groups if g.kept]
    assert kept == [3, 2]  # 30 + 14 = 44 <= 60 - 12 = 48; group 1 (14) would make 58
    assert [g.cost for g in view.groups] == [30, 14, 14]


def test_ledger_of_a_resumed_path_has_a_summary_row() -> None:
    frame = lab11_3.ledger_styler(fixtures.resumed_path(), lab11_3.Budget(max_tokens=31)).data
    summary = frame.set_index("item").loc["summary (newest compaction)"]
    assert summary["tokens"] == 4 and summary["decision"] == "kept first"


def test_two_ledgers_on_one_page_never_share_cell_ids() -> None:
    # A slider redraws the ledger below a static one: the same uuid would let the static
    # table's CSS (#T_<uuid>_row7_col0 ...) hatch a row the redrawn table keeps.
    at_31 = lab11_3.ledger_styler(None, lab11_3.Budget(max_tokens=31)).to_html()
    at_40 = lab11_3.ledger_styler(None, lab11_3.Budget(max_tokens=40)).to_html()
    uuid_31 = lab11_3.ledger_styler(None, lab11_3.Budget(max_tokens=31)).uuid
    uuid_40 = lab11_3.ledger_styler(None, lab11_3.Budget(max_tokens=40)).uuid
    assert uuid_31 != uuid_40
    assert f"T_{uuid_31}_row7" in at_31 and f"T_{uuid_31}" not in at_40
    # ...and the id is the same on every run, so nbval can compare the stored HTML.
    assert lab11_3.ledger_styler(None, lab11_3.Budget(max_tokens=31)).to_html() == at_31


def test_the_chapters_thresholds_of_max_tokens() -> None:
    """The reasons the 11.3 widget's slider walks through (the core's build_context)."""
    import ctxlab

    def build(max_tokens: int) -> ctxlab.ContextResult:
        return ctxlab.build_context(fixtures.opening_path(), max_tokens=max_tokens,
                                    reserved_output=4, safety_margin=2,
                                    estimate_tokens=fixtures.opening_estimator)  # fmt: skip

    assert build(31).reason == "trimmed" and build(31).kept_entry_ids[0] == "u2"
    assert build(23).reason == "single_group_overflow"
    assert build(24).reason == "trimmed"
    assert build(37).reason == "trimmed" and build(38).reason == "within_budget"
