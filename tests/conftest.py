"""Shared pytest setup: Hypothesis profiles only.

Lab tests are tagged with the markers registered in pyproject.toml
(``@pytest.mark.lab11_1`` ... ``@pytest.mark.lab11_5``), so that one lab's
tests run with ``pytest -m lab11_3``. Fixtures live in the test modules or in
their own conftest files.
"""

from __future__ import annotations

import os

from hypothesis import settings

# CI machines are slow and shared: no per-example deadline, and print the
# reproduction blob of any failing example so it can be replayed locally.
settings.register_profile("ci", deadline=None, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")
