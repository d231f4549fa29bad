"""The flat functions most users call: sync the lake, load reports from it, see and reset its state.

    import commerce_reports as cr
    cr.sync(start=date(2026, 9, 1))                 # the ledger and aggregate slices, paced
    df = cr.load_transactions("2026-11-01", "2026-11-20", by="commissionDate")
    nets = cr.load_networks("2026-09-01", "2026-11-20", slices=[{"device_type": "MBL"}])

Loaders fetch only the partitions the lake lacks or that have not settled, then read from disk;
filters that can be applied locally are, so one stored day serves every filter.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl

from .client import ReportsClient
from .config import Settings, parse_pace
from .contract import PART_FILE, Dataset, PartitionKey, site_root
from .db import refresh_rollups, write_catalog
from .errors import ValidationError
from .lake.manifest import Manifest
from .lake.plan import (
    DEFAULT_MERCHANDISE_SLICES,
    DEFAULT_NETWORK_SLICES,
    SettlePolicy,
    SyncPlan,
    aggregate_keys,
    plan_partitions,
    transaction_keys,
)
from .lake.sync import StoppableClock, SyncResult, run_plan, writing_sites
from .pace import Clock, SystemClock
from .params import DATE_FIELDS, DateField, Filters, Grain, as_date
from .sites import SiteProfile, SiteSelection, configured_sites, select_sites

__all__ = [
    "SyncOptions",
    "invalidate",
    "load_merchandise",
    "load_networks",
    "load_transactions",
    "plan_sync",
    "status",
    "sync",
]

log = logging.getLogger(__name__)
SliceSpec = Filters | Mapping[str, Any] | str


@dataclass(frozen=True)
class SyncOptions:
    """The knobs of a sync that tests and schedulers set; defaults suit people."""

    policy: SettlePolicy = field(default_factory=SettlePolicy)
    now: Callable[[], datetime] | None = None  # the lake's clock (tests tie it to a sandbox's)
    clock: Clock | None = None  # the client's pace clock
    pace: float | str | Mapping[str, float] | None = None
    progress: bool | None = None  # None: bars in terminals and notebooks, log lines otherwise
    say: Callable[[str], None] | None = None  # where the plan is printed (None: the log)


def _slices(specs: Iterable[SliceSpec] | None, default: Sequence[Filters]) -> list[Filters]:
    if specs is None:
        return list(default)
    slices: list[Filters] = []
    for spec in specs:
        if isinstance(spec, Filters):
            slices.append(spec)
        elif isinstance(spec, str):
            slices.append(Filters.from_canonical(spec))
        elif isinstance(spec, Mapping):
            slices.append(Filters.of(**spec))
        else:
            raise ValidationError(
                "slices", f"{spec!r} is not a slice", "give Filters, a dict of filters or 'all'"
            )
    return list(dict.fromkeys(slices))


def _data_dir(data_dir: str | Path | None) -> Path:
    return Path(data_dir) if data_dir is not None else Settings.from_env().data_dir


def _now(options: SyncOptions) -> datetime:
    moment = options.now() if options.now else datetime.now(UTC)
    if moment.tzinfo is None:
        raise ValidationError("now", "must be timezone-aware", "return datetime.now(UTC) or similar")
    return moment


def _range(start: Any, end: Any, today: date, default_days: int = 90) -> tuple[date, date]:
    last = as_date(end, "end") if end is not None else today
    first = as_date(start, "start") if start is not None else last - timedelta(days=default_days - 1)
    if last > today:
        raise ValidationError("end", f"{last} is after today ({today})", "reports exist up to today")
    if first > last:
        raise ValidationError("start", f"{first} is after end {last}", "give start <= end (both included)")
    return first, last


def _ledger(
    start: Any,
    end: Any,
    sites: SiteSelection,
    networks: Iterable[SliceSpec] | None,
    merchandise: Iterable[SliceSpec] | None,
    countries: Iterable[str],
    grain: Grain,
    options: SyncOptions,
) -> tuple[dict[str, SiteProfile], dict[str, list[PartitionKey]]]:
    """The sites and, per site, every partition of its ledger: updateDate days and aggregate slices."""
    profiles = select_sites(sites, configured_sites)
    first, last = _range(start, end, _now(options).date())
    nets = _slices(networks, DEFAULT_NETWORK_SLICES) + [Filters(country=c) for c in countries]
    merch = _slices(merchandise, DEFAULT_MERCHANDISE_SLICES)
    keys = [
        *transaction_keys(first, last, "updateDate"),
        *aggregate_keys("networks", first, last, nets, grain),
        *aggregate_keys("merchandise", first, last, merch, grain),
    ]
    return profiles, {site: keys for site in profiles}


def _pace(profiles: Mapping[str, SiteProfile], options: SyncOptions) -> dict[str, float]:
    if options.pace is not None:
        return parse_pace(options.pace)
    own = {p.pace for p in profiles.values() if p.pace is not None}
    return parse_pace(max(own)) if own else dict(Settings.from_env().pace)


def _fetch_keys(
    data_dir: Path,
    profiles: Mapping[str, SiteProfile],
    keys: Mapping[str, Sequence[PartitionKey]],
    options: SyncOptions,
    refresh: bool = False,
) -> SyncResult:
    """Plan under the sites' writer lock, then run the plan. The core of `sync` and the loaders."""
    pace = _pace(profiles, options)
    stop = threading.Event()
    clock = StoppableClock(options.clock or SystemClock(), stop)
    with writing_sites(data_dir, list(profiles)):
        now = _now(options)
        manifests = {site: Manifest.load(data_dir, site) for site in profiles}
        plan = plan_partitions(manifests, keys, now=now, pace=pace, policy=options.policy, refresh=refresh)
        (options.say or log.info)(plan.describe())
        if not plan.requests:
            return SyncResult(plan)
        explicit = options.pace
        clients = {
            name: ReportsClient(
                profile.secret_key,
                profile.base_url,
                clock=clock,
                pace=explicit if explicit is not None else profile.pace,
            )
            for name, profile in profiles.items()
            if any(r.site == name for r in plan.requests)
        }
        try:
            return run_plan(
                data_dir,
                plan,
                clients,
                now=lambda: _now(options),
                policy=options.policy,
                stop=stop,
                progress=options.progress,
            )
        finally:
            for client in clients.values():
                client.close()


def plan_sync(
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
) -> SyncPlan:
    """The exact requests `sync` would make, per site and endpoint, with an ETA; fetches nothing."""
    folder = _data_dir(data_dir)
    profiles, keys = _ledger(start, end, sites, networks, merchandise, countries, grain, options)
    manifests = {site: Manifest.load(folder, site) for site in profiles}
    return plan_partitions(
        manifests,
        keys,
        now=_now(options),
        pace=_pace(profiles, options),
        policy=options.policy,
        refresh=refresh,
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
    folder = _data_dir(data_dir)
    profiles, keys = _ledger(start, end, sites, networks, merchandise, countries, grain, options)
    result = _fetch_keys(folder, profiles, keys, options, refresh)
    _after_sync(folder)
    return result


def _after_sync(data_dir: Path) -> None:
    """Keep the DuckDB side current: rollups of what changed, then the catalog file."""
    refresh_rollups(data_dir)
    write_catalog(data_dir)


# ---------------------------------------------------------------------------- loaders


def _read(
    files: list[tuple[str, PartitionKey, Path]], extra: Callable[[PartitionKey], dict[str, Any]]
) -> pl.LazyFrame:
    frames = [
        pl.scan_parquet(path).with_columns(
            pl.lit(site).alias("site"), *(pl.lit(v).alias(k) for k, v in extra(key).items())
        )
        for site, key, path in files
        if path.exists()
    ]
    if not frames:
        raise ValidationError("range", "no stored partitions in that range", "sync first, or widen the range")
    return pl.concat(frames, how="diagonal_relaxed")


def _load(
    dataset: Dataset,
    keys: list[PartitionKey],
    site: SiteSelection,
    data_dir: str | Path | None,
    refresh: bool,
    options: SyncOptions,
) -> list[tuple[str, PartitionKey, Path]]:
    """Fetch what `keys` lack for each site, then name the partition files to read."""
    folder = _data_dir(data_dir)
    profiles = select_sites(site, configured_sites)
    result = _fetch_keys(folder, profiles, {s: keys for s in profiles}, options, refresh)
    if result.failed:
        raise result.failed[0][1]
    return [(s, k, site_root(folder, s) / k.relpath / PART_FILE) for s in profiles for k in keys]


def load_transactions(
    start: Any,
    end: Any,
    by: DateField = "updateDate",
    site: SiteSelection = None,
    *,
    campaign_ids: Any = None,
    merchant_group_ids: Any = None,
    program_type: Any = None,
    lazy: bool = False,
    refresh: bool = False,
    data_dir: str | Path | None = None,
    options: SyncOptions = SyncOptions(),
) -> pl.DataFrame | pl.LazyFrame:
    """Transactions of the days `start`..`end` (both included) by one date field, from the lake.

    Missing or unsettled days are fetched first; the filters are applied locally.
    `by="updateDate"` gives every version on the day it changed; the other fields give each
    transaction's state when its day was fetched.
    """
    if by not in DATE_FIELDS:
        raise ValidationError("by", f"{by!r} is not a date field", f"use one of {', '.join(DATE_FIELDS)}")
    local = Filters.of(
        campaign_ids=campaign_ids, merchant_group_ids=merchant_group_ids, program_type=program_type
    )
    first, last = _range(start, end, _now(options).date())
    keys = transaction_keys(first, last, by)
    files = _load("transactions", keys, site, data_dir, refresh, options)
    frame = _read(files, lambda key: {"day": key.start})
    if local.campaign_ids:
        frame = frame.filter(pl.col("campaign_id").is_in(list(local.campaign_ids)))
    if local.merchant_group_ids:
        frame = frame.filter(pl.col("merchant_group_id").is_in(list(local.merchant_group_ids)))
    if local.program_type is not None:
        frame = frame.filter(pl.col("program_type").str.to_uppercase() == local.program_type.value)
    return frame if lazy else frame.collect()


def _load_aggregate(
    dataset: Dataset,
    start: Any,
    end: Any,
    slices: Iterable[SliceSpec] | None,
    grain: Grain,
    site: SiteSelection,
    lazy: bool,
    refresh: bool,
    data_dir: str | Path | None,
    options: SyncOptions,
) -> pl.DataFrame | pl.LazyFrame:
    if grain not in ("day", "month"):
        raise ValidationError("grain", f"{grain!r} is not a grain", "use 'day' or 'month'")
    first, last = _range(start, end, _now(options).date())
    chosen = _slices(slices, (Filters(),))
    keys = aggregate_keys(dataset, first, last, chosen, grain)  # _range ends them at today
    files = _load(dataset, keys, site, data_dir, refresh, options)
    frame = _read(files, lambda key: {"slice": key.slice, "grain": key.grain})
    return frame if lazy else frame.collect()


def load_networks(
    start: Any,
    end: Any,
    slices: Iterable[SliceSpec] | None = None,
    grain: Grain = "month",
    site: SiteSelection = None,
    *,
    lazy: bool = False,
    refresh: bool = False,
    data_dir: str | Path | None = None,
    options: SyncOptions = SyncOptions(),
) -> pl.DataFrame | pl.LazyFrame:
    """Per-network aggregates of each slice (default: unfiltered) for the windows covering the range.

    `grain="month"` stores whole calendar months (the current one is partial and refreshed);
    `grain="day"` makes one request per day. Each row carries its window and filters.
    """
    return _load_aggregate("networks", start, end, slices, grain, site, lazy, refresh, data_dir, options)


def load_merchandise(
    start: Any,
    end: Any,
    slices: Iterable[SliceSpec] | None = None,
    grain: Grain = "month",
    site: SiteSelection = None,
    *,
    lazy: bool = False,
    refresh: bool = False,
    data_dir: str | Path | None = None,
    options: SyncOptions = SyncOptions(),
) -> pl.DataFrame | pl.LazyFrame:
    """Per-product aggregates of each slice for the windows covering the range (see load_networks)."""
    return _load_aggregate("merchandise", start, end, slices, grain, site, lazy, refresh, data_dir, options)


# ---------------------------------------------------------------------------- state


def status(
    *,
    sites: SiteSelection = None,
    data_dir: str | Path | None = None,
    rebuild: bool = False,
    options: SyncOptions = SyncOptions(),
) -> pl.DataFrame:
    """What the lake holds: per site and dataset, partitions, rows, days covered, how many unsettled.

    `rebuild=True` first recreates each site's manifest from its Parquet files (after a manifest
    was lost or damaged)."""
    folder = _data_dir(data_dir)
    rows = []
    for site in select_sites(sites, configured_sites):
        if rebuild:
            with writing_sites(folder, [site]):
                Manifest.rebuild(folder, site, options.policy.is_settled)
        for entry in Manifest.load(folder, site):
            key = entry.key
            rows.append(
                {
                    "site": site,
                    "dataset": key.dataset,
                    "first_day": key.start,
                    "last_day": key.end - timedelta(days=1),
                    "rows": entry.rows,
                    "settled": entry.settled or options.policy.is_settled(key, entry.fetched_at),
                    "fetched_at": entry.fetched_at,
                }
            )
    schema: dict[str, Any] = {
        "site": pl.String,
        "dataset": pl.String,
        "first_day": pl.Date,
        "last_day": pl.Date,
        "rows": pl.Int64,
        "settled": pl.Boolean,
        "fetched_at": pl.Datetime("us", "UTC"),
    }
    frame = pl.DataFrame(rows, schema=schema)
    return (
        frame.group_by("site", "dataset")
        .agg(
            pl.len().alias("partitions"),
            pl.col("rows").sum(),
            pl.col("first_day").min(),
            pl.col("last_day").max(),
            (~pl.col("settled")).sum().alias("unsettled"),
            pl.col("fetched_at").max().alias("last_fetched_at"),
        )
        .sort("site", "dataset")
    )


def invalidate(
    start: Any,
    end: Any,
    *,
    sites: SiteSelection = None,
    datasets: Iterable[Dataset] = ("transactions", "networks", "merchandise"),
    data_dir: str | Path | None = None,
) -> int:
    """Forget the stored partitions that overlap `start`..`end`, so the next sync fetches them again.

    The files stay readable until they are replaced. Returns how many partitions were forgotten.
    """
    first, last = as_date(start, "start"), as_date(end, "end")
    if first > last:
        raise ValidationError("start", f"{first} is after end {last}", "give start <= end (both included)")
    chosen = set(datasets)
    folder = _data_dir(data_dir)
    forgotten = 0
    for site in select_sites(sites, configured_sites):
        keys = [
            e.key
            for e in Manifest.load(folder, site)
            if e.key.dataset in chosen and e.key.start <= last and e.key.end > first
        ]
        forgotten += Manifest.forget(folder, site, keys)
    return forgotten
