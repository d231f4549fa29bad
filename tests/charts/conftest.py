"""Lakes for the chart and dashboard tests, built once per test run (see `tests.lakes.shared`): a
small sandbox lake (two sites, 30 days, device and country slices) and a synthetic one with
thousands of links; and one read-only connection to the small lake per worker."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from commerce_reports.db import connect
from tests.lakes import sandbox_lake, shared

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
START = NOW.date() - timedelta(days=29)
END = NOW.date()
MAKE_LAKE = Path(__file__).parents[2] / "bench" / "make_lake.py"


@pytest.fixture(scope="session")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared("charts-lake", tmp_path_factory, lambda folder: sandbox_lake(folder, now=NOW, days=30))


@pytest.fixture(scope="session")
def _lake_connection(lake: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    with connect(lake) as connection:
        yield connection


@pytest.fixture
def con(_lake_connection: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """The charts and the dashboard only read: a cursor of one connection opened per worker
    (opening one installs every view, a good part of a second each time), with its views and
    limits, closed after the test so no result it left unread reaches the next."""
    with _lake_connection.cursor() as cursor:
        yield cursor


@pytest.fixture(scope="session")
def many_links_lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """bench/make_lake.py at a small size: 60,000 transactions over 20 days, 3,000 links."""
    spec = importlib.util.spec_from_file_location("make_lake", MAKE_LAKE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return shared("many-links-lake", tmp_path_factory, lambda folder: module.make_lake(folder, 60_000, 20))


BENCH_FIRST_DAY = date(2025, 1, 1)
