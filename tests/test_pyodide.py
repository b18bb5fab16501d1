"""ctxlab under Pyodide in Node: the same ✔/✘ rows as on CPython (issue 19, item 3).

``node lite/pyodide_check.mjs`` boots Pyodide 314 (Python 3.14 in WebAssembly) from the npm
``pyodide`` core package, unpacks the wheels ``make lite`` served in the site (ctxlab's, built
from this checkout, and filelock's) and runs ``check_implementation`` on a right and a wrong
build-it cell of each lab (``tests/lite_cases.py``). Pyodide has no threads, so there every
check runs under the thread-free time limit (``ctxlab.lab.grading.runner``): an endless
loop, a loop that catches ``BaseException``, deep recursion and an endless print are ✘ rows.

Only the grading and the core run here: pandas and matplotlib (the teaching modules) need
Pyodide's full distribution, which the npm core package does not hold.

Run by ``make test-lite`` (it builds the site and installs the npm package first); skipped
otherwise.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lite_cases

REPO = Path(__file__).resolve().parent.parent
LITE = REPO / "lite"
WHEELS = LITE / "_build" / "src" / "pypi"

pytestmark = [
    pytest.mark.lite,
    pytest.mark.skipif(
        os.environ.get("CTXLAB_LITE_TESTS") != "1",
        reason="JupyterLite tests: run `make test-lite`",
    ),
]


def _require(condition: bool, what: str) -> None:
    if not condition:
        pytest.fail(f"{what} (make test-lite prepares it)")


@pytest.fixture(scope="module")
def pyodide_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    node = shutil.which("node")
    _require(node is not None, "node is not installed")
    _require((LITE / "node_modules" / "pyodide" / "pyodide.mjs").exists(), "no lite/node_modules")
    wheels = tmp_path_factory.mktemp("wheels")
    for pattern in ("ctxlab-*.whl", "filelock-*.whl"):
        found = sorted(WHEELS.glob(pattern))
        _require(len(found) == 1, f"no {pattern} in {WHEELS}: run `make lite` first")
        shutil.copy2(found[0], wheels / found[0].name)
    cases = wheels.parent / "cases.json"
    labs = {
        lab: {"right": lite_cases.right(lab), "wrong": lite_cases.wrong(lab)}
        for lab in lite_cases.LABS
    }
    cases.write_text(json.dumps({"labs": labs}), encoding="utf-8")
    run = subprocess.run(
        [str(node), str(LITE / "pyodide_check.mjs"), str(wheels), str(cases)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    result: dict[str, object] = json.loads(run.stdout.strip().splitlines()[-1])
    print(f"pyodide: boot {result['boot_seconds']} s, total {result['total_seconds']} s")
    return result


def test_it_is_python_314_in_webassembly_without_threads(pyodide_run: dict[str, object]) -> None:
    assert pyodide_run["python"] == "3.14.2" and pyodide_run["platform"] == "emscripten"
    assert pyodide_run["threads"] is False and pyodide_run["trace"] is True
    assert pyodide_run["heavy_modules"] == []  # grading pulls no pandas/matplotlib


@pytest.mark.parametrize("lab", lite_cases.LABS)
def test_right_and_wrong_give_the_same_rows_as_cpython(
    pyodide_run: dict[str, object], lab: str
) -> None:
    got = pyodide_run["labs"][lab]  # type: ignore[index]
    for which, code in (("right", lite_cases.right(lab)), ("wrong", lite_cases.wrong(lab))):
        expected = lite_cases.rows(lab, code)
        assert [(key, passed) for key, passed, _ in got[which]] == expected, which
    assert all(passed for _, passed, _ in got["right"])
    assert not all(passed for _, passed, _ in got["wrong"])


@pytest.mark.parametrize("name", ["endless", "stubborn", "print"])
def test_a_hanging_function_is_a_failed_row_in_pyodide(
    pyodide_run: dict[str, object], name: str
) -> None:
    run = pyodide_run["hostile"][name]  # type: ignore[index]
    first, *rest = run["rows"]
    assert first[1] is False and "did not return within 1 s" in first[2], first
    assert rest and all(not passed and detail.startswith("not run") for _, passed, detail in rest)
    assert run["seconds"] < 5


def test_deep_recursion_is_a_failed_row_in_pyodide(pyodide_run: dict[str, object]) -> None:
    first = pyodide_run["hostile"]["recursion"]["rows"][0]  # type: ignore[index]
    assert first[1] is False and "raised RecursionError" in first[2]
