"""A lake synced from the sandbox, built once per test run (see `tests.lakes.shared`): every
updateDate day of two sites and month slices of both aggregates (`all`, each deviceType, two
countries); and the same lake with its rollups built and published, as a sync leaves it."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from commerce_reports.client import ReportsClient
from commerce_reports.contract import PartitionKey
from commerce_reports.db import connect, rebuild_rollups
from commerce_reports.lake.manifest import store_partition
from commerce_reports.params import Filters
from commerce_reports.sandbox import SandboxConfig, run_sandbox
from commerce_reports.sandbox.reports import ReportsSandbox
from tests.lakes import shared

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
FIRST_DAY = date(2026, 1, 1)
MONTHS = (date(2026, 1, 1), date(2026, 2, 1), date(2026, 3, 1))
SITES = {"alpha": "sandbox-alpha-key", "beta": "sandbox-beta-key"}
SLICES = (
    Filters(),
    *(Filters(device_type=code) for code in ("DSK", "MBL", "TBL", "UKN")),
    Filters(country="US"),
    Filters(country="GB"),
)


@dataclass(frozen=True)
class SyncedLake:
    data_dir: Path
    sandbox: ReportsSandbox  # for ground truth only: the world it served, no server

    def copy(self, target: Path) -> Path:
        """A private copy of the lake, and of its rollups and published views when they are built
        (for tests that change files)."""
        for part in ("lake", "rollups", "views"):
            if (self.data_dir / part).exists():
                shutil.copytree(self.data_dir / part, target / part)
        return target


def sync_site(client: ReportsClient, data_dir: Path, site: str, days: list[date]) -> None:
    """What a sync stores: every updateDate day, then the month slices of both aggregates."""
    for day in days:
        table = client.transactions(update_date=day)
        store_partition(data_dir, site, PartitionKey.transactions(day), table, NOW)
    for month in MONTHS:
        for filters in SLICES:
            for dataset in ("networks", "merchandise"):
                key = PartitionKey.aggregate(dataset, month, filters, "month")
                fetch = client.networks if dataset == "networks" else client.merchandise
                store_partition(data_dir, site, key, fetch(month, key.end, filters), NOW)


CONFIG = SandboxConfig(now=NOW, first_day=FIRST_DAY, pace=0.0, transactions_per_day=25)


def _sync_both_sites(data_dir: Path) -> None:
    days = [FIRST_DAY + timedelta(days=n) for n in range((NOW.date() - FIRST_DAY).days + 1)]
    with run_sandbox(CONFIG) as running:
        for site, key in SITES.items():
            with ReportsClient(key, running.base_url, pace=0, pace_dir=data_dir / "pace") as client:
                sync_site(client, data_dir, site, days)


@pytest.fixture(scope="session")
def synced(tmp_path_factory: pytest.TempPathFactory) -> SyncedLake:
    """The lake, and a sandbox of the same configuration: the same world, so the same ground truth."""
    return SyncedLake(shared("db-synced-lake", tmp_path_factory, _sync_both_sites), ReportsSandbox(CONFIG))


@pytest.fixture(scope="session")
def rolled(synced: SyncedLake, tmp_path_factory: pytest.TempPathFactory) -> SyncedLake:
    """The synced lake with its rollups built whole (in one statement each) and published, for
    tests that need them as a sync leaves them, not the build itself: a copy costs a fraction of a
    build (2.8 CPU s)."""

    def build(folder: Path) -> None:
        rebuild_rollups(synced.copy(folder))

    return SyncedLake(shared("db-rolled-lake", tmp_path_factory, build), synced.sandbox)


@pytest.fixture(scope="session")
def _synced_connection(synced: SyncedLake) -> Iterator[duckdb.DuckDBPyConnection]:
    with connect(synced.data_dir) as con:
        yield con


@pytest.fixture
def synced_con(_synced_connection: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to the synced lake for a test that only reads it: a cursor of one connection
    opened per worker (opening one installs every view over a few hundred files, about a second),
    with its views and limits, closed after the test so no result it left unread reaches the next."""
    with _synced_connection.cursor() as cursor:
        yield cursor
