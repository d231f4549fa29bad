"""Lakes synced from the sandbox for the chart, notebook and export tests, as a notebook's `cr.sync`
would sync them: two sites, returns and adjustments, device and country slices.

The notebook lakes are kept per process here, in a module imported under one name only: pytest
loads a conftest under a name of its own (`notebooks.conftest`), so a conftest that imports
another's fixtures gets fixtures, and caches, of its own.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path

import pytest

from commerce_reports.api import SyncOptions, sync
from commerce_reports.embedded import sandbox_sites
from commerce_reports.sandbox import SandboxConfig, run_sandbox

DAYS = 30  # the notebooks' default `days`

_notebook_lakes: dict[str, Path] = {}


def sandbox_lake(
    data_dir: Path,
    *,
    now: datetime,
    days: int,
    countries: tuple[str, ...] = ("US", "GB"),
    dialect: str = "contract",
) -> Path:
    """Sync `days` days up to `now` of the sandbox's two sites into `data_dir`, as a notebook's
    `cr.sync` would, from a sandbox whose clock stops at `now`, speaking `dialect` (both dialects
    serve the same world)."""
    first = now.date() - timedelta(days=days - 1)
    config = SandboxConfig(
        now=now, first_day=first - timedelta(days=30), pace=0.0, transactions_per_day=30, dialect=dialect
    )
    with run_sandbox(config) as running:
        options = SyncOptions(now=lambda: running.sandbox.now, pace=0, progress=False, say=lambda _: None)
        result = sync(
            first, sites=sandbox_sites(running), data_dir=data_dir, countries=list(countries), options=options
        )
        assert not result.failed
    return data_dir


@cache
def synced_at() -> datetime:
    """The moment every notebook lake of this process is synced at: the first one's, a moment ago."""
    return datetime.now(UTC)


def notebook_lake(dialect: str, factory: pytest.TempPathFactory) -> Path:
    """The lake a notebook finds current (its own sync fetches nothing) in `dialect`, synced the
    first time it is asked for. The lakes of both dialects stop their sandbox's clock at the same
    moment, so they hold the same world: the same numbers."""
    if dialect not in _notebook_lakes:
        folder = factory.mktemp(f"notebook-lake-{dialect}")
        _notebook_lakes[dialect] = sandbox_lake(folder, now=synced_at(), days=DAYS, dialect=dialect)
    return _notebook_lakes[dialect]
