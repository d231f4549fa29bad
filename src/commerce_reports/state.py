"""What the lake holds and how to reset part of it: `status` and `invalidate`."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from pathlib import Path
from typing import Any

import polars as pl

from .contract import Dataset
from .embedded import available_sites
from .errors import ValidationError
from .jobs import SyncOptions, data_dir_of
from .lake import Manifest, load_or_rebuild, writing_sites
from .lake import rebuild as rebuild_manifest
from .params import as_date
from .sites import SiteSelection, select_sites

__all__ = ["invalidate", "status"]


def status(
    *,
    sites: SiteSelection = None,
    data_dir: str | Path | None = None,
    rebuild: bool = False,
    options: SyncOptions = SyncOptions(),
) -> pl.DataFrame:
    """What the lake holds: per site and dataset, partitions, rows, days covered, how many unsettled.

    A missing or damaged manifest is rebuilt from the Parquet files on its own (with a warning);
    `rebuild=True` rebuilds every manifest first (a file that cannot be read is quarantined)."""
    folder = data_dir_of(data_dir)
    rows = []
    for site in select_sites(sites, lambda: available_sites(start=False)):
        if rebuild:
            with writing_sites(folder, [site]):
                manifest, _ = rebuild_manifest(folder, site, options.policy.is_settled)
        else:
            manifest, _ = load_or_rebuild(folder, site, options.policy.is_settled)
        for entry in manifest:
            key = entry.key
            rows.append(
                {
                    "site": site,
                    "dataset": key.dataset,
                    "first_day": key.start,
                    "last_day": key.end - timedelta(days=1),
                    "rows": entry.rows,
                    "settled": not entry.untyped
                    and (entry.settled or options.policy.is_settled(key, entry.fetched_at)),
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
    folder = data_dir_of(data_dir)
    forgotten = 0
    for site in select_sites(sites, lambda: available_sites(start=False)):
        keys = [
            e.key
            for e in Manifest.load(folder, site)
            if e.key.dataset in chosen and e.key.start <= last and e.key.end > first
        ]
        forgotten += Manifest.forget(folder, site, keys)
    return forgotten
