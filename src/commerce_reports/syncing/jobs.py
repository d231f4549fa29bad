"""What a sync or a loader asks of the service: the partitions per site, planned under the sites'
writer lock, fetched by one client per site, then the DuckDB side brought up to date.

The package's flat functions (`api`, `loaders`, `status`) are thin shells over these: they choose
the sites (the built-in sandbox when no key is configured is their decision, not this module's) and
hand them in with `launch`, which makes a named sandbox site ready for a client. Planning reads only
manifests and dates: the client (HTTP, pyarrow) and DuckDB load when a sync fetches or refreshes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._lazy import LazyLogger
from ..activity import while_read
from ..config import normalise_base_url, parse_pace
from ..contract import PartitionKey
from ..endpoints import PACE_KEYS
from ..errors import CommerceReportsError, LakeError, ServiceError, ValidationError
from ..files import describe_os_error
from ..lake.manifest import EMBEDDED_SANDBOX, Manifest
from ..pace import Clock, SystemClock
from ..params import Filters, Grain, as_date, as_days
from ..sites import SiteProfile
from .costs import CostBook, service_of
from .plan import (
    DEFAULT_MERCHANDISE_SLICES,
    DEFAULT_NETWORK_SLICES,
    SettlePolicy,
    SyncPlan,
    aggregate_keys,
    plan_partitions,
    stored_due,
    transaction_keys,
)

if TYPE_CHECKING:
    from ..client import ReportsClient
    from ..lake.repair import Repair
    from .result import SyncResult

__all__ = [
    "MAX_DAYS",
    "EndWork",
    "Launch",
    "SliceSpec",
    "SyncOptions",
    "day_span",
    "fetch_keys",
    "lake_errors",
    "ledger",
    "now_of",
    "options_of",
    "plan_keys",
    "policies_of",
    "service_sites",
    "slices_of",
    "with_stored_due",
]

log = LazyLogger(__name__)
SliceSpec = Filters | Mapping[str, Any] | str
MAX_DAYS = 5 * 366  # a longer range is a request count nobody asks for by accident: allow_large=True
# Makes a site ready for a client: the entry points start a named embedded sandbox site here.
Launch = Callable[[SiteProfile], SiteProfile]
# The DuckDB side brought up to date after a sync, given the partitions it stored per site (the
# entry points hand in `commerce_reports.db.after_sync`: the database sits above the sync).
EndWork = Callable[[Path, Mapping[str, list[PartitionKey]]], None]


def _as_it_is(profile: SiteProfile) -> SiteProfile:
    return profile


@dataclass(frozen=True)
class SyncOptions:
    """The knobs of a sync that tests and schedulers set; defaults suit people. Each site gets
    `policy` with its own revision horizon (`SiteProfile.revision_days`)."""

    policy: SettlePolicy = field(default_factory=SettlePolicy)
    now: Callable[[], datetime] | None = None  # the lake's clock (tests tie it to a sandbox's)
    clock: Clock | None = None  # the client's pace clock
    pace: float | str | Mapping[str, float] | None = None
    progress: bool | None = None  # None: bars in terminals and notebooks, else lines (see `say`)
    # Where the plan and, without bars, a few progress lines go (None: the log, a line per request;
    # `sync` makes it standard error when no log is set up).
    say: Callable[[str], None] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.policy, SettlePolicy):
            raise ValidationError(
                "policy", f"{self.policy!r:.60} is not a SettlePolicy", "give a SettlePolicy()"
            )
        for name in ("now", "say"):
            if getattr(self, name) is not None and not callable(getattr(self, name)):
                raise ValidationError(name, f"{getattr(self, name)!r:.60} is not callable", "give a function")
        if self.clock is not None and not (
            callable(getattr(self.clock, "time", None)) and callable(getattr(self.clock, "sleep", None))
        ):
            raise ValidationError(
                "clock", f"{self.clock!r:.60} is not a clock", "give an object with time() and sleep()"
            )
        if self.progress is not None and not isinstance(self.progress, bool):
            raise ValidationError(
                "progress", f"{self.progress!r:.60} is not a bool", "give True, False or None"
            )
        if self.pace is not None:
            parse_pace(self.pace)  # a ConfigurationError saying what a pace is


def options_of(options: Any) -> SyncOptions:
    """`options` when it is a SyncOptions, else a ValidationError (the entry points check it once)."""
    if not isinstance(options, SyncOptions):
        raise ValidationError("options", f"{options!r:.60} is not a SyncOptions", "give SyncOptions(...)")
    return options


@contextmanager
def lake_errors(folder: Path) -> Iterator[None]:
    """An operating-system error on the lake's folder (not a folder, no permission, a file system
    that refuses) as a LakeError naming it, not a traceback."""
    try:
        yield
    except OSError as error:
        raise LakeError(
            f"the lake at {folder} cannot be used: {error.strerror or error} ({error.filename or folder})"
        ) from None


def slices_of(specs: SliceSpec | Iterable[SliceSpec] | None, default: Sequence[Filters]) -> list[Filters]:
    """The slices `specs` names (one spec, or several), or `default` for None."""
    if specs is None:
        return list(default)
    if isinstance(specs, Filters | Mapping | str):
        specs = [specs]
    if not isinstance(specs, Iterable):
        raise ValidationError(
            "slices", f"{specs!r} is not a slice or a list of them", "give a list of slices"
        )
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


def now_of(options: SyncOptions) -> datetime:
    moment = options.now() if options.now else datetime.now(UTC)
    if not isinstance(moment, datetime):
        raise ValidationError("now", f"returned {moment!r:.60}, not a datetime", "return datetime.now(UTC)")
    if moment.tzinfo is None:
        raise ValidationError("now", "must be timezone-aware", "return datetime.now(UTC) or similar")
    return moment


def day_span(
    start: Any, end: Any, today: date, default_days: int = 90, *, allow_large: bool = False
) -> tuple[date, date]:
    """The first and last day asked for (both included); over `MAX_DAYS` only with `allow_large`."""
    last = as_date(end, "end") if end is not None else today
    first = as_date(start, "start") if start is not None else last - timedelta(days=default_days - 1)
    as_days(first, last, today)
    if not isinstance(allow_large, bool):
        raise ValidationError("allow_large", f"{allow_large!r} is not a bool", "give True or False")
    days = (last - first).days + 1
    if days > MAX_DAYS and not allow_large:
        raise ValidationError(
            "start",
            f"{first}..{last} is {days:,} days, over 5 years: at least {days:,} requests",
            "pass allow_large=True (on the command line: --yes) if you mean it",
        )
    return first, last


def ledger(
    start: Any,
    end: Any,
    sites: Iterable[str],
    networks: SliceSpec | Iterable[SliceSpec] | None,
    merchandise: SliceSpec | Iterable[SliceSpec] | None,
    countries: str | Iterable[str],
    grain: Grain,
    options: SyncOptions,
    allow_large: bool = False,
) -> dict[str, list[PartitionKey]]:
    """Per site, every partition of its ledger: updateDate days and aggregate slices."""
    first, last = day_span(start, end, now_of(options).date(), allow_large=allow_large)
    if isinstance(countries, str):
        countries = [countries]  # one country
    if isinstance(countries, bytes | Mapping) or not isinstance(countries, Iterable):
        raise ValidationError(
            "countries", f"{countries!r:.60} is not a list of countries", 'give e.g. ["US", "GB"]'
        )
    countries = list(countries)
    if not all(isinstance(country, str) for country in countries):  # (None made no slice, silently)
        raise ValidationError(
            "countries", f"{countries!r:.60} holds no country code", 'give e.g. ["US", "GB"]'
        )
    nets = slices_of(networks, DEFAULT_NETWORK_SLICES) + [Filters(country=c) for c in countries]
    merch = slices_of(merchandise, DEFAULT_MERCHANDISE_SLICES)
    keys = [
        *transaction_keys(first, last, "updateDate"),
        *aggregate_keys("networks", first, last, nets, grain),
        *aggregate_keys("merchandise", first, last, merch, grain),
    ]
    return {site: keys for site in sites}


def pace_of(profiles: Mapping[str, SiteProfile], options: SyncOptions) -> dict[str, float]:
    """The pace a plan counts: the options', else per pace key the slowest of the sites' (the
    entry points gave each profile its pace)."""
    if options.pace is not None:
        return parse_pace(options.pace)
    paces = [parse_pace(p.pace) for p in profiles.values()]
    return {key: max(p[key] for p in paces) for key in PACE_KEYS} if paces else parse_pace(None)


def policies_of(profiles: Mapping[str, SiteProfile], options: SyncOptions) -> dict[str, SettlePolicy]:
    """Each site's settle policy: the options' own, with the site's revision horizon."""
    return {name: options.policy.with_horizon(profile.revision_days) for name, profile in profiles.items()}


def service_sites(profiles: Mapping[str, SiteProfile]) -> list[str]:
    """The sites of `profiles` synced from a service at an address (not the built-in sandbox)."""
    return [name for name, profile in profiles.items() if not profile.sandbox]


def with_stored_due(
    keys: Mapping[str, Sequence[PartitionKey]],
    manifests: Mapping[str, Manifest],
    policies: Mapping[str, SettlePolicy],
) -> dict[str, list[PartitionKey]]:
    """`keys` and, per site, its stored partitions due whatever the range (see `stored_due`)."""
    return {
        site: list(dict.fromkeys([*site_keys, *stored_due(manifests[site], policies[site])]))
        for site, site_keys in keys.items()
    }


def with_repaired(
    keys: Mapping[str, Sequence[PartitionKey]], repairs: Sequence[Repair]
) -> dict[str, list[PartitionKey]]:
    """`keys` and, per site, the partitions opening it quarantined or dropped (a file whose content
    was not what the sync stored, a file gone): fetched again now, whatever the range asked."""
    lost: dict[str, list[PartitionKey]] = {}
    for repair in repairs:
        if repair.key is not None and repair.action in ("quarantined", "dropped"):
            lost.setdefault(repair.site, []).append(repair.key)
    return {site: list(dict.fromkeys([*site_keys, *lost.get(site, [])])) for site, site_keys in keys.items()}


def plan_keys(
    manifests: Mapping[str, Manifest],
    profiles: Mapping[str, SiteProfile],
    keys: Mapping[str, Sequence[PartitionKey]],
    options: SyncOptions,
    *,
    refresh: bool = False,
    asked: Mapping[str, Sequence[PartitionKey]] | None = None,
    finish: bool = False,
    book: CostBook | None = None,
) -> SyncPlan:
    """The plan of `keys`, its ETA counting the pace and each request's learned cost, and with
    `finish` the end work of a sync (rollups and catalog). `refresh` fetches again the `asked`
    keys (None: all of `keys`). `sync --plan` and a sync say the same."""
    book = book or CostBook()
    return plan_partitions(
        manifests,
        keys,
        now=now_of(options),
        pace=pace_of(profiles, options),
        policies=policies_of(profiles, options),
        refresh=refresh,
        asked=asked,
        costs=lambda site, endpoint: book.expected(service_of(profiles[site]), endpoint),
        finish=book.finish if finish else None,
        checks=[
            site
            for site in keys
            if not profiles[site].sandbox and not _known(manifests[site], profiles[site])
        ],
    )


def fetch_keys(
    data_dir: Path,
    profiles: Mapping[str, SiteProfile],
    keys: Mapping[str, Sequence[PartitionKey]],
    options: SyncOptions,
    refresh: bool = False,
    *,
    finish: EndWork | None = None,
    launch: Launch = _as_it_is,
    revisions: bool = False,
) -> SyncResult:
    """Plan under the sites' writer lock, then run the plan. The core of `sync` and the loaders.

    With `revisions` (a sync), the sites' stored windows that are not final are asked for too
    when due, whatever the range. What the requests cost is kept for the next plan's ETA. With
    `finish`, the DuckDB side is then brought up to date for every site of the sync (the rollups
    find by themselves what an interrupted sync left them to do), and what that took is kept too;
    an interrupted sync stops before it, and its views show the lake as the last whole sync left
    it. A `say` whose reader went away (`sync | head`) stops saying; the sync goes on."""
    if options.say is not None:
        options = replace(options, say=while_read(options.say))
    book = CostBook()
    result = _fetch(data_dir, profiles, keys, options, refresh, finish is not None, book, launch, revisions)
    try:
        _keep_failures(data_dir, result, now_of(options))
    except OSError as error:  # a full disk, say: the result still says what failed
        log.warning("could not record this sync's failures for `alerts`: %s", describe_os_error(error))
    learned: dict[str, dict[str, list[float]]] = {}
    for (site, endpoint), costs in result.request_costs().items():
        learned.setdefault(service_of(profiles[site]), {}).setdefault(endpoint, []).extend(costs)
    for service, costs_of_service in learned.items():
        book.record(service, costs_of_service)
    if finish is not None and not result.interrupted:
        timer = options.clock or SystemClock()
        started = timer.time()
        if result.stored:
            (options.say or log.info)("refreshing the rollups and the catalog ...")
        try:
            finish(data_dir, {site: [] for site in profiles} | result.changed())
        except (CommerceReportsError, OSError) as error:  # what was stored stays; say what was not done
            result.unfinished = describe_os_error(error) if isinstance(error, OSError) else str(error)
            if options.say is None:  # else the caller prints the result's summary, which says it
                log.error(
                    "the rollups and the catalog could not be brought up to date: %s", result.unfinished
                )
            return result
        book.record_finish(len(result.stored), timer.time() - started)
    return result


def _keep_failures(data_dir: Path, result: SyncResult, at: datetime) -> None:
    """Record, per site, the partitions this sync failed and those it stored (see
    `lake.failures`): what `alerts` reads to tell a partition that keeps failing."""
    from ..lake.failures import record_failures

    sites = {r.site for r, _ in result.stored} | {f.request.site for f in result.failed}
    for site in sorted(sites):
        failed = [
            (f.request.key, str(f.error)) for f in result.failed if f.request.site == site and f.attempted
        ]
        stored = [r.key for r, _ in result.stored if r.site == site]
        record_failures(data_dir, site, failed, stored, at)


def _fetch(
    data_dir: Path,
    profiles: Mapping[str, SiteProfile],
    keys: Mapping[str, Sequence[PartitionKey]],
    options: SyncOptions,
    refresh: bool,
    finish: bool,
    book: CostBook,
    launch: Launch,
    revisions: bool,
) -> SyncResult:
    from ..client import ReportsClient  # the HTTP stack, the parser, the store: a sync that fetches
    from ..waits import Signal
    from .result import SyncResult
    from .run import StoppableClock, open_sites, run_plan

    stop = Signal()
    clock = StoppableClock(options.clock or SystemClock(), stop)
    policies = policies_of(profiles, options)
    with open_sites(data_dir, policies, service_sites(profiles)) as opened:
        asked = keys  # (what `refresh` fetches again: not the stored windows due outside it)
        if revisions:
            keys = with_repaired(with_stored_due(keys, opened.manifests, policies), opened.repairs)
        plan = plan_keys(
            opened.manifests, profiles, keys, options, refresh=refresh, asked=asked, finish=finish, book=book
        )
        (options.say or log.info)(plan.describe())
        if not plan.requests:
            return SyncResult(plan, repairs=opened.repairs)
        explicit = options.pace
        busy = [launch(p) for name, p in profiles.items() if any(r.site == name for r in plan.requests)]
        clients = {
            profile.name: ReportsClient(
                profile.secret_key,
                profile.base_url,
                dialect=profile.dialect,
                limits=profile.limits,
                clock=clock,
                pace=explicit if explicit is not None else profile.pace,
                quiet_pace=True,  # (the plan's ETA and the progress say the lanes' waits)
            )
            for profile in busy
        }
        try:
            unverified = {
                p.name
                for p in busy
                if not _service_checked(data_dir, p, opened.manifests[p.name], clients[p.name])
            }

            result = run_plan(
                data_dir,
                plan,
                clients,
                now=lambda: now_of(options),
                policies=policies,
                stop=stop,
                progress=options.progress,
                unverified=unverified,
                say=options.say,
                clock=clock,
            )
            result.repairs = opened.repairs
            return result
        finally:
            for client in clients.values():
                client.close()


def service_record(profile: SiteProfile) -> dict[str, object]:
    """What a site's manifest keeps of its service once its address answered as the reporting API
    (checked by the first sync that fetches, `_service_checked`; a plan counts that request). The
    embedded sandbox runs on a port of the day: it is named, not addressed, and never checked."""
    where = EMBEDDED_SANDBOX if profile.sandbox else {"base_url": normalise_base_url(profile.base_url)}
    return {**where, "dialect": profile.dialect, "verified": True}


def _known(manifest: Manifest, profile: SiteProfile) -> bool:
    """Whether the site's manifest already vouches for the service the profile names."""
    return manifest.service == service_record(profile)


def _service_checked(data_dir: Path, profile: SiteProfile, manifest: Manifest, client: ReportsClient) -> bool:
    """Whether the site's address is known to answer as the reporting API, checking it once if not.

    Checked before the first sync of a site against a real service and whenever its address or
    dialect changes; the answer is kept in the site's manifest. An address that answers 404 or an
    HTML page raises a ConfigurationError naming it, before anything is stored. An address that
    cannot be checked now (a transient failure) syncs unverified: its empty windows stay unsettled.
    The embedded sandbox is not checked; the manifest records that it came from it, and the dialect.
    """
    if _known(manifest, profile):
        return True
    if not profile.sandbox:
        try:
            status = client.check_service()
        except ServiceError as error:
            if not error.retriable:
                raise
            log.warning(
                "%s: could not check %s now (%s); empty windows stay unsettled",
                profile.name,
                client.base_url,
                error,
            )
            return False
        log.info("%s: %s answers as the reporting API (HTTP %d)", profile.name, client.base_url, status)
    Manifest.record_service(data_dir, profile.name, service_record(profile))
    return True
