"""Plan a sync before fetching: the exact requests per site and endpoint, and how long they take.

A partition is requested when it is missing, or when it has not settled (it can still change) and
its copy is older than the freshness interval, or when the caller forces a refresh. A ledger day
(`updateDate`) has settled once it was fetched a day after it ended: a change made later lands on
a later day. An aggregate window is different: the service counts by click date, and late
commissions and returns keep revising a window for weeks after it ends. So a window is asked for
again on a schedule that thins out with its age (`SettlePolicy.schedule`): while it is current,
when its copy is an hour old (`unsettled`); once after it ended (`ended`: its last day's clicks);
once it settled, two days after its end (`complete`); then a copy made `a` after the end serves
for `a` again (at least a day, at most `revision_max_age`) and is replaced when the ledger shows
the window changed (`changed`, see `revisions.py`), or in any case at `revision_max_age`
(`revisable`); past its site's horizon (`revision_days` after its end) it is asked once more, and
that copy is final (`final`), however late the next sync runs. The windows that ended share a
budget per site and sync (`revision_budget`, the most urgent first), so that no day of a daily
sync costs much more than another; a window due for longer than `revision_slack` is asked
whatever the budget, and so is every window due when the site's last sync was longer ago than that
(no daily sync follows to take what would wait). A partition holding rows the parser could not
type never counts as settled: it is fetched again once stale.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple, get_args

from ..config import DEFAULT_REVISION_DAYS, check_revision_days
from ..contract import AGGREGATES, Dataset, PartitionKey
from ..endpoints import SERVICE_CHECK
from ..errors import ValidationError
from ..lake import Entry, Manifest, load_or_rebuild, revisable_until
from ..pace import spacing
from ..params import DateField, DeviceType, Filters, Grain, day_range
from .costs import Expected
from .revisions import LedgerSignal

if TYPE_CHECKING:
    from ..lake import Repair

__all__ = [
    "DEFAULT_MERCHANDISE_SLICES",
    "DEFAULT_NETWORK_SLICES",
    "PlannedRequest",
    "SettlePolicy",
    "SyncPlan",
    "aggregate_keys",
    "duration",
    "plan_partitions",
    "read_manifests",
    "stored_due",
    "transaction_keys",
]

Reason = Literal[
    "missing",
    "unsettled",
    "untyped",
    "foreign",
    "refresh",
    "invalidated",
    "ended",
    "complete",
    "changed",
    "revisable",
    "final",
]
REASONS: tuple[Reason, ...] = get_args(Reason)  # in the order the plan lists them
# Why a window that ended is asked again, for the plan's readers; in the order the budget serves
# them (a final fetch first: it is what makes a window equal to the service for good).
REVISION_REASONS: dict[Reason, str] = {
    "final": "its horizon has passed since its last fetch: this fetch is final",
    "ended": "the window ended after its copy was made: its last days",
    "complete": "the window settled after its copy was made: this fetch makes it complete",
    "changed": "the ledger shows the window changed since its copy, which has served its time",
    "revisable": "within its horizon, its copy {max_age} old",
}
# A daily sync starts at the same hour, its requests seconds to minutes into it: a turn set by a
# copy's age (`changed`, `revisable`) that falls within this much after a sync starts is taken by
# that sync (it slipped to the next day: copies aged past the eight days promised). A turn set by
# the calendar (a window's end, its settling, its horizon) is never taken early: a copy made before
# it would not be what it promises.
_EARLY_BY_AGE = timedelta(hours=1)


def _reached(reason: Reason, since: datetime, now: datetime) -> bool:
    """Whether a turn for `reason` from `since` has come at `now` (one by age, within the hour)."""
    return now >= since - (_EARLY_BY_AGE if reason in ("changed", "revisable") else timedelta(0))


_RANK: dict[Reason, int] = {"final": 0, "ended": 1, "complete": 2, "changed": 3, "revisable": 3}

# Clicks and EPC per device exist only as filtered aggregate requests: keep them by default.
DEFAULT_NETWORK_SLICES: tuple[Filters, ...] = (Filters(), *(Filters(device_type=d) for d in DeviceType))
DEFAULT_MERCHANDISE_SLICES: tuple[Filters, ...] = (Filters(),)


class Due(NamedTuple):
    """A stored window that ended, due again: why, since when, how late as a share of the time its
    copy was to serve (what the budget orders by), and whether the budget may still make it wait."""

    reason: Reason
    since: datetime
    lateness: float
    forced: bool

    @property
    def rank(self) -> tuple[int, float]:
        """The budget serves the lowest first: by reason, then the latest."""
        return _RANK[self.reason], -self.lateness


@dataclass(frozen=True)
class SettlePolicy:
    """When a partition can no longer change, and how fresh a copy that still can must be.

    A ledger day settles `update_days` after it ends (a commissionDate or clickDate day
    `other_days`). An aggregate window is refreshed hourly (`freshness`) while current; once it
    ended it is asked again on the schedule of `schedule`: after its end, after it settled
    (`aggregates` later), then when the ledger shows it changed and its copy has served
    `revision_lag` times the window's age when it was made (at least a day, at most
    `revision_max_age`, which any copy is replaced at), and once past its horizon (`revision_days`
    after its end: `with_horizon` sets a site's). A sync asks at most `revision_budget` windows that
    ended per site, the most urgent first; one due for longer than `revision_slack` regardless.
    `revision_days=2` is the lake's behaviour before revisions: a window final two days after it ends.
    """

    update_days: timedelta = timedelta(days=1)
    other_days: timedelta = timedelta(days=2)
    aggregates: timedelta = timedelta(days=2)
    freshness: timedelta = timedelta(hours=1)
    revision_days: int = DEFAULT_REVISION_DAYS
    revision_max_age: timedelta = timedelta(days=8)
    revision_lag: float = 1.0
    revision_budget: int = 4
    revision_slack: timedelta = timedelta(days=2)

    def __post_init__(self) -> None:
        check_revision_days(self.revision_days, "revision_days")
        for name in (
            "update_days",
            "other_days",
            "aggregates",
            "freshness",
            "revision_max_age",
            "revision_slack",
        ):
            value = getattr(self, name)
            if not isinstance(value, timedelta) or value < timedelta(0):
                raise ValidationError(name, f"{value!r} is not a duration", "give a timedelta of 0 or more")
        if self.revision_max_age <= timedelta(0):
            raise ValidationError("revision_max_age", "must be longer than 0", "give e.g. timedelta(days=8)")
        lag = self.revision_lag
        if isinstance(lag, bool) or not isinstance(lag, int | float) or not 0 < lag <= 100:
            raise ValidationError(
                "revision_lag", f"{lag!r} is not a share of an age", "give e.g. 1.0 (0 to 100)"
            )
        budget = self.revision_budget
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
            raise ValidationError("revision_budget", f"{budget!r} is not a count", "give a whole number >= 0")

    def with_horizon(self, revision_days: int) -> SettlePolicy:
        """The same policy for a site whose windows the service may revise for `revision_days`."""
        return replace(self, revision_days=revision_days)

    def revisable_until(self, key: PartitionKey) -> datetime:
        """When the service stops revising the aggregate window `key`: its end plus the horizon."""
        return revisable_until(key, self.revision_days)

    def settles_at(self, key: PartitionKey) -> datetime:
        """When a copy of `key` fetched from then on no longer changes (for a window: it is final)."""
        if key.dataset in AGGREGATES:
            return self.revisable_until(key)
        lag = self.update_days if key.by == "updateDate" else self.other_days
        return datetime.combine(key.end, time(), UTC) + lag

    def is_settled(self, key: PartitionKey, fetched_at: datetime) -> bool:
        return fetched_at >= self.settles_at(key)

    def has_settled(self, entry: Entry) -> bool:
        """Whether a stored copy can no longer change: nothing in it in doubt (untyped values, rows
        of another day), and fetched after it settled. A window's stored flag may come from another
        horizon: its fetch time decides."""
        if entry.doubtful or entry.invalidated:
            return False
        key = entry.key
        if key.dataset in AGGREGATES:
            return self.is_settled(key, entry.fetched_at)
        return entry.settled or self.is_settled(key, entry.fetched_at)

    def schedule(self, key: PartitionKey, fetched_at: datetime) -> tuple[Reason, datetime] | None:
        """When a copy of the window `key` made at `fetched_at` is next due once the window ended,
        and why (None: the copy is final). `changed` is due only if the ledger shows a change by
        then, else at `fetched_at + revision_max_age` (`revisable`). A lag that would end too
        close to the horizon waits for the final fetch instead."""
        end = datetime.combine(key.end, time(), UTC)
        horizon = self.revisable_until(key)
        if fetched_at >= horizon:
            return None
        due: tuple[Reason, datetime]
        if fetched_at < end:
            due = ("ended", end)
        elif fetched_at < end + self.aggregates:
            due = ("complete", end + self.aggregates)
        else:
            lag = self.lag(key, fetched_at)
            due = ("changed", fetched_at + lag) if fetched_at + lag * 1.5 < horizon else ("final", horizon)
        return due if due[1] < horizon else ("final", horizon)

    def lag(self, key: PartitionKey, fetched_at: datetime) -> timedelta:
        """How long a copy of the window `key` made at `fetched_at` serves before the ledger's
        changes call for a new one: the window's age then, times `revision_lag`, between a day
        and `revision_max_age`."""
        age = fetched_at - datetime.combine(key.end, time(), UTC)
        return min(self.revision_max_age, max(timedelta(days=1), age * self.revision_lag))

    def due(self, entry: Entry, now: datetime, ledger: LedgerSignal | None = None) -> Due | None:
        """Whether the stored copy of a window that ended is due again at `now` (None: not yet, or
        final), given what the ledger shows changed since it was made."""
        key, fetched = entry.key, entry.fetched_at
        scheduled = self.schedule(key, fetched)
        if scheduled is None:
            return None
        reason, since = scheduled
        horizon = self.revisable_until(key)
        if now >= horizon:
            reason, since = "final", horizon
        elif not _reached(reason, since, now):
            return None
        elif reason == "changed" and (ledger is None or not ledger.changed(key, fetched)):
            reason, since = "revisable", fetched + self.revision_max_age
            if not _reached(reason, since, now):
                return None
        served = max((since - fetched).total_seconds(), 1.0)
        forced = _reached(reason, since + self.revision_slack, now)
        return Due(reason, since, (now - fetched).total_seconds() / served, forced)

    def asked_again(self, entry: Entry, now: datetime, ledger: LedgerSignal | None = None) -> datetime | None:
        """From when a sync asks for the stored window of `entry` again, as things stand at `now`
        (the ledger may show a change later, which brings a `revisable` copy forward); None when
        final. The budget may add up to `revision_slack`."""
        if self.has_settled(entry):
            return None
        key, fetched = entry.key, entry.fetched_at
        if entry.doubtful or now < datetime.combine(key.end, time(), UTC):
            return fetched + self.freshness
        scheduled = self.schedule(key, fetched)
        if scheduled is None:
            return None
        reason, since = scheduled
        if reason == "changed" and (ledger is None or not ledger.changed(key, fetched)):
            return min(fetched + self.revision_max_age, self.revisable_until(key))
        return since

    def reason_to_fetch(
        self,
        key: PartitionKey,
        entry: Entry | None,
        now: datetime,
        refresh: bool = False,
        ledger: LedgerSignal | None = None,
    ) -> Reason | None:
        """Why `key` must be fetched now, given its stored entry (None: it need not be). `ledger`
        tells which windows changed since fetched (without it, only their copies' age counts).
        A window that ended is asked within its site's budget (see `Due`)."""
        if entry is None:
            return "missing"
        if refresh:
            return "refresh"
        if entry.invalidated:
            return "invalidated"
        if self.has_settled(entry):
            return None
        fresh = now - entry.fetched_at < self.freshness
        if entry.doubtful:
            return None if fresh else "untyped" if entry.untyped else "foreign"
        if key.dataset not in AGGREGATES or now < datetime.combine(key.end, time(), UTC):
            return None if fresh else "unsettled"  # a ledger day, or the current window
        due = self.due(entry, now, ledger)
        return None if due is None else due.reason

    def budgeted(self, dues: Sequence[tuple[Due, PlannedRequest]]) -> tuple[list[PlannedRequest], int]:
        """The requests of one site's due windows a sync makes: those due beyond the slack, then
        the most urgent up to `revision_budget` in all; and how many wait for a later sync."""
        forced = [request for due, request in dues if due.forced]
        rest = [request for due, request in sorted(dues, key=lambda d: d[0].rank) if not due.forced]
        room = max(0, self.revision_budget - len(forced))
        return forced + rest[:room], len(rest[room:])


class PlannedRequest(NamedTuple):
    """One request of a plan: the site, the partition it fetches, and why."""

    site: str
    key: PartitionKey
    reason: Reason


@dataclass
class SyncPlan:
    """Requests grouped into lanes (site, endpoint); lanes run side by side at their own pace.

    The ETA counts what each request costs this machine (`costs`, per lane: learned from earlier
    syncs, or a default) beside the pace: a lane takes, per request, the pace's spacing or the
    request's cost, whichever is longer; the lanes share the machine, so the sync takes its longest
    lane or all the requests' costs added up, whichever is longer; then the end work (`finish`:
    rollups and catalog). Without costs, the ETA is the pace floor alone.
    """

    requests: list[PlannedRequest]
    pace: dict[str, float]
    skipped: int = 0  # partitions in range already stored and current
    outside: int = 0  # partitions the planned sites hold outside the range (not looked at)
    costs: dict[tuple[str, str], Expected] = field(default_factory=dict)  # per lane (site, endpoint)
    finish: Expected = field(default_factory=lambda: Expected(0.0))  # the sync's end work
    policy: SettlePolicy = field(default_factory=SettlePolicy)  # the schedule the revisions follow
    deferred: int = 0  # windows due again that the sites' revision budget leaves to a later sync
    checks: frozenset[str] = frozenset()  # sites whose address is checked first (`SERVICE_CHECK`)
    lanes: dict[tuple[str, str], list[PlannedRequest]] = field(init=False)
    counts: dict[tuple[str, str], int] = field(init=False)  # requests per lane, the checks counted

    def __post_init__(self) -> None:
        self.lanes = {}
        for request in self.requests:
            self.lanes.setdefault((request.site, request.key.endpoint), []).append(request)
        self.checks = frozenset(site for site in self.checks if any(s == site for s, _ in self.lanes))
        self.counts = {lane: len(requests) for lane, requests in self.lanes.items()}
        for site in self.checks:  # a site that fetches nothing is not checked
            self.counts[site, SERVICE_CHECK.name] = self.counts.get((site, SERVICE_CHECK.name), 0) + 1

    @property
    def request_count(self) -> int:
        """The requests the sync makes: those planned, and a check of each address not known."""
        return sum(self.counts.values())

    def cost(self, site: str, endpoint: str) -> float:
        """The expected seconds of one request of the lane (0 when unknown: the pace floor only)."""
        return self.costs.get((site, endpoint), Expected(0.0)).seconds

    def lane_floor(self, site: str, endpoint: str) -> float:
        """The pace floor of one lane: its requests can start no closer than the interval."""
        count = self.counts.get((site, endpoint), 0)
        return max(0, count - 1) * spacing(self.pace.get(endpoint, 0.0))

    def gap(self, site: str, endpoint: str) -> float:
        """Seconds from one request of the lane to the next: the pace's spacing or the request's
        cost, whichever is longer."""
        return max(spacing(self.pace.get(endpoint, 0.0)), self.cost(site, endpoint))

    def lane_seconds(self, site: str, endpoint: str) -> float:
        """One lane's wall time: a gap per request, but none after the last."""
        count = self.counts.get((site, endpoint), 0)
        cost = self.cost(site, endpoint)
        return max(0, count - 1) * self.gap(site, endpoint) + (cost if count else 0.0)

    @property
    def pace_floor(self) -> float:
        """The wall time the pace alone would allow: that of the longest lane."""
        return max((self.lane_floor(s, e) for s, e in self.counts), default=0.0)

    @property
    def work_seconds(self) -> float:
        """Every request's cost added up: the lanes share one machine."""
        return sum(count * self.cost(s, e) for (s, e), count in self.counts.items())

    @property
    def fetch_seconds(self) -> float:
        """The requests' wall time: the longest lane, or the machine's work if that is longer."""
        return max([self.work_seconds, *(self.lane_seconds(s, e) for s, e in self.counts)])

    @property
    def eta_seconds(self) -> float:
        """Wall time of the sync: its requests, then its end work."""
        return self.fetch_seconds + self.finish.seconds if self.requests else 0.0

    def describe(self) -> str:
        """The plan for people: the requests per lane and why, the revisions by window, the ETA."""
        if not self.requests:
            return f"nothing to fetch: {self.current_said()}{self._deferred_said()}"
        lines = [f"{self.request_count} requests ({self.current_said()}), ETA {duration(self.eta_seconds)}:"]
        for (site, endpoint), count in sorted(self.counts.items()):
            lane = self.lanes.get((site, endpoint), [])
            reasons = {r: sum(1 for q in lane if q.reason == r) for r in REASONS}
            checked = ["1 to check that its address answers as the reporting API"] * (count - len(lane))
            detail = ", ".join([*checked, *(f"{n} {r}" for r, n in reasons.items() if n)])
            each = f", ~{self.cost(site, endpoint):.2g} s of work each" if self.costs else ""
            lines.append(
                f"  {site:<12} {endpoint:<13} {count:>5} requests ({detail}), "
                f"{duration(self.lane_seconds(site, endpoint))}: a pace of "
                f"{self.pace.get(endpoint, 0):g} s{each}"
            )
            lines += self._revisions_said(lane)
        lines.append(f"  {self._eta_said()}{self._deferred_said()}")
        return "\n".join(lines)

    def current_said(self) -> str:
        """What the plan left alone, counted by what it is: "248 partitions in range stored and
        current, 20 more stored outside it" (the same lake reads as different totals otherwise)."""
        outside = f", {self.outside} more stored outside it" if self.outside else ""
        return f"{self.skipped} partitions in range stored and current{outside}"

    def _deferred_said(self) -> str:
        if not self.deferred:
            return ""
        budget, slack = self.policy.revision_budget, _days(self.policy.revision_slack)
        return (
            f"\n  {self.deferred} window{'s' if self.deferred > 1 else ''} due again wait for a later sync "
            f"(at most {budget} windows that ended are asked per site and sync, the most urgent first; "
            f"one due for {slack} is asked regardless)"
        )

    def _revisions_said(self, lane: list[PlannedRequest]) -> list[str]:
        """A line per window a lane refetches for a revision reason: which, why, how many slices."""
        windows: dict[tuple[Reason, date, date], int] = {}
        for request in lane:
            if request.reason in REVISION_REASONS:
                window = (request.reason, request.key.start, request.key.end - timedelta(days=1))
                windows[window] = windows.get(window, 0) + 1
        age = _days(self.policy.revision_max_age)
        return [
            f"    {reason:<9} {first}..{last}, {count} slice{'s' if count > 1 else ''}: "
            + REVISION_REASONS[reason].format(max_age=age)
            for (reason, first, last), count in sorted(windows.items(), key=lambda w: (w[0][1], w[0][0]))
        ]

    def _eta_said(self) -> str:
        """What the ETA is made of, beside the pace floor, and where the costs it counts come from."""
        longest = max(self.counts, key=lambda lane: self.lane_seconds(*lane))
        if self.work_seconds > self.lane_seconds(*longest):
            text = f"the requests' work on this machine (the lanes share it): {duration(self.work_seconds)}"
        else:
            text = f"the longest lane ({' '.join(longest)}): {duration(self.lane_seconds(*longest))}"
        if self.finish.seconds:
            text += f", then rollups and catalog: {duration(self.finish.seconds)}"
        text += f"; the pace alone: {duration(self.pace_floor)}"
        used = {lane: cost for lane, cost in self.costs.items() if lane in self.counts}
        learned = sum(c.learned_from for c in set(used.values()))  # lanes of a service share costs
        guessed = sorted({endpoint for (_, endpoint), cost in used.items() if not cost.learned_from})
        if not used:
            return f"{text} (no request costs counted)"
        if not guessed:
            return f"{text} (costs learned from {learned:,} earlier requests)"
        if not learned:
            return f"{text} (first sync: costs estimated)"
        return f"{text} (costs learned, except {', '.join(guessed)}: estimated)"


def _days(span: timedelta) -> str:
    """`7 days` for whole days, else the timedelta's own form."""
    whole = span.days * 86400 == span.total_seconds()
    return f"{span.days} day{'s' if span.days != 1 else ''}" if whole else str(span)


def duration(seconds: float) -> str:
    """Seconds for people: `12 s`, `14 min`, `2.5 h`."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def transaction_keys(start: date, end: date, by: DateField = "updateDate") -> list[PartitionKey]:
    return [PartitionKey.transactions(day, by) for day in day_range(start, end)]


def aggregate_keys(
    dataset: Dataset, start: date, end: date, slices: Iterable[Filters], grain: Grain = "month"
) -> list[PartitionKey]:
    """Partitions covering `start`..`end` (both included): whole months, or days."""
    days = day_range(start, end)
    starts = sorted({d.replace(day=1) for d in days}) if grain == "month" else days
    return [PartitionKey.aggregate(dataset, s, f, grain) for f in slices for s in starts]


def read_manifests(
    data_dir: Path, policies: Mapping[str, SettlePolicy], from_service: Collection[str] = ()
) -> tuple[dict[str, Manifest], list[Repair]]:
    """The manifests of the sites of `policies` (each site's own) for planning, read without the
    writer lock (a missing or damaged one is rebuilt from the files). A site of `from_service`
    whose partitions came from the built-in sandbox is planned as holding none: the sync removes
    them before it fetches (`run.open_sites`)."""
    manifests: dict[str, Manifest] = {}
    repairs: list[Repair] = []
    for site, policy in policies.items():
        manifests[site], found = load_or_rebuild(data_dir, site, policy)
        if site in from_service and manifests[site].from_embedded_sandbox:
            manifests[site] = Manifest(data_dir, site)
        repairs += found
    return manifests, repairs


def _syncs_rarely(manifest: Manifest, policy: SettlePolicy, now: datetime) -> bool:
    """Whether the site's last sync was longer than `revision_slack` before `now`: the budget
    spreads the windows due over daily syncs, and a site synced once in a while (a laptop, once a
    quarter) gets every window due at once, its final fetches included."""
    last = max((entry.fetched_at for entry in manifest), default=None)
    return last is not None and now - last > policy.revision_slack


def stored_due(manifest: Manifest, policy: SettlePolicy) -> list[PartitionKey]:
    """The site's stored partitions a sync asks for whatever its range: its aggregate windows that
    are not final (when due: a window last fetched before its horizon passed ends final however
    late, and over whatever range, the next sync runs), and every partition `invalidate` marked
    (whatever its slice: a country's windows included)."""
    return [
        e.key
        for e in manifest
        if e.invalidated or (e.key.dataset in AGGREGATES and not policy.has_settled(e))
    ]


def plan_partitions(
    manifests: Mapping[str, Manifest],
    keys: Mapping[str, Sequence[PartitionKey]],
    *,
    now: datetime,
    pace: dict[str, float],
    policies: Mapping[str, SettlePolicy],
    refresh: bool = False,
    asked: Mapping[str, Collection[PartitionKey]] | None = None,
    costs: Callable[[str, str], Expected] | None = None,
    finish: Callable[[int], Expected] | None = None,
    checks: Collection[str] = (),
) -> SyncPlan:
    """Which of `keys` (per site) must be fetched, given what each site's manifest holds, under
    each site's policy (the ledger each manifest holds says which windows changed). `refresh`
    fetches again what is stored of the `asked` keys (the range the caller asked for; None: all
    of `keys`), not the stored windows a sync adds outside it, which keep their schedule.

    `costs(site, endpoint)` gives the expected cost of one request of a lane, `finish(requests)` that
    of the sync's end work; without them the ETA is the pace floor alone. The sites of `checks` have
    their address checked first, if they fetch anything (a request each, counted in the plan)."""
    requests: list[PlannedRequest] = []
    skipped = deferred = outside = 0
    for site, site_keys in keys.items():
        manifest, policy = manifests[site], policies[site]
        in_range = set(site_keys if asked is None else asked.get(site, ()))  # (not the windows added)
        outside += sum(1 for entry in manifest if entry.key not in in_range)
        ledger = LedgerSignal.of(manifest)
        dues: list[tuple[Due, PlannedRequest]] = []
        for key in site_keys:
            if key.start > now.date():
                continue  # the future has no data yet
            entry = manifest.get(key)
            reason = policy.reason_to_fetch(key, entry, now, refresh and key in in_range, ledger)
            if reason is None:
                skipped += key in in_range  # (one outside is counted with the stored outside)
            elif reason in REVISION_REASONS and entry is not None:
                due = policy.due(entry, now, ledger)
                assert due is not None, "a revision reason comes from a due window"
                dues.append((due, PlannedRequest(site, key, reason)))
            else:
                requests.append(PlannedRequest(site, key, reason))
        if _syncs_rarely(manifest, policy, now):  # no later sync soon to take what would wait
            granted, waiting = [request for _, request in dues], 0
        else:
            granted, waiting = policy.budgeted(dues)
        requests += granted
        skipped += waiting
        deferred += waiting
    first = next(iter(policies.values()), SettlePolicy())  # the sites' policies differ by horizon only
    plan = SyncPlan(
        requests, dict(pace), skipped, outside, policy=first, deferred=deferred, checks=frozenset(checks)
    )
    if costs is not None:
        plan.costs = {lane: costs(*lane) for lane in plan.counts}
    if finish is not None and requests:
        plan.finish = finish(len(requests))
    return plan
