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

Writes are safe beside readers: readers read the state last published (`published.py`), and a
refresh publishes the lake and its rollups once it is done. Each file is replaced atomically and the
state written last; while a refresh runs the state says so. A refresh killed half way
is finished by the next one. A partition file that cannot be read is left out, with a warning
naming it and saying how to repair it (`commerce-reports verify`), never a crash.
"""

from __future__ import annotations

import dataclasses
import logging
import shutil
import time
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from ..contract import DATASETS, PART_FILE, PartitionKey, check_site_name, site_root
from ..errors import LakeError, ValidationError
from ..lake.locks import writing_sites
from .buckets import remove_staging
from .build import SiteBuild
from .listing import Listing, dataset_of, frame_problem, site_listing, warn_unreadable
from .published import publish
from .snapshot import take_snapshot
from .sources import MIXED, file_schemas, lake_sites, resolve_data_dir
from .state import CODE, SiteState, load_state, rollup_files, save_state, site_folder

__all__ = ["SiteRefresh", "fresh_rollups", "rebuild_rollups", "refresh_rollups", "verify_rollups"]

log = logging.getLogger(__name__)

# A scheduled sync must not take the machine's memory: past these, DuckDB spills to disk.
_FULL_MEMORY = "3GB"
_DELTA_MEMORY = "600MB"


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
    folder = resolve_data_dir(data_dir)
    done = []
    for site, hints in _targets(folder, changed).items():
        result = _refresh_site(folder, site, hints, force)
        if result is not None:
            done.append(result)
    publish(folder)
    return done


def rebuild_rollups(
    data_dir: Path | str | None = None, sites: Iterable[str] | None = None
) -> list[SiteRefresh]:
    """Rebuild the rollups of `sites` (default: every site of the lake) whole, from the lake files."""
    folder = resolve_data_dir(data_dir)
    chosen = lake_sites(folder) if sites is None else _site_names(sites)
    done = [r for site in chosen if (r := _refresh_site(folder, site, set(), True)) is not None]
    publish(folder)
    return done


def verify_rollups(data_dir: Path | str | None = None, sites: Iterable[str] | None = None) -> list[str]:
    """Check that each site's rollup files are the ones its last refresh wrote (a rollup changed
    by anything else, a forged one, would answer for the lake); rebuild the rollups of a site whose
    files differ. Returns what was found, a line per site rebuilt (empty: all intact)."""
    folder = resolve_data_dir(data_dir)
    chosen = lake_sites(folder) if sites is None else _site_names(sites)
    found = []
    for site in chosen:
        state = load_state(folder, site)
        changed = [] if state is None else _changed_files(state.files, rollup_files(folder, site))
        if changed:
            _refresh_site(folder, site, set(), True)
            found.append(
                f"{site}: rollup files changed after they were built ({', '.join(changed[:5])}"
                f"{', ...' if len(changed) > 5 else ''}): rebuilt from the lake"
            )
    if found:
        publish(folder)
    return found


def _changed_files(recorded: Listing, now: Listing) -> list[str]:
    """The rollup files added, removed or rewritten since `recorded`, sorted."""
    return sorted(r for r in recorded.keys() | now.keys() if recorded.get(r) != now.get(r))


def fresh_rollups(data_dir: Path | str | None = None) -> list[str]:
    """The sites of the lake whose rollups match their files exactly (the views read those)."""
    return take_snapshot(resolve_data_dir(data_dir)).fresh_sites


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


@contextmanager
def _connection(folder: Path, memory: str) -> Iterator[duckdb.DuckDBPyConnection]:
    spill = folder / ".spill"
    con = duckdb.connect(
        config={"memory_limit": memory, "preserve_insertion_order": False, "temp_directory": str(spill)}
    )
    try:
        con.execute("SET enable_progress_bar = false")
        con.execute("SET partitioned_write_flush_threshold = 65536")
        yield con
    finally:
        con.close()
        shutil.rmtree(spill, ignore_errors=True)


def _refresh_site(data_dir: Path, site: str, hints: set[str], force: bool) -> SiteRefresh | None:
    started = time.perf_counter()
    with writing_sites(data_dir, [site]):
        folder = site_folder(data_dir, site)
        remove_staging(folder)
        listing = site_listing(data_dir, site)
        before = load_state(data_dir, site)
        if not force and before is not None and before.matches(listing) and not hints & listing.keys():
            changed = _changed_files(before.files, rollup_files(data_dir, site))
            if not changed:
                return None
            log.warning(
                "the rollups of site %s were changed after they were built (%s): rebuilding them",
                site,
                ", ".join(changed[:3]),
            )
            force = True
        full = (
            force
            or before is None
            or before.code != CODE
            or before.rebuilding
            or _mostly_new(before, listing)
        )
        skipped = _frame_problems(data_dir, site, listing, None if full else before)
        for _ in range(3):
            before = load_state(data_dir, site)  # a failed attempt may have left months pending
            full = full or before is None or before.rebuilding
            try:
                months, recomputed = _build(data_dir, site, listing, skipped, None if full else before, hints)
            except (duckdb.Error, LakeError) as error:
                found = _content_problems(data_dir, site, listing, skipped)
                if not found and full:
                    raise LakeError(
                        f"the rollups of site {site} could not be built: {error}. The views read the lake "
                        "files meanwhile; `commerce-reports verify` checks the partitions"
                    ) from None
                if not found:
                    log.warning(
                        "the rollups of site %s could not be updated (%s): rebuilding them whole", site, error
                    )
                skipped |= found
                full = full or not found  # nothing in the lake is to blame: rebuild the rollups whole
                continue
            seconds = time.perf_counter() - started
            log.info(
                "rollups of %s: %s in %.1f s", site, "rebuilt" if full else f"{len(months)} months", seconds
            )
            return SiteRefresh(
                site, full, tuple(sorted(months)), dict(skipped), seconds, tuple(sorted(recomputed))
            )
    raise LakeError(f"the rollups of site {site} could not be built: unreadable partitions keep failing them")


def _mostly_new(before: SiteState, listing: Listing) -> bool:
    """Whether most ledger files differ from what the rollups reflect (a lake copied to another
    file system, a refetch of everything): then a full build costs less than an incremental one."""
    ledger = [r for r in listing if dataset_of(r) == "transactions"]
    changed = sum(1 for r in ledger if before.listing.get(r) != listing[r])
    return changed > max(50, len(ledger) // 2)


def _build(
    data_dir: Path,
    site: str,
    listing: Listing,
    skipped: dict[str, str],
    before: SiteState | None,
    hints: set[str],
) -> tuple[Collection[str], Collection[str]]:
    """Build the site's rollups whole (`before` None) or for what changed since `before`; return
    the months written, and those of them recomputed from their stored transactions."""
    readable = {r: s for r, s in listing.items() if r not in skipped}
    schemas = _schemas(data_dir, site, readable, before)
    folder = site_folder(data_dir, site)
    if before is None:
        save_state(data_dir, site, SiteState(listing={}, rebuilding=True))
        with _connection(folder, _FULL_MEMORY) as con:
            build = SiteBuild(con, data_dir, site, readable, schemas)
            months, whole_days = build.full()
            whole = months
    else:
        whole_days = before.whole_days
        known = before.listing.keys() | listing.keys()
        changed = {r for r in known if listing.get(r) != before.listing.get(r)}
        changed |= (hints | (skipped.keys() ^ before.skipped.keys())) & known
        with _connection(folder, _DELTA_MEMORY) as con:
            build = SiteBuild(con, data_dir, site, readable, schemas, whole_days)
            plan = build.plan(before.listing, before.skipped, changed)
            months = plan.months | before.pending_months
            save_state(data_dir, site, dataclasses.replace(before, pending_months=months))
            whole = before.pending_months
            build.apply(plan, whole, [r for r in changed if dataset_of(r) == "transactions"])
    build.remove_old_index()
    save_state(
        data_dir,
        site,
        SiteState(
            listing=listing,
            skipped=dict(skipped),
            schemas=schemas,
            whole_days=whole_days,
            files=rollup_files(data_dir, site),
        ),
    )
    return months, whole


def _schemas(data_dir: Path, site: str, readable: Listing, before: SiteState | None) -> dict[str, str]:
    """Each dataset's schema signature (MIXED when its files' columns differ), reading the footers
    of the files changed since `before` only, unless the dataset was mixed."""
    root = site_root(data_dir, site)
    found: dict[str, str] = {}
    for dataset in DATASETS:
        files = [r for r in readable if dataset_of(r) == dataset]
        if not files:
            continue
        previous = before.schemas.get(dataset) if before is not None else None
        unchanged = [r for r in files if before is not None and before.listing.get(r) == readable[r]]
        if previous is None or previous == MIXED or not unchanged:
            read = files
            signatures = set()
        else:
            read = [r for r in files if r not in unchanged]
            signatures = {previous}
        signatures |= set(file_schemas([root / r for r in read]).values())
        found[dataset] = signatures.pop() if len(signatures) == 1 else MIXED
    return found


def _frame_problems(data_dir: Path, site: str, listing: Listing, before: SiteState | None) -> dict[str, str]:
    """The files whose Parquet frame is broken: checked for those changed since `before` (all
    when None); the others keep what `before` found."""
    root = site_root(data_dir, site)
    found: dict[str, str] = {}
    for relpath, stat in listing.items():
        if before is not None and before.listing.get(relpath) == stat:
            if relpath in before.skipped:
                found[relpath] = before.skipped[relpath]
            continue
        problem = frame_problem(root / relpath, stat)
        if problem is not None:
            found[relpath] = problem
            warn_unreadable(root / relpath, problem, stat)
    return found


def _content_problems(
    data_dir: Path, site: str, listing: Listing, skipped: Mapping[str, str]
) -> dict[str, str]:
    """The readable-looking files whose content cannot be decoded (read in full: only after a
    build failed)."""
    root = site_root(data_dir, site)
    found: dict[str, str] = {}
    for relpath, stat in listing.items():
        if relpath in skipped:
            continue
        try:
            pq.read_table(root / relpath)
        except FileNotFoundError:
            continue
        except (pa.ArrowException, OSError, ValueError) as error:
            found[relpath] = f"cannot be decoded ({' '.join(str(error).split())[:200]})"
            warn_unreadable(root / relpath, found[relpath], stat)
    return found
