"""The notebook-source tool (``notebooks/_build/nbsource.py``) as a module for the tests.

It is course tooling, not part of the ctxlab package, so the tests load it by path, once.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parent.parent


def load_nbsource() -> ModuleType:
    loaded = sys.modules.get("nbsource")
    if loaded is not None:
        return loaded
    path = REPO / "notebooks" / "_build" / "nbsource.py"
    spec = importlib.util.spec_from_file_location("nbsource", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["nbsource"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module
