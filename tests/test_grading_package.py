"""The layout of :mod:`ctxlab.lab.grading`: one module per lab, loaded when that lab is checked.

``import ctxlab.lab`` loads no grading code; checking one lab loads that lab's checks (and
those of the earlier lab it builds on), not the others. Every behaviour is the function of
that name in its lab's module.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ctxlab.lab.grading import LABS, behaviour_keys

pytestmark = pytest.mark.teaching

GRADING = "ctxlab.lab.grading"


def _loaded_after(code: str) -> set[str]:
    probe = (
        f"{code}\nimport sys\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('ctxlab.lab.grading'))))"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    return set(run.stdout.split())


def test_import_ctxlab_lab_loads_no_grading_code() -> None:
    assert _loaded_after("import ctxlab.lab") == set()


def test_import_grading_loads_no_lab_file() -> None:
    """The package's names come from the engine and :mod:`.labs`; a lab's file loads when
    its lab is asked for (``parse_compaction_entry`` too: it is Lab 11.1's reference)."""
    loaded = _loaded_after("import ctxlab.lab.grading")
    assert f"{GRADING}.labs" in loaded and not {m for m in loaded if ".lab11_" in m}
    loaded = _loaded_after(
        "from ctxlab.lab.grading import parse_compaction_entry\n"
        "assert parse_compaction_entry.__module__ == 'ctxlab.lab.grading.lab11_1'"
    )
    assert {m for m in loaded if ".lab11_" in m} == {f"{GRADING}.lab11_1"}


def test_checking_a_lab_loads_only_the_labs_it_needs() -> None:
    loaded = _loaded_after(
        "from ctxlab.lab import check_implementation\n"
        "from ctxlab.lab.grading import reference_functions\n"
        "assert check_implementation('11.2', **reference_functions('11.2')).passed"
    )
    assert "ctxlab.lab.grading.lab11_2" in loaded
    assert not {"ctxlab.lab.grading.lab11_3", "ctxlab.lab.grading.lab11_5"} & loaded
    loaded = _loaded_after("from ctxlab.lab.grading import behaviour_keys\nbehaviour_keys('11.5')")
    assert "ctxlab.lab.grading.lab11_5" in loaded
    # what Lab 11.5 shares with Lab 11.3 is in a shared module: no other lab loads
    assert not {"ctxlab.lab.grading.lab11_3", "ctxlab.lab.grading.lab11_4"} & loaded


@pytest.mark.parametrize("lab", LABS)
def test_each_behaviour_is_the_check_function_of_that_name(lab: str) -> None:
    module = importlib.import_module(f"ctxlab.lab.grading.lab{lab.replace('.', '_')}")
    assert module.LAB.lab == lab
    for key in behaviour_keys(lab):
        check = getattr(module, key)
        assert callable(check) and check.__module__ == module.__name__, key


def test_the_package_map_names_every_module() -> None:
    """The map in the package's docstring names each of its modules (issue 35, item 5)."""
    import ctxlab.lab.grading as grading

    folder = Path(grading.__file__).parent
    modules = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    doc = grading.__doc__ or ""
    named = set(re.findall(r":mod:`\.(\w+)`", doc))
    if ":mod:`.lab11_1` ... ``lab11_5``" in doc:
        named |= {f"lab11_{n}" for n in range(1, 6)}
    assert modules - named == set()
    assert named - modules == set()  # and nothing that is not there
