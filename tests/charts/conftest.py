"""Lakes for the chart and dashboard tests, built once per session: a small sandbox lake (two sites,
30 days, device and country slices) and a synthetic one with thousands of links."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from commerce_reports.db import connect
from tests.lakes import sandbox_lake

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
START = NOW.date() - timedelta(days=29)
END = NOW.date()
MAKE_LAKE = Path(__file__).parents[2] / "bench" / "make_lake.py"


@pytest.fixture(scope="session")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sandbox_lake(tmp_path_factory.mktemp("charts-lake"), now=NOW, days=30)


@pytest.fixture
def con(lake: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    connection = connect(lake)
    yield connection
    connection.close()


@pytest.fixture(scope="session")
def many_links_lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """bench/make_lake.py at a small size: 60,000 transactions over 20 days, 3,000 links."""
    spec = importlib.util.spec_from_file_location("make_lake", MAKE_LAKE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    data_dir = tmp_path_factory.mktemp("many-links")
    module.make_lake(data_dir, 60_000, 20)
    return data_dir


BENCH_FIRST_DAY = date(2025, 1, 1)
