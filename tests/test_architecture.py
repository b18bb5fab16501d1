"""The shape of the house (issue 24, "Grading you can read"): no import circle anywhere in
ctxlab, and grading's engine never imports a lab.

The imports are read from the source (every ``import``, at module level, inside functions
and under ``TYPE_CHECKING`` alike), so a circle that only shows at type-checking time or in
a rarely taken branch is still a circle. ``from package import name`` is an edge to the
submodule ``package.name`` when there is one, else to the package.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import ctxlab

pytestmark = pytest.mark.packaging

PACKAGE = Path(ctxlab.__file__).resolve().parent
GRADING = "ctxlab.lab.grading"
LAB_FILE = re.compile(rf"{re.escape(GRADING)}\.lab11_\d")


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> Iterator[str]:
    """The ctxlab modules that ``name`` imports, as written in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*parent, *([base] if base else [])])
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
                for alias in node.names
            ]
        else:
            continue
        yield from (t for t in targets if t in MODULES and t != name)


GRAPH = {name: set(_imports(name, path)) for name, path in MODULES.items()}


def _cycle() -> list[str]:
    """One import circle, as the modules along it (empty when there is none)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(name: str) -> list[str]:
        state[name] = 1
        path.append(name)
        for target in sorted(GRAPH[name]):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (found := visit(target)):
                return found
        path.pop()
        state[name] = 2
        return []

    for name in sorted(GRAPH):
        if name not in state and (found := visit(name)):
            return found
    return []


def test_the_graph_is_read() -> None:
    """The reader sees the edges it must (else the tests below would pass on nothing)."""
    assert f"{GRADING}.engine" in GRAPH[f"{GRADING}.labs"]
    assert f"{GRADING}.declare" in GRAPH[f"{GRADING}.lab11_2"]
    assert f"{GRADING}.expect" in GRAPH[f"{GRADING}.lab11_5"]
    assert f"{GRADING}.report" in GRAPH[f"{GRADING}.sandbox"]  # a TYPE_CHECKING-free edge


def test_there_is_no_import_circle_in_ctxlab() -> None:
    assert _cycle() == []


def test_the_cycle_finder_finds_a_circle() -> None:
    GRAPH[f"{GRADING}.report"].add(f"{GRADING}.engine")
    try:
        found = _cycle()
    finally:
        GRAPH[f"{GRADING}.report"].discard(f"{GRADING}.engine")
    assert found[0] == found[-1] and f"{GRADING}.engine" in found


def test_only_the_labs_module_imports_a_lab() -> None:
    """A lab's file is imported by :mod:`ctxlab.lab.grading.labs` (by name, when the lab is
    asked for), nowhere else: what several labs check with is in a shared module."""
    importers = {
        name for name, targets in GRAPH.items() if any(LAB_FILE.fullmatch(t) for t in targets)
    }
    assert importers == set()
    loaders = {
        name
        for name, path in MODULES.items()
        if name.startswith(GRADING) and "import_module(" in path.read_text(encoding="utf-8")
    }
    assert loaders == {f"{GRADING}.labs", f"{GRADING}.perform"}  # perform: names it is given
    assert "lab11_" not in MODULES[f"{GRADING}.perform"].read_text(encoding="utf-8")


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _private_uses(name: str, path: Path) -> Iterator[str]:
    """Where ``name`` takes a private name of another ctxlab module: ``from ctxlab.x import
    _y``, or ``x._y`` on a name its imports bound to a ctxlab module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules: dict[str, str] = {}  # a local name -> the ctxlab module it is
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ctxlab"):
            for alias in node.names:
                whole = f"{node.module}.{alias.name}"
                if whole in MODULES:
                    modules[alias.asname or alias.name] = whole
                elif _private(alias.name):
                    yield f"line {node.lineno}: from {node.module} import {alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("ctxlab") and alias.asname:
                    modules[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and _private(node.attr)
            and isinstance(node.value, ast.Name)
            and modules.get(node.value.id, name) != name
        ):
            yield f"line {node.lineno}: {node.value.id}.{node.attr}"


_SOLVED = {"context", "entries", "interactions"}  # the modules whose solution a lab names


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_takes_a_private_name_of_another(module: str) -> None:
    uses = list(_private_uses(module, MODULES[module]))
    if LAB_FILE.fullmatch(module):
        # A lab's file names ctxlab's solution, private helpers included (the sandbox stubs
        # them, the report says when they ran): the one place a private name is taken.
        uses = [use for use in uses if use.split(": ")[1].split(".")[0] not in _SOLVED]
    assert uses == []


def test_the_private_name_finder_finds_them(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(
        "from ctxlab.store import _blank\nimport ctxlab.lab.grading.runner as r\nr._at\n",
        encoding="utf-8",
    )
    assert list(_private_uses("ctxlab.m", path)) == [
        "line 1: from ctxlab.store import _blank",
        "line 3: r._at",
    ]


_ENGINE_SIDE = (
    "engine",
    "declare",
    "calls",
    "runner",
    "inprocess",
    "perform",
    "report",
    "misconceptions",
    "sandbox",
    "child",
    "confine",
)


@pytest.mark.parametrize("module", _ENGINE_SIDE)
def test_the_engine_side_holds_no_lab_knowledge(module: str) -> None:
    """No string of the engine's code names a lab: what a lab needs said (its solution, its
    budget legend, its catalogue) is declared in the lab's file."""
    tree = ast.parse(MODULES[f"{GRADING}.{module}"].read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    named = [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and re.search(r"(?<![\d.])11\.[1-5](?![\d])|lab11_\d", node.value)
    ]
    assert named == []
