"""Run a sync plan: one lane per (site, endpoint), all lanes side by side, each at its own pace.

Each finished request is stored at once (Parquet first, manifest last), so an interruption, a
crash or a kill loses at most the partition in flight. Only one sync writes a site at a time
(a per-site lock across processes); a second sync waits, then finds nothing left to fetch.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from ..client import ReportsClient
from ..contract import PartitionKey
from ..errors import CommerceReportsError, LakeError
from ..files import remove_stray_files
from ..pace import Clock, SystemClock
from .manifest import Manifest, site_lock
from .plan import PlannedRequest, SettlePolicy, SyncPlan
from .store import write_partition

__all__ = ["Interrupted", "StoppableClock", "SyncResult", "fetch_partition", "run_plan", "writing_sites"]

log = logging.getLogger(__name__)
_SNAKE_BY = {"updateDate": "update_date", "commissionDate": "commission_date", "clickDate": "click_date"}


class Interrupted(Exception):
    """Raised inside a lane when the sync is asked to stop while the lane waits."""


class StoppableClock:
    """A clock whose waits end early, with `Interrupted`, once `stop` is set."""

    def __init__(self, base: Clock, stop: threading.Event) -> None:
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


@dataclass
class SyncResult:
    """What a sync did: partitions stored, failures (the partition stays due), whether it was stopped."""

    plan: SyncPlan
    stored: list[tuple[PlannedRequest, int]] = field(default_factory=list)
    failed: list[tuple[PlannedRequest, CommerceReportsError]] = field(default_factory=list)
    interrupted: bool = False

    @property
    def rows(self) -> int:
        return sum(rows for _, rows in self.stored)

    def summary(self) -> str:
        text = f"stored {len(self.stored)} partitions ({self.rows:,} rows)"
        if self.failed:
            text += f"; {len(self.failed)} failed and stay due for the next sync"
        if self.interrupted:
            text += "; interrupted: the next sync resumes from here"
        return text

    def __repr__(self) -> str:
        """A line per site and dataset (requests planned, partitions stored, rows, failures); the
        detail stays on `plan`, `stored` and `failed` (a notebook must not print every request)."""
        table: dict[tuple[str, str], list[int]] = {}  # planned, stored, rows, failed
        for request in self.plan.requests:
            table.setdefault((request.site, request.key.dataset), [0, 0, 0, 0])[0] += 1
        for request, rows in self.stored:
            counts = table.setdefault((request.site, request.key.dataset), [0, 0, 0, 0])
            counts[1], counts[2] = counts[1] + 1, counts[2] + rows
        for request, _ in self.failed:
            table.setdefault((request.site, request.key.dataset), [0, 0, 0, 0])[3] += 1
        lines = [f"SyncResult: {self.summary()}; {self.plan.skipped} partitions already current"]
        lines += [
            f"  {site:<12} {dataset:<12} {planned:>4} planned {stored:>4} stored {rows:>10,} rows "
            f"{failed:>3} failed"
            for (site, dataset), (planned, stored, rows, failed) in sorted(table.items())
        ]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """The same lines as a table, for Jupyter."""
        from html import escape

        # Cells are the repr's words: site names hold no spaces (layout's rule), counts no spaces.
        head, *lines = repr(self).splitlines()
        names = ("site", "dataset", "planned", "stored", "rows", "failed")
        header = "<tr>" + "".join(f"<th>{name}</th>" for name in names) + "</tr>"
        body = "".join(
            "<tr>"
            + "".join(f"<td>{escape(cell)}</td>" for cell in line.split()[:2] + line.split()[2::2])
            + "</tr>"
            for line in lines
        )
        return f"<div><p>{escape(head)}</p><table>{header}{body}</table></div>"


def fetch_partition(client: ReportsClient, key: PartitionKey) -> pa.Table:
    """Ask the service for exactly one partition."""
    if key.dataset == "transactions":
        return client.transactions(**{_SNAKE_BY[str(key.by)]: key.start})
    fetch = client.networks if key.dataset == "networks" else client.merchandise
    return fetch(key.start, key.end, key.filters)


@contextmanager
def writing_sites(data_dir: Path, sites: list[str]) -> Iterator[None]:
    """Be the only writer of these sites (waiting for another sync if need be), clean its debris."""
    with ExitStack() as stack:
        for site in sorted(sites):  # one order for everyone: no deadlock between two syncs
            stack.enter_context(site_lock(data_dir, site, ".sync.lock"))
        for stray in remove_stray_files(data_dir):
            log.info("removed %s, left by an interrupted writer", stray)
        yield


def run_plan(
    data_dir: Path,
    plan: SyncPlan,
    clients: Mapping[str, ReportsClient],
    *,
    now: Callable[[], datetime],
    policy: SettlePolicy,
    stop: threading.Event,
    progress: bool | None = None,
) -> SyncResult:
    """Fetch and store every planned request; lanes run concurrently. Ctrl-C stops cleanly."""
    result = SyncResult(plan)
    lock = threading.Lock()
    bars = _Progress(plan, progress)

    def lane(requests: list[PlannedRequest]) -> None:
        for request in requests:
            if stop.is_set():
                return
            try:
                table = fetch_partition(clients[request.site], request.key)
                fetched_at = now()
                written = write_partition(data_dir, request.site, request.key, table, fetched_at)
                Manifest.record(
                    data_dir,
                    request.site,
                    request.key,
                    written,
                    fetched_at,
                    policy.is_settled(request.key, fetched_at),
                )
            except Interrupted:
                return
            except CommerceReportsError as error:
                with lock:
                    result.failed.append((request, error))
                log.error("%s %s failed: %s", request.site, request.key.describe(), error)
                if not error.retriable and not isinstance(error, LakeError):
                    return  # e.g. a rejected key: the rest of this lane would fail the same way
                continue
            with lock:
                result.stored.append((request, written.rows))
            bars.advance(request, written.rows)

    threads = [
        threading.Thread(target=lane, args=(requests,), name=f"lane-{site}-{endpoint}", daemon=True)
        for (site, endpoint), requests in sorted(plan.lanes.items())
    ]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            while thread.is_alive():
                thread.join(0.2)
    except KeyboardInterrupt:
        stop.set()
        result.interrupted = True
        log.warning("interrupted: finishing the requests in flight, then stopping")
        for thread in threads:
            thread.join(30)
    finally:
        bars.close()
    if stop.is_set():
        result.interrupted = True
    return result


class _Progress:
    """A bar per lane in terminals and notebooks; plain log lines otherwise (scheduled runs)."""

    def __init__(self, plan: SyncPlan, enabled: bool | None) -> None:
        interactive = sys.stderr.isatty() or "ipykernel" in sys.modules
        self.bars: dict[tuple[str, str], Any] = {}
        self.done: dict[tuple[str, str], int] = {}
        self.plan = plan
        if enabled if enabled is not None else interactive:
            from tqdm.auto import tqdm

            for position, (lane, requests) in enumerate(sorted(plan.lanes.items())):
                self.bars[lane] = tqdm(
                    total=len(requests),
                    desc=f"{lane[0]} {lane[1]}",
                    position=position,
                    unit="req",
                    leave=True,
                    dynamic_ncols=True,
                )
        self.lock = threading.Lock()

    def advance(self, request: PlannedRequest, rows: int) -> None:
        lane = (request.site, request.key.endpoint)
        with self.lock:
            self.done[lane] = self.done.get(lane, 0) + 1
            if lane in self.bars:
                self.bars[lane].update(1)
            else:
                log.info(
                    "%s %s: %d rows (%d/%d)",
                    request.site,
                    request.key.describe(),
                    rows,
                    self.done[lane],
                    len(self.plan.lanes[lane]),
                )

    def close(self) -> None:
        for bar in self.bars.values():
            bar.close()
