"""Build the JupyterLite site of the labs (issue 19): ``make lite`` runs this in lite/.venv.

    python lite/build.py [--output lite/_output] [--pyodide cdn|core|PATH] [--instructor]
                         [--extra-contents DIR] [--allow-dirty]

1. Refuses a checkout with uncommitted changes under ctxlab/, notebooks/ or pyproject.toml
   (the site would hold code no commit has); ``--allow-dirty`` (``LITE_ALLOW_DIRTY=1``) is
   for trying a change locally.
2. Builds ctxlab's wheel from the checkout (``pip wheel --no-deps --no-build-isolation``) and
   downloads the pinned pure-Python wheels of lite/kernel-wheels.txt (``pip download``, the
   package index is reached at build time only). A missing wheel stops the build, named.
3. Lays out the site's sources in lite/_build/src: every student edition (en, zh) under
   files/<lang>/ -- each notebook with one first cell that installs ctxlab in the browser --,
   the instructor editions under files/instructor/<lang>/ with ``--instructor``; the wheels
   in pypi/ (piplite's index, ``disablePyPIFallback``: nothing from the index at run time).
4. Pyodide: ``cdn`` (default) leaves the site pointing at Pyodide's CDN; ``core`` serves the
   npm ``pyodide`` core package (lite/node_modules) with the kernel's own pure-Python
   dependencies (the [core] wheels) in static/pyodide -- pandas and matplotlib are not in
   it --; a PATH serves a full Pyodide distribution (its release archive ``.tar.bz2`` or
   the unpacked folder holding ``pyodide.mjs``) for a classroom without internet.
5. ``jupyter lite build`` into the output folder, then checks the result (wheel index,
   config, no fallback to the package index).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

LITE = Path(__file__).resolve().parent
REPO = LITE.parent
BUILD = LITE / "_build"
SRC = BUILD / "src"
PYODIDE_NPM = LITE / "node_modules" / "pyodide"
KERNEL_PLUGIN = "@jupyterlite/pyodide-kernel-extension:kernel"
INSTALL_CELL_EN = (
    "# JupyterLite: install ctxlab into the Python of this browser tab, from this site.\n"
    "# pandas and matplotlib come from the Pyodide distribution (its CDN unless the site\n"
    "# serves it). Run this cell first; it takes a few seconds.\n"
    "%pip install -q ctxlab ipywidgets pandas matplotlib"
)
INSTALL_CELL_ZH = (
    "# JupyterLite：把 ctxlab 安装到这个浏览器标签页里的 Python（从本网站安装）。\n"
    "# pandas 和 matplotlib 来自 Pyodide 发行版（除非网站自带，否则从它的 CDN 下载）。\n"
    "# 请先运行本单元，需要几秒钟。\n"
    "%pip install -q ctxlab ipywidgets pandas matplotlib"
)


class BuildError(Exception):
    """A build that must stop, with the reason and the fix."""


def run(*command: str | Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(c) for c in command], check=True, text=True, **kwargs)  # type: ignore[call-overload, no-any-return]


def check_clean(allow_dirty: bool) -> str:
    """The commit the site is built from; refuses uncommitted changes to what it ships."""
    try:
        head = run("git", "rev-parse", "--short", "HEAD", cwd=REPO, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        if allow_dirty:
            return "unknown"
        raise BuildError(
            "make lite: not a git checkout, so the site's code cannot be tied to a commit;"
            " build from a clone, or pass LITE_ALLOW_DIRTY=1"
        ) from None
    status = run(
        "git",
        "status",
        "--porcelain",
        "--",
        "ctxlab",
        "notebooks",
        "pyproject.toml",
        cwd=REPO,
        capture_output=True,
    ).stdout.strip()
    if status and not allow_dirty:
        raise BuildError(
            "make lite: the checkout has uncommitted changes in what the site ships:\n"
            + "\n".join("  " + line for line in status.splitlines()[:20])
            + "\ncommit or stash them first (LITE_ALLOW_DIRTY=1 builds anyway, for a local try)"
        )
    return head.stdout.strip() + ("-dirty" if status else "")


def pins(group: str) -> list[str]:
    """The ``name==version`` lines of one [group] of lite/kernel-wheels.txt."""
    found: list[str] = []
    current = None
    for line in (LITE / "kernel-wheels.txt").read_text(encoding="utf-8").splitlines():
        marker = re.match(r"#\s*\[(\w+)\]", line)
        if marker:
            current = marker.group(1)
        elif line.strip() and not line.startswith("#") and current == group:
            found.append(line.strip())
    return found


def wheel_name(pin: str) -> str:
    name, version = pin.split("==")
    return f"{re.sub(r'[-_.]+', '_', name).lower()}-{version}-"


def fetch_wheels(pinned: list[str], into: Path) -> list[Path]:
    """``pip download`` exact pure-Python wheels (for Python 3.14, Pyodide's); each must be
    there afterwards."""
    into.mkdir(parents=True, exist_ok=True)
    missing = [p for p in pinned if not any(into.glob(wheel_name(p) + "*.whl"))]
    if missing:
        command = ["pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:"]
        command += ["--python-version", "3.14", "--dest", str(into), *missing]
        try:
            run(sys.executable, "-m", *command)
        except subprocess.CalledProcessError:
            raise BuildError(
                "make lite: could not download the wheels of "
                + ", ".join(missing)
                + " (lite/kernel-wheels.txt) from the package index: is the pin right,"
                " is the index reachable? The site is not built without them."
            ) from None
    wheels = []
    for pin in pinned:
        found = sorted(into.glob(wheel_name(pin) + "*.whl"))
        if not found or not found[0].name.endswith("-none-any.whl"):
            raise BuildError(f"make lite: no pure-Python wheel of {pin} in {into}")
        wheels.append(found[0])
    return wheels


def build_ctxlab_wheel(into: Path) -> Path:
    for old in into.glob("ctxlab-*.whl"):
        old.unlink()
    scratch = BUILD / "wheel-build"
    shutil.rmtree(scratch, ignore_errors=True)
    # Build from a copy, so that the checkout gets no build/ or *.egg-info folder.
    shutil.copytree(
        REPO,
        scratch,
        ignore=shutil.ignore_patterns(
            ".git",
            ".venv*",
            "lite",
            "node_modules",
            "artifacts",
            "slides",
            "build",
            "dist",
            "*.egg-info",
            "__pycache__",
            "notebooks",
            "tests",
            "benchmarks",
            "lecture",
        ),
    )
    run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--quiet",
        "--no-deps",
        "--no-build-isolation",
        "--wheel-dir",
        into,
        scratch,
    )
    shutil.rmtree(scratch, ignore_errors=True)
    wheels = sorted(into.glob("ctxlab-*-py3-none-any.whl"))
    if len(wheels) != 1:
        raise BuildError(f"make lite: building ctxlab's wheel left {len(wheels)} wheels in {into}")
    return wheels[0]


def lite_notebook(source: Path, target: Path, language: str) -> None:
    """A copy of an edition's notebook with the install cell first."""
    notebook = json.loads(source.read_text(encoding="utf-8"))
    cell = {
        "cell_type": "code",
        "execution_count": None,
        "id": "lite-install",
        "metadata": {"tags": ["jupyterlite"]},
        "outputs": [],
        "source": INSTALL_CELL_ZH if language == "zh" else INSTALL_CELL_EN,
    }
    cells = notebook["cells"]
    first_code = next((i for i, c in enumerate(cells) if c["cell_type"] == "code"), len(cells))
    cells.insert(first_code, cell)
    notebook["metadata"]["kernelspec"] = {
        "display_name": "Python (Pyodide)",
        "language": "python",
        "name": "python",
    }
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(notebook, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def lay_out_contents(instructor: bool, extra: Path | None) -> Path:
    files = SRC / "files"
    shutil.rmtree(files, ignore_errors=True)
    editions = [("student", lang, files / lang) for lang in ("en", "zh")]
    if instructor:
        editions += [("instructor", lang, files / "instructor" / lang) for lang in ("en", "zh")]
    for edition, language, target in editions:
        notebooks = sorted((REPO / "notebooks" / language / edition).glob("*.ipynb"))
        if not notebooks:
            raise BuildError(f"make lite: no notebooks in notebooks/{language}/{edition}/")
        for notebook in notebooks:
            lite_notebook(notebook, target / notebook.name, language)
    if extra is not None:
        shutil.copytree(extra, files, dirs_exist_ok=True)
    return files


def core_pyodide(into: Path, wheels: list[Path]) -> None:
    """The npm ``pyodide`` core package, plus the kernel's own pure-Python dependencies,
    entered in its pyodide-lock.json with their own sha256."""
    if not (PYODIDE_NPM / "pyodide.mjs").exists():
        raise BuildError(
            "make lite PYODIDE=core: the npm pyodide package is missing: run `npm ci` in lite/"
        )
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir(parents=True)
    for item in PYODIDE_NPM.iterdir():
        if item.is_file() and not item.name.endswith((".map", ".d.ts", ".html", ".md")):
            shutil.copy2(item, into / item.name)
    lock = json.loads((into / "pyodide-lock.json").read_text(encoding="utf-8"))
    packages = lock["packages"]
    by_name = {re.sub(r"[-_.]+", "-", k).lower(): k for k in packages}
    for wheel in wheels:
        name = re.sub(r"[-_.]+", "-", wheel.name.split("-")[0]).lower()
        key = by_name.get(name)
        if key is None:
            raise BuildError(f"make lite: {wheel.name} is not a package of pyodide-lock.json")
        shutil.copy2(wheel, into / wheel.name)
        entry = packages[key]
        entry["file_name"] = wheel.name
        entry["version"] = wheel.name.split("-")[1]
        entry["sha256"] = hashlib.sha256(wheel.read_bytes()).hexdigest()
        entry["unvendored_tests"] = False
    (into / "pyodide-lock.json").write_text(json.dumps(lock), encoding="utf-8")


def full_pyodide(path: Path, into: Path) -> None:
    """A full Pyodide distribution (release archive or unpacked folder) into ``into``."""
    shutil.rmtree(into, ignore_errors=True)
    if path.is_dir():
        root = path if (path / "pyodide.mjs").exists() else path / "pyodide"
        if not (root / "pyodide.mjs").exists():
            raise BuildError(f"make lite PYODIDE={path}: no pyodide.mjs in that folder")
        shutil.copytree(root, into)
    elif path.name.endswith((".tar.bz2", ".tar.gz", ".tgz")):
        staging = BUILD / "pyodide-unpack"
        shutil.rmtree(staging, ignore_errors=True)
        with tarfile.open(path) as archive:
            archive.extractall(staging, filter="data")
        found = sorted(staging.rglob("pyodide.mjs"))
        if not found:
            raise BuildError(f"make lite PYODIDE={path}: the archive has no pyodide.mjs")
        shutil.move(str(found[0].parent), into)
        shutil.rmtree(staging, ignore_errors=True)
    else:
        raise BuildError(
            f"make lite PYODIDE={path}: expected cdn, core, a Pyodide release archive"
            " (pyodide-314.0.6.tar.bz2) or its unpacked folder"
        )


def write_config(pyodide: str) -> None:
    settings: dict[str, object] = {"disablePyPIFallback": True}
    config = {
        "jupyter-lite-schema-version": 0,
        "jupyter-config-data": {
            "appName": "ctxlab labs",
            "disabledExtensions": [],
            "litePluginSettings": {KERNEL_PLUGIN: settings},
        },
    }
    (SRC / "jupyter-lite.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    # Every cell of a notebook stays in the page (no windowing): a long lab notebook
    # scrolls without re-rendering its outputs, and a test can read every output.
    overrides = {"@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"}}
    (SRC / "overrides.json").write_text(json.dumps(overrides, indent=2), encoding="utf-8")


def verify(output: Path, wheels: list[Path], pyodide: str) -> None:
    index = output / "pypi" / "all.json"
    if not index.exists():
        raise BuildError(f"make lite: the site has no wheel index ({index})")
    listed = json.loads(index.read_text(encoding="utf-8"))
    for wheel in wheels:
        name = re.sub(r"[-_.]+", "-", wheel.name.split("-")[0]).lower()
        if name not in {re.sub(r"[-_.]+", "-", n).lower() for n in listed}:
            raise BuildError(f"make lite: {wheel.name} is missing from the site's pypi/all.json")
    config = json.loads((output / "jupyter-lite.json").read_text(encoding="utf-8"))
    kernel = config["jupyter-config-data"]["litePluginSettings"][KERNEL_PLUGIN]
    if kernel.get("disablePyPIFallback") is not True:
        raise BuildError("make lite: the site would fall back to the package index at run time")
    if pyodide != "cdn" and not str(kernel.get("pyodideUrl", "")).startswith("./static/pyodide"):
        raise BuildError("make lite: the site does not point at its own Pyodide")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=LITE / "_output")
    parser.add_argument("--pyodide", default=os.environ.get("LITE_PYODIDE", "cdn"))
    parser.add_argument("--instructor", action="store_true")
    parser.add_argument("--extra-contents", type=Path)
    parser.add_argument("--allow-dirty", action="store_true")
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        commit = check_clean(args.allow_dirty)
        wheels_dir = SRC / "pypi"
        wheels_dir.mkdir(parents=True, exist_ok=True)
        cache = BUILD / "downloads"
        served = [build_ctxlab_wheel(wheels_dir)]
        for wheel in fetch_wheels(pins("piplite"), cache):
            shutil.copy2(wheel, wheels_dir / wheel.name)
            served.append(wheels_dir / wheel.name)
        for stale in set(wheels_dir.glob("*.whl")) - set(served):
            stale.unlink()
        lay_out_contents(args.instructor, args.extra_contents)
        static = SRC / "static" / "pyodide"
        if args.pyodide == "cdn":
            shutil.rmtree(static, ignore_errors=True)
        elif args.pyodide == "core":
            core_pyodide(static, fetch_wheels(pins("core"), cache))
        else:
            full_pyodide(Path(args.pyodide).expanduser().resolve(), static)
        write_config(args.pyodide)
        output = args.output.resolve()
        shutil.rmtree(output, ignore_errors=True)
        for state in SRC.glob(".jupyterlite.doit.db*"):  # doit's memory of a previous build
            state.unlink()
        run(
            Path(sys.executable).parent / "jupyter",
            "lite",
            "build",
            "--lite-dir",
            SRC,
            "--contents",
            SRC / "files",
            "--output-dir",
            output,
            "--no-sourcemaps",
            "--no-unused-shared-packages",
            cwd=SRC,
        )
        verify(output, served, args.pyodide)
    except BuildError as error:
        print(error, file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as error:
        print(
            f"make lite: {' '.join(map(str, error.cmd))} failed ({error.returncode})",
            file=sys.stderr,
        )
        return 1
    size = sum(p.stat().st_size for p in output.rglob("*") if p.is_file())
    print(
        f">> JupyterLite site in {output} (commit {commit}, Pyodide: {args.pyodide},"
        f" {size / 1e6:.1f} MB, built in {time.monotonic() - started:.0f} s)"
    )
    print(
        ">> try it: python -m http.server -d "
        + str(output)
        + " 8000, then open http://localhost:8000/"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
