"""Keep the service's pace: a minimum interval per endpoint, across threads and processes.

The service documents no 429 for the reporting endpoints: going too fast may get the key throttled
or blocked. So the client keeps the pace itself. For each (service, key, endpoint) a small state
file records when the next request may start; a file lock serialises every thread and process that
shares the key.

The interval is measured from the request itself, not from a reservation: `slot` holds the lock
while the request is sent and answered, and the next turn starts an interval after the block ends.
A process paused between its turn and its send (a loaded machine) therefore never brings two
requests closer than the interval, as the service sees them:

    with pacer.slot("transactions"):
        response = http.get(...)        # send and read inside; parse and back off outside
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from .errors import ConfigurationError
from .files import save_atomic

__all__ = ["Clock", "Pacer", "SystemClock", "default_pace_dir", "prune_state", "spacing"]


class Clock(Protocol):
    """Wall-clock time shared by processes, and a way to wait; tests inject a fake one."""

    def time(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def time(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)


def default_pace_dir() -> Path:
    """Per-user state folder, so every process of the user that shares a key shares its pace."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "commerce-reports" / "pace"


def spacing(interval: float) -> float:
    """The interval plus a safety margin (1%, between 50 ms and half a second): clocks, rounding and
    the network's jitter must never make the service see two requests closer than its limit."""
    return interval + min(0.5, max(0.05, interval * 0.01)) if interval > 0 else 0.0


class Pacer:
    """Waits so that two requests to one endpoint under one key start `interval` seconds apart
    (plus the margin of `spacing`)."""

    def __init__(
        self,
        intervals: Mapping[str, float],
        scope: str,
        *,
        state_dir: Path | None = None,
        clock: Clock | None = None,
    ) -> None:
        for endpoint, seconds in intervals.items():
            if seconds < 0:
                raise ConfigurationError(f"pace for {endpoint} must be >= 0 seconds, got {seconds}")
        self.intervals = dict(intervals)
        self.clock: Clock = clock or SystemClock()
        self.state_dir = state_dir or default_pace_dir()
        # The scope names the key without revealing it: a digest of service URL and key.
        self._scope = hashlib.sha256(scope.encode()).hexdigest()[:20]
        self._thread_locks: dict[str, threading.RLock] = {}
        self._guard = threading.Lock()
        prune_state(self.state_dir, time.time())  # file times are real times, whatever the clock

    def __repr__(self) -> str:
        return f"Pacer(intervals={self.intervals!r})"

    def _paths(self, endpoint: str) -> tuple[Path, Path]:
        stem = self.state_dir / f"{self._scope}-{endpoint}"
        return stem.with_suffix(".json"), stem.with_suffix(".lock")

    def _thread_lock(self, endpoint: str) -> threading.RLock:
        with self._guard:
            return self._thread_locks.setdefault(endpoint, threading.RLock())

    @contextmanager
    def _locked(self, endpoint: str) -> Iterator[Path]:
        """The endpoint's state file, held across threads and processes (re-entrant in a thread,
        so `defer` and `set_interval` work inside a `slot`)."""
        from filelock import FileLock  # with the first request: planning reads `spacing` alone

        state, lock = self._paths(endpoint)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        with self._thread_lock(endpoint), FileLock(str(lock), is_singleton=True):
            yield state

    @contextmanager
    def slot(self, endpoint: str) -> Iterator[float]:
        """Wait for `endpoint`'s turn and hold it while the block sends one request; yields the
        turn's start time. The next turn begins the interval (plus margin) after the block ends,
        whether the request succeeded or not."""
        with self._locked(endpoint) as state:
            self.clock.sleep(max(0.0, _read(state) - self.clock.time()))
            try:
                yield self.clock.time()
            finally:
                after = self.clock.time() + spacing(self.intervals.get(endpoint, 0.0))
                _write(state, max(_read(state), after))

    def defer(self, endpoint: str, seconds: float) -> None:
        """Push the next allowed request at least `seconds` from now (the service asked us to wait)."""
        with self._locked(endpoint) as state:
            _write(state, max(_read(state), self.clock.time() + seconds))

    def next_allowed(self, endpoint: str) -> float:
        """Wall-clock time at which `endpoint` may next be called."""
        state, _ = self._paths(endpoint)
        return _read(state)


def _read(state: Path) -> float:
    try:
        return float(json.loads(state.read_text())["not_before"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0.0  # no state yet, or a half-written file from a killed process: no wait known


def _write(state: Path, not_before: float) -> None:
    save_atomic(state, json.dumps({"not_before": not_before}), durable=False)


STALE_AFTER = 7 * 24 * 3600.0  # seconds: a pace state untouched this long constrains nothing any more


def prune_state(state_dir: Path, now: float, stale_after: float = STALE_AFTER) -> int:
    """Delete the state and lock files not used for `stale_after` seconds (a week), so the folder does
    not grow with every key and test run; returns how many went. A turn of a week is far past: nobody
    holds those."""
    removed = 0
    try:
        entries = list(os.scandir(state_dir))
    except OSError:
        return 0
    for entry in entries:
        if not entry.name.endswith((".json", ".lock")):
            continue
        try:
            if now - entry.stat().st_mtime > stale_after:
                os.unlink(entry.path)
                removed += 1
        except OSError:
            continue  # gone meanwhile, or not ours to delete: leave it
    return removed
