"""What the lake holds of the sites an entry point chose, and how to reset part of it.

`status_rows` reads the manifests with plain Python (the command line prints them with
`describe_status` without loading polars); `status_frame` gives the same rows as a polars frame.
`window_rows` (printed by `describe_windows`) says, per aggregate window, when it was fetched and
until when the service may still revise it. The package's `status`, `plan_sync` and `invalidate`
choose the sites and call these."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import astuple, dataclass, fields
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..contract import DATASETS, Dataset
from ..errors import ValidationError
from ..lake import Entry, Manifest, load_or_rebuild, writing_sites
from ..lake import rebuild as rebuild_manifest
from ..params import as_date
from .plan import SettlePolicy

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "COLUMNS",
    "WINDOW_COLUMNS",
    "DatasetStatus",
    "WindowStatus",
    "describe_status",
    "describe_windows",
    "forget",
    "status_frame",
    "status_rows",
    "window_rows",
]


@dataclass(frozen=True)
class DatasetStatus:
    """What the lake holds of one site's dataset: one row of `status`."""

    site: str
    dataset: str
    partitions: int
    rows: int
    first_day: date
    last_day: date
    unsettled: int  # partitions that can still change (a window: not final); a sync fetches them when due
    last_fetched_at: datetime


COLUMNS = tuple(f.name for f in fields(DatasetStatus))


@dataclass(frozen=True)
class WindowStatus:
    """One aggregate window of a site: when its copy was fetched, until when the service may
    revise it, and whether the copy is final (fetched after that). One row of `status --windows`."""

    site: str
    dataset: str
    slice: str
    grain: str
    window_start: date
    window_end: date  # excluded
    fetched_at: datetime
    revisable_until: datetime
    final: bool


WINDOW_COLUMNS = tuple(f.name for f in fields(WindowStatus))


def _manifests(
    folder: Path, policies: Mapping[str, SettlePolicy], rebuild: bool
) -> Iterable[tuple[str, Manifest]]:
    """Each site's manifest, sorted by site: rebuilt from the files first with `rebuild`, else
    loaded (a missing or damaged one is rebuilt on its own, with a warning)."""
    for site in sorted(policies):
        if rebuild:
            with writing_sites(folder, [site]):
                manifest, _ = rebuild_manifest(folder, site, policies[site])
        else:
            manifest, _ = load_or_rebuild(folder, site, policies[site])
        yield site, manifest


def status_rows(
    folder: Path, policies: Mapping[str, SettlePolicy], *, rebuild: bool = False
) -> list[DatasetStatus]:
    """What the lake in `folder` holds of the sites of `policies`, per site and dataset, sorted,
    read from the manifests alone (plain Python: what `commerce-reports status` prints without
    loading polars). `unsettled` counts what can still change under each site's policy.

    A missing or damaged manifest is rebuilt from the Parquet files on its own (with a warning);
    `rebuild=True` rebuilds every manifest first (a file that cannot be read is quarantined)."""
    rows: list[DatasetStatus] = []
    for site, manifest in _manifests(folder, policies, rebuild):
        policy = policies[site]
        by_dataset: dict[str, list[Entry]] = {}
        for entry in manifest:
            by_dataset.setdefault(entry.key.dataset, []).append(entry)
        for dataset, stored in sorted(by_dataset.items()):
            rows.append(
                DatasetStatus(
                    site=site,
                    dataset=dataset,
                    partitions=len(stored),
                    rows=sum(e.rows for e in stored),
                    first_day=min(e.key.start for e in stored),
                    last_day=max(e.key.end for e in stored) - timedelta(days=1),
                    unsettled=sum(not policy.has_settled(e) for e in stored),
                    last_fetched_at=max(e.fetched_at for e in stored),
                )
            )
    return rows


def window_rows(
    folder: Path, policies: Mapping[str, SettlePolicy], *, rebuild: bool = False
) -> list[WindowStatus]:
    """Every stored aggregate window of the sites of `policies`, sorted by site, dataset, slice and
    start, as the manifests record it (plain Python, as `status_rows`)."""
    return [
        WindowStatus(
            site,
            w.dataset,
            w.slice,
            w.grain,
            w.start,
            w.end,
            w.fetched_at,
            w.revisable_until,
            w.final,
        )
        for site, manifest in _manifests(folder, policies, rebuild)
        for w in sorted(manifest.windows(), key=lambda w: (w.dataset, w.slice, w.grain, w.start))
    ]


def status_frame(rows: Sequence[DatasetStatus]) -> pl.DataFrame:
    """`status_rows` as a polars frame (the notebooks' form), its columns typed."""
    import polars as pl

    schema: dict[str, Any] = {
        "site": pl.String,
        "dataset": pl.String,
        "partitions": pl.UInt32,
        "rows": pl.Int64,
        "first_day": pl.Date,
        "last_day": pl.Date,
        "unsettled": pl.UInt32,
        "last_fetched_at": pl.Datetime("us", "UTC"),
    }
    return pl.DataFrame([astuple(r) for r in rows], schema=schema, orient="row")


def describe_status(rows: Sequence[DatasetStatus]) -> str:
    """`status_rows` as a plain text table, one line per site and dataset (times in UTC, to the second)."""
    if isinstance(rows, str | bytes) or not all(isinstance(r, DatasetStatus) for r in rows):
        raise ValidationError("rows", f"{rows!r:.80} are not status rows", "pass what status_rows() returns")
    if not rows:
        return "the lake is empty: run `commerce-reports sync` first"
    cells = [
        [
            r.site,
            r.dataset,
            str(r.partitions),
            str(r.rows),
            r.first_day.isoformat(),
            r.last_day.isoformat(),
            str(r.unsettled),
            _utc(r.last_fetched_at),
        ]
        for r in rows
    ]
    return _table(COLUMNS, cells, numeric={"partitions", "rows", "unsettled"})


def describe_windows(rows: Sequence[WindowStatus]) -> str:
    """`window_rows` as a plain text table, one line per window (times in UTC, to the second)."""
    if isinstance(rows, str | bytes) or not all(isinstance(r, WindowStatus) for r in rows):
        raise ValidationError("rows", f"{rows!r:.80} are not window rows", "pass what window_rows() returns")
    if not rows:
        return "no aggregate window is stored: run `commerce-reports sync` first"
    cells = [
        [
            r.site,
            r.dataset,
            r.slice,
            r.grain,
            r.window_start.isoformat(),
            r.window_end.isoformat(),
            _utc(r.fetched_at),
            _utc(r.revisable_until),
            "yes" if r.final else "no",
        ]
        for r in rows
    ]
    return _table(WINDOW_COLUMNS, cells, numeric=set())


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _table(columns: Sequence[str], cells: list[list[str]], numeric: set[str]) -> str:
    """Aligned columns, numbers to the right; no trailing spaces."""
    widths = [max(len(c) for c in column) for column in zip(columns, *cells, strict=True)]
    return "\n".join(
        "  ".join(
            text.rjust(width) if name in numeric else text.ljust(width)
            for name, text, width in zip(columns, line, widths, strict=True)
        ).rstrip()
        for line in [list(columns), *cells]
    )


def forget(
    folder: Path, sites: Iterable[str], start: Any, end: Any, datasets: Iterable[Dataset] = DATASETS
) -> int:
    """Forget the stored partitions of `sites` that overlap `start`..`end`, so the next sync fetches
    them again. The files stay readable until they are replaced. Returns how many were forgotten."""
    first, last = as_date(start, "start"), as_date(end, "end")
    if first > last:
        raise ValidationError("start", f"{first} is after end {last}", "give start <= end (both included)")
    if isinstance(datasets, str) or not set(datasets) <= set(DATASETS):
        raise ValidationError(
            "datasets", f"{datasets!r} is not a list of datasets", f"give some of {', '.join(DATASETS)}"
        )
    chosen = set(datasets)
    forgotten = 0
    for site in sites:
        keys = [
            e.key
            for e in Manifest.load(folder, site)
            if e.key.dataset in chosen and e.key.start <= last and e.key.end > first
        ]
        forgotten += Manifest.forget(folder, site, keys)
    return forgotten
