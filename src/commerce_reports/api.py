"""The flat functions most users call: sync the lake, load reports from it, see and reset its state.

    import commerce_reports as cr
    cr.sync(start=date(2026, 9, 1))                 # the ledger and aggregate slices, paced
    df = cr.load_transactions("2026-11-01", "2026-11-20", by="commissionDate")
    nets = cr.load_networks("2026-09-01", "2026-11-20", slices=[{"device_type": "MBL"}])
    with cr.open_client() as client:                     # one raw request: one typed Arrow table
        table = client.transactions(update_date="2026-11-20")

This is an entry point: each function resolves the settings (`config.current_settings()`, read once
per process) and hands them down, and with no key configured it is here that the built-in sandbox
is chosen.
It imports the data stack (polars, the HTTP client, DuckDB) only when a function needs it, so that
`commerce-reports status` and `sync --plan` start at once.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .config import Settings, current_settings
from .contract import DATASETS, Dataset
from .embedded import available_sites, chosen_sites, started
from .errors import ValidationError
from .lake import VerifyReport
from .loaders import load_merchandise, load_networks, load_transactions
from .locate import LakeLocation
from .params import Grain
from .sites import SiteProfile, SiteSelection, selection_of
from .syncing import SyncPlan, SyncResult, read_manifests
from .syncing.jobs import (
    SliceSpec,
    SyncOptions,
    fetch_keys,
    lake_errors,
    ledger,
    options_of,
    plan_keys,
    policies_of,
    with_stored_windows,
)
from .syncing.status import DatasetStatus, WindowStatus, forget, status_frame
from .syncing.status import status_rows as lake_status_rows
from .syncing.status import window_rows as lake_window_rows

if TYPE_CHECKING:
    import polars as pl

    from .client import ReportsClient
    from .deals import DealsClient

__all__ = [
    "SyncOptions",
    "invalidate",
    "lake_location",
    "load_merchandise",
    "load_networks",
    "load_transactions",
    "open_client",
    "open_deals_client",
    "plan_sync",
    "site_names",
    "status",
    "status_rows",
    "sync",
    "verify",
    "window_rows",
]


def _profiles(site: SiteSelection, sites: SiteSelection, settings: Settings) -> dict[str, SiteProfile]:
    """The sites chosen by `site=` or `sites=`, named without starting anything (the embedded
    sandbox's when no key is set), each at the configured pace unless it has its own."""
    return chosen_sites(selection_of(site, sites), settings)


def site_names() -> list[str]:
    """The names of the configured sites, in order (the embedded sandbox's, `alpha` and `beta`,
    when no key is configured): the first is every entry point's default site."""
    return list(available_sites(current_settings(), start=False))


def lake_location(data_dir: str | Path | None = None) -> LakeLocation:
    """Which lake the toolkit uses from here, and why (`str()` reads "<folder> (<reason>)"): the
    `data_dir` given, else `COMMERCE_REPORTS_DATA_DIR`, else the nearest `commerce-reports.toml`
    at or above the working folder, else the user data folder. A notebook prints it at its top."""
    return current_settings().location(data_dir)


def open_client(site: str | None = None, **options: Any) -> ReportsClient:
    """A `ReportsClient` for one configured site (default: the first), or for the built-in
    sandbox when no key is configured. `options` go to `ReportsClient` (pace, clock, timeout...)."""
    from .client import ReportsClient

    profile = next(iter(chosen_sites(site, current_settings(), start=True).values()))
    options.setdefault("pace", profile.pace)
    return ReportsClient(
        profile.secret_key, profile.base_url, dialect=profile.dialect, limits=profile.limits, **options
    )


def open_deals_client(**options: Any) -> DealsClient:
    """A `DealsClient` with the configured COMMERCE_REPORTS_DEALS_API_KEY and _BASE_URL and the
    request limits (`options` go to `DealsClient`: `base_url=` instead of the configured one,
    `transport`, `retry`...)."""
    from .deals.client import DealsClient
    from .deals.config import DealSettings

    return DealsClient(settings=DealSettings.of(current_settings().env), **options)


def sync(
    start: Any = None,
    end: Any = None,
    *,
    site: SiteSelection = None,
    sites: SiteSelection = None,
    networks: Iterable[SliceSpec] | None = None,
    merchandise: Iterable[SliceSpec] | None = None,
    countries: Iterable[str] = (),
    grain: Grain = "month",
    data_dir: str | Path | None = None,
    refresh: bool = False,
    allow_large: bool = False,
    options: SyncOptions = SyncOptions(),
) -> SyncResult:
    """Bring the lake up to date: each site's `updateDate` days from `start` (default: 90 days ago)
    to today, plus the aggregate slices (unfiltered and per device by default; `countries` adds a
    networks slice per country). Nothing stored and settled is requested again; an aggregate
    window is asked for again while the service may revise it (see `SettlePolicy`), and a stored
    window not final yet is asked for when due even outside `start`..`end`. `site=` chooses one
    site, `sites=` several (default: all). A range over 5 years needs `allow_large=True`. The
    result names the lake it synced (`result.lake`)."""
    from .db import after_sync

    options = options_of(options)
    settings = current_settings()
    lake = settings.location(data_dir)
    profiles = _profiles(site, sites, settings)
    keys = ledger(start, end, profiles, networks, merchandise, countries, grain, options, allow_large)
    launch = partial(started, settings=settings)
    with lake_errors(lake.path):
        result = fetch_keys(
            lake.path, profiles, keys, options, refresh, finish=after_sync, launch=launch, revisions=True
        )
    result.lake = lake
    return result


def plan_sync(
    start: Any = None,
    end: Any = None,
    *,
    site: SiteSelection = None,
    sites: SiteSelection = None,
    networks: Iterable[SliceSpec] | None = None,
    merchandise: Iterable[SliceSpec] | None = None,
    countries: Iterable[str] = (),
    grain: Grain = "month",
    data_dir: str | Path | None = None,
    refresh: bool = False,
    allow_large: bool = False,
    options: SyncOptions = SyncOptions(),
) -> SyncPlan:
    """The exact requests `sync` would make, per site and endpoint, with the ETA `sync` would
    print (the pace, and what requests and the end work cost on this machine); fetches nothing."""
    options = options_of(options)
    settings = current_settings()
    folder = settings.folder(data_dir)
    profiles = _profiles(site, sites, settings)
    policies = policies_of(profiles, options)
    keys = ledger(start, end, profiles, networks, merchandise, countries, grain, options, allow_large)
    with lake_errors(folder):
        manifests, _ = read_manifests(folder, policies)
    keys = with_stored_windows(keys, manifests, policies)
    return plan_keys(manifests, profiles, keys, options, refresh=refresh, finish=True)


def status_rows(
    *,
    site: SiteSelection = None,
    sites: SiteSelection = None,
    data_dir: str | Path | None = None,
    rebuild: bool = False,
    options: SyncOptions = SyncOptions(),
) -> list[DatasetStatus]:
    """The rows of `status` in plain Python (what `commerce-reports status` prints, without polars)."""
    options = options_of(options)
    settings = current_settings()
    policies = policies_of(_profiles(site, sites, settings), options)
    folder = settings.folder(data_dir)
    with lake_errors(folder):
        return lake_status_rows(folder, policies, rebuild=rebuild)


def window_rows(
    *,
    site: SiteSelection = None,
    sites: SiteSelection = None,
    data_dir: str | Path | None = None,
    rebuild: bool = False,
    options: SyncOptions = SyncOptions(),
) -> list[WindowStatus]:
    """Per stored aggregate window: when it was fetched, until when the service may still revise
    it, and whether it is final (what `commerce-reports status --windows` prints; plain Python)."""
    options = options_of(options)
    settings = current_settings()
    policies = policies_of(_profiles(site, sites, settings), options)
    folder = settings.folder(data_dir)
    with lake_errors(folder):
        return lake_window_rows(folder, policies, rebuild=rebuild)


def status(
    *,
    site: SiteSelection = None,
    sites: SiteSelection = None,
    data_dir: str | Path | None = None,
    rebuild: bool = False,
    options: SyncOptions = SyncOptions(),
) -> pl.DataFrame:
    """What the lake holds: per site and dataset, partitions, rows, days covered, how many unsettled
    (days not settled, windows not final), when last fetched, and the lake's folder (`lake`).
    `window_rows` says it per window.

    A missing or damaged manifest is rebuilt from the Parquet files on its own (with a warning);
    `rebuild=True` rebuilds every manifest first (a file that cannot be read is quarantined)."""
    import polars as pl

    rows = status_rows(site=site, sites=sites, data_dir=data_dir, rebuild=rebuild, options=options)
    folder = current_settings().folder(data_dir)
    return status_frame(rows).with_columns(pl.lit(str(folder)).alias("lake"))


def invalidate(
    start: Any,
    end: Any,
    *,
    site: SiteSelection = None,
    sites: SiteSelection = None,
    datasets: Dataset | Iterable[Dataset] = DATASETS,
    data_dir: str | Path | None = None,
) -> int:
    """Forget the stored partitions that overlap `start`..`end`, so the next sync fetches them again.

    The files stay readable until they are replaced. Returns how many partitions were forgotten.
    """
    chosen = (
        [datasets]
        if isinstance(datasets, str)
        else list(datasets)
        if isinstance(datasets, Iterable)
        else None
    )
    if chosen is None or not all(isinstance(d, str) for d in chosen):  # one dataset, or several
        raise ValidationError(
            "datasets", f"{datasets!r:.60} is not a list of datasets", f"give some of {', '.join(DATASETS)}"
        )
    settings = current_settings()
    folder = settings.folder(data_dir)
    profiles = _profiles(site, sites, settings)
    with lake_errors(folder):
        return forget(folder, profiles, start, end, chosen)


def verify(
    *,
    site: SiteSelection = None,
    sites: SiteSelection = None,
    data_dir: str | Path | None = None,
    fast: bool = False,
) -> VerifyReport:
    """Check every partition by content (its sha256 against the manifest's, and that it decodes)
    and every rollup file (that it holds what its last refresh wrote); quarantine what fails (the
    next sync fetches it again), rebuild forged rollups, and publish the lake for the views.
    `fast=True` trusts a file whose stamp (size, times, inode) is unchanged since it was last
    hashed, and reads only the others: a copied or restored lake is read in full either way."""
    from .db import refresh_rollups, verify_rollups
    from .lake import verify as verify_partitions

    settings = current_settings()
    folder = settings.folder(data_dir)
    chosen = selection_of(site, sites)
    names = list(_profiles(chosen, None, settings)) if chosen is not None else None
    with lake_errors(folder):
        report = verify_partitions(folder, names, fast=fast)
        report.rollups = verify_rollups(folder, names, fast=fast)
        # brings rollups up to date with what was quarantined, and publishes (the digests read too)
        refresh_rollups(folder, {name: [] for name in names} if names is not None else None)
    return report
