"""Rollups: the expensive views of each site, kept as Parquet and refreshed for what changed.

The current state of 10 million transactions needs the latest version of each commission id over
every stored day: seconds, not milliseconds. The views marked `rollup` are stored per site (see
`state.py` for the files) and the `main` views read them while they match the lake.

`refresh_rollups` (a sync calls it with the partitions it stored) compares each site's lake
listing with the state of its rollups, and rebuilds only what the changed partitions touch: the
changed transactions, the commission days and months they fall in (updated by the change where the
sums allow), the months of changed aggregate windows (see `build.py`). A site without rollups, or
whose views' code changed, is built whole, as `rebuild_rollups` (and `commerce-reports rollups
--rebuild`) does on demand.

A site is refreshed in one pass, each step called once from `_refresh_site` with the site's places
(`state.SitePlaces`, found once, every rollup folder included) or what the step before produced:
list the lake (`listing.py`), load the state and decide whole, delta or nothing
(`state.decide_build`), find the unreadable files, build (`_build`: the state marked before any
rollup is written, the build over a connection of its own, the state saved after).

Writes are safe beside readers: readers read the state last published (`published.py`), and a
refresh publishes the lake and its rollups once it is done. Each file is replaced atomically and the
state written last; while a refresh runs the state says so. A refresh killed half way
is finished by the next one. A partition file that cannot be read is left out, with a warning
naming it and saying how to repair it (`commerce-reports verify`), never a crash.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import time
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ..contract import PART_FILE, PartitionKey, check_site_name
from ..errors import LakeError, ValidationError
from ..lake.locks import writing_sites
from .buckets import remove_staging
from .build import SiteBuild, build_connection
from .listing import Listing, dataset_of, left_out_files, manifest_entries, site_listing, undecodable_files
from .published import publish
from .snapshot import take_snapshot
from .sources import dataset_schemas, lake_folder, lake_sites, resolve_data_dir
from .state import (
    NOTHING,
    SitePlaces,
    SiteState,
    changed_rollups,
    decide_build,
    load_state,
    rollup_files,
    save_state,
    site_places,
)

__all__ = ["FALLBACK", "SiteRefresh", "fresh_rollups", "rebuild_rollups", "refresh_rollups", "verify_rollups"]

log = logging.getLogger(__name__)
FALLBACK = (
    "full_rebuild_fallback"  # marks the log record of a refresh rebuilt whole because its update failed
)


@dataclass(frozen=True)
class SiteRefresh:
    """What a refresh did for one site: built whole or for what changed, the months of the monthly
    rollups it rewrote (`recomputed`: those it computed again from their stored transactions, the
    others it updated by the changed transactions alone), the partition files it left out as
    unreadable, and how long it took."""

    site: str
    full: bool
    months: tuple[str, ...]
    skipped: dict[str, str]
    seconds: float
    recomputed: tuple[str, ...] = ()


def refresh_rollups(
    data_dir: Path | str | None = None,
    changed: Mapping[str, Iterable[PartitionKey]] | None = None,
    *,
    force: bool = False,
) -> list[SiteRefresh]:
    """Bring the rollups up to date with the lake; return what was done for each site refreshed.

    `changed`: the partitions a sync stored, per site (only those sites are looked at); None looks
    at every site. Either way, files whose size or mtime differ from what the rollups reflect are
    found by themselves (a `stat` each), so the keys only add partitions rewritten identically.
    `force=True` rebuilds the chosen sites whole.
    """
    folder = lake_folder(resolve_data_dir(data_dir))
    done = []
    for site, hints in _targets(folder, changed).items():
        result = _refresh_site(site_places(folder, site), hints, force)
        if result is not None:
            done.append(result)
    publish(folder)
    return done


def rebuild_rollups(
    data_dir: Path | str | None = None, sites: Iterable[str] | None = None
) -> list[SiteRefresh]:
    """Rebuild the rollups of `sites` (default: every site of the lake) whole, from the lake files."""
    folder = lake_folder(resolve_data_dir(data_dir))
    chosen = lake_sites(folder) if sites is None else _site_names(sites)
    done = [r for site in chosen if (r := _refresh_site(site_places(folder, site), set(), True)) is not None]
    publish(folder)
    return done


def verify_rollups(
    data_dir: Path | str | None = None, sites: Iterable[str] | None = None, *, fast: bool = False
) -> list[str]:
    """Check by content that each site's rollup files are the ones its last refresh wrote (a
    rollup changed by anything else, a forged one, would answer for the lake); rebuild the rollups
    of a site whose files differ. `fast=True` trusts files whose stamp is unchanged since they were
    last hashed. Returns what was found, a line per site rebuilt (empty: all intact)."""
    if not isinstance(fast, bool):
        raise ValidationError("fast", f"{fast!r} is not a bool", "give True or False")
    folder = lake_folder(resolve_data_dir(data_dir))
    chosen = lake_sites(folder) if sites is None else _site_names(sites)
    found = []
    for site in chosen:
        places = site_places(folder, site)
        state = load_state(places)
        changed = [] if state is None else changed_rollups(places, state, read_all=not fast)
        if changed:
            _refresh_site(places, set(), True)
            found.append(
                f"{site}: rollup files differ from what their refresh wrote ({', '.join(changed[:5])}"
                f"{', ...' if len(changed) > 5 else ''}): rebuilt from the lake"
            )
    if found:
        publish(folder)
    return found


def fresh_rollups(data_dir: Path | str | None = None) -> list[str]:
    """The sites of the lake whose rollups match their files exactly (the views read those)."""
    return take_snapshot(lake_folder(resolve_data_dir(data_dir))).fresh_sites


def _site_names(sites: Iterable[str]) -> list[str]:
    if isinstance(sites, str) or not isinstance(sites, Iterable):
        raise ValidationError("sites", f"{sites!r} is not a list of site names", "give e.g. ['alpha']")
    return [check_site_name(site) for site in sites]


def _targets(data_dir: Path, changed: Mapping[str, Iterable[PartitionKey]] | None) -> dict[str, set[str]]:
    """Site -> relpaths of the partition files the caller says it stored."""
    if changed is None:
        return {site: set() for site in lake_sites(data_dir)}
    if not isinstance(changed, Mapping):
        raise ValidationError(
            "changed",
            f"{type(changed).__name__} is not a mapping",
            "give {site: [PartitionKey, ...]} or None",
        )
    targets: dict[str, set[str]] = {}
    for site, keys in changed.items():
        check_site_name(site)
        if not isinstance(keys, Iterable) or not all(isinstance(k, PartitionKey) for k in keys):
            raise ValidationError(
                "changed",
                f"{keys!r} (site {site}) is not a list of PartitionKey",
                "give the keys the sync stored",
            )
        targets[site] = {f"{key.relpath}/{PART_FILE}" for key in keys}
    return targets


def _refresh_site(places: SitePlaces, hints: set[str], force: bool) -> SiteRefresh | None:
    """Refresh one site's rollups under its lock, in steps: list the lake, load the state, decide
    whole or delta, find the unreadable files, build (up to three attempts, each leaving out
    what the one before found undecodable); None when nothing was to be done."""
    started = time.perf_counter()
    site = places.site
    with writing_sites(places.data_dir, [site]):
        remove_staging(places.folder)
        listing = site_listing(places.data_dir, site)
        before = load_state(places)
        full = decide_build(places, before, listing, hints, force)
        if full is None:
            return None
        basis = NOTHING if full or before is None else before
        entries = manifest_entries(places.data_dir, site)
        skipped = left_out_files(places.lake, listing, entries, basis.listing, basis.skipped)
        for _ in range(3):
            try:
                months, recomputed = _build(places, listing, skipped, None if full else before, hints)
            except (duckdb.Error, LakeError) as error:
                found = undecodable_files(places.lake, listing, skipped)
                if not found and full:
                    raise LakeError(
                        f"the rollups of site {site} could not be built: {_why(error)}. The views read the "
                        "lake files meanwhile; `commerce-reports verify` checks the partitions"
                    ) from None
                if not found:
                    log.warning(
                        "the rollups of site %s could not be updated (%s): rebuilding them whole",
                        site,
                        error,
                        extra={FALLBACK: True},
                    )
                skipped |= found
                before = load_state(places)  # the failed attempt may have left months pending
                # nothing in the lake is to blame: rebuild the rollups whole
                full = full or not found or before is None or before.rebuilding
                continue
            seconds = time.perf_counter() - started
            log.info(
                "rollups of %s: %s in %.1f s", site, "rebuilt" if full else f"{len(months)} months", seconds
            )
            return SiteRefresh(
                site, full, tuple(sorted(months)), dict(skipped), seconds, tuple(sorted(recomputed))
            )
    raise LakeError(f"the rollups of site {site} could not be built: unreadable partitions keep failing them")


_FULL_DISK = ("No space left on device", '"errno":"28"', "Disk quota exceeded", '"errno":"122"')


def _why(error: Exception) -> str:
    """A build's failure in words: a full disk said as such (DuckDB's own text is long JSON)."""
    text = str(error)
    if any(mark in text for mark in _FULL_DISK):
        path = re.search(r'file \\?"([^"\\]+)', text)
        return f"the disk is full{f' (writing {path.group(1)})' if path else ''}"
    return text


def _build(
    places: SitePlaces,
    listing: Listing,
    skipped: dict[str, str],
    before: SiteState | None,
    hints: set[str],
) -> tuple[Collection[str], Collection[str]]:
    """Build the site's rollups whole (`before` None) or for what changed since `before`; return
    the months written, and those of them recomputed from their stored transactions. The state says
    what is being rewritten before any rollup file is, and what the rollups reflect once all are."""
    readable = {r: s for r, s in listing.items() if r not in skipped}
    basis = before or NOTHING
    schemas = dataset_schemas(places.lake, readable, basis.listing, basis.schemas)
    if before is None:
        save_state(places, SiteState(listing={}, rebuilding=True))
    with build_connection(places, full=before is None) as con:
        build = SiteBuild(con, places, readable, schemas, basis.whole_days)
        if before is None:
            months, whole_days = build.full()
            whole = months
        else:
            known = before.listing.keys() | listing.keys()
            changed = {r for r in known if listing.get(r) != before.listing.get(r)}
            changed |= (hints | (skipped.keys() ^ before.skipped.keys())) & known
            plan = build.plan(before.listing, before.skipped, changed)
            months = plan.months | before.pending_months
            save_state(places, dataclasses.replace(before, pending_months=months))
            whole, whole_days = before.pending_months, before.whole_days
            build.apply(plan, whole, [r for r in changed if dataset_of(r) == "transactions"])
    build.remove_old_index()
    save_state(
        places,
        SiteState(
            listing=listing,
            skipped=dict(skipped),
            schemas=schemas,
            whole_days=whole_days,
            files=rollup_files(places),
        ),
    )
    return months, whole
