"""The flat functions most users call: sync the lake, load reports from it, see and reset its state.

    import commerce_reports as cr
    cr.sync(start=date(2026, 9, 1))                 # the ledger and aggregate slices, paced
    df = cr.load_transactions("2026-11-01", "2026-11-20", by="commissionDate")
    nets = cr.load_networks("2026-09-01", "2026-11-20", slices=[{"device_type": "MBL"}])
    with cr.open_client() as client:                     # one raw request: one typed Arrow table
        table = client.transactions(update_date="2026-11-20")

This is an entry point: each function resolves the settings (`config.current_settings()`, read once
per process) and hands them down, and with no key configured it is here that the built-in sandbox
is chosen.
It imports the data stack (polars, the HTTP client, DuckDB) only when a function needs it, so that
`commerce-reports status` and `sync --plan` start at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ._lazy import lazy_names
from ._signatures import arguments_of, bound
from .config import Settings, current_settings
from .contract import DATASETS, Dataset, PartitionKey, check_lake_path
from .embedded import available_sites, chosen_sites, started
from .errors import LakeError, ValidationError
from .files import describe_os_error
from .locate import LakeLocation
from .params import Grain, as_bool
from .sites import SiteProfile, SiteSelection, selection_of
from .syncing import SettlePolicy, SyncPlan, read_manifests
from .syncing.jobs import (
    SliceSpec,
    SyncOptions,
    fetch_keys,
    lake_errors,
    ledger,
    now_of,
    options_of,
    plan_keys,
    policies_of,
    service_sites,
    with_stored_due,
)
from .syncing.status import DatasetStatus, WindowStatus, invalidate_stored, status_frame
from .syncing.status import status_rows as lake_status_rows
from .syncing.status import window_rows as lake_window_rows

if TYPE_CHECKING:
    import polars as pl

    from .client import ReportsClient
    from .deals import DealsClient
    from .lake import VerifyReport
    from .loaders import load_merchandise, load_networks, load_transactions
    from .syncing import SyncResult

__all__ = [
    "SyncOptions",
    "invalidate",
    "lake_location",
    "load_merchandise",
    "load_networks",
    "load_transactions",
    "open_client",
    "open_deals_client",
    "plan_sync",
    "site_names",
    "status",
    "status_rows",
    "sync",
    "verify",
    "window_rows",
]

# The loaders (a Parquet read each) load on first use: `status` and `sync --plan` read no table.
# (`lazy_names` imports relative to `api`: ".loaders" is `commerce_reports.loaders`.)
_LOADERS = {name: ".loaders" for name in ("load_merchandise", "load_networks", "load_transactions")}
__getattr__, _ = lazy_names(__name__, _LOADERS, __all__)


def _profiles(site: SiteSelection, sites: SiteSelection, settings: Settings) -> dict[str, SiteProfile]:
    """The sites chosen by `site=` or `sites=`, named without starting anything (the embedded
    sandbox's when no key is set), each at the configured pace unless it has its own."""
    return chosen_sites(selection_of(site, sites), settings)


def site_names() -> list[str]:
    """The names of the configured sites, in order (the embedded sandbox's, `alpha` and `beta`,
    when no key is configured): the first is every entry point's default site."""
    return list(available_sites(current_settings(), start=False))


def lake_location(data_dir: str | Path | None = None) -> LakeLocation:
    """Which lake the toolkit uses from here, and why (`str()` reads "<folder> (<reason>)"): the
    `data_dir` given, else `COMMERCE_REPORTS_DATA_DIR`, else the nearest `commerce-reports.toml`
    at or above the working folder, else the user data folder. A notebook prints it at its top.
    A folder the lake cannot live in is refused here (`contract.check_lake_path`)."""
    location = current_settings().location(data_dir)
    check_lake_path(location.path)
    return location


def open_client(site: str | None = None, **options: Any) -> ReportsClient:
    """A `ReportsClient` for one configured site (default: the first), or for the built-in
    sandbox when no key is configured. `options` go to `ReportsClient` (pace, clock, timeout...)."""
    from .client import ReportsClient

    profile = next(iter(chosen_sites(site, current_settings(), start=True).values()))
    options.setdefault("pace", profile.pace)
    return ReportsClient(
        profile.secret_key, profile.base_url, dialect=profile.dialect, limits=profile.limits, **options
    )


def open_deals_client(**options: Any) -> DealsClient:
    """A `DealsClient` with the configured COMMERCE_REPORTS_DEALS_API_KEY and _BASE_URL and the
    request limits (`options` go to `DealsClient`: `base_url=` instead of the configured one,
    `transport`, `retry`...)."""
    from .deals.client import DealsClient
    from .deals.config import DealSettings

    return DealsClient(settings=DealSettings.resolved(current_settings()), **options)


def sync(
    start: Any = None,
    end: Any = None,
    *,
    site: SiteSelection = None,
    sites: SiteSelection = None,
    networks: Iterable[SliceSpec] | None = None,
    merchandise: Iterable[SliceSpec] | None = None,
    countries: Iterable[str] = (),
    grain: Grain = "month",
    data_dir: str | Path | None = None,
    refresh: bool = False,
    allow_large: bool = False,
    options: SyncOptions = SyncOptions(),
) -> SyncResult:
    """Bring the lake up to date: each site's `updateDate` days from `start` (default: 90 days ago)
    to today, plus the aggregate slices (unfiltered and per device by default; `countries` adds a
    networks slice per country). Nothing stored and settled is requested again; an aggregate
    window is asked for again while the service may revise it, on a schedule that thins out with
    its age (see "Revisions" in the README, and `SettlePolicy`), and a stored window not final yet
    is asked for when due even outside `start`..`end`. `site=` chooses one site, `sites=` several
    (default: all). A range over 5 years needs `allow_large=True`. The result names the lake it
    synced (`result.lake`)."""
    arguments = locals()  # by name, as plan_sync takes them too
    chosen = _Chosen.of(arguments)
    chosen = chosen._replace(options=_heard(chosen.options))
    from .db import after_sync

    launch = partial(started, settings=chosen.settings)
    with lake_errors(chosen.folder):
        result = fetch_keys(
            chosen.folder,
            chosen.profiles,
            _ledger(chosen, arguments),
            chosen.options,
            arguments["refresh"],
            finish=after_sync,
            launch=launch,
            revisions=True,
        )
    result.lake = chosen.lake
    return result


@arguments_of(sync)
def plan_sync(*args: Any, **kwargs: Any) -> SyncPlan:
    """What `sync` would do with the same arguments, fetching nothing: the exact requests per site
    and endpoint, why each is made, and the ETA `sync` would print (the pace, and what requests
    and the end work cost on this machine)."""
    arguments = bound(sync, args, kwargs)
    chosen = _Chosen.of(arguments)
    with lake_errors(chosen.folder):
        manifests, _ = read_manifests(chosen.folder, chosen.policies, service_sites(chosen.profiles))
    asked = _ledger(chosen, arguments)
    keys = with_stored_due(asked, manifests, chosen.policies)
    return plan_keys(
        manifests,
        chosen.profiles,
        keys,
        chosen.options,
        refresh=arguments["refresh"],
        asked=asked,
        finish=True,
    )


def _heard(options: SyncOptions) -> SyncOptions:
    """`options`, saying the plan and progress to their reader (`activity.to_reader`: standard
    error, a kernel's cell output) when nothing else would: a plain
    script run from cron or into a file (no terminal, no logging set up), and a notebook or a
    terminal told `progress=False` (as the shipped notebooks' cells are), waited hours at the
    service's pace in silence, where `sync` prints them; bars in a terminal or a notebook, a
    caller's `say`, or a log someone set up, get them, as before."""
    import logging

    from .activity import interactive, to_reader

    bars = options.progress is not False and interactive()
    if options.say is not None or bars or logging.getLogger(__name__).hasHandlers():
        return options
    from dataclasses import replace

    return replace(options, say=to_reader)


class _Chosen(NamedTuple):
    """What an entry point's arguments choose, resolved once: the settings, the lake and why, the
    sites (`site=` or `sites=`), and the options with each site's settle policy."""

    settings: Settings
    lake: LakeLocation
    profiles: dict[str, SiteProfile]
    options: SyncOptions

    @classmethod
    def of(cls, arguments: Mapping[str, Any]) -> _Chosen:
        for flag in ("refresh", "rebuild", "allow_large"):  # ("no" is true: it would refetch a range)
            if flag in arguments:
                as_bool(arguments[flag], flag)
        options = options_of(arguments["options"])
        settings = current_settings()
        profiles = _profiles(arguments["site"], arguments["sites"], settings)
        return cls(settings, settings.location(arguments["data_dir"]), profiles, options)

    @property
    def folder(self) -> Path:
        return self.lake.path

    @property
    def policies(self) -> dict[str, SettlePolicy]:
        return policies_of(self.profiles, self.options)


def _ledger(chosen: _Chosen, arguments: Mapping[str, Any]) -> dict[str, list[PartitionKey]]:
    """Per chosen site, the partitions the arguments of `sync` name (see `jobs.ledger`)."""
    return ledger(
        arguments["start"],
        arguments["end"],
        chosen.profiles,
        arguments["networks"],
        arguments["merchandise"],
        arguments["countries"],
        arguments["grain"],
        chosen.options,
        arguments["allow_large"],
    )


def status(
    *,
    site: SiteSelection = None,
    sites: SiteSelection = None,
    data_dir: str | Path | None = None,
    rebuild: bool = False,
    options: SyncOptions = SyncOptions(),
) -> pl.DataFrame:
    """What the lake holds: per site and dataset, partitions, rows, days covered, how many unsettled
    (days not settled, windows not final), when last fetched, and the lake's folder (`lake`).
    `window_rows` says it per window.

    A missing or damaged manifest is rebuilt from the Parquet files on its own (with a warning);
    `rebuild=True` rebuilds every manifest first (a file that cannot be read is quarantined)."""
    chosen = _Chosen.of(locals())
    import polars as pl

    _read_from(chosen.folder, data_dir)
    rows = _status_rows(chosen, rebuild)
    return status_frame(rows).with_columns(pl.lit(str(chosen.folder)).alias("lake"))


@arguments_of(status)
def status_rows(*args: Any, **kwargs: Any) -> list[DatasetStatus]:
    """The rows of `status` in plain Python (what `commerce-reports status` prints, without
    polars); the arguments of `status`."""
    arguments = bound(status, args, kwargs)
    chosen = _Chosen.of(arguments)
    _read_from(chosen.folder, arguments["data_dir"])
    return _status_rows(chosen, arguments["rebuild"])


@arguments_of(status)
def window_rows(*args: Any, **kwargs: Any) -> list[WindowStatus]:
    """Per stored aggregate window: when it was fetched, until when the service may still revise
    it, whether it is final, whether the ledger shows it changed since, and from when a sync asks
    for it again (what `commerce-reports status --windows` prints; plain Python); the arguments of
    `status`."""
    arguments = bound(status, args, kwargs)
    chosen = _Chosen.of(arguments)
    _read_from(chosen.folder, arguments["data_dir"])
    now = now_of(chosen.options)
    with lake_errors(chosen.folder):
        return lake_window_rows(chosen.folder, chosen.policies, rebuild=arguments["rebuild"], now=now)


def _read_from(folder: Path, data_dir: object) -> None:
    """Refuse a data folder the caller names (`data_dir`) that is not there: a typo, not an empty
    lake (a configured one that is not there yet is one: nothing was synced)."""
    if data_dir is not None and not folder.is_dir():
        raise ValidationError(
            "data_dir", f"there is no data folder at {folder}", "check the path; cr.sync() makes one"
        )


def _status_rows(chosen: _Chosen, rebuild: bool) -> list[DatasetStatus]:
    with lake_errors(chosen.folder):
        return lake_status_rows(chosen.folder, chosen.policies, rebuild=rebuild)


def invalidate(
    start: Any,
    end: Any,
    *,
    site: SiteSelection = None,
    sites: SiteSelection = None,
    datasets: Dataset | Iterable[Dataset] = DATASETS,
    data_dir: str | Path | None = None,
) -> int:
    """Mark the stored partitions that overlap `start`..`end` for the next sync to fetch again,
    whatever its range and slices (a country's windows included).

    Their files stay vouched for, and read, until their partitions are replaced. Returns how many
    partitions were marked."""
    chosen = (
        [datasets]
        if isinstance(datasets, str)
        else list(datasets)
        if isinstance(datasets, Iterable)
        else None
    )
    if not chosen or not all(isinstance(d, str) for d in chosen):  # one dataset, or several (none: no list)
        raise ValidationError(
            "datasets", f"{datasets!r:.60} is not a list of datasets", f"give some of {', '.join(DATASETS)}"
        )
    settings = current_settings()
    folder = settings.folder(data_dir)
    _read_from(folder, data_dir)
    profiles = _profiles(site, sites, settings)
    with lake_errors(folder):
        return invalidate_stored(folder, profiles, start, end, chosen)


def verify(
    *,
    site: SiteSelection = None,
    sites: SiteSelection = None,
    data_dir: str | Path | None = None,
    fast: bool = False,
    deep: bool = False,
    progress: bool | None = None,
) -> VerifyReport:
    """Check every partition by content (its sha256 against the manifest's, and that it decodes)
    and every rollup file (that it holds what its last refresh wrote); quarantine what fails (the
    next sync fetches it again), rebuild forged rollups, and publish the lake for the views.
    `fast=True` trusts a file whose stamp (size, times, inode) is unchanged since it was last
    hashed, and reads only the others: a copied or restored lake is read in full either way.
    `deep=True` also computes every rollup again from the lake and compares it row for row (a
    full build and a comparison of each site: tens of seconds per million transactions), which
    finds a rollup forged with its record, or computed wrong; a site whose rollups differ is
    rebuilt. Each reading step says what it does as it runs (`progress`: None in a terminal or a
    notebook, True always, False never).
    When the rollups cannot be brought up to date after (a full disk), the partitions' verdict is
    kept in the VerifyUnfinished (a LakeError) that says so: `error.report`."""
    from .activity import checked_progress, said
    from .db import CATALOG_FILE, recompute_rollups, refresh_rollups, verify_rollups, write_catalog
    from .db.published import published_problems
    from .lake import VerifyUnfinished
    from .lake import verify as verify_partitions

    as_bool(deep, "deep")
    shown = checked_progress(progress)
    changed = "changed since they were last hashed"
    partitions = f"the partitions {changed}" if fast is True else "every partition"
    rollups = f"the rollup files {changed}" if fast is True else "every rollup file"
    settings = current_settings()
    folder = settings.folder(data_dir)
    chosen = selection_of(site, sites)
    names = list(_profiles(chosen, None, settings)) if chosen is not None else None
    with lake_errors(folder):
        with said(f"reading {partitions} by content", shown):
            report = verify_partitions(folder, names, fast=fast)
        report.published = published_problems(folder)  # (publishing again, below, mends them)
        try:
            with said(f"reading {rollups} by content", shown):
                report.rollups = verify_rollups(folder, names, fast=fast)
            # brings rollups up to date with what was quarantined, and publishes (the digests read too)
            refresh_rollups(folder, {name: [] for name in names} if names is not None else None)
            if deep:  # the rollups, up to date, against a computation of them from the lake
                report.rollups += recompute_rollups(folder, names)
        except (LakeError, OSError) as error:  # a full disk, say: the partitions' verdict still stands
            raise VerifyUnfinished(
                f"the rollups were not brought up to date: {_why(error)}", report
            ) from None
        try:  # the DuckDB command line reads the catalog's generation: the one just published
            write_catalog(folder, published=True)
        except (LakeError, OSError) as error:
            raise VerifyUnfinished(f"{CATALOG_FILE} was not written again: {_why(error)}", report) from None
    return report


def _why(error: LakeError | OSError) -> str:
    """What stopped a step, in a sentence (a full disk said as such)."""
    return str(error) if isinstance(error, LakeError) else describe_os_error(error)
