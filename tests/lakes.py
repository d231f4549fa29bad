"""Lakes synced from the sandbox for the chart, notebook, export, database and Spark tests, built
once per test run and shared by every pytest-xdist worker (`shared`), as a notebook's `cr.sync`
would sync them: two sites, returns and adjustments, device and country slices.

The built lakes are also kept per process here, in a module imported under one name only: pytest
loads a conftest under a name of its own (`notebooks.conftest`), so a conftest that imports
another's fixtures gets fixtures, and caches, of its own.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from filelock import FileLock

from commerce_reports.api import SyncOptions, sync
from commerce_reports.contract import PART_FILE, PartitionKey, site_root
from commerce_reports.embedded import sandbox_sites
from commerce_reports.files import sha256_of
from commerce_reports.lake import Manifest
from commerce_reports.lake.store import WrittenPartition
from commerce_reports.sandbox import SandboxConfig, run_sandbox

DAYS = 30  # the notebooks' default `days`

_built: dict[str, Path] = {}


@contextmanager
def isolated(cache: Path) -> Iterator[None]:
    """No COMMERCE_REPORTS_* setting of the machine, and a private cache folder (pace state, the
    learned request costs): what the autouse fixture gives each test, for set-up that runs before it."""
    with pytest.MonkeyPatch.context() as env:
        for name in [n for n in os.environ if n.startswith("COMMERCE_REPORTS_")]:
            env.delenv(name)
        env.setenv("XDG_CACHE_HOME", str(cache))
        yield


def record_as_stored(data_dir: Path, site: str, key: PartitionKey, fetched_at: datetime) -> None:
    """Record the file a test wrote at `key` (as an older version of the toolkit wrote it) in the
    site's manifest, as the sync that stored it would have: its digest vouches for it."""
    path = site_root(data_dir, site) / key.relpath / PART_FILE
    stat = path.stat()
    rows = pq.read_metadata(path).num_rows
    stored = WrittenPartition(path, rows, sha256_of(path), 0, stat.st_size, stat.st_mtime_ns)
    Manifest.record(data_dir, site, key, stored, fetched_at, settled=False)


def _run_folder(factory: pytest.TempPathFactory) -> Path:
    """The temporary folder of this test run: a worker's own lies one level below it."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def shared(name: str, factory: pytest.TempPathFactory, build: Callable[[Path], object]) -> Path:
    """The folder `name` of this test run, filled by `build` (in an `isolated` environment) the
    first time any worker asks for it; a worker asking meanwhile waits for it, then every worker
    reads the same files. Tests that change a shared lake work on a copy."""
    if name not in _built:
        run = _run_folder(factory)
        folder, done = run / name, run / f"{name}.done"
        with FileLock(run / f"{name}.lock"):
            if not done.exists():
                shutil.rmtree(folder, ignore_errors=True)  # what a failed build left
                folder.mkdir()
                with isolated(run / f"{name}.cache"):
                    build(folder)
                done.touch()
        _built[name] = folder
    return _built[name]


def sandbox_lake(
    data_dir: Path,
    *,
    now: datetime,
    days: int,
    countries: tuple[str, ...] = ("US", "GB"),
    dialect: str = "contract",
    first_day: date | None = None,
) -> Path:
    """Sync `days` days up to `now` of the sandbox's two sites into `data_dir`, as a notebook's
    `cr.sync` would, from a sandbox whose clock stops at `now`, speaking `dialect` (both dialects
    serve the same world) and holding data from `first_day` (default: 30 days before the first
    day synced)."""
    first = now.date() - timedelta(days=days - 1)
    config = SandboxConfig(
        now=now,
        first_day=first_day or first - timedelta(days=30),
        pace=0.0,
        transactions_per_day=30,
        dialect=dialect,
    )
    with run_sandbox(config) as running:
        options = SyncOptions(now=lambda: running.sandbox.now, pace=0, progress=False, say=lambda _: None)
        result = sync(
            first, sites=sandbox_sites(running), data_dir=data_dir, countries=list(countries), options=options
        )
        assert not result.failed
    return data_dir


def synced_at(factory: pytest.TempPathFactory) -> datetime:
    """The moment every notebook lake of this test run is synced at: the first one's, a moment ago."""
    folder = shared(
        "notebook-lakes-now", factory, lambda f: (f / "now").write_text(datetime.now(UTC).isoformat())
    )
    return datetime.fromisoformat((folder / "now").read_text())


def notebook_lake(dialect: str, factory: pytest.TempPathFactory) -> Path:
    """The lake a notebook finds current (its own sync fetches nothing) in `dialect`, synced the
    first time it is asked for. The lakes of both dialects stop their sandbox's clock at the same
    moment, so they hold the same world: the same numbers."""
    return shared(
        f"notebook-lake-{dialect}",
        factory,
        lambda folder: sandbox_lake(folder, now=synced_at(factory), days=DAYS, dialect=dialect),
    )


ALERTS_NOW = datetime(2026, 11, 24, 12, tzinfo=UTC)
ALERTS_DAYS = 180
INCIDENT_FROM = date(2026, 11, 17)  # the last 7 complete days of the alerts lake
INCIDENT = f"site=alpha,network=Northwind Affiliates,from={INCIDENT_FROM},epc=-50%"


def alerts_lake(factory: pytest.TempPathFactory) -> Path:
    """180 days of the two demo sites as a daily sync keeps them for alerts: the ledger and the
    networks report per day (the unfiltered slice: clicks per site and network), from a sandbox
    frozen at `ALERTS_NOW` whose world has one incident staged over its last 7 complete days
    (alpha's Northwind Affiliates pays half per order: EPC -50%). The days before it are the
    ordinary world's, draw for draw; so is every day of beta."""
    from commerce_reports.sandbox import Incident

    def build(folder: Path) -> None:
        first = ALERTS_NOW.date() - timedelta(days=ALERTS_DAYS - 1)
        config = SandboxConfig(
            now=ALERTS_NOW,
            first_day=first - timedelta(days=30),
            pace=0.0,
            transactions_per_day=200,
            incidents=(Incident.parse(INCIDENT),),
        )
        with run_sandbox(config) as running:
            options = SyncOptions(now=lambda: running.sandbox.now, pace=0, progress=False, say=lambda _: None)
            result = sync(
                first,
                sites=sandbox_sites(running),
                data_dir=folder,
                networks=["all"],
                merchandise=[],
                grain="day",
                options=options,
            )
            assert not result.failed

    return shared("alerts-lake", factory, build)
