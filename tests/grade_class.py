"""A generated class for ``ctxlab grade``: student notebooks filled with right, wrong and hostile
code (used by ``tests/test_grade.py`` and by the class benchmark of ``make bench``).

A notebook is the lab's **student edition** as ``notebooks/_build/nbsource.py`` builds it
(either language), with its build-it cell's text replaced -- what a student's download from
JupyterLab or JupyterLite holds. A right answer is the instructor edition's solution; a
wrong one is that solution with one rule broken (the system message's cost forgotten, a
blank id accepted, ...).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

from nbsource_module import load_build_module

LABS: Final = ("11.1", "11.2", "11.3", "11.4", "11.5")

#: One broken rule per lab: (text of the instructor's solution, what replaces it).
MUTATIONS: Final[dict[str, tuple[str, str]]] = {
    "11.1": (
        "if not isinstance(entry_id, str) or not entry_id.strip():",
        "if not isinstance(entry_id, str):",
    ),
    "11.2": ('if role == "system":', 'if role == "no such role":'),
    "11.3": (
        "available = max(0, max_tokens - system_cost - reserved_output - safety_margin)",
        "available = max(0, max_tokens - reserved_output - safety_margin)",
    ),
    "11.4": ("if first_kept_entry_id not in group_heads:", "if False:"),
    "11.5": (
        "available = max(0, max_tokens - system_cost - reserved_output - safety_margin)",
        "available = max(0, max_tokens - reserved_output - safety_margin)",
    ),
}

#: Hostile code, each defining every lab's function name so that it gets to run.
HOSTILE: Final[dict[str, str]] = {
    # kills the process that grades it (its parent) as soon as it is imported
    "kills-parent": "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n",
    # never returns
    "spins": "",
    # ends its own process in the middle of a call
    "exits": "import os\n",
}
_FUNCTIONS: Final = (
    "parse_compaction_entry",
    "group_interactions",
    "build_context",
    "create_compaction_entry",
)


def _nbsource() -> Any:
    return load_build_module("nbsource")


def _source(lab: str) -> Any:
    return next(s for s in _nbsource().load_sources() if s.lab == lab)


def _build_it(lab: str) -> Any:
    nbsource = _nbsource()
    return next(c for c in _source(lab).cells if c.id == nbsource.build_it_cell_id(lab))


def solution(lab: str, language: str = "en") -> str:
    """The instructor edition's build-it code of ``lab``: a right answer."""
    return str(_build_it(lab).text_for(_nbsource().Edition(language, "instructor")))


def wrong(lab: str, language: str = "en") -> str:
    """A right answer with one of the lab's rules broken."""
    old, new = MUTATIONS[lab]
    code = solution(lab, language)
    assert old in code, f"the mutation of Lab {lab} no longer applies"
    return code.replace(old, new, 1)


def hostile(kind: str) -> str:
    """Code of one hostile kind, defining every lab's function."""
    body = {
        "kills-parent": "    return None\n",
        "spins": "    while True:\n        pass\n",
        "exits": "    os._exit(3)\n",
    }[kind]
    functions = "".join(f"\n\ndef {name}(*args, **kwargs):\n{body}" for name in _FUNCTIONS)
    return HOSTILE[kind] + functions


def notebook(lab: str, language: str, code: str | None) -> dict[str, Any]:
    """The student edition of ``lab`` in ``language``, its build-it cell holding ``code``
    (``None``: the stub as handed out), as the JSON a download holds."""
    nbsource = _nbsource()
    built = nbsource.build_notebook(_source(lab), nbsource.Edition(language, "student"))
    data: dict[str, Any] = json.loads(json.dumps(built))
    if code is not None:
        cell = next(c for c in data["cells"] if c["id"] == nbsource.build_it_cell_id(lab))
        cell["source"] = code
    return data


def write_notebook(path: Path, data: dict[str, Any], *, lines: bool = False) -> Path:
    """Save ``data`` at ``path``; ``lines``: each cell's source as a list of lines, as
    JupyterLab saves a notebook."""
    if lines:
        data = json.loads(json.dumps(data))
        for cell in data["cells"]:
            cell["source"] = str(cell["source"]).splitlines(keepends=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def notebook_name(lab: str) -> str:
    return f"{_source(lab).name}.ipynb"
