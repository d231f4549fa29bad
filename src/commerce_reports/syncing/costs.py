"""What a request costs this machine, learned from earlier syncs, so that a plan's ETA is honest.

The pace is only a floor: sending, serving, parsing and storing a request take time too (on the
embedded sandbox far more than its 0.05 s pace). Every sync records, per service and endpoint, what
its requests cost: each request's busy time (from its turn to its stored manifest entry, without
the waits for the pace), shared out among the requests busy at the same moments. The costs of a
sync thus add up to the time the machine was busy with it, however its lanes overlapped, and the
next plan adds the expected costs up again (`SyncPlan`). The end work of a sync (rollups and the
catalog) is learned too, as this machine's factor on a default model.

The state lives beside the pace state (`~/.cache/commerce-reports/costs/`): a small JSON file per
service, named by a digest of its address and dialect (no key, no address in clear), holding the
totals of its last few syncs per endpoint. Files unused for a month are pruned. A damaged file is
ignored with a warning; a file that cannot be written costs a warning, never the sync.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from .._lazy import LazyLogger
from ..endpoints import ENDPOINTS
from ..errors import ValidationError
from ..files import save_atomic, user_cache_dir
from ..pace import prune_state
from ..sites import SiteProfile

__all__ = [
    "DEFAULT_COSTS",
    "CostBook",
    "Expected",
    "default_cost_dir",
    "default_finish",
    "service_of",
    "shares",
]

log = LazyLogger(__name__)

# Seconds one request keeps this machine busy, before any sync has been measured. The sandbox's
# were measured with the demo's syncs of 30 and 90 days, either dialect, on a quiet 2-core machine
# (the first requests also fill the sandbox's caches); a real service's are a day's body of a few
# MB over the network, then parsing and storing it.
DEFAULT_COSTS: dict[str, dict[str, float]] = {
    "sandbox": {"transactions": 0.08, "networks": 0.09, "merchandise": 0.5},
    "service": {"transactions": 2.0, "networks": 1.0, "merchandise": 1.0},
}
# The end work (rollups refresh and catalog) on that machine: a fixed part and one per request
# (the demo's: 1.6-1.8 s after 104 requests, 4.5-5.4 s after 268).
FINISH_BASE = 0.5
FINISH_PER_REQUEST = 0.016
KEEP_SYNCS = 5  # the totals of this many syncs are kept per endpoint: a moving mean
STALE_AFTER = 30 * 24 * 3600.0  # seconds unused after which a state file is pruned
_FINISH_FILE = "finish"


class Expected(NamedTuple):
    """The expected seconds of one request (or of a sync's end work), and how many earlier
    requests (or syncs) it was learned from; 0: a default, no history yet."""

    seconds: float
    learned_from: int = 0


def default_cost_dir() -> Path:
    """Beside the pace state, in the user's cache folder."""
    return user_cache_dir() / "costs"


def service_of(profile: SiteProfile) -> str:
    """The service a site talks to, as costs are kept: a sandbox by its dialect (its loopback port
    changes every run), a real service by its address and dialect. Never the key."""
    if profile.sandbox:
        return f"sandbox {profile.dialect}"
    return f"{profile.base_url.rstrip('/')} {profile.dialect}"


def default_finish(requests: int) -> float:
    """The end work of a sync of `requests` requests on an idle machine."""
    return FINISH_BASE + FINISH_PER_REQUEST * requests if requests else 0.0


def shares(spans: Sequence[tuple[float, float]]) -> list[float]:
    """Each (start, end) span's share of the clock: every moment is split equally among the spans
    busy at it, so the shares add up to the time during which at least one span was busy."""
    events = sorted(
        [(start, 1, i) for i, (start, end) in enumerate(spans) if end > start]
        + [(end, 0, i) for i, (start, end) in enumerate(spans) if end > start]
    )
    result = [0.0] * len(spans)
    active: set[int] = set()
    last = events[0][0] if events else 0.0
    for moment, opening, index in events:
        if active and moment > last:
            part = (moment - last) / len(active)
            for busy in active:
                result[busy] += part
        last = moment
        if opening:
            active.add(index)
        else:
            active.discard(index)
    return result


class CostBook:
    """The learned costs of every service this user syncs from, read and written in `folder`."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or default_cost_dir()
        self._states: dict[str, dict[str, Any]] = {}  # read once per book: one warning per damage
        prune_state(self.folder, time.time(), STALE_AFTER)

    def __repr__(self) -> str:
        return f"CostBook({str(self.folder)!r})"

    def expected(self, service: str, endpoint: str) -> Expected:
        """The mean cost of a request of `service`'s `endpoint` over the last syncs that made one,
        else the default for that kind of service."""
        kept = _totals(self._read(_checked(service, endpoint)).get(endpoint))
        count = sum(n for n, _ in kept)
        if count:
            return Expected(sum(s for _, s in kept) / count, count)
        kind = "sandbox" if service.startswith("sandbox ") else "service"
        return Expected(DEFAULT_COSTS[kind].get(endpoint, 1.0))

    def record(self, service: str, costs: Mapping[str, Iterable[float]]) -> None:
        """Add one sync's request costs (seconds per request, per endpoint) to `service`'s history."""
        state = self._read(service)
        for endpoint, seconds in costs.items():
            _checked(service, endpoint)
            values = [s for s in seconds if math.isfinite(s) and s >= 0]
            if sum(values) > 0:  # all zero: an injected clock that never moved, nothing learned
                state[endpoint] = [*_totals(state.get(endpoint)), (len(values), sum(values))][-KEEP_SYNCS:]
        self._write(service, state)

    def finish(self, requests: int) -> Expected:
        """The expected end work of a sync of `requests` requests: the default model times this
        machine's factor, the median over the last syncs that measured one."""
        factors = [s for _, s in _totals(self._read(_FINISH_FILE).get("factor"))]
        if not factors or not requests:
            return Expected(default_finish(requests))
        return Expected(_median(factors) * default_finish(requests), len(factors))

    def record_finish(self, requests: int, seconds: float) -> None:
        """Add one sync's end work (`seconds`, after `requests` requests) to the history."""
        if requests <= 0 or not math.isfinite(seconds) or seconds <= 0:
            return
        state = self._read(_FINISH_FILE)
        factor = seconds / default_finish(requests)
        state["factor"] = [*_totals(state.get("factor")), (1, factor)][-KEEP_SYNCS:]
        self._write(_FINISH_FILE, state)

    def _path(self, service: str) -> Path:
        return self.folder / f"{hashlib.sha256(service.encode()).hexdigest()[:20]}.json"

    def _read(self, service: str) -> dict[str, Any]:
        if service not in self._states:
            self._states[service] = self._load(service)
        return dict(self._states[service])

    def _load(self, service: str) -> dict[str, Any]:
        path = self._path(service)
        try:
            state = json.loads(path.read_text())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as error:
            log.warning("ignoring the request costs in %s, which cannot be read (%s)", path, error)
            return {}
        if not isinstance(state, dict) or not all(
            isinstance(v, list) and len(_totals(v)) == len(v) for v in state.values()
        ):
            log.warning("ignoring the request costs in %s: not the layout this version writes", path)
            return {}
        return state

    def _write(self, service: str, state: dict[str, Any]) -> None:
        self._states[service] = state
        path = self._path(service)
        try:
            save_atomic(path, json.dumps({k: [list(t) for t in v] for k, v in state.items()}), durable=False)
        except OSError as error:
            log.warning("could not keep the request costs in %s (%s): the next ETA is a guess", path, error)


def _checked(service: str, endpoint: str) -> str:
    if not isinstance(service, str) or not service.strip():
        raise ValidationError("service", f"{service!r} names no service", "give service_of(profile)")
    if endpoint not in ENDPOINTS:
        known = ", ".join(ENDPOINTS)
        raise ValidationError("endpoint", f"{endpoint!r} is not an endpoint", f"give one of {known}")
    return service


def _totals(value: Any) -> list[tuple[int, float]]:
    """A kept list of (count, seconds) pairs; anything else reads as nothing."""
    if not isinstance(value, list):
        return []
    pairs = []
    for pair in value:
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2):
            return []
        count, seconds = pair
        if not isinstance(count, int) or not isinstance(seconds, (int, float)) or count < 0 or seconds < 0:
            return []
        pairs.append((count, float(seconds)))
    return pairs


def _median(values: Sequence[float]) -> float:
    """The median of some numbers (statistics.median's, without loading `statistics` at start-up)."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
