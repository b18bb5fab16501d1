"""The pins in constraints.txt, environment.yml and pyproject.toml agree.

Notebook outputs are compared cell by cell (nbval), so the versions that shape
them must be the same whichever route a student installs by: pip with
constraints.txt, or conda with environment.yml.
"""

from __future__ import annotations

import os
import re
import sys
from importlib import metadata
from pathlib import Path

import pytest

pytestmark = pytest.mark.packaging

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
CONSTRAINTS = ROOT / "constraints.txt"
# The set this environment was installed from: `make test-current` sets it to
# constraints-current.txt (pandas 3 and the current releases, issue 19).
INSTALLED_FROM = ROOT / os.environ.get("CTXLAB_CONSTRAINTS", "constraints.txt")
CURRENT = ROOT / "constraints-current.txt"
ENVIRONMENT = ROOT / "environment.yml"
PYPROJECT = ROOT / "pyproject.toml"

# Packages whose versions show in stored notebook outputs (reprs, widgets,
# figures, kernel messages) or decide how they are compared.
OUTPUT_SHAPING = (
    "numpy",
    "pandas",
    "matplotlib",
    "pillow",
    "ipython",
    "ipykernel",
    "ipywidgets",
    "jupyterlab-widgets",
    "nbformat",
    "nbclient",
    "nbval",
)
# environment.yml must pin at least these (they install alike on every Python).
CONDA_REQUIRED = (
    "filelock",
    "numpy",
    "pandas",
    "matplotlib",
    "ipywidgets",
    "ipykernel",
    "jupyterlab",
    "nbval",
    "pytest",
    "hypothesis",
)

_REQ_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def normalize(name: str) -> str:
    """PEP 503 name normalization: case, '-', '_' and '.' do not matter."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_constraints(text: str) -> dict[str, str]:
    """Map normalized name -> version for each ``name==version`` line."""
    pins: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9.+!_-]+)", line)
        assert match, f"constraints.txt:{number}: not an exact pin 'name==version': {raw!r}"
        name = normalize(match.group(1))
        assert name not in pins, f"constraints.txt:{number}: {name} pinned twice"
        pins[name] = match.group(2)
    return pins


def parse_environment(text: str) -> tuple[dict[str, str | None], list[str]]:
    """Read the flat ``dependencies:`` list of a conda environment file.

    Returns (conda packages as normalized name -> version or None, pip lines).
    Only the simple layout used by environment.yml is understood: top-level
    keys, ``- name``/``- name==version``/``- name=version`` items, and one
    ``- pip:`` sub-list. Anything else fails loudly instead of being skipped.
    """
    conda: dict[str, str | None] = {}
    pip: list[str] = []
    section = None
    in_pip = False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split(" #", 1)[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        body = line.strip()
        if indent == 0:
            assert re.fullmatch(r"[A-Za-z_]+:.*", body), f"environment.yml:{number}: {raw!r}"
            section = body.split(":", 1)[0]
            in_pip = False
            continue
        if section != "dependencies":
            continue
        assert body.startswith("- "), f"environment.yml:{number}: expected a list item: {raw!r}"
        item = body[2:].strip().strip("'\"")
        if item == "pip:":
            in_pip = True
            pip_indent = indent
            continue
        if in_pip and indent > pip_indent:
            pip.append(item)
            continue
        in_pip = False
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:==?\s*([^\s=<>!]+))?", item)
        assert match, f"environment.yml:{number}: cannot read conda spec {item!r}"
        name = normalize(match.group(1))
        assert name not in conda, f"environment.yml:{number}: {name} listed twice"
        conda[name] = match.group(2)
    return conda, pip


@pytest.fixture(scope="module")
def constraints() -> dict[str, str]:
    return parse_constraints(CONSTRAINTS.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def environment() -> tuple[dict[str, str | None], list[str]]:
    return parse_environment(ENVIRONMENT.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def pyproject() -> dict[str, object]:
    with PYPROJECT.open("rb") as f:
        return tomllib.load(f)


def test_parsers_read_what_they_should() -> None:
    pins = parse_constraints("# c\nFoo_Bar==1.2.3\nbaz.qux==2.0  # why\n")
    assert pins == {"foo-bar": "1.2.3", "baz-qux": "2.0"}
    with pytest.raises(AssertionError):
        parse_constraints("numpy>=2\n")
    conda, pip = parse_environment(
        "name: x\nchannels:\n  - conda-forge\ndependencies:\n  - python=3.11\n  - pip\n"
        "  - Jupyterlab_Widgets==3.0.17\n  - pip:\n      - -e .[lab]\n"
    )
    assert conda == {"python": "3.11", "pip": None, "jupyterlab-widgets": "3.0.17"}
    assert pip == ["-e .[lab]"]


def test_conda_and_pip_pins_agree(
    constraints: dict[str, str], environment: tuple[dict[str, str | None], list[str]]
) -> None:
    conda, _ = environment
    disagree = {
        name: (version, constraints[name])
        for name, version in conda.items()
        if name in constraints and version != constraints[name]
    }
    assert not disagree, (
        f"environment.yml and constraints.txt disagree (name: (conda, pip)): {disagree}"
    )


def test_environment_pins_the_core_packages(
    environment: tuple[dict[str, str | None], list[str]],
) -> None:
    conda, pip = environment
    unpinned = [name for name in CONDA_REQUIRED if not conda.get(name)]
    assert not unpinned, f"environment.yml must pin these exactly: {unpinned}"
    assert conda.get("python"), "environment.yml must name a Python version"
    assert "pip" in conda
    assert any(line.startswith("-e .") for line in pip), "pip: section must install ctxlab (-e .)"
    assert "-c constraints.txt" in pip, "pip: section must install under constraints.txt"


def test_environment_python_is_supported(
    environment: tuple[dict[str, str | None], list[str]], pyproject: dict[str, object]
) -> None:
    conda, _ = environment
    version = conda["python"]
    assert version is not None
    project = pyproject["project"]
    assert isinstance(project, dict)
    classifiers = project["classifiers"]
    assert f"Programming Language :: Python :: {version}" in classifiers


def test_every_declared_dependency_is_pinned(
    constraints: dict[str, str], pyproject: dict[str, object]
) -> None:
    project = pyproject["project"]
    assert isinstance(project, dict)
    requirements = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        requirements.extend(extra)
    names = set()
    for requirement in requirements:
        match = _REQ_NAME.match(requirement)
        assert match, requirement
        names.add(normalize(match.group(1)))
    missing = sorted(names - set(constraints) - {"ctxlab"})
    assert not missing, f"declared in pyproject.toml but not pinned in constraints.txt: {missing}"


def test_core_runtime_dependency_is_filelock_only(pyproject: dict[str, object]) -> None:
    project = pyproject["project"]
    assert isinstance(project, dict)
    assert [normalize(d) for d in project["dependencies"]] == ["filelock"]


@pytest.mark.parametrize("name", OUTPUT_SHAPING)
def test_installed_versions_match_the_pins(name: str) -> None:
    """Stored notebook outputs are only comparable under the pinned versions (and
    `make test-current` really runs the current set)."""
    pins = parse_constraints(INSTALLED_FROM.read_text(encoding="utf-8"))
    try:
        installed = metadata.version(name)
    except metadata.PackageNotFoundError:
        pytest.skip(f"{name} is not installed here")
    assert installed == pins[normalize(name)], (
        f"{name} {installed} is installed but {INSTALLED_FROM.name} pins {pins[normalize(name)]}:"
        f" reinstall with `pip install -e '.[lab,test,dev]' -c {INSTALLED_FROM.name}`"
        " (or `make test`)"
    )


def test_the_current_set_has_pandas_3_and_pins_every_declared_dependency(
    pyproject: dict[str, object],
) -> None:
    """constraints-current.txt (issue 19): pandas 3.0.x and matplotlib 3.10.x (what Pyodide
    314 ships), a numpy 2, and an exact pin for every dependency of the lab, test and dev
    extras."""
    current = parse_constraints(CURRENT.read_text(encoding="utf-8"))
    assert current["pandas"].startswith("3.0.")
    assert current["matplotlib"].startswith("3.10.")
    assert current["numpy"].startswith("2.")
    project = pyproject["project"]
    assert isinstance(project, dict)
    extras = project["optional-dependencies"]
    requirements = [*project["dependencies"], *extras["lab"], *extras["test"], *extras["dev"]]
    names = set()
    for requirement in requirements:
        match = _REQ_NAME.match(requirement)
        assert match, requirement
        names.add(normalize(match.group(1)))
    assert sorted(names - set(current)) == []
