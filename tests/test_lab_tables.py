"""The tables of labs 11.1-11.3 (ctxlab.lab.lab11_N): right rows, right numbers, stable HTML."""

from __future__ import annotations

import pytest

pd = pytest.importorskip("pandas")

from ctxlab import fixtures  # noqa: E402
from ctxlab.lab import lab11_1, lab11_2, lab11_3  # noqa: E402

pytestmark = pytest.mark.teaching


def test_path_table_has_the_ten_entries_with_parents_and_costs() -> None:
    frame = lab11_1.path_table()
    assert list(frame.columns) == ["id", "parent", "role", "text", "tool call ids", "cost"]
    assert frame["id"].tolist() == list(fixtures.OPENING_COSTS)
    assert frame["cost"].tolist() == list(fixtures.OPENING_COSTS.values())
    assert frame["parent"].tolist()[:3] == ["—", "sys", "u1"]
    calls = frame.set_index("id").loc["calls"]
    assert calls["tool call ids"] == "read-1, test-1"
    assert frame.set_index("id").loc["r-test", "tool call ids"] == "→ test-1"


def test_path_table_shows_a_compaction_without_a_cost() -> None:
    frame = lab11_1.path_table(fixtures.resumed_path()).set_index("id")
    assert frame.loc["compact-1", "role"] == "compaction"
    assert frame.loc["compact-1", "cost"] == "—"
    assert frame.loc["compact-1", "parent"] == "a3"


def test_stylers_have_a_fixed_id_and_a_repr_without_an_address() -> None:
    styler = lab11_1.path_styler()
    assert repr(styler) == "<table path: 10 rows × 6 columns>"
    html = styler.to_html()
    assert "T_path" in html and html == lab11_1.path_styler().to_html()
    assert " at 0x" not in repr(lab11_3.ledger_styler())


def test_corruption_table_lists_every_corruption_with_the_parsers_error() -> None:
    frame = lab11_1.corruption_table()
    assert frame["case"].tolist() == list(fixtures.compaction_corruptions())
    first = frame.iloc[0]
    assert first["case"] == "files instead of changedFiles"
    assert "compact-1" in first["error"] and "summary.files" in first["error"]
    assert all(message.startswith("session entry compact-1") for message in frame["error"])


def test_parse_verdict_accepts_the_valid_entry_and_names_the_field_of_a_broken_one() -> None:
    assert lab11_1.parse_verdict(lab11_1.VALID_CASE).startswith("accepted ✔ compaction")
    verdict = lab11_1.parse_verdict("goal missing")
    assert verdict.startswith("rejected ✘") and "summary.goal" in verdict
    assert "unknown case" in lab11_1.parse_verdict("no such case")


def test_grouping_table_maps_each_entry_to_its_group_and_sys_to_none() -> None:
    frame = lab11_2.grouping_table().set_index("id")
    assert frame.loc["sys", "group"] == "—"
    assert [frame.loc[i, "group"] for i in ("u1", "a1", "u2", "a2")] == [1, 1, 2, 2]
    group3 = ["u3", "calls", "r-test", "r-read", "a3"]
    assert [frame.loc[i, "group"] for i in group3] == [3] * 5
    assert set(frame.loc[group3, "starts with"]) == {"u3"}


def test_pairing_matrix_pairs_by_id_not_position() -> None:
    matrix = lab11_2.pairing_matrix()
    assert matrix.index.tolist() == ["read-1", "test-1"]
    assert matrix.columns.tolist() == ["r-test", "r-read"]
    assert matrix.loc["read-1", "r-read"] == "✔" and matrix.loc["read-1", "r-test"] == ""
    assert matrix.loc["test-1", "r-test"] == "✔" and matrix.loc["test-1", "r-read"] == ""
    with pytest.raises(ValueError, match="no interaction starts with 'u9'"):
        lab11_2.pairing_matrix(head="u9")


def test_only_the_cuts_between_groups_are_legal() -> None:
    cuts = lab11_2.cut_points()
    assert [c.label for c in cuts if c.legal] == ["a1|u2", "a2|u3"]
    illegal = {c.label for c in cuts if not c.legal}
    assert {"calls|r-test", "r-test|r-read", "r-read|a3"} <= illegal


def test_grouping_errors_name_the_entry_or_call() -> None:
    frame = lab11_2.grouping_errors_table().set_index("case")["group_interactions says"]
    assert "unknown-1" in frame["r-test answers unknown-1"]
    assert frame["r-test answers unknown-1"].startswith("rejected ✘")
    assert "read-1" in frame["r-read missing"] and "no tool result" in frame["r-read missing"]
    assert "two results" in frame["r-read also answers test-1"]
    assert "declared twice" in frame["read-1 declared twice"]
    assert frame["r-test moved before calls"].startswith("accepted ✔ 3 groups")


def test_ledger_reproduces_the_chapters_31_token_example() -> None:
    frame = lab11_3.ledger_table(
        None, lab11_3.Budget(max_tokens=31, reserved_output=4, safety_margin=2)
    )
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
    frame = lab11_3.ledger_table(None, lab11_3.Budget(max_tokens=19))
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
    frame = lab11_3.ledger_table(fixtures.resumed_path(), lab11_3.Budget(max_tokens=31))
    summary = frame.set_index("item").loc["summary (newest compaction)"]
    assert summary["tokens"] == 4 and summary["decision"] == "kept first"


def test_sweep_table_matches_the_chapter_thresholds() -> None:
    frame = lab11_3.sweep_table(max_tokens=range(61)).set_index("max_tokens")
    assert frame.loc[31, "groups kept"] == 2 and frame.loc[31, "reason"] == "trimmed"
    assert frame.loc[23, "reason"] == "single_group_overflow"
    assert frame.loc[24, "reason"] == "trimmed"
    assert frame.loc[37, "groups kept"] == 2 and frame.loc[38, "reason"] == "within_budget"
    assert all(isinstance(v, int) for v in frame["groups kept"].tolist())


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
