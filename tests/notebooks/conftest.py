"""A lake synced up to today from a sandbox on the real clock, like the embedded sandbox a notebook's
kernel starts, so the notebooks' own sync finds nothing to fetch; `in_the_lake` points every
process started by the test (kernels included) at it, through the environment only."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.charts.conftest import sandbox_lake

DAYS = 30  # the notebooks' default `days`


@pytest.fixture(scope="session")
def notebook_lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sandbox_lake(tmp_path_factory.mktemp("notebook-lake"), now=None, days=DAYS)


@pytest.fixture
def in_the_lake(notebook_lake: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COMMERCE_REPORTS_DATA_DIR", str(notebook_lake))
    return notebook_lake
