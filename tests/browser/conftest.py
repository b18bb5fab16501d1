"""Fixtures of the browser tests: JupyterLab servers and one headless Chromium.

The tests here are marked ``browser`` and run with ``make test-browser``
(``pytest -m browser tests/browser``). Anywhere else they are skipped with the reason:

* a plain ``pytest``/``make test`` run (no ``-m`` expression naming ``browser``) skips them,
  so the normal suite stays fast;
* without playwright or without Chromium they skip, naming what is missing, unless
  ``CTXLAB_REQUIRE_BROWSER=1`` (set by ``make test-browser``), which makes that an error.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import (
    CHROMIUM_ARGS,
    LECTURE_SERVER_ARGS,
    LECTURE_SETTINGS,
    REQUIRE_ENV,
    STUDENT_NOTEBOOKS,
    TEST_SETTINGS,
    VIEWPORT,
    ZH_INSTRUCTOR_NOTEBOOKS,
    ZH_SERVER_ARGS,
    LabServer,
    copy_notebooks,
    find_chromium,
    missing_browser_reason,
    open_notebook,
    run_all_cells,
    running_lab_server,
    screenshot,
    write_settings,
)

_HERE = Path(__file__).resolve().parent


def _browser_selected(config: pytest.Config) -> bool:
    markexpr = str(config.getoption("markexpr", "") or "")
    return "browser" in markexpr and "not browser" not in markexpr


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    mine = [item for item in items if _HERE in Path(str(item.path)).resolve().parents]
    if not mine:
        return
    if not _browser_selected(config):
        skip = pytest.mark.skip(
            reason="browser test: run it with `make test-browser` (pytest -m browser tests/browser)"
        )
    else:
        reason = missing_browser_reason()
        if reason is None:
            return
        if os.environ.get(REQUIRE_ENV) == "1":
            raise pytest.UsageError(f"{REQUIRE_ENV}=1 but the browser tests cannot run: {reason}")
        skip = pytest.mark.skip(reason=f"browser tests skipped: {reason}")
    for item in mine:
        item.add_marker(skip)


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    """One headless Chromium for the whole session (Debian's, never a downloaded one)."""
    from playwright.sync_api import sync_playwright

    executable = find_chromium()
    assert executable is not None, missing_browser_reason()
    playwright = sync_playwright().start()
    try:
        browser = playwright.chromium.launch(
            executable_path=str(executable), headless=True, args=list(CHROMIUM_ARGS)
        )
        try:
            yield browser
        finally:
            browser.close()
    finally:
        playwright.stop()


def _new_page(browser: Any, **options: Any) -> Any:
    context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1, **options)
    context.set_default_timeout(60_000)
    return context


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.when == "call":
        item.stash[_FAILED] = report.failed
    return report


_FAILED = pytest.StashKey[bool]()


@pytest.fixture
def browser_context(chromium: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A fresh browser context (own cookies and storage) per test; closed afterwards.

    When the test fails, every page it left open is saved as failed-<test>-<n>.png.
    """
    context = _new_page(chromium)
    try:
        yield context
    finally:
        try:
            if request.node.stash.get(_FAILED, False):
                for number, page in enumerate(context.pages):
                    screenshot(page, f"failed-{request.node.name}-{number}")
        finally:
            context.close()


class NotebookPages:
    """Each notebook opened and run (Run All Cells) once per session, its page kept open.

    The per-notebook test runs it; the widget tests then drive the same live page instead
    of running the notebook a second time (each run also runs the lab's own tests).
    """

    def __init__(self, context: Any, server: LabServer) -> None:
        self._context = context
        self._server = server
        self._pages: dict[str, Any] = {}

    def opened(self, name: str) -> Any:
        """The page of that notebook if one was opened (None otherwise)."""
        return self._pages.get(name)

    def get(self, name: str) -> Any:
        if name not in self._pages:
            page = self._context.new_page()
            self._pages[name] = page
            open_notebook(page, self._server, name, workspace=f"run-{Path(name).stem}")
            run_all_cells(page)
        return self._pages[name]


@pytest.fixture(scope="session")
def _notebook_pages(chromium: Any, lab_server: LabServer) -> Iterator[NotebookPages]:
    context = _new_page(chromium)
    try:
        yield NotebookPages(context, lab_server)
    finally:
        context.close()


@pytest.fixture
def notebook_page(
    _notebook_pages: NotebookPages, request: pytest.FixtureRequest
) -> Iterator[Callable[[str], Any]]:
    """``notebook_page("11.3-....ipynb")``: the live page of that notebook after Run All.

    When the test fails, the pages it used are saved as failed-<test>-<notebook>.png.
    """
    used: list[tuple[str, Any]] = []

    def get(name: str) -> Any:
        try:
            return _notebook_pages.get(name)
        finally:  # also when opening or running it failed: its screenshot tells why
            page = _notebook_pages.opened(name)
            if page is not None:
                used.append((name, page))

    yield get
    if request.node.stash.get(_FAILED, False):
        for name, page in used:
            with contextlib.suppress(Exception):
                screenshot(page, f"failed-{request.node.name}-{Path(name).stem}")


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """JupyterLab on a copy of notebooks/, with test settings (no windowing, no autosave)."""
    scratch = tmp_path_factory.mktemp("lab-server")
    settings = scratch / "user-settings"
    write_settings(settings, TEST_SETTINGS)
    root = copy_notebooks(scratch / "notebooks")
    with running_lab_server(root, settings, scratch) as server:
        yield server


@pytest.fixture(scope="session")
def lecture_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """JupyterLab as ``make lecture`` starts it: lecture/settings, and lecture/custom's CSS.

    The settings are copied first (what JupyterLab reads is byte for byte the shipped
    folder), so that a test can never write a setting back into the repository.
    """
    import shutil

    scratch = tmp_path_factory.mktemp("lecture-server")
    settings = scratch / "lecture-settings"
    shutil.copytree(LECTURE_SETTINGS, settings)
    root = copy_notebooks(scratch / "notebooks")
    with running_lab_server(root, settings, scratch, LECTURE_SERVER_ARGS) as server:
        yield server


@pytest.fixture(scope="session")
def student_lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """JupyterLab on a copy of the student edition (stubs, placeholders), test settings."""
    scratch = tmp_path_factory.mktemp("student-lab-server")
    settings = scratch / "user-settings"
    write_settings(settings, TEST_SETTINGS)
    root = copy_notebooks(scratch / "notebooks", STUDENT_NOTEBOOKS)
    with running_lab_server(root, settings, scratch) as server:
        yield server


@pytest.fixture(scope="session")
def zh_lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """JupyterLab on a copy of the Chinese instructor edition, as ``make lab LANG=zh`` starts
    it: the interface in Chinese (notebooks/_settings/zh), plus the test settings.

    Fails, naming the fix, when the Chinese edition has not been built.
    """
    if not any(ZH_INSTRUCTOR_NOTEBOOKS.glob("*.ipynb")):
        pytest.fail(
            f"{ZH_INSTRUCTOR_NOTEBOOKS.relative_to(ZH_INSTRUCTOR_NOTEBOOKS.parents[2])}/ has no "
            "notebooks: build the Chinese edition with `make notebooks`"
        )
    scratch = tmp_path_factory.mktemp("zh-lab-server")
    settings = scratch / "user-settings"
    write_settings(settings, TEST_SETTINGS)
    root = copy_notebooks(scratch / "notebooks", ZH_INSTRUCTOR_NOTEBOOKS)
    with running_lab_server(root, settings, scratch, ZH_SERVER_ARGS) as server:
        yield server
