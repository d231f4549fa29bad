"""A lake synced up to today from a sandbox on the real clock, like the embedded sandbox a notebook's
kernel starts, so the notebooks' own sync finds nothing to fetch."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.charts.conftest import sandbox_lake

DAYS = 30  # the notebooks' default `days`


@pytest.fixture(scope="session")
def notebook_lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sandbox_lake(tmp_path_factory.mktemp("notebook-lake"), now=None, days=DAYS)
