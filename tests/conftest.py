"""Shared pytest setup: Hypothesis profiles only.

Lab tests are tagged with the markers registered in pyproject.toml
(``@pytest.mark.lab11_1`` ... ``@pytest.mark.lab11_5``), so that one lab's
tests run with ``pytest -m lab11_3``. Fixtures live in the test modules or in
their own conftest files.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# Students' laptops and CI machines are slow or shared (CI has 2 cores): timing is not
# what these tests check, so there is no per-example deadline and no "input generation
# is slow" health check (it fired on a loaded machine). CI also prints the reproduction
# blob of any failing example so it can be replayed locally.
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", settings.get_profile("dev"), print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
