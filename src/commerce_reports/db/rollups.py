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

A site is refreshed in two parts: a plan, then its writer. `plan.plan_site` decides from the
lake's state (its listing, the rollups' state, the rollup files' check, the partitions a sync says
it stored) whether to do nothing, build whole, or update for what changed, and why; an update's
detail (per rollup and month: whole, delta, patch or nothing) waits for what its changed
transactions are, which the build reads without writing (`SiteBuild.read_change`, then
`plan.plan_update`). The build then carries the plan out (`SiteBuild.full` or `.write`) and
decides nothing. `plan_rollups` (and `commerce-reports rollups --plan`) shows the plans and writes
nothing.

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
from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import duckdb

from ..activity import said
from ..contract import PART_FILE, PartitionKey, lake_sites
from ..errors import LakeError, ValidationError, is_ctrl_c
from ..lake.locks import writing_sites
from .build import SiteBuild, build_connection, reading_connection
from .listing import Listing, undecodable_files
from .plan import UPDATE, WHOLE, SitePlan, foreign_rollups, plan_site
from .published import publish
from .recompute import recomputed_differences
from .snapshot import site_snapshot, take_snapshot
from .sources import data_folder
from .state import (
    DERIVED_ROLLUPS,
    NOTHING,
    SitePlaces,
    SiteState,
    changed_rollups,
    load_state,
    rollup_files,
    save_state,
    site_places,
)

__all__ = [
    "FALLBACK",
    "SiteRefresh",
    "fresh_rollups",
    "plan_rollups",
    "rebuild_rollups",
    "recompute_rollups",
    "refresh_rollups",
    "verify_rollups",
]

log = logging.getLogger(__name__)
FALLBACK = (
    "full_rebuild_fallback"  # marks the log record of a refresh rebuilt whole because its update failed
)


@dataclass(frozen=True)
class SiteRefresh:
    """What a refresh did for one site: its plan (built whole or for what changed, and why, with a
    step per rollup and month), the months it wrote, the partition files it left out as unreadable,
    and how long it took."""

    site: str
    plan: SitePlan
    months: tuple[str, ...]
    skipped: dict[str, str]
    seconds: float

    @property
    def full(self) -> bool:
        """Whether the rollups were built whole."""
        return self.plan.action == WHOLE

    @property
    def recomputed(self) -> tuple[str, ...]:
        """The months of the monthly rollups computed again from their stored transactions (the
        others were updated by the changed transactions alone)."""
        if self.full:
            return self.months
        merged = {view.name for view in DERIVED_ROLLUPS if view.merge is not None}
        return tuple(sorted({s.bucket for s in self.plan.steps if s.action == WHOLE and s.rollup in merged}))


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
    folder = data_folder(data_dir)
    done = []
    targets = _targets(folder, changed)
    for places in targets:
        result = _refresh_site(places, targets[places], force)
        if result is not None:
            done.append(result)
    publish(folder)
    return done


def rebuild_rollups(
    data_dir: Path | str | None = None, sites: Iterable[str] | None = None
) -> list[SiteRefresh]:
    """Rebuild the rollups of `sites` (default: every site of the lake) whole, from the lake files."""
    folder = data_folder(data_dir)
    done = [r for places in _chosen(folder, sites) if (r := _refresh_site(places, set(), True)) is not None]
    publish(folder)
    return done


def plan_rollups(data_dir: Path | str | None = None, sites: Iterable[str] | None = None) -> list[SitePlan]:
    """What `refresh_rollups` would do for each of `sites` (default: every site of the lake) and why,
    writing nothing: for an update, the changed transactions are read from the lake to say, per
    rollup and month, what would be written."""
    plans = []
    for places in _chosen(data_folder(data_dir), sites):
        survey = _survey(places, set(), False, {})
        plan = survey.plan
        if plan.action == UPDATE and not survey.whole:
            with reading_connection() as con:
                build = SiteBuild(con, places, survey.readable, survey.basis)
                plan = build.planned(plan)
        plans.append(plan)
    return plans


def verify_rollups(
    data_dir: Path | str | None = None, sites: Iterable[str] | None = None, *, fast: bool = False
) -> list[str]:
    """Check by content that each site's rollup files are the ones its last refresh wrote (a
    rollup changed by anything else, a forged one, would answer for the lake); rebuild the rollups
    of a site whose files differ. Files that a refresh stopped midway was rewriting are not damage:
    the next refresh writes them again, and the views read the lake meanwhile. `fast=True` trusts
    files whose stamp is unchanged since they were last hashed. Returns what was found, a line per
    site rebuilt (empty: all intact)."""
    if not isinstance(fast, bool):
        raise ValidationError("fast", f"{fast!r} is not a bool", "give True or False")
    folder = data_folder(data_dir)
    found = []
    for places in _chosen(folder, sites):
        state = load_state(places)
        if state is None or state.rebuilding:
            continue  # no record; or a full build stopped midway: the next refresh writes every file
        changed = foreign_rollups(state, changed_rollups(state, rollup_files(places, read_all=not fast)))
        if changed:
            _refresh_site(places, set(), True)
            found.append(
                f"{places.site}: rollup files differ from what their refresh wrote ({', '.join(changed[:5])}"
                f"{', ...' if len(changed) > 5 else ''}): rebuilt from the lake"
            )
    if found:
        publish(folder)
    return found


def recompute_rollups(data_dir: Path | str | None = None, sites: Iterable[str] | None = None) -> list[str]:
    """Compute each site's rollups again, whole, from its lake files, and compare them row for row
    with the stored ones (`recompute.py`): what a check of files against their record cannot see,
    a rollup forged with its record, or one an update computed wrong. A site whose rollups differ
    is rebuilt. Tens of seconds per million transactions, said as it runs; a site whose rollups are not up
    to date with its lake is left to its next refresh. Returns a line per site rebuilt (empty:
    every rollup equals its recomputation)."""
    folder = data_folder(data_dir)
    found = []
    for places in _chosen(folder, sites):
        with writing_sites(places.data_dir, [places.site]):  # (no refresh of the site meanwhile)
            survey = _survey(places, set(), False, {})
            if survey.before is None or survey.plan.writes:
                continue
            with said(f"computing the rollups of site {places.site} again from its lake files"):
                differ = recomputed_differences(places, survey.readable)
        if differ:
            _refresh_site(places, set(), True)
            named = "; ".join(f"{view}: {what}" for view, what in sorted(differ.items()))
            found.append(f"{places.site}: differ from a computation of them from the lake ({named}): rebuilt")
    if found:
        publish(folder)
    return found


def fresh_rollups(data_dir: Path | str | None = None) -> list[str]:
    """The sites of the lake whose rollups match their files exactly (the views read those)."""
    return take_snapshot(data_folder(data_dir)).fresh_sites


def _chosen(data_dir: Path, sites: Iterable[str] | None) -> list[SitePlaces]:
    """The places of `sites` (None: every site of the lake), every name checked before any work."""
    names = lake_sites(data_dir) if sites is None else sites
    if isinstance(names, str) or not isinstance(names, Iterable):
        raise ValidationError("sites", f"{sites!r} is not a list of site names", "give e.g. ['alpha']")
    return [site_places(data_dir, site) for site in names]


def _targets(
    data_dir: Path, changed: Mapping[str, Iterable[PartitionKey]] | None
) -> dict[SitePlaces, set[str]]:
    """The places of each site to refresh, with the relpaths of the partition files the caller says
    it stored there (`changed`; None: every site, none said)."""
    if changed is not None and not isinstance(changed, Mapping):
        raise ValidationError(
            "changed",
            f"{type(changed).__name__} is not a mapping",
            "give {site: [PartitionKey, ...]} or None",
        )
    targets: dict[SitePlaces, set[str]] = {}
    for places in _chosen(data_dir, changed):  # (a mapping's sites: its keys)
        keys = () if changed is None else changed[places.site]
        if not isinstance(keys, Iterable) or not all(isinstance(k, PartitionKey) for k in keys):
            raise ValidationError(
                "changed",
                f"{keys!r} (site {places.site}) is not a list of PartitionKey",
                "give the keys the sync stored",
            )
        targets[places] = {f"{key.relpath}/{PART_FILE}" for key in keys}
    return targets


def _survey(places: SitePlaces, stored: set[str], force: bool, undecodable: Mapping[str, str]) -> _Survey:
    """The site's lake and rollups as they are, and the plan they call for (an update's steps
    not yet known)."""
    seen = site_snapshot(places, rollups=True)
    before, skipped = seen.state, {**seen.unreadable, **undecodable}
    changed = [] if before is None or seen.rollups is None else changed_rollups(before, seen.rollups)
    plan = plan_site(places.site, seen.listing, before, skipped, changed, stored, force=force)
    return _Survey(places, seen.listing, before, skipped, plan)


@dataclass(frozen=True)
class _Survey:
    """A site's lake and rollups as a refresh found them, and its plan: what a build of the site
    (to carry the plan out, or to read an update's change for the plan shown) is made from."""

    places: SitePlaces
    listing: Listing
    before: SiteState | None
    skipped: dict[str, str]
    plan: SitePlan

    @cached_property
    def readable(self) -> Listing:
        """The listing but the partitions left out."""
        return {r: s for r, s in self.listing.items() if r not in self.skipped}

    @property
    def whole(self) -> bool:
        """Whether the rollups are built whole (the plan's word, or no state to update)."""
        return self.plan.action == WHOLE or self.before is None

    @property
    def basis(self) -> SiteState:
        """What a build starts from: the state before, for an update; nothing, for a whole build."""
        return NOTHING if self.whole or self.before is None else self.before


def _refresh_site(places: SitePlaces, stored: set[str], force: bool) -> SiteRefresh | None:
    """Refresh one site's rollups under its lock: survey and plan, then carry the plan out (up to
    three attempts, each planned again from what the one before left, leaving out what it found
    undecodable); None when the plan is to do nothing."""
    started = time.perf_counter()
    undecodable: dict[str, str] = {}
    failure = ""  # the last attempt's error, said if every attempt fails
    with writing_sites(places.data_dir, [places.site]):
        for _ in range(3):
            survey = _survey(places, stored, force, undecodable)
            if not survey.plan.writes:
                return None
            try:
                with _said_if_whole(survey):
                    plan, months = _carry_out(survey)
            except (duckdb.Error, LakeError) as error:
                if is_ctrl_c(error):  # a query that Ctrl-C interrupted is no build failure to retry
                    raise KeyboardInterrupt from error
                found = undecodable_files(places.lake, survey.listing, survey.skipped)
                if not found and survey.plan.action == WHOLE:
                    raise LakeError(
                        f"the rollups of site {places.site} could not be built: {_why(error)}. The views "
                        "read the lake files meanwhile; `commerce-reports rollups` builds them once the "
                        "cause is mended"
                    ) from None
                if not found:  # nothing in the lake is to blame: rebuild the rollups whole
                    log.warning(
                        "the rollups of site %s could not be updated (%s): rebuilding them whole",
                        places.site,
                        error,
                        extra={FALLBACK: True},
                    )
                    force = True
                undecodable |= found
                failure = _why(error)
                continue
            seconds = time.perf_counter() - started
            log.info("rollups of %s: %s in %.1f s", places.site, plan.reason, seconds)
            return SiteRefresh(places.site, plan, tuple(sorted(months)), survey.skipped, seconds)
    left_out = ", ".join(sorted(undecodable)[:3]) + (", ..." if len(undecodable) > 3 else "")
    raise LakeError(
        f"the rollups of site {places.site} could not be built: unreadable partitions keep failing "
        f"them (left out: {left_out or 'none'}; the last failure: {failure})"
    )


def _said_if_whole(survey: _Survey) -> AbstractContextManager[object]:
    """A build of every rollup (seconds to minutes: a first sync, an upgrade, a repair) said with
    its reason as it runs, whoever asked for it; an update (under a second, mostly) is not."""
    if not survey.whole:
        return nullcontext()
    return said(f"building the rollups of site {survey.places.site} whole: {survey.plan.reason}")


def _carry_out(survey: _Survey) -> tuple[SitePlan, frozenset[str]]:
    """Carry out `survey.plan` (whole or an update); return it with its steps, and the months
    written. The state says what is being rewritten before any rollup file is, and what the rollups
    reflect once all are."""
    places = survey.places
    plan = survey.plan
    before = survey.before
    if survey.whole:
        save_state(places, SiteState(listing={}, rebuilding=True))
    with build_connection(places, full=survey.whole) as con:
        build = SiteBuild(con, places, survey.readable, survey.basis)
        if survey.whole or before is None:
            months, whole_days = build.full()
        else:
            plan = build.planned(plan)
            months, whole_days = plan.months | before.pending_months, before.whole_days
            save_state(places, dataclasses.replace(before, pending_months=months))
            build.write(plan)
    state = SiteState(
        survey.listing, dict(survey.skipped), build.schemas, whole_days=whole_days, files=rollup_files(places)
    )
    save_state(places, state)
    return plan, months


_FULL_DISK = ("No space left on device", '"errno":"28"', "Disk quota exceeded", '"errno":"122"')


def _why(error: Exception) -> str:
    """A build's failure in words: a full disk said as such (DuckDB's own text is long JSON)."""
    text = str(error)
    if any(mark in text for mark in _FULL_DISK):
        path = re.search(r'file \\?"([^"\\]+)', text)
        return f"the disk is full{f' (writing {path.group(1)})' if path else ''}"
    return text
