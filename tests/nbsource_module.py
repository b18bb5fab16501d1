"""The notebook-source tool (``notebooks/_build/nbsource.py``) and the other build tools of
``notebooks/_build`` as modules for the tests.

They are course tooling, not part of the ctxlab package, so the tests load them by path, once.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parent.parent


def load_build_module(name: str) -> ModuleType:
    """``notebooks/_build/<name>.py`` as the module ``name``, loaded once."""
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    path = REPO / "notebooks" / "_build" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def load_nbsource() -> ModuleType:
    return load_build_module("nbsource")
