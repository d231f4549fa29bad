"""Progress of a sync: a bar per lane in terminals and notebooks; else a few lines to the caller's
`say` (the demo, `sync --no-progress`), or a log line per request for scheduled runs."""

from __future__ import annotations

import logging
import sys
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from ..pace import Clock, SystemClock
from .plan import PlannedRequest, SyncPlan, duration

__all__ = ["Progress"]

log = logging.getLogger(__name__)

LINE_GAP = 2.0  # seconds: progress lines never come closer than this
LINE_STEP = 0.1  # of the requests: a line when this much more is done...
LINE_HEARTBEAT = 30.0  # seconds: ...or when this long has passed since the last line
RECENT = 6  # a lane's pace is read from its last few requests (a start-up is slower)
PRIOR = 2.0  # requests' worth of the plan's gap mixed in, so that a lane's first requests sway less


class Progress:
    """A bar per lane when interactive (or `enabled=True`). Otherwise, with `say`, throttled lines:
    requests done, rows stored, time elapsed and a running estimate of the time left (per lane from
    its observed pace of work, the longest lane deciding, then the plan's end work); the last line
    always. Without `say`, a log line per request. `clock` times it all (tests inject a fake one)."""

    def __init__(
        self,
        plan: SyncPlan,
        enabled: bool | None,
        say: Callable[[str], None] | None = None,
        clock: Clock | None = None,
    ) -> None:
        interactive = sys.stderr.isatty() or "ipykernel" in sys.modules
        self.bars: dict[tuple[str, str], Any] = {}
        self.done: dict[tuple[str, str], int] = {}
        self.recent: dict[tuple[str, str], deque[float]] = {}  # when each lane's last requests ended
        self.plan = plan
        self.say = say
        self.clock: Clock = clock or SystemClock()
        self.started = self.clock.time()
        self.rows = 0
        self.failed = 0
        self._said_at = self.started
        self._said_done = 0
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

    @property
    def total(self) -> int:
        return len(self.plan.requests)

    def advance(self, request: PlannedRequest, rows: int) -> None:
        """One request stored with `rows` rows."""
        lane = (request.site, request.key.endpoint)
        with self.lock:
            self.rows += rows
            if not self._step(lane):
                log.info(
                    "%s %s: %d rows (%d/%d)",
                    request.site,
                    request.key.describe(),
                    rows,
                    self.done[lane],
                    len(self.plan.lanes[lane]),
                )

    def fail(self, request: PlannedRequest) -> None:
        """One request not stored (its failure is reported with the result)."""
        with self.lock:
            self.failed += 1
            self._step((request.site, request.key.endpoint))

    def tick(self) -> None:
        """Called while the lanes run, ended requests or not: the bars' clocks move on, and a line
        comes every LINE_HEARTBEAT seconds (a server that stalls an answer left minutes unsaid)."""
        for bar in self.bars.values():
            bar.refresh()
        with self.lock:
            now = self.clock.time()
            if self.say is not None and not self.bars and now - self._said_at >= LINE_HEARTBEAT:
                self._say_line(now)

    def close(self) -> None:
        """End the bars; say the last line if it was not said (an interrupted or shortened sync)."""
        for bar in self.bars.values():
            bar.close()
        with self.lock:
            if not self.bars and sum(self.done.values()) > self._said_done:
                self._say_line(self.clock.time(), last=True)

    def time_left(self, now: float) -> float:
        """Seconds until the sync ends: per lane its requests left at the pace of its last few (a
        start-up, with caches to fill, is slower than what follows), steadied by the plan's gap; a
        lane with none done yet at the plan's pace. The longest lane decides; then the end work."""
        left = 0.0
        for lane, requests in self.plan.lanes.items():
            done, total = self.done.get(lane, 0), len(requests)
            if done >= total:
                continue
            ended = self.recent.get(lane)
            if ended:
                observed = now - ended[0]
                each = (observed + PRIOR * self.plan.gap(*lane)) / (len(ended) - 1 + PRIOR)
                left = max(left, (total - done) * each)
            else:
                elapsed = max(0.0, now - self.started)
                left = max(left, self.plan.lane_seconds(*lane) - elapsed, self.plan.cost(*lane))
        return left + self.plan.finish.seconds

    def _step(self, lane: tuple[str, str]) -> bool:
        """Count one request of `lane` done and show it on its bar or in a line; False when neither
        shows it (then the caller logs it)."""
        self.done[lane] = self.done.get(lane, 0) + 1
        self.recent.setdefault(lane, deque(maxlen=RECENT)).append(self.clock.time())
        if lane in self.bars:
            self.bars[lane].update(1)
        elif self.say is not None:
            self._maybe_say()
        else:
            return False
        return True

    def _maybe_say(self) -> None:
        now = self.clock.time()
        done = sum(self.done.values())
        since = now - self._said_at
        due = done >= self.total or (
            since >= LINE_GAP
            and (done - self._said_done >= LINE_STEP * self.total or since >= LINE_HEARTBEAT)
        )
        if due:
            self._say_line(now)

    def _say_line(self, now: float, *, last: bool = False) -> None:
        if self.say is None:
            return
        done = sum(self.done.values())
        elapsed = duration(now - self.started)
        failed = f" ({self.failed} failed)" if self.failed else ""
        text = f"  {done}/{self.total} requests{failed}, {self.rows:,} rows stored"
        answered = max((ends[-1] for ends in self.recent.values()), default=self.started)
        if done >= self.total:
            self.say(f"{text} in {elapsed}")
        elif last:
            self.say(f"{text}; stopped after {elapsed}")
        elif now - answered >= LINE_HEARTBEAT:  # (the estimate says nothing of a wait for an answer)
            self.say(
                f"{text}, {elapsed} elapsed; no answer for {duration(now - answered)}: waiting on the service"
            )
        else:
            self.say(f"{text}, {elapsed} elapsed, about {duration(self.time_left(now))} left")
        self._said_at, self._said_done = now, done
