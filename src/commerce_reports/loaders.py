"""Loaders: report days and windows as polars frames, fetched first when the lake lacks them.

Only the partitions the lake lacks, or that have not settled, are fetched; then the frames are read
from the Parquet files. Filters that can be applied locally are, so one stored day serves every filter.
Money comes back as polars Decimal (18, 4), from files of every schema version (an older file's
binary floats are cast, as the DuckDB views cast them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._signatures import arguments_of, bound
from .config import current_settings
from .contract import FORMER_TYPES, PART_FILE, Dataset, PartitionKey, dataset_schema, site_root
from .embedded import chosen_sites, started
from .errors import ValidationError
from .params import DATE_FIELDS, DateField, Filters, Grain, as_bool
from .sites import SiteSelection, selection_of
from .syncing import aggregate_keys, transaction_keys
from .syncing.jobs import (
    SliceSpec,
    SyncOptions,
    day_span,
    fetch_keys,
    lake_errors,
    now_of,
    options_of,
    slices_of,
)

if TYPE_CHECKING:
    import polars as pl

__all__ = ["load_merchandise", "load_networks", "load_transactions"]


def _current(frame: pl.LazyFrame, dataset: str) -> pl.LazyFrame:
    """`frame` (one partition file) with the columns an older version typed otherwise cast to
    today's types (money as Decimal)."""
    import polars as pl

    today = pl.from_arrow(dataset_schema(dataset).empty_table()).schema  # type: ignore[union-attr]
    held = frame.collect_schema()
    return frame.with_columns(
        pl.col(name).cast(today[name]) for name in FORMER_TYPES if name in held and held[name] != today[name]
    )


def _read(
    files: list[tuple[str, PartitionKey, Path]], extra: Callable[[PartitionKey], dict[str, Any]]
) -> pl.LazyFrame:
    import polars as pl

    frames = [
        _current(pl.scan_parquet(path), key.dataset).with_columns(
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
    as_bool(refresh, "refresh")  # ("no" is true: every partition of the range fetched again)
    settings = current_settings()
    folder, profiles = settings.folder(data_dir), chosen_sites(site, settings)
    from .db import after_sync  # the views see what a loader stored, as after a sync

    keyed = {s: keys for s in profiles}
    launch = partial(started, settings=settings)
    with lake_errors(folder):
        result = fetch_keys(folder, profiles, keyed, options, refresh, finish=after_sync, launch=launch)
    if result.failed:
        raise result.failed[0][1]
    return [(s, k, site_root(folder, s) / k.relpath / PART_FILE) for s in profiles for k in keys]


def load_transactions(
    start: Any,
    end: Any,
    by: DateField = "updateDate",
    site: SiteSelection = None,
    *,
    sites: SiteSelection = None,
    campaign_ids: Any = None,
    merchant_group_ids: Any = None,
    program_type: Any = None,
    lazy: bool = False,
    refresh: bool = False,
    allow_large: bool = False,
    data_dir: str | Path | None = None,
    options: SyncOptions = SyncOptions(),
) -> pl.DataFrame | pl.LazyFrame:
    """Transactions of the days `start`..`end` (both included) by one date field, from the lake.

    Missing or unsettled days are fetched first; the filters are applied locally.
    `by="updateDate"` gives every version on the day it changed; the other fields give each
    transaction's state when its day was fetched. `site=` chooses one site, `sites=` several
    (default: all); a range over 5 years needs `allow_large=True`.
    """
    if by not in DATE_FIELDS:
        raise ValidationError("by", f"{by!r} is not a date field", f"use one of {', '.join(DATE_FIELDS)}")
    local = Filters.of(
        campaign_ids=campaign_ids, merchant_group_ids=merchant_group_ids, program_type=program_type
    )
    as_bool(lazy, "lazy")
    options = options_of(options)
    first, last = day_span(start, end, now_of(options).date(), allow_large=allow_large)
    keys = transaction_keys(first, last, by)
    files = _load("transactions", keys, selection_of(site, sites), data_dir, refresh, options)
    frame = _read(files, lambda key: {"day": key.start})
    import polars as pl

    if local.campaign_ids:
        frame = frame.filter(pl.col("campaign_id").is_in(list(local.campaign_ids)))
    if local.merchant_group_ids:
        frame = frame.filter(pl.col("merchant_group_id").is_in(list(local.merchant_group_ids)))
    if local.program_type is not None:
        frame = frame.filter(pl.col("program_type").str.to_uppercase() == local.program_type.value)
    return frame if lazy else frame.collect()


def load_networks(
    start: Any,
    end: Any,
    slices: SliceSpec | Iterable[SliceSpec] | None = None,
    grain: Grain = "month",
    site: SiteSelection = None,
    *,
    sites: SiteSelection = None,
    lazy: bool = False,
    refresh: bool = False,
    allow_large: bool = False,
    data_dir: str | Path | None = None,
    options: SyncOptions = SyncOptions(),
) -> pl.DataFrame | pl.LazyFrame:
    """Per-network aggregates of each slice (default: unfiltered) for the windows covering the range.

    `grain="month"` stores whole calendar months (the current one is partial and refreshed);
    `grain="day"` makes one request per day. Each row carries its window and filters.
    """
    return _load_aggregate("networks", locals())


@arguments_of(load_networks)
def load_merchandise(*args: Any, **kwargs: Any) -> pl.DataFrame | pl.LazyFrame:
    """Per-product aggregates of each slice for the windows covering the range; the arguments of
    `load_networks`."""
    return _load_aggregate("merchandise", bound(load_networks, args, kwargs))


def _load_aggregate(dataset: Dataset, arguments: Mapping[str, Any]) -> pl.DataFrame | pl.LazyFrame:
    """The windows of `dataset` the arguments of `load_networks` name, fetched first when missing."""
    grain = arguments["grain"]
    if grain not in ("day", "month"):
        raise ValidationError("grain", f"{grain!r} is not a grain", "use 'day' or 'month'")
    as_bool(arguments["lazy"], "lazy")
    options = options_of(arguments["options"])
    first, last = day_span(
        arguments["start"], arguments["end"], now_of(options).date(), allow_large=arguments["allow_large"]
    )
    chosen = slices_of(arguments["slices"], (Filters(),))
    keys = aggregate_keys(dataset, first, last, chosen, grain)
    where = selection_of(arguments["site"], arguments["sites"])
    files = _load(dataset, keys, where, arguments["data_dir"], arguments["refresh"], options)
    frame = _read(files, lambda key: {"slice": key.slice, "grain": key.grain})
    return frame if arguments["lazy"] else frame.collect()
