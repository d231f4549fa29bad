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

A wait longer than a few seconds is said before it starts, with its reason: the state file records
who set the next turn and why. A wait the service asked for (`defer`, a Retry-After) or one set by
another process sharing the key is a warning, whichever process waits; a wait for this process's
own pace is an info line (a sync's plan and progress show its pace).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import NamedTuple, Protocol

from ._lazy import LazyLogger
from .errors import ConfigurationError
from .files import describe_os_error, held, save_atomic, user_cache_dir

__all__ = [
    "LONG_WAIT",
    "Clock",
    "Pacer",
    "SystemClock",
    "Turn",
    "WaitTooLong",
    "default_pace_dir",
    "prune_state",
    "spacing",
]

log = LazyLogger(__name__)
LONG_WAIT = 2.0  # seconds: a longer wait is said before it starts, with its reason (the house rule)


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
    return user_cache_dir() / "pace"


def spacing(interval: float) -> float:
    """The interval plus a safety margin (1%, between 50 ms and half a second): clocks, rounding and
    the network's jitter must never make the service see two requests closer than its limit."""
    return interval + min(0.5, max(0.05, interval * 0.01)) if interval > 0 else 0.0


class Turn(NamedTuple):
    """When an endpoint may next be asked, and who set that why: `asked` when the service asked for
    the wait (a Retry-After), else the pace; `by` names the process (`host-pid`)."""

    not_before: float = 0.0
    asked: bool = False
    by: str = ""

    @property
    def ours(self) -> bool:
        return self.by == _this_process()


def _this_process() -> str:
    import socket  # a millisecond of set-up: paid when the pace is held, not by every import

    return f"{socket.gethostname()}-{os.getpid()}"


class WaitTooLong(Exception):
    """The service asked for a wait, still `seconds` long, that is longer than the caller allows."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"{seconds:.0f} s")
        self.seconds = seconds


class Pacer:
    """Waits so that two requests to one endpoint under one key start `interval` seconds apart
    (plus the margin of `spacing`). A wait over `LONG_WAIT` is said before it starts: a warning,
    but for a wait of its own pace when `quiet_pace` (a sync, whose plan and progress say them)."""

    def __init__(
        self,
        intervals: Mapping[str, float],
        scope: str,
        *,
        state_dir: Path | None = None,
        clock: Clock | None = None,
        quiet_pace: bool = False,
    ) -> None:
        for endpoint, seconds in intervals.items():
            if seconds < 0:
                raise ConfigurationError(f"pace for {endpoint} must be >= 0 seconds, got {seconds}")
        self.intervals = dict(intervals)
        self.quiet_pace = quiet_pace
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
        so `defer` and `set_interval` work inside a `slot`). Another process holds it while its
        request runs: a long wait for that is said."""
        state, lock = self._paths(endpoint)
        waiting = f"waiting for another process's {endpoint} request under this key to end: it holds the turn"
        stack = ExitStack()
        try:
            stack.enter_context(self._thread_lock(endpoint))
            stack.enter_context(held(lock, waiting))
        except OSError as error:
            stack.close()
            raise ConfigurationError(
                f"cannot keep the pace state in {self.state_dir}: {describe_os_error(error)}; set "
                "XDG_CACHE_HOME to a folder this user can write"
            ) from None
        with stack:
            yield state

    @contextmanager
    def slot(self, endpoint: str, *, longest: float | None = None) -> Iterator[float]:
        """Wait for `endpoint`'s turn and hold it while the block sends one request; yields the
        turn's start time. The next turn begins the interval (plus margin) after the block ends,
        whether the request succeeded or not. A wait over LONG_WAIT is said first, with its reason;
        one the service asked for that is over `longest` is WaitTooLong, nothing waited or sent."""
        with self._locked(endpoint) as state:
            turn = _read(state)
            wait = turn.not_before - self.clock.time()
            skewed = wait > _FURTHEST[turn.asked]
            if skewed:  # no pace nor Retry-After sets it: a clock that ran ahead did
                log.warning(
                    "the next %s turn under this key was set %s ahead (by %s): a clock that ran ahead "
                    "set it (NTP corrected it since, or a process ran under a faked time); not waiting",
                    endpoint,
                    _span(wait),
                    turn.by or "an unknown process",
                )
                wait = 0.0
            if longest is not None and turn.asked and wait > longest:
                raise WaitTooLong(wait)
            if wait > LONG_WAIT:
                self._say_wait(endpoint, wait, turn)
            self.clock.sleep(max(0.0, wait))
            try:
                yield self.clock.time()
            finally:
                after = self.clock.time() + spacing(self.intervals.get(endpoint, 0.0))
                if after > _read(state).not_before or skewed:  # (a skewed turn is replaced)
                    _write(state, Turn(after, asked=False, by=_this_process()))

    def defer(self, endpoint: str, seconds: float) -> None:
        """Push the next allowed request at least `seconds` from now (the service asked us to wait)."""
        with self._locked(endpoint) as state:
            until = self.clock.time() + seconds
            if until > _read(state).not_before:
                _write(state, Turn(until, asked=True, by=_this_process()))

    def next_allowed(self, endpoint: str) -> float:
        """Wall-clock time at which `endpoint` may next be called."""
        return self.turn(endpoint).not_before

    def turn(self, endpoint: str) -> Turn:
        """When `endpoint` may next be called, and who set it why."""
        state, _ = self._paths(endpoint)
        return _read(state)

    def _say_wait(self, endpoint: str, wait: float, turn: Turn) -> None:
        head = f"waiting {wait:.0f} s before the next {endpoint} request"
        source = "" if turn.ours else f", told to another process ({turn.by}) sharing this key"
        if turn.asked:
            log.warning("%s: the service asked to slow down (Retry-After%s)", head, source)
        elif not turn.ours:
            log.warning("%s: another process (%s) sharing this key asked last", head, turn.by or "unknown")
        else:  # (a notebook's direct requests waited a minute each without a word: INFO is not shown)
            say = log.info if self.quiet_pace else log.warning
            say("%s: the pace is %g s", head, self.intervals.get(endpoint, 0.0))


# The furthest a turn can be: the pace (no service asks for an hour between requests), or a wait
# the service asked for (a client refuses one over its allowance before it is recorded as a turn).
_FURTHEST = {False: 3600.0, True: 24 * 3600.0}


def _span(seconds: float) -> str:
    return f"{seconds / 86400:.1f} days" if seconds >= 86400 else f"{seconds / 3600:.1f} hours"


def _read(state: Path) -> Turn:
    try:
        data = json.loads(state.read_text())
        return Turn(float(data["not_before"]), bool(data.get("asked", False)), str(data.get("by", "")))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return Turn()  # no state yet, or a half-written file from a killed process: no wait known


def _write(state: Path, turn: Turn) -> None:
    payload = {"not_before": turn.not_before, "asked": turn.asked, "by": turn.by}
    save_atomic(state, json.dumps(payload), durable=False)


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
