"""A pytest plugin for :func:`ctxlab.lab.testing.run_lab_tests`: a light Hypothesis profile.

The notebooks' last cell runs one lab's tests while a student (or nbval) waits. Property
tests there run 15 examples each instead of Hypothesis' default 100; ``make test`` still
runs the full profile. Loaded with ``-p ctxlab.lab.pytest_light``.
"""

from __future__ import annotations

import pytest

PROFILE = "ctxlab-notebook"


def pytest_configure(config: pytest.Config) -> None:
    try:
        from hypothesis import HealthCheck, settings
    except ImportError:  # pragma: no cover - hypothesis is part of the test extra
        return
    settings.register_profile(
        PROFILE,
        max_examples=15,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    settings.load_profile(PROFILE)
