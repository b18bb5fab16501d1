"""Self-checks: Verdict text, friendly() and the exercise checkers."""

from __future__ import annotations

import pytest

from ctxlab import fixtures
from ctxlab.errors import CtxlabError
from ctxlab.lab.checks import Verdict, friendly, not_answered

pytestmark = pytest.mark.teaching


def test_verdict_text_and_html_are_plain_and_stable() -> None:
    ok = Verdict(True, "right")
    assert str(ok) == repr(ok) == "✔ Correct — right"
    no = Verdict(False, "wrong <b>", "detail", "try again")
    assert str(no) == "✘ Not yet — wrong <b>\ndetail\nHint: try again"
    assert "&lt;b&gt;" in no._repr_html_() and "0x" not in no._repr_html_()
    assert not no and ok


def test_friendly_turns_placeholders_and_errors_into_verdicts() -> None:
    @friendly
    def check_thing(answer: object) -> Verdict:
        if answer == "boom":
            raise CtxlabError("session entry x: field is missing")
        if answer == "type":
            raise TypeError("not a list")
        if answer == "other":
            raise RuntimeError("odd")
        return Verdict(True, "fine")

    assert check_thing(...) == not_answered("thing")
    assert check_thing(None).title == "not answered yet: thing"
    assert "field is missing" in check_thing("boom").detail
    assert "not the kind of value" in check_thing("type").title
    assert not check_thing("other").ok and "RuntimeError" in check_thing("other").detail
    assert check_thing("x").ok


def test_lab_11_1_checkers() -> None:
    from ctxlab.lab import lab11_1

    mine = {
        "goal": "Ship it",
        "constraints": [],
        "completed": ["a"],
        "decisions": [],
        "changedFiles": ["x.py"],
        "unresolved": [],
        "next": ["b"],
    }
    assert lab11_1.check_my_summary(mine).ok
    assert not lab11_1.check_my_summary(fixtures.compact1_summary().to_json()).ok
    missing = dict(mine)
    del missing["next"]
    assert "summary.next" in lab11_1.check_my_summary(missing).detail
    assert "not the kind" in lab11_1.check_my_summary(["goal"]).title


def test_lab_11_2_checkers() -> None:
    from ctxlab.lab import lab11_2

    assert lab11_2.check_group_of_u3(["u3", "calls", "r-test", "r-read", "a3"]).ok
    assert (
        "wrong order" in lab11_2.check_group_of_u3(["u3", "calls", "r-read", "r-test", "a3"]).title
    )
    verdict = lab11_2.check_group_of_u3(["sys", "u3", "calls", "r-test", "a3"])
    assert "missing: r-read" in verdict.detail and "not in this group: sys" in verdict.detail
    assert "not the kind" in lab11_2.check_group_of_u3("u3").title

    assert lab11_2.check_legal_cuts(["a1|u2", ("a2", "u3")]).ok
    verdict = lab11_2.check_legal_cuts(["a1|u2", "a2|u3", "r-test|r-read"])
    assert not verdict.ok and "r-test|r-read" in verdict.title
    assert "missing" in lab11_2.check_legal_cuts(["a1|u2"]).title
    assert "not neighbouring" in lab11_2.check_legal_cuts(["u1|u3"]).title

    assert lab11_2.check_error_entry("r-test").ok
    assert not lab11_2.check_error_entry("r-read").ok
    assert "not the kind" in lab11_2.check_error_entry(3).title


def test_lab_11_3_checkers() -> None:
    from ctxlab.lab import lab11_3

    assert lab11_3.check_kept_ids(["u3", "calls", "r-test", "r-read", "a3"]).ok
    assert "sys" in lab11_3.check_kept_ids(["sys", "u3"]).title
    assert not lab11_3.check_kept_ids(["u2", "a2"]).ok

    assert lab11_3.check_smallest_budget_for_all(38).ok
    assert "trimmed" in lab11_3.check_smallest_budget_for_all(37).title
    assert "so does 38" in lab11_3.check_smallest_budget_for_all(39).title
    assert "rejected" in lab11_3.check_smallest_budget_for_all(-1).title
