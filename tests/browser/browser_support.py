"""Support for the browser tests: a real JupyterLab server and headless Chromium.

Nothing here downloads a browser. Chromium is Debian's ``/usr/bin/chromium`` (or the
executable named by ``CTXLAB_CHROMIUM``), driven by Python playwright through
``executable_path``. Every server gets its own free port on 127.0.0.1, a random token, and
temporary Jupyter config/data/runtime/workspace folders, so the user's own Jupyter setup
neither leaks in nor gets written to.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
# CTXLAB_BROWSER_NOTEBOOKS points the tests at another folder (only to develop the tests).
# The English instructor edition: every notebook with its answers, as lecturers run it.
NOTEBOOKS = Path(
    os.environ.get("CTXLAB_BROWSER_NOTEBOOKS") or REPO / "notebooks" / "en" / "instructor"
)
# The English student edition: stubs and placeholders (the build-it test types into it).
STUDENT_NOTEBOOKS = REPO / "notebooks" / "en" / "student"
# The Chinese instructor edition, and what `make lab LANG=zh` / `make lecture LANG=zh` add to
# `jupyter lab` (Makefile, LAB_LOCALE_ARGS): JupyterLab's interface in Chinese (zh_CN).
ZH_INSTRUCTOR_NOTEBOOKS = REPO / "notebooks" / "zh" / "instructor"
ZH_SERVER_ARGS = (f"--LabApp.app_settings_dir={REPO / 'notebooks' / '_settings' / 'zh'}",)
LECTURE_SETTINGS = REPO / "lecture" / "settings"
LECTURE_CSS = REPO / "lecture" / "custom"
# The options `make lecture` adds to `jupyter lab` (Makefile, target lecture): load
# custom.css, served from lecture/custom.
LECTURE_SERVER_ARGS = (
    "--LabApp.custom_css=True",
    f"--ServerApp.tornado_settings=static_custom_path={LECTURE_CSS}",
)
ARTIFACTS = REPO / "artifacts" / "browser"

CHROMIUM_ENV = "CTXLAB_CHROMIUM"
REQUIRE_ENV = "CTXLAB_REQUIRE_BROWSER"
DEFAULT_CHROMIUM = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-sync",
    "--disable-extensions",
    "--no-first-run",
    "--no-default-browser-check",
    "--metrics-recording-only",
    "--mute-audio",
)
VIEWPORT = {"width": 1440, "height": 900}

# Settings every test server starts with (written into its own JUPYTERLAB_SETTINGS_DIR):
# all cells stay attached to the DOM, so every output can be inspected; no autosave and
# no network calls for news or updates.
TEST_SETTINGS: Mapping[str, Mapping[str, object]] = {
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
    "@jupyterlab/apputils-extension/notification": {
        "checkForUpdates": False,
        "fetchNews": "false",
    },
}

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def find_chromium() -> Path | None:
    """The Chromium executable to drive, or None when there is none."""
    named = os.environ.get(CHROMIUM_ENV)
    if named:
        return Path(named) if Path(named).is_file() else None
    for candidate in DEFAULT_CHROMIUM:
        if Path(candidate).is_file():
            return Path(candidate)
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return Path(found)
    return None


def missing_browser_reason() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (make test-browser installs the [browser] extra)"
    if find_chromium() is None:
        named = os.environ.get(CHROMIUM_ENV)
        where = f"{CHROMIUM_ENV}={named}" if named else " or ".join(DEFAULT_CHROMIUM)
        return (
            f"no Chromium at {where} (Debian: apt-get install chromium;"
            f" elsewhere set {CHROMIUM_ENV} to a Chromium executable)"
        )
    return None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_settings(folder: Path, settings: Mapping[str, Mapping[str, object]]) -> None:
    """Write JupyterLab user settings (``<plugin path>.jupyterlab-settings``) into folder."""
    for plugin, values in settings.items():
        target = folder / f"{plugin}.jupyterlab-settings"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(values, indent=2), encoding="utf-8")


def notebook_paths() -> list[Path]:
    """Every notebook of the course, in name order."""
    return sorted(NOTEBOOKS.glob("*.ipynb"))


@dataclass
class LabServer:
    """A running ``jupyter lab`` process and how to reach it."""

    port: int
    token: str
    root: Path
    log_path: Path
    process: subprocess.Popen[bytes]
    _log: Any = field(repr=False, default=None)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str, **query: str) -> str:
        """An URL of the server, with the token (JupyterLab then sets its cookie)."""
        params = urllib.parse.urlencode({**query, "token": self.token})
        return f"{self.base_url}/{path.lstrip('/')}?{params}"

    def notebook_url(self, relative: str, workspace: str) -> str:
        """Open ``relative`` in a workspace of its own, reset (no restored layout)."""
        quoted = urllib.parse.quote(relative)
        workspace = re.sub(r"[^A-Za-z0-9-]+", "-", workspace)  # a dot breaks the route
        return self.url(f"lab/workspaces/{workspace}/tree/{quoted}", reset="")

    def api(self, method: str, path: str, body: object = None, timeout: float = 10) -> Any:
        """Call the server's REST API; the decoded JSON answer (None when empty)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.base_url}/{path.lstrip('/')}",
            data=data,
            method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            raw = answer.read()
        return json.loads(raw) if raw else None

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        """Shut down kernels and server through the API, then kill what is left."""
        if self.process.poll() is None:
            with contextlib.suppress(OSError, urllib.error.URLError, ValueError):
                for kernel in self.api("GET", "api/kernels"):
                    with contextlib.suppress(OSError, urllib.error.URLError):
                        self.api("DELETE", f"api/kernels/{kernel['id']}", timeout=20)
            with contextlib.suppress(OSError, urllib.error.URLError, ValueError):
                self.api("POST", "api/shutdown")
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=15)
        _kill_group(self.process)
        if self._log is not None:
            self._log.close()


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill the process group started with the server (POSIX) or the process (Windows)."""
    killpg = getattr(os, "killpg", None)
    if killpg is not None:
        for sig in (signal.SIGTERM, getattr(signal, "SIGKILL", signal.SIGTERM)):
            try:
                killpg(process.pid, sig)
            except (ProcessLookupError, PermissionError):
                break
            try:
                process.wait(timeout=5)
                # The leader is gone; members of its group may linger, so send once more.
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    killpg(process.pid, getattr(signal, "SIGKILL", signal.SIGTERM))
                break
            except subprocess.TimeoutExpired:
                continue
    if process.poll() is None:
        process.kill()
        process.wait(timeout=10)


def start_lab_server(
    root: Path, settings_dir: Path, scratch: Path, extra_args: tuple[str, ...] = ()
) -> LabServer:
    """Start ``jupyter lab`` from this interpreter's environment and wait until it answers."""
    for name in ("config", "data", "runtime", "workspaces", "ipython"):
        (scratch / name).mkdir(parents=True, exist_ok=True)
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("JUPYTER", "JPY_")) and key not in {"MPLBACKEND", "IPYTHONDIR"}
    }
    env.update(
        JUPYTER_CONFIG_DIR=str(scratch / "config"),
        JUPYTER_DATA_DIR=str(scratch / "data"),
        JUPYTER_RUNTIME_DIR=str(scratch / "runtime"),
        JUPYTERLAB_WORKSPACES_DIR=str(scratch / "workspaces"),
        JUPYTERLAB_SETTINGS_DIR=str(settings_dir),
        JUPYTER_PREFER_ENV_PATH="1",
        IPYTHONDIR=str(scratch / "ipython"),
        PYTHONUNBUFFERED="1",
    )
    port = free_port()
    token = secrets.token_hex(24)
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        *extra_args,
    ]
    if getattr(os, "geteuid", lambda: 1)() == 0:
        command.append("--allow-root")
    log_path = scratch / "jupyter-server.log"
    log = log_path.open("wb")
    if sys.platform == "win32":
        popen_extra: dict[str, Any] = {
            "creationflags": subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined]
        }
    else:
        popen_extra = {"start_new_session": True}
    process = subprocess.Popen(
        command,
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        **popen_extra,
    )
    server = LabServer(port, token, root, log_path, process, log)
    try:
        _wait_until_up(server, timeout=90)
    except BaseException:
        server.stop()
        raise
    return server


def _wait_until_up(server: LabServer, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(
                f"jupyter lab exited with status {server.process.returncode}:\n" + server.log_tail()
            )
        try:
            server.api("GET", "api/status", timeout=2)
            return
        except (OSError, urllib.error.URLError, ValueError):
            time.sleep(0.3)
    raise RuntimeError(f"jupyter lab did not answer within {timeout:.0f} s:\n{server.log_tail()}")


@contextlib.contextmanager
def running_lab_server(
    root: Path, settings_dir: Path, scratch: Path, extra_args: tuple[str, ...] = ()
) -> Iterator[LabServer]:
    server = start_lab_server(root, settings_dir, scratch, extra_args)
    try:
        yield server
    finally:
        server.stop()


def copy_notebooks(target: Path, source: Path | None = None) -> Path:
    """Copy an edition's folder (NOTEBOOKS by default, with anything the notebooks read
    next to them) into target.

    The browser runs and may save the copies; the committed notebooks stay untouched.
    """
    ignore = shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__")
    shutil.copytree(source or NOTEBOOKS, target, ignore=ignore, dirs_exist_ok=True)
    return target


def stored_widget_cells(notebook: Path) -> list[int]:
    """Indexes of the cells whose stored outputs hold a widget view."""
    data = json.loads(notebook.read_text(encoding="utf-8"))
    found = []
    for index, cell in enumerate(data.get("cells", [])):
        for output in cell.get("outputs", []):
            if WIDGET_MIME in output.get("data", {}):
                found.append(index)
                break
    return found


def cell_source(notebook: Path, index: int) -> str:
    """The source text of one cell of a notebook file."""
    data = json.loads(notebook.read_text(encoding="utf-8"))
    source = data["cells"][index]["source"]
    return "".join(source) if isinstance(source, list) else str(source)


def cells_allowed_to_raise(notebook: Path) -> set[int]:
    """Indexes of the cells tagged ``raises-exception`` (an error output is their lesson)."""
    data = json.loads(notebook.read_text(encoding="utf-8"))
    return {
        index
        for index, cell in enumerate(data.get("cells", []))
        if "raises-exception" in cell.get("metadata", {}).get("tags", [])
    }


def slug(text: str) -> str:
    """A file-name-safe form of text, for screenshots."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")


# --------------------------------------------------------------------------------------
# Driving JupyterLab's own UI (menus, keyboard) in a playwright page.

RUN_TIMEOUT_MS = 600_000  # Run All includes the lab-test cell; generous for loaded CI machines
#: Seconds cells may stay queued ("[*]:") while the kernel reports itself idle and nothing
#: changes, before the run is declared stalled. A kernel that is running a cell says busy.
STALL_S = float(os.environ.get("CTXLAB_STALL_S", "90"))
#: Seconds to watch, after a stall, whether a new kernel connection lets the queued cells run.
WAKE_WATCH_S = 30.0
#: The clock of the Run All watch (a test of the watch replaces it).
clock = time.monotonic

# What the open notebook's code cells and kernel show: "[3]:" ran, "[*]:" queued or running,
# "[ ]:" not run; and the kernel's status as the notebook toolbar shows it.
_RUN_STATE = r"""
() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const prompts = panel ? [...panel.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')]
      .map(p => p.textContent.trim()) : [];
  const cells = panel ? [...panel.querySelectorAll('.jp-Notebook .jp-Cell')] : [];
  const codeIndex = cells.map((c, i) => c.classList.contains('jp-CodeCell') ? i : -1)
      .filter(i => i >= 0);
  return {
    total: prompts.length,
    ran: prompts.filter(p => /^\[\d+\]:$/.test(p)).length,
    queued: prompts.map((p, i) => p === '[*]:' ? codeIndex[i] : -1).filter(i => i >= 0),
    kernel: panel?.querySelector('.jp-Notebook-ExecutionIndicator')?.dataset.status ?? null,
    notebook: document.querySelector('.lm-TabBar-tab.lm-mod-current .lm-TabBar-tabLabel')
        ?.textContent ?? null,
  };
}
"""


#: Seconds a freshly opened notebook may show its kernel as "Unknown" before the page is
#: loaded again (at most OPEN_ATTEMPTS times). Seen on a loaded 2-core machine with
#: ipykernel 7.3: the kernel starts and the server connects to it, but the page's first
#: kernel connection never hears back; a new page load makes a new connection to the same
#: kernel, which wakes it. That is ipython/ipykernel#1554 (a request left unread until a new
#: connection), the reason constraints.txt pins ipykernel 6.31.0; the reload stays as a
#: bounded, reported second chance.
OPEN_ATTEMPT_MS = int(os.environ.get("CTXLAB_OPEN_ATTEMPT_MS", "45000"))
OPEN_ATTEMPTS = 3


def open_notebook(page: Any, server: LabServer, relative: str, workspace: str) -> None:
    """Open a notebook in JupyterLab and wait until its kernel has started and is idle.

    A page whose kernel connection stays silent is loaded again (a warning says so); after
    OPEN_ATTEMPTS loads the failure names what the page and the server showed."""
    for attempt in range(1, OPEN_ATTEMPTS + 1):
        page.goto(server.notebook_url(relative, workspace), wait_until="domcontentloaded")
        page.bring_to_front()  # several pages stay open: the one being driven is the visible one
        try:
            page.locator(".jp-NotebookPanel .jp-Notebook").first.wait_for(
                state="visible", timeout=90_000
            )
            wait_kernel_idle(page, timeout_ms=OPEN_ATTEMPT_MS)
            return
        except Exception as exc:  # say what the page and the server showed, not just "timeout"
            shown = page.evaluate(_PAGE_STATE)
            if attempt < OPEN_ATTEMPTS:
                warnings.warn(
                    f"{relative}: no idle kernel after {OPEN_ATTEMPT_MS} ms (attempt {attempt},"
                    f" page: {shown}); loading the page again",
                    stacklevel=2,
                )
                continue
            raise AssertionError(
                f"{relative} did not open with an idle kernel in {OPEN_ATTEMPTS} loads: {exc}\n"
                f"page: {shown}\nserver log:\n{server.log_tail()}"
            ) from exc


_PAGE_STATE = r"""
() => ({
  statusBar: document.querySelector('.jp-StatusBar-Widget')?.innerText ?? null,
  dialog: document.querySelector('.jp-Dialog')?.innerText ?? null,
  kernelIndicator: document.querySelector(
      '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-ExecutionIndicator'
  )?.dataset.status ?? null,
})
"""


def wait_kernel_idle(page: Any, timeout_ms: int = RUN_TIMEOUT_MS) -> None:
    """Wait for the status bar to read "<kernel> | Idle" (a started kernel, nothing queued)."""
    page.wait_for_function(_KERNEL_IDLE, timeout=timeout_ms, polling=250)


_KERNEL_IDLE = r"""
() => {
  const dialog = document.querySelector('.jp-Dialog');
  if (dialog && /Select Kernel|选择内核/.test(dialog.innerText)) {
    dialog.querySelector('.jp-mod-accept').click();   // keep the notebook's own kernel
    return false;
  }
  const bar = document.querySelector('.jp-StatusBar-Widget');
  const indicator = document.querySelector(
      '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-ExecutionIndicator');
  return !!bar && /\|\s*(Idle\b|空闲)/.test(bar.innerText)
      && !!indicator && indicator.dataset.status === 'idle';
}
"""


#: The menu labels the tests click, as JupyterLab's zh_CN language pack translates them
#: (its locale/zh_CN/LC_MESSAGES/jupyterlab.json); English labels are used as they are.
ZH_MENU_LABELS: Mapping[str, str] = {
    "File": "文件",
    "Edit": "编辑",
    "Run": "运行",
    "Clear Outputs of All Cells": "清除所有单元格的输出",
    "Run All Cells": "运行所有单元格",
}


def _menu(page: Any, menu: str, item: str, language: str = "en") -> None:
    if language == "zh":
        menu, item = ZH_MENU_LABELS[menu], ZH_MENU_LABELS[item]
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(rf"^{re.escape(menu)}$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(rf"^{re.escape(item)}$")).click()


def run_all_cells(page: Any, language: str = "en") -> None:
    """Edit → Clear Outputs of All Cells, Run → Run All Cells, then wait for every cell.

    Clearing first resets the execution counts, so "every prompt shows a number" really
    means this run executed every code cell. ``language="zh"`` clicks the menus of
    JupyterLab's Chinese interface (编辑 → 清除所有单元格的输出, 运行 → 运行所有单元格).
    """
    page.bring_to_front()
    _menu(page, "Edit", "Clear Outputs of All Cells", language)
    page.wait_for_function(
        "() => ![...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')]"
        r".some(p => /\d/.test(p.textContent))",
        timeout=30_000,
    )
    _menu(page, "Run", "Run All Cells", language)
    wait_all_cells_ran(page)
    wait_kernel_idle(page)


def run_selected_and_below(page: Any) -> None:
    """Run → Run Selected Cell and All Below, then wait until the kernel is idle again."""
    page.bring_to_front()
    _menu(page, "Run", "Run Selected Cell and All Below")
    wait_all_cells_ran(page)
    wait_kernel_idle(page)


def wait_all_cells_ran(page: Any, timeout_ms: int = RUN_TIMEOUT_MS) -> None:
    """Wait until every code cell of the open notebook shows an execution count.

    A run that stalls (cells queued, the kernel idle, nothing changing for STALL_S) fails
    early with what the page and the server show, instead of at the end of the timeout. The
    report also says whether a new kernel connection then let the queued cells run: that is
    the mark of a kernel that left a request unread (ipython/ipykernel#1554, ipykernel
    7.0-7.3; constraints.txt), not of a slow notebook.
    """
    deadline = clock() + timeout_ms / 1000
    last: dict[str, Any] | None = None
    since = clock()
    while True:
        state = run_state(page)
        now = clock()
        if state["total"] > 0 and state["ran"] == state["total"]:
            return
        if state != last:
            last, since = state, now
        elif state["queued"] and state["kernel"] == "idle" and now - since > STALL_S:
            raise AssertionError(_stall_report(page, state, now - since))
        if now > deadline:
            raise AssertionError(
                f"not every cell ran within {timeout_ms / 1000:.0f} s; the page shows {state}"
            )
        page.wait_for_timeout(500)


def run_state(page: Any) -> dict[str, Any]:
    """The open notebook's run as its page shows it: code cells in all, how many ran, the
    indexes of the queued ones, the kernel status, and the notebook's file name."""
    state: dict[str, Any] = page.evaluate(_RUN_STATE)
    return state


def server_sessions(page: Any) -> Any:
    """The server's sessions (path, kernel state, connections), asked with the page's login."""
    return page.evaluate(_SERVER_SESSIONS)


def wake_kernel(page: Any, notebook: str) -> str:
    """Open one more connection to the kernel of ``notebook``: "opened" or why not."""
    answer: str = page.evaluate(_WAKE_KERNEL, notebook)
    return answer


def _stall_report(page: Any, state: Mapping[str, Any], quiet_s: float) -> str:
    sessions = server_sessions(page)
    woke = wake_kernel(page, state["notebook"])
    after: Mapping[str, Any] = state
    deadline = clock() + WAKE_WATCH_S
    while clock() < deadline:
        after = run_state(page)
        if after["queued"] != state["queued"]:  # also when every cell ran: none queued
            break
        page.wait_for_timeout(500)
    if after["queued"] != state["queued"]:
        verdict = (
            "after a new connection to the kernel the queued cells moved on "
            f"({after['ran']} of {after['total']} ran): the kernel had left a request unread"
            " until a connection woke it (ipython/ipykernel#1554, fixed in ipykernel 7.4.0;"
            " constraints.txt pins a version without it: is another ipykernel installed?)"
        )
    else:
        verdict = f"a new connection to the kernel changed nothing in {WAKE_WATCH_S:.0f} s"
    return (
        f"Run stalled: cells {state['queued']} of {state['notebook']} stayed queued for"
        f" {quiet_s:.0f} s with the kernel idle ({state['ran']} of {state['total']} code cells"
        f" ran).\nserver sessions: {sessions}\nnew kernel connection: {woke}\n{verdict}"
    )


# The server's view of the kernels (GET api/sessions, with the page's login cookie).
_SERVER_SESSIONS = r"""
async () => {
  try {
    const answer = await fetch('/api/sessions');
    return (await answer.json()).map(s => ({
      path: s.path, kernel: s.kernel?.execution_state, connections: s.kernel?.connections,
      lastActivity: s.kernel?.last_activity}));
  } catch (error) { return String(error); }
}
"""

# Open (and after 2 s close) one more websocket to the kernel of the named notebook: the
# server then sends the kernel a kernel_info_request on a new shell connection.
_WAKE_KERNEL = r"""
async (notebook) => {
  try {
    const sessions = await (await fetch('/api/sessions')).json();
    const session = sessions.find(s => s.path.split('/').pop() === notebook);
    if (!session) return `no session for ${notebook}`;
    const url = `${location.origin.replace(/^http/, 'ws')}/api/kernels/${session.kernel.id}`
        + `/channels?session_id=ctxlab-wake-${Date.now()}`;
    return await new Promise(resolve => {
      const socket = new WebSocket(url);
      socket.onopen = () => setTimeout(() => { socket.close(); resolve('opened'); }, 2000);
      socket.onerror = () => resolve('could not open');
    });
  } catch (error) { return String(error); }
}
"""


def replace_cell_text(page: Any, cell: Any, text: str) -> None:
    """Replace a code cell's text the way a student pastes code: click into its editor,
    select all, insert ``text`` (no key-by-key typing, so the editor's auto-indent and
    bracket closing do not change it). The cell stays selected."""
    editor = cell.locator(".cm-content").first
    editor.scroll_into_view_if_needed()
    editor.click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(text)
    page.wait_for_function(
        "([node, wanted]) => node.innerText.replace(/\\u00a0/g, ' ').trim().startsWith(wanted)",
        arg=[editor.element_handle(), text.strip().splitlines()[0]],
        timeout=10_000,
    )


def max_execution_count(page: Any) -> int:
    """The highest execution count ("[n]:") shown in the open notebook (0 when none)."""
    count: int = page.evaluate(
        r"""
        () => Math.max(0, ...[...document.querySelectorAll(
            '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputArea-prompt')]
          .map(p => /^\[(\d+)\]:$/.exec(p.textContent.trim()))
          .filter(Boolean).map(m => Number(m[1])))
        """
    )
    return count


def save_notebook(page: Any) -> None:
    """File → Save Notebook (the copy under test, never the repository's file)."""
    _menu(page, "File", "Save Notebook")
    page.locator(".jp-NotebookPanel .jp-mod-dirty").wait_for(state="detached", timeout=30_000)


def cell_outputs(page: Any) -> list[dict[str, Any]]:
    """For every cell of the open notebook: its error outputs, live widget views, text."""
    result: list[dict[str, Any]] = page.evaluate(
        """
        () => [...document.querySelectorAll(
            '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')].map((cell, index) => {
          const errors = [...cell.querySelectorAll(
              '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')]
            .map(node => node.innerText);
          const outputs = [...cell.querySelectorAll('.jp-OutputArea-output')];
          return {
            index,
            errors,
            liveViews: outputs.filter(n => n.querySelector('.jupyter-widgets')).length,
            text: [...cell.querySelectorAll('.jp-OutputArea')].map(n => n.innerText).join(''),
          };
        })
        """
    )
    return result


def slider(page: Any, description: str) -> Any:
    """The ipywidgets slider whose description label reads exactly ``description``."""
    label = page.locator("label.widget-label", has_text=re.compile(rf"^{re.escape(description)}$"))
    return page.locator(".widget-slider", has=label).first


def set_slider(page: Any, description: str, value: int) -> None:
    """Move a slider to value with the keyboard: focus its handle, press arrow keys."""
    control = slider(page, description)
    handle = control.locator(".noUi-handle").first
    handle.scroll_into_view_if_needed()
    handle.focus()
    current = int(float(handle.get_attribute("aria-valuenow") or "0"))
    key = "ArrowRight" if value > current else "ArrowLeft"
    for _ in range(abs(value - current)):
        handle.press(key)
    readout = control.locator(".widget-readout").first
    page.wait_for_function(
        "([node, wanted]) => node.textContent.trim() === wanted",
        arg=[readout.element_handle(), str(value)],
        timeout=10_000,
    )


def drag_slider(page: Any, description: str, value: int) -> None:
    """Move a slider to value with the mouse: drag its handle along the track.

    For a RISE slide: there reveal.js takes the arrow keys (they change the slide), so
    set_slider's keyboard way does not work; a lecturer drags the slider instead. The drop
    point is computed from the track's width and the handle's aria-valuemin/max; when it
    lands a step off, the handle is dragged again from where it is.
    """
    control = slider(page, description)
    handle = control.locator(".noUi-handle").first
    track = control.locator(".noUi-base").first
    handle.scroll_into_view_if_needed()
    readout = control.locator(".widget-readout").first
    for _ in range(4):
        low = float(handle.get_attribute("aria-valuemin") or "0")
        high = float(handle.get_attribute("aria-valuemax") or "0")
        before = handle.get_attribute("aria-valuenow") or "0"
        now = float(before)
        if round(now) == value:
            break
        box = track.bounding_box()
        grip = handle.bounding_box()
        assert box is not None and grip is not None and high > low
        start_x = grip["x"] + grip["width"] / 2
        start_y = grip["y"] + grip["height"] / 2
        target_x = start_x + (value - now) / (high - low) * box["width"]
        page.mouse.move(start_x, start_y)
        page.mouse.down()
        page.mouse.move(target_x, start_y, steps=8)
        page.mouse.up()
        with contextlib.suppress(Exception):
            page.wait_for_function(
                "([node, wanted]) => node.getAttribute('aria-valuenow') !== wanted",
                arg=[handle.element_handle(), before],
                timeout=2_000,
            )
    page.wait_for_function(
        "([node, wanted]) => node.textContent.trim() === wanted",
        arg=[readout.element_handle(), str(value)],
        timeout=10_000,
    )


def screenshot(page: Any, name: str) -> Path:
    """Save a PNG of the page as it is now under artifacts/browser/."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    target = ARTIFACTS / f"{slug(name)}.png"
    page.screenshot(path=str(target))
    return target


def open_deck_offline(context: Any, deck: Path) -> tuple[Any, list[str], list[str]]:
    """Open a ``make slides`` deck from disk with the network refused, and wait until
    reveal.js is ready; returns the page, the URLs it tried to reach, and its JS errors.

    reveal.js is loaded through require.js (no global Reveal); it marks itself ready by
    adding the class "ready" to .reveal once initialised.
    """
    blocked: list[str] = []

    def refuse_network(route: Any) -> None:
        url = route.request.url
        if url.startswith(("file:", "data:", "blob:")):
            route.continue_()
        else:
            blocked.append(url)
            route.abort()

    context.route("**/*", refuse_network)
    context.set_offline(True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(deck.as_uri(), wait_until="load")
    page.locator(".reveal.ready").wait_for(state="attached", timeout=60_000)
    return page, blocked, errors
