"""The Run All watch of the browser tests: a stalled run fails early and says why.

A run stalls when cells stay queued ("[*]") while the kernel says it is idle. ipykernel
7.0-7.3 did that now and then (ipython/ipykernel#1554: a request left unread until a new
connection woke the kernel); constraints.txt now pins a kernel without the bug. If a stall
comes back, ``wait_all_cells_ran`` fails after STALL_S instead of the 10-minute timeout, and
its report says whether a new kernel connection let the queued cells run.

The first tests drive that logic with a scripted page; the last one checks, in a live
JupyterLab, the two probes the report uses (the server's sessions, a new kernel connection).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import browser_support
import pytest
from browser_support import server_sessions, wait_all_cells_ran, wait_kernel_idle, wake_kernel

pytestmark = pytest.mark.browser

NOTEBOOK = "11.1-summary-is-a-fact.ipynb"


def state(ran: int, queued: list[int], kernel: str = "idle", total: int = 5) -> dict[str, Any]:
    return {"total": total, "ran": ran, "queued": queued, "kernel": kernel, "notebook": "n.ipynb"}


class ScriptedPage:
    """Stands in for a playwright page: waiting does nothing, time is simulated."""

    def __init__(self) -> None:
        self.waited_ms = 0.0

    def wait_for_timeout(self, ms: float) -> None:
        self.waited_ms += ms


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """A page whose run states come from ``script["states"]`` (the last one repeats) and
    whose clock advances only while the watch waits."""
    page = ScriptedPage()
    script: dict[str, Any] = {"page": page, "states": [], "after_wake": None, "woken": []}

    def run_state(_: Any) -> dict[str, Any]:
        if script["woken"] and script["after_wake"] is not None:
            return dict(script["after_wake"])
        states = script["states"]
        return dict(states.pop(0) if len(states) > 1 else states[0])

    def wake(_: Any, notebook: str) -> str:
        script["woken"].append(notebook)
        return "opened"

    monkeypatch.setattr(browser_support, "run_state", run_state)
    monkeypatch.setattr(browser_support, "wake_kernel", wake)
    monkeypatch.setattr(browser_support, "server_sessions", lambda _: [{"kernel": "idle"}])
    monkeypatch.setattr(browser_support, "clock", lambda: page.waited_ms / 1000)
    monkeypatch.setattr(browser_support, "STALL_S", 20.0)
    monkeypatch.setattr(browser_support, "WAKE_WATCH_S", 5.0)
    yield script


def test_a_run_that_moves_on_is_waited_for(scripted: dict[str, Any]) -> None:
    # a slow cell: busy for a long time (longer than STALL_S), then every cell ran
    scripted["states"] = [state(2, [2, 3, 4], "busy")] * 100 + [state(5, [])]
    wait_all_cells_ran(scripted["page"])
    assert scripted["woken"] == []
    assert scripted["page"].waited_ms >= 100 * 500


def test_queued_cells_with_an_idle_kernel_fail_early_and_name_the_cells(
    scripted: dict[str, Any],
) -> None:
    scripted["states"] = [state(1, [1, 2]), state(2, [2, 3]), state(2, [2, 3])]
    with pytest.raises(AssertionError) as failure:
        wait_all_cells_ran(scripted["page"])
    message = str(failure.value)
    stalled = r"cells \[2, 3\] of n\.ipynb stayed queued for 2\d s with the kernel idle"
    assert re.search(stalled, message), message
    assert "(2 of 5 code cells ran)" in message
    assert "changed nothing in 5 s" in message
    assert scripted["woken"] == ["n.ipynb"]
    assert scripted["page"].waited_ms < 60_000  # long before RUN_TIMEOUT_MS


def test_a_stall_that_a_new_connection_ends_is_named_as_the_kernel_bug(
    scripted: dict[str, Any],
) -> None:
    scripted["states"] = [state(2, [2, 3])]
    scripted["after_wake"] = state(5, [])
    with pytest.raises(AssertionError, match=r"moved on \(5 of 5 ran\).*ipykernel#1554"):
        wait_all_cells_ran(scripted["page"])


def test_nothing_changing_without_a_queued_cell_is_not_a_stall(scripted: dict[str, Any]) -> None:
    # cells not yet queued ("[ ]") and an idle kernel: only the overall timeout ends the wait
    scripted["states"] = [state(2, [])]
    with pytest.raises(AssertionError, match=r"not every cell ran within 120 s"):
        wait_all_cells_ran(scripted["page"], timeout_ms=120_000)
    assert scripted["woken"] == []


def test_the_report_probes_work_in_jupyterlab(notebook_page: Any) -> None:
    page = notebook_page(NOTEBOOK)
    sessions = server_sessions(page)
    mine = [session for session in sessions if session["path"].endswith(NOTEBOOK)]
    assert len(mine) == 1, sessions
    assert mine[0]["kernel"] == "idle" and mine[0]["connections"] >= 1, mine

    assert wake_kernel(page, NOTEBOOK) == "opened"
    assert wake_kernel(page, "no-such.ipynb") == "no session for no-such.ipynb"
    wait_kernel_idle(page, timeout_ms=30_000)  # the notebook's own connection is unharmed
