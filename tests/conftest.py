"""Shared pytest setup: Hypothesis profiles, the markers, and ``--ctxlab-impl``.

Markers (registered in pyproject.toml; ``pytest --markers`` lists them):

* ``lab11_1`` ... ``lab11_5`` -- exactly the chapter's checks of one lab
  (tests/test_lab_checks_chapter.py), the twin of the course's
  ``node --test --test-name-pattern="Lab 11.N"``. ``pytest -m lab11_3`` runs them against
  ctxlab's reference; ``pytest -m lab11_3 --ctxlab-impl=my_lab.py`` runs them against the
  functions defined in ``my_lab.py`` (a student's own code).
* ``reference``, ``window``, ``store``, ``fuzz``, ``cli``, ``teaching``, ``interop``,
  ``packaging`` -- ctxlab's other tests.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# Students' laptops and CI machines are slow or shared (CI has 2 cores): timing is not
# what these tests check, so there is no per-example deadline and no "input generation
# is slow" health check (it fired on a loaded machine). CI also prints the reproduction
# blob of any failing example so it can be replayed locally.
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", settings.get_profile("dev"), print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

_IMPL_KEY = pytest.StashKey[ModuleType]()
_LAB_MARKERS = {f"lab11_{n}": f"11.{n}" for n in range(1, 6)}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--ctxlab-impl",
        metavar="PATH.py",
        default=None,
        help="run the chapter checks (-m lab11_N) against the functions defined in this "
        "Python file instead of ctxlab's reference",
    )


def _load_module(path: Path) -> ModuleType:
    if not path.is_file():
        raise pytest.UsageError(f"--ctxlab-impl: no such file: {path}")
    spec = importlib.util.spec_from_file_location("ctxlab_student_impl", path)
    if spec is None or spec.loader is None:
        raise pytest.UsageError(f"--ctxlab-impl: {path} is not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        raise pytest.UsageError(
            f"--ctxlab-impl: importing {path} failed: {type(error).__name__}: {error}"
        ) from error
    return module


def pytest_configure(config: pytest.Config) -> None:
    option = config.getoption("--ctxlab-impl")
    if option:
        config.stash[_IMPL_KEY] = _load_module(Path(option).expanduser().resolve())


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """After ``-m`` deselection: every lab left to check needs its function in the file."""
    module = config.stash.get(_IMPL_KEY, None)
    if module is None:
        return
    from ctxlab.lab.grading import lab_keyword

    needed: dict[str, str] = {}
    for item in items:
        for marker, lab in _LAB_MARKERS.items():
            if item.get_closest_marker(marker) is not None:
                needed[lab_keyword(lab)] = lab
    for keyword, lab in sorted(needed.items()):
        function = getattr(module, keyword, None)
        if not callable(function):
            raise pytest.UsageError(
                f"--ctxlab-impl {config.getoption('--ctxlab-impl')}: defines no function"
                f" {keyword}(), which Lab {lab} checks. Define it, or choose the lab with"
                f" -m lab{lab.replace('.', '_')}."
            )


@pytest.fixture
def lab_functions(request: pytest.FixtureRequest) -> Callable[[str], dict[str, Any]]:
    """``lab_functions("11.3")`` -> ``{"build_context": <the function under test>}``."""
    from ctxlab.lab.grading import lab_keyword, reference_functions

    module = request.config.stash.get(_IMPL_KEY, None)

    def functions(lab: str) -> dict[str, Any]:
        if module is None:
            return reference_functions(lab)
        keyword = lab_keyword(lab)
        return {keyword: getattr(module, keyword)}

    return functions
