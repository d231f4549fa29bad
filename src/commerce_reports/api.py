"""The flat functions most users call: sync the lake, load reports from it, see and reset its state.

    import commerce_reports as cr
    cr.sync(start=date(2026, 9, 1))                 # the ledger and aggregate slices, paced
    df = cr.load_transactions("2026-11-01", "2026-11-20", by="commissionDate")
    nets = cr.load_networks("2026-09-01", "2026-11-20", slices=[{"device_type": "MBL"}])
    with cr.open_client() as client:                     # one raw request: one typed Arrow table
        table = client.transactions(update_date="2026-11-20")

This is an entry point: with no key configured, it is here that the built-in sandbox is chosen.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .client import ReportsClient
from .embedded import available_sites
from .jobs import SliceSpec, SyncOptions, data_dir_of, fetch_keys, ledger, plan_sync
from .loaders import load_merchandise, load_networks, load_transactions
from .params import Grain
from .sites import SiteSelection, select_sites
from .state import invalidate, status
from .syncing import SyncResult

__all__ = [
    "SyncOptions",
    "invalidate",
    "load_merchandise",
    "load_networks",
    "load_transactions",
    "open_client",
    "plan_sync",
    "status",
    "sync",
]


def open_client(site: str | None = None, **options: Any) -> ReportsClient:
    """A `ReportsClient` for one configured site (default: the first), or for the built-in
    sandbox when no key is configured. `options` go to `ReportsClient` (pace, clock, timeout...)."""
    profiles = select_sites(site, available_sites) if site is not None else available_sites()
    profile = next(iter(profiles.values()))
    options.setdefault("pace", profile.pace)
    if options["pace"] is None:
        del options["pace"]
    return ReportsClient(
        profile.secret_key, profile.base_url, dialect=profile.dialect, limits=profile.limits, **options
    )


def sync(
    start: Any = None,
    end: Any = None,
    *,
    sites: SiteSelection = None,
    networks: Iterable[SliceSpec] | None = None,
    merchandise: Iterable[SliceSpec] | None = None,
    countries: Iterable[str] = (),
    grain: Grain = "month",
    data_dir: str | Path | None = None,
    refresh: bool = False,
    options: SyncOptions = SyncOptions(),
) -> SyncResult:
    """Bring the lake up to date: each site's `updateDate` days from `start` (default: 90 days ago)
    to today, plus the aggregate slices (unfiltered and per device by default; `countries` adds a
    networks slice per country). Nothing stored and settled is requested again."""
    folder = data_dir_of(data_dir)
    profiles, keys = ledger(start, end, sites, networks, merchandise, countries, grain, options)
    return fetch_keys(folder, profiles, keys, options, refresh, finish=True)
