"""The lake the served dashboard's tests read: the charts' sandbox lake (two sites, 30 days, device
and country slices), built once per test run and shared with the chart tests (`tests.lakes.shared`)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.lakes import sandbox_lake, shared

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)  # the charts lake's moment (tests/charts/conftest.py)


@pytest.fixture(scope="session")
def served_lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared("charts-lake", tmp_path_factory, lambda folder: sandbox_lake(folder, now=NOW, days=30))
