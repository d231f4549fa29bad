"""What the lake holds of the sites an entry point chose, and how to reset part of it.

`status_rows` reads the manifests with plain Python (the command line prints them with
`describe_status` without loading polars); `status_frame` gives the same rows as a polars frame.
`window_rows` (printed by `describe_windows`) says, per aggregate window, when it was fetched and
until when the service may still revise it. `unlisted_sites` names the lake's sites that none of
these look at (not in the settings), which the views read all the same. The package's `status`,
`plan_sync` and `invalidate` choose the sites and call these."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import astuple, dataclass, fields
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..contract import AGGREGATES, DATASETS, Dataset, lake_sites
from ..errors import ValidationError
from ..lake import Entry, Manifest, load_or_rebuild, writing_sites
from ..lake.manifest import from_embedded_sandbox
from ..params import as_date, as_days
from .plan import SettlePolicy
from .revisions import LedgerSignal

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "COLUMNS",
    "WINDOW_COLUMNS",
    "DatasetStatus",
    "WindowStatus",
    "describe_status",
    "describe_windows",
    "invalidate_stored",
    "status_frame",
    "status_rows",
    "unlisted_sites",
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
    revise it, whether the copy is final (fetched after that), and how far behind the service it
    may be: whether the ledger shows the service changed the window since the copy
    (`ledger_changed`), and from when a sync asks for it again (`asked_again`; None when final).
    One row of `status --windows`."""

    site: str
    dataset: str
    slice: str
    grain: str
    window_start: date
    window_end: date  # excluded
    fetched_at: datetime
    revisable_until: datetime
    final: bool
    ledger_changed: bool
    asked_again: datetime | None


WINDOW_COLUMNS = tuple(f.name for f in fields(WindowStatus))


def _manifests(
    folder: Path, policies: Mapping[str, SettlePolicy], rebuild: bool
) -> Iterable[tuple[str, Manifest]]:
    """Each site's manifest, sorted by site: rebuilt from the files first with `rebuild`, else
    loaded (a missing or damaged one is rebuilt on its own, with a warning)."""
    for site in sorted(policies):
        if rebuild:
            from ..lake.repair import rebuild as rebuild_manifest  # (and the store) only when asked

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
    folder: Path, policies: Mapping[str, SettlePolicy], *, rebuild: bool = False, now: datetime | None = None
) -> list[WindowStatus]:
    """Every stored aggregate window of the sites of `policies`, sorted by site, dataset, slice and
    start, as the manifests record its copy, with its horizon and whether it is final under the
    site's policy as configured now (as the plan's: the manifest's may be older), what the ledger
    shows changed since the copy and from when a sync asks for it again at `now` (default: now)."""
    moment = now or datetime.now(UTC)
    rows: list[WindowStatus] = []
    for site, manifest in _manifests(folder, policies, rebuild):
        ledger, policy = LedgerSignal.of(manifest), policies[site]
        windows = [(e.key, e) for e in manifest if e.key.dataset in AGGREGATES]
        for key, entry in sorted(
            windows, key=lambda w: (w[0].dataset, str(w[0].slice), str(w[0].grain), w[0].start)
        ):
            final = policy.has_settled(entry)
            changed = not final and ledger.changed(key, entry.fetched_at)
            again = None if final else policy.asked_again(entry, moment, ledger)
            where = (site, key.dataset, str(key.slice), str(key.grain), key.start, key.end)
            rows.append(
                WindowStatus(*where, entry.fetched_at, policy.revisable_until(key), final, changed, again)
            )
    return rows


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
    empty = "the lake is empty: run `commerce-reports sync` first"
    return _described(rows, DatasetStatus, empty, {"partitions", "rows", "unsettled"})


def unlisted_sites(folder: Path, listed: Collection[str]) -> list[str]:
    """Lines naming the sites of the lake in `folder` that are not among the `listed` ones (the
    settings' sites, which `status` and `sync` look at), each kind in a line; none when there are
    none. The views read them all the same: a site no longer configured, or the built-in sandbox's
    synthetic ones, which the next sync of a service's site removes."""
    unlisted = [site for site in lake_sites(folder) if site not in listed]
    sandbox = [site for site in unlisted if from_embedded_sandbox(folder, site)]
    others = [site for site in unlisted if site not in sandbox]
    lines = []
    if sandbox:
        lines.append(
            f"also in the lake: {', '.join(sandbox)}, the built-in sandbox's synthetic sites (from `demo`, "
            "or a sync with no key set): every view adds them to your sites' figures until the next "
            "sync of your sites removes them"
        )
    if others:
        lines.append(
            f"also in the lake, not in the settings: {', '.join(others)} (the views read "
            f"{'them' if len(others) > 1 else 'it'}; `status` and `sync` look at the settings' sites only)"
        )
    return lines


def describe_windows(rows: Sequence[WindowStatus]) -> str:
    """`window_rows` as a plain text table, one line per window (times in UTC, to the second;
    `asked_again` says `final` for a window that is)."""
    empty = "no aggregate window is stored: run `commerce-reports sync` first"
    return _described(rows, WindowStatus, empty, set())


def _described(rows: Sequence[object], kind: type, empty: str, numeric: set[str]) -> str:
    """Rows of the dataclass `kind` as an aligned text table (`empty` when there are none)."""
    what = "status" if kind is DatasetStatus else "window"
    if isinstance(rows, str | bytes) or not all(isinstance(r, kind) for r in rows):
        raise ValidationError("rows", f"{rows!r:.80} are not {what} rows", f"pass what {what}_rows() returns")
    if not rows:
        return empty
    columns = [f.name for f in fields(kind)]
    cells = [[_cell(name, getattr(r, name)) for name in columns] for r in rows]
    return _table(columns, cells, numeric=numeric)


def _cell(name: str, value: object) -> str:
    """One value as the tables print it: dates ISO, times in UTC, booleans yes/no, no next fetch final."""
    if value is None and name == "asked_again":
        return "final"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, datetime):
        return _utc(value)
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


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


def invalidate_stored(
    folder: Path, sites: Iterable[str], start: Any, end: Any, datasets: Iterable[Dataset] = DATASETS
) -> int:
    """Mark the stored partitions of `sites` that overlap `start`..`end` for the next sync to fetch
    again (whatever its range and slices). Their files stay vouched for, and read, until their
    partitions are replaced. Returns how many were marked."""
    first, last = as_date(start, "start"), as_date(end, "end")
    as_days(first, last)
    if isinstance(datasets, str) or not set(datasets) <= set(DATASETS):
        raise ValidationError(
            "datasets", f"{datasets!r} is not a list of datasets", f"give some of {', '.join(DATASETS)}"
        )
    chosen = set(datasets)
    marked = 0
    for site in sites:
        keys = [
            e.key
            for e in Manifest.load(folder, site)
            if e.key.dataset in chosen and e.key.start <= last and e.key.end > first
        ]
        if keys:  # (none: nothing stored there, and nothing made for it)
            marked += Manifest.invalidate(folder, site, keys)
    return marked
