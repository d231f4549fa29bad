"""The views' SQL for a state of the lake: which sites read rollups, which files are left out.

A `Snapshot` lists every site's partition files (a `stat` each), compares each site's rollup state
with its listing (a site is *fresh* when they match exactly), and leaves out the files found
unreadable. What the views need of it is a `Reading`: a folder holding `lake/` and `rollups/` (the
data folder itself, or a published generation of it: see `published.py`), the sites whose rollups
are read, each dataset's source and the coverage of periods. `view_sql` turns a reading into the SQL
of a view: `live` views compute from the lake files, `main` views read the rollups of fresh sites
and `live` for the others.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..contract import DATASETS, lake_sites
from .coverage import SiteCoverage, coverage_of, ledger_select, with_status
from .listing import (
    Digest,
    Listing,
    dataset_of,
    left_out_files,
    listing_digest,
    manifest_entries,
    site_listing,
)
from .sources import (
    MIXED,
    Pattern,
    file_schemas,
    part_glob,
    pattern,
    quote,
    read_sql,
    read_stored,
)
from .state import NOTHING, SitePlaces, SiteState, load_state, rollup_files, site_places
from .views import LEDGER, View, render

__all__ = [
    "Reading",
    "SiteSnapshot",
    "Snapshot",
    "reading_of",
    "rollup_read_sql",
    "site_snapshot",
    "stored_transactions_sql",
    "take_snapshot",
    "view_sql",
]


@dataclass(frozen=True)
class SiteSnapshot:
    """One site (at `places`): its partition files now, its rollup state, and the files left out
    as unreadable."""

    places: SitePlaces
    listing: Listing
    state: SiteState | None
    unreadable: dict[str, str]  # relpath -> why it is left out (unreadable, or vouched for by nothing)

    rollups: dict[str, Digest] | None = None  # the rollup files now (when the state matches the lake)

    @property
    def site(self) -> str:
        return self.places.site

    @property
    def fresh(self) -> bool:
        return (
            self.state is not None and self.state.matches(self.listing) and self.state.files == self.rollups
        )

    def readable_all(self) -> list[str]:
        """Relpaths of every readable file of the site (what a generation links), sorted."""
        return sorted(r for r in self.listing if r not in self.unreadable)

    def readable(self, dataset: str) -> list[str]:
        """Relpaths of the readable files of `dataset`, sorted."""
        return sorted(r for r in self.listing if dataset_of(r) == dataset and r not in self.unreadable)


@dataclass(frozen=True)
class Snapshot:
    """Every site of the lake at one moment, and the live SQL of each dataset."""

    data_dir: Path  # absolute
    sites: tuple[SiteSnapshot, ...]
    coverage: tuple[SiteCoverage, ...] = ()

    @property
    def fresh_sites(self) -> list[str]:
        return [s.site for s in self.sites if s.fresh]

    @property
    def stale_sites(self) -> list[str]:
        return [s.site for s in self.sites if not s.fresh]

    def by_name(self, dataset: str) -> bool:
        """Whether the readable files of `dataset` differ in their columns (read them by name)."""
        signatures = {_signature(s, dataset) for s in self.sites} - {None}
        return len(signatures) > 1 or MIXED in signatures

    def shapes(self) -> dict[str, str]:
        """What a generation of this snapshot records of each dataset that has readable files:
        MIXED when their columns differ (read them by name), else "same" (see `reading_of`)."""
        datasets = {dataset_of(r) for site in self.sites for r in site.readable_all()}
        return {dataset: MIXED if self.by_name(dataset) else "same" for dataset in datasets}

    def digest(self) -> str:
        """What a published generation of this snapshot would hold: equal digests, the same
        generation (each site's listing, freshness, unreadable files and state file version)."""
        parts = []
        for site in self.sites:
            state = site.places.state_file
            stamp = state.stat() if state.exists() else None
            parts.append(
                f"{site.site}|{listing_digest(site.listing)}|{site.fresh}|{sorted(site.unreadable)}"
                f"|{stamp and (stamp.st_size, stamp.st_mtime_ns, stamp.st_ino)}"
            )
        parts += [json.dumps(c.to_json(), sort_keys=True) for c in self.coverage]
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()

    def reading(self) -> Reading:
        """The views over the lake files themselves, as they are in this snapshot."""
        sources: dict[str, str] = {d: _source(self.data_dir, self.sites, d) for d in DATASETS}
        fresh, stale = tuple(self.fresh_sites), tuple(self.stale_sites)
        return Reading(self.data_dir, fresh, stale, sources, self.coverage)


@dataclass(frozen=True)
class Reading:
    """What the views read: `root` holds `lake/` and `rollups/` (the data folder, or a published
    generation); the sites whose rollups are read; each dataset's SQL source; the coverage."""

    root: Path
    fresh_sites: tuple[str, ...]
    stale_sites: tuple[str, ...]
    sources: dict[str, str]
    coverage: tuple[SiteCoverage, ...]


def reading_of(
    root: Path,
    fresh: Sequence[str],
    stale: Sequence[str],
    shapes: dict[str, str],
    coverage: Sequence[SiteCoverage],
) -> Reading:
    """The reading of a folder holding only readable files (a published generation): each dataset
    that has files read by one glob (`shapes`: MIXED when their columns differ)."""
    sources: dict[str, str] = {
        dataset: read_sql(dataset, [part_glob(root, dataset)], by_name=shapes[dataset] == MIXED)
        if dataset in shapes
        else read_sql(dataset, [], by_name=False)
        for dataset in DATASETS
    }
    return Reading(root, tuple(fresh), tuple(stale), sources, tuple(coverage))


_signatures: dict[str, str] = {}


def _signature(site: SiteSnapshot, dataset: str) -> str | None:
    """The schema signature of a site's readable files of `dataset` (None: it has none)."""
    files = site.readable(dataset)
    if not files:
        return None
    if site.fresh and site.state is not None and dataset in site.state.schemas:
        return site.state.schemas[dataset]
    key = listing_digest({r: site.listing[r] for r in files})
    if key not in _signatures:
        distinct = set(file_schemas([site.places.lake / r for r in files]).values())
        _signatures[key] = distinct.pop() if len(distinct) == 1 else MIXED
    return _signatures[key]


def _source(data_dir: Path, sites: Sequence[SiteSnapshot], dataset: str) -> str:
    signatures = {_signature(s, dataset) for s in sites} - {None}
    if not signatures:
        return read_sql(dataset, [], by_name=False)
    by_name = len(signatures) > 1 or MIXED in signatures
    if not any(dataset_of(r) == dataset for s in sites for r in s.unreadable):
        # a glob per site that has files, not `site=*`: a folder beside them that holds no site
        # (`contract.lake_sites`) is never read
        globs = [part_glob(data_dir, dataset, s.places.site) for s in sites if s.readable(dataset)]
        return read_sql(dataset, globs, by_name=by_name)
    paths = [s.places.lake / r for s in sites for r in s.readable(dataset)]
    return read_sql(dataset, paths, by_name=by_name)


def take_snapshot(data_dir: Path) -> Snapshot:
    """The lake in `data_dir` now: listings, rollup states, unreadable files, live sources."""
    root = Path(data_dir).resolve()
    sites = tuple(site_snapshot(site_places(root, site)) for site in lake_sites(root))
    coverage = tuple(coverage_of(root, s.site, s.listing.keys() - s.unreadable.keys()) for s in sites)
    return Snapshot(root, sites, coverage)


def site_snapshot(places: SitePlaces, *, rollups: bool = False) -> SiteSnapshot:
    """One site (at `places`) now: its rollup state, its partition files by content and those left
    out (each with why, and a warning), and its rollup files by content when its state matches the
    lake (what the views read) or, with `rollups`, whenever it has a state (what a refresh checks)."""
    state = load_state(places)
    listing = site_listing(places.lake, places.digests)
    basis = state or NOTHING
    entries = manifest_entries(places.data_dir, places.site)
    unreadable = left_out_files(places.lake, listing, entries, basis.listing, basis.skipped)
    read = state is not None and (rollups or state.matches(listing))
    return SiteSnapshot(places, listing, state, unreadable, rollup_files(places) if read else None)


def stored_transactions_sql(
    base: Sequence[Path | Pattern], patch: Sequence[Path | Pattern], where: str = "true", columns: str = "*"
) -> str:
    """The stored `transactions` rollup: base rows that no patch row replaces or deletes, then the
    patch rows not deleted (see `state.py`). `where`, a condition on commission_id and
    commission_date only, is applied to both sides first, so that Parquet statistics skip rows;
    `columns` (naming site, commission_id and commission_date) narrows what is read."""
    patch_columns = columns if columns == "*" else f"{columns}, _deleted"
    b = f"(SELECT {columns} FROM {read_stored(base)} WHERE {where})"
    p = f"(SELECT {patch_columns} FROM {read_stored(patch)} "
    p += f"WHERE {where})"
    return (
        f"SELECT base.* FROM {b} AS base ANTI JOIN {p} AS patch ON base.site = patch.site "
        "AND base.commission_id = patch.commission_id "
        "AND base.commission_date IS NOT DISTINCT FROM patch.commission_date "
        f"UNION ALL BY NAME SELECT * EXCLUDE (_deleted) FROM {p} WHERE NOT _deleted"
    )


def rollup_read_sql(root: Path, sites: Sequence[str], view: View) -> str:
    """A SELECT of the stored rollup of `view` for `sites`: every bucket file of each (a folder
    always holds `_empty.parquet`, so its glob matches)."""
    places = [site_places(root, s) for s in sites]
    if view.name == "transactions":  # _empty.parquet always exists: the globs match
        base = [pattern(p.base, "*.parquet") for p in places]
        patch = [pattern(p.patch, "*.parquet") for p in places]
        return stored_transactions_sql(base, patch)
    files = [pattern(p.views[view.name], "*.parquet") for p in places]
    return f"SELECT * FROM {read_stored(files)}"


def view_sql(reading: Reading, schema: str, view: View, *, macros: bool = False) -> str:
    """The SELECT of `view` in `schema` (`live`: from the lake files; `main`: rollups where fresh);
    `macros`: its `complete` and `final` columns, and the stored ledger days, by the macros of
    `coverage.status_macros`."""
    coverage = None if macros else reading.coverage
    if schema == "live" or not view.rollup:
        sources = reading.sources | {LEDGER: ledger_select(coverage)}
        return with_status(view.period, render(view, schema, sources), coverage)
    fresh, stale = reading.fresh_sites, reading.stale_sites
    if not fresh:
        return f"SELECT * FROM live.{view.name}"
    sql = with_status(view.period, f"SELECT * FROM ({rollup_read_sql(reading.root, fresh, view)})", coverage)
    if stale:
        sites = ", ".join(quote(site) for site in stale)
        sql += f" UNION ALL BY NAME SELECT * FROM live.{view.name} WHERE site IN ({sites})"
    return sql
