"""Run a sync plan: one lane per (site, endpoint), all lanes side by side, each at its own pace.

Each finished request is stored at once (Parquet first, manifest last), so an interruption, a
crash or a kill loses at most the partition in flight. Only one sync writes a site at a time
(a per-site lock across processes); a second sync waits, then finds nothing left to fetch.

Ctrl-C stops a sync wherever it is: the lanes waiting for their turn wake at once, the requests in
flight are cut (their answers would be dropped anyway), and a lane storing a partition finishes
storing it. The sync returns once every lane has ended (saying so when that takes over `STOP_GRACE`
seconds): its result counts all it stored, and nothing writes the lake after its lock is let go.
The lanes are no daemon threads either, so the interpreter never exits under one still in DuckDB
or pyarrow (a lane's parse cursor is freed as its thread ends): CPython ends a daemon thread that
wakes during its exit with `pthread_exit`, which aborts the process (SIGABRT) in C++ code. No wait
here depends on the process's clock (`waits`).

A lane never dies quietly: whatever goes wrong in it (a refused key, a full disk, a file where a
folder belongs, an unexpected error) becomes a failure of that partition, and of the rest of the
lane when it stops, and every planned partition ends up stored, failed or interrupted. A lane also
stops when its client gives its address up (`client.GIVE_UP_AFTER` attempts in a row without an
answer, or a connection that failed before the address ever answered): its remaining partitions
are reported as not asked, with the reason.
"""

from __future__ import annotations

import errno
import logging
import time
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import pyarrow as pa

from ..client import ReportsClient
from ..contract import DATE_COLUMNS, PartitionKey
from ..errors import CommerceReportsError, LakeError, UnreachableError
from ..files import describe_os_error
from ..interrupts import on_ctrl_c
from ..lake import Manifest, Repair, load_or_rebuild, reconcile, write_partition, writing_sites
from ..lake.manifest import from_embedded_sandbox, remove_partitions
from ..pace import Clock, SystemClock
from ..waits import Signal, start_thread
from .clock import fetched_moment, skew_sentence
from .plan import PlannedRequest, SettlePolicy, SyncPlan
from .progress import Progress
from .result import Failure, SyncResult, disagreements, doubts

__all__ = [
    "Interrupted",
    "OpenSites",
    "StoppableClock",
    "fetch_partition",
    "open_sites",
    "run_plan",
]

log = logging.getLogger(__name__)
STOP_GRACE = 1.5  # seconds a lane may take, once told to stop, before the sync says it still waits
_LANE_CHECK = 1.0  # seconds between two looks at the lanes while they run
# Storage errors that every later partition would meet too: the lane stops instead of fetching.
_LANE_STOPPING_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM}


class Interrupted(Exception):
    """Raised inside a lane when the sync is asked to stop while the lane waits."""


class StoppableClock:
    """A clock whose waits end early, with `Interrupted`, once `stop` is set."""

    def __init__(self, base: Clock, stop: Signal) -> None:
        self.base = base
        self.stop = stop

    def time(self) -> float:
        return self.base.time()

    def sleep(self, seconds: float) -> None:
        if self.stop.is_set():
            raise Interrupted
        if seconds <= 0:
            return
        if isinstance(self.base, SystemClock):
            if self.stop.wait(seconds):
                raise Interrupted
        else:
            self.base.sleep(seconds)  # an injected clock: its time moves when it sleeps


def fetch_partition(client: ReportsClient, key: PartitionKey) -> pa.Table:
    """Ask the service for exactly one partition."""
    if key.dataset == "transactions":
        return client.transactions(**{DATE_COLUMNS[str(key.by)]: key.start})
    fetch = client.networks if key.dataset == "networks" else client.merchandise
    return fetch(key.start, key.end, key.filters)


@dataclass
class OpenSites:
    """Sites held for writing: their manifests, and what was repaired on opening them."""

    manifests: dict[str, Manifest]
    repairs: list[Repair]


@contextmanager
def open_sites(
    data_dir: Path, policies: Mapping[str, SettlePolicy], from_service: Collection[str] = ()
) -> Iterator[OpenSites]:
    """Be the only writer of the sites of `policies`, then make each manifest describe its files:
    rebuild a missing or damaged one from the files, reconcile entries a kill left stale,
    quarantine unreadable files; and record the site's revision horizon (each window's end of
    horizon with it, when the horizon changed). A site of `from_service` (synced from a service
    at an address) whose partitions came from the built-in sandbox loses them first: synthetic
    figures, which its own would never all replace."""
    with writing_sites(data_dir, list(policies)):
        repairs: list[Repair] = []
        manifests: dict[str, Manifest] = {}
        for site in from_service:
            if from_embedded_sandbox(data_dir, site):
                remove_partitions(data_dir, site)
                log.warning(
                    "site %s: its partitions came from the built-in sandbox (synthetic figures): removed; "
                    "its data comes from its service from now on",
                    site,
                )
        for site, policy in policies.items():
            _, rebuilt = load_or_rebuild(data_dir, site, policy)
            repairs += rebuilt + reconcile(data_dir, site, policy)
            Manifest.record_horizon(data_dir, site, policy.revision_days)
            manifests[site] = Manifest.load(data_dir, site)
        yield OpenSites(manifests, repairs)


def run_plan(
    data_dir: Path,
    plan: SyncPlan,
    clients: Mapping[str, ReportsClient],
    *,
    now: Callable[[], datetime],
    policies: Mapping[str, SettlePolicy],
    stop: Signal,
    progress: bool | None = None,
    unverified: Collection[str] = (),
    say: Callable[[str], None] | None = None,
    clock: Clock | None = None,
) -> SyncResult:
    """Fetch and store every planned request; lanes run concurrently. Ctrl-C stops cleanly: the
    lanes finish what they store, and the result says it was interrupted.

    For the sites in `unverified` (their address was not yet shown to be the reporting API) a
    window answered with 404 is stored empty but unsettled, so it is asked for again. Progress goes
    to bars, else to `say` as a few lines, else to the log (see `Progress`); `clock` times the
    requests (the result's `spans`) and the progress."""
    timer: Clock = clock or SystemClock()
    bars = Progress(plan, progress, say, timer)
    lanes = [
        _Lane(
            data_dir,
            requests,
            clients,
            now,
            policies[site],
            stop,
            bars,
            timer,
            unverified=site in unverified,
            logs_skews=say is None,
        )
        for (site, _), requests in sorted(plan.lanes.items())
    ]
    result = SyncResult(plan)
    stopper = _Stopper(stop, clients)
    on_ctrl_c(stopper)  # (held by `stopper` until the sync returns)
    ends = [
        start_thread(lane.run, f"lane-{site}-{endpoint}", daemon=False)
        for lane, (site, endpoint) in zip(lanes, sorted(plan.lanes), strict=True)
    ]
    try:
        _wait_all(ends, while_waiting=bars.tick)
    except BaseException as error:  # Ctrl-C (or anything else in this thread): every lane stops first
        stopper.interrupt()
        if isinstance(error, KeyboardInterrupt):
            log.warning("interrupted: stopping (a partition being stored is finished first)")
        _wait_all(ends, late=STOP_GRACE)
        if not isinstance(error, KeyboardInterrupt):
            raise
    finally:
        bars.close()
    result.interrupted = stop.is_set()
    for lane in lanes:
        result.stored += lane.stored
        result.untyped += lane.untyped
        result.foreign += lane.foreign
        result.collapsed += lane.collapsed
        result.failed += lane.failed
        result.spans += lane.spans
        result.clock_skews += [s for s in lane.skews if s[0] not in {seen for seen, _ in result.clock_skews}]
        if not result.interrupted:  # a lane that ended without accounting for a request: say so
            done = {id(r) for r, _ in lane.stored} | {id(f.request) for f in lane.failed}
            result.failed += [
                Failure(r, LakeError("not stored: its lane ended early"), attempted=False)
                for r in lane.requests
                if id(r) not in done
            ]
    if say is None:  # the caller shows nothing itself: the log says what failed
        for line in result.failure_lines():
            log.error("%s", line)
    return result


class _Stopper:
    """Stops a sync's lanes: their waits end and their requests in flight are cut. Ctrl-C (or a
    SIGTERM) has it done from the signal watcher's thread too (`interrupts.on_ctrl_c`), not only by
    the KeyboardInterrupt of the main thread: Python may lose that one (raised within a finalizer,
    it is printed and dropped), and a sync then waited on a request of 60 s."""

    def __init__(self, stop: Signal, clients: Mapping[str, ReportsClient]) -> None:
        self.stop = stop
        self.clients = list(clients.values())

    def interrupt(self) -> None:
        self.stop.set()
        for client in self.clients:
            client.stop()


def _wait_all(
    ends: list[Signal], late: float | None = None, while_waiting: Callable[[], None] | None = None
) -> None:
    """Wait until every lane has ended (each signal of `ends` is set), calling `while_waiting`
    between two looks; past `late` seconds, say once how many are still finishing the partition
    they store."""
    started = time.monotonic()  # a difference of two readings: right under a faked clock too
    for ended in ends:
        while not ended.wait(_LANE_CHECK):
            if while_waiting is not None:
                while_waiting()
            if late is not None and time.monotonic() - started > late:
                busy = sum(not e.is_set() for e in ends)
                log.warning("waiting for %d lanes to finish storing their partition", busy)
                late = None


class _Lane:
    """The requests of one (site, endpoint), fetched one after the other at the endpoint's pace."""

    def __init__(
        self,
        data_dir: Path,
        requests: list[PlannedRequest],
        clients: Mapping[str, ReportsClient],
        now: Callable[[], datetime],
        policy: SettlePolicy,
        stop: Signal,
        bars: Progress,
        clock: Clock,
        unverified: bool = False,
        logs_skews: bool = True,
    ) -> None:
        self.clock = clock
        self.unverified = unverified
        self.logs_skews = logs_skews  # (False: the caller says the result's warnings, once per site)
        self.data_dir = data_dir
        self.requests = requests
        self.clients = clients
        self.now = now
        self.policy = policy
        self.stop = stop
        self.bars = bars
        self.stored: list[tuple[PlannedRequest, int]] = []
        self.untyped: list[tuple[PlannedRequest, int]] = []
        self.foreign: list[tuple[PlannedRequest, int]] = []
        self.collapsed: list[tuple[PlannedRequest, int]] = []
        self.failed: list[Failure] = []
        self.spans: list[tuple[PlannedRequest, float, float]] = []
        self.skews: list[tuple[str, timedelta]] = []

    def skewed(self, site: str, skew: timedelta) -> None:
        """Keep (and, when the caller says nothing itself, log once per lane) that this machine's
        clock is off the service's."""
        if not self.skews:
            if self.logs_skews:
                log.warning("%s: %s", site, skew_sentence(skew))
            self.skews.append((site, skew))

    def run(self) -> None:
        """Every request in turn; the first failure that would repeat stops the lane, and the
        requests left are reported as not fetched. Once told to stop, it stops: what fails then
        is the stop, not a failure. No exception leaves this method."""
        for index, request in enumerate(self.requests):
            if self.stop.is_set():
                return
            try:
                self._one(request)
            except Interrupted:
                return
            except Exception as error:
                if self.stop.is_set():
                    return  # a request cut by the stop
                if not self._failed(request, error):
                    self._give_up(index, self.failed[-1].error)
                    return

    def _failed(self, request: PlannedRequest, error: Exception) -> bool:
        """Record why `request` failed; whether the lane goes on (False: the next requests would
        fail the same way, e.g. a rejected key, a full disk, a fault nobody foresaw)."""
        if isinstance(error, CommerceReportsError):
            asked = not isinstance(error, UnreachableError) or error.asked
            self.failed.append(Failure(request, error, attempted=asked))
            goes_on = error.retriable or isinstance(error, LakeError)
        elif isinstance(error, OSError):
            self.failed.append(Failure(request, LakeError(f"could not store it: {describe_os_error(error)}")))
            goes_on = error.errno not in _LANE_STOPPING_ERRNOS
        else:
            log.debug("unexpected error in lane of %s", request.key.describe(), exc_info=error)
            why = f"unexpected {type(error).__name__}: {error} (run with -vv for details)"
            self.failed.append(Failure(request, LakeError(why)))
            goes_on = False
        self.bars.fail(request)
        return goes_on

    def _one(self, request: PlannedRequest) -> None:
        client = self.clients[request.site]
        started = self.clock.time()
        table = fetch_partition(client, request.key)
        if self.stop.is_set():
            raise Interrupted  # answered as the stop came: the next sync asks again
        busy_from = started + client.last_wait()  # the pace's waits are the pace's, not the work's
        fetched_at, skew = fetched_moment(table, self.now())
        if skew is not None:
            self.skewed(request.site, skew)
        written = write_partition(self.data_dir, request.site, request.key, table, fetched_at)
        not_found = (table.schema.metadata or {}).get(b"not_found") == b"1"
        settled = (
            not written.untyped
            and not written.foreign
            and not (not_found and self.unverified)
            and self.policy.is_settled(request.key, fetched_at)
        )
        Manifest.record(self.data_dir, request.site, request.key, written, fetched_at, settled)
        self.spans.append((request, busy_from, self.clock.time()))
        self.stored.append((request, written.rows))
        for found, count in (
            (self.untyped, written.untyped),
            (self.foreign, written.foreign),
            (self.collapsed, written.collapsed),
        ):
            if count:
                found.append((request, count))
        for line in doubts(request, written.untyped, written.foreign, written.collapsed) + disagreements(
            request, table
        ):
            log.warning("%s", line.removeprefix("warning: "))  # the log says its level itself
        self.bars.advance(request, written.rows)

    def _give_up(self, index: int, error: CommerceReportsError) -> None:
        for request in self.requests[index + 1 :]:
            self.failed.append(Failure(request, error, attempted=False))
            self.bars.fail(request)
