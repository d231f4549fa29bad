"""Fault injection: the misbehaviour of real servers and networks, on purpose and reproducibly.

A fault is chosen per authenticated request, either forced by `FaultPlan.inject` (first in, first
out) or drawn from a `random.Random` seeded by `FaultConfig.seed` at `FaultConfig.rate`, so the same
sequence of requests meets the same faults. Kinds:

- "500", "502", "503": JSON error bodies; "html": a 503 with an HTML page; "text": a 500 in
  text/plain; "drop": the connection is closed without an answer. These replace the answer, so the
  request is neither validated nor counted against the pace.
- "slow": the normal answer, `slow_seconds` late; "flat": the normal answer in the flat shape
  (contract dialect; the published dialect is flat already and answers as usual);
  "truncate": a 200 whose body is cut in half; "malformed": a 200 whose body is not JSON. These
  alter the normal answer (which is validated and paced as usual).
"""

from __future__ import annotations

import random
import threading
from collections import deque
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the server loads with a sandbox that answers: naming faults stays light
    from .http import Response

__all__ = ["ANSWER_KINDS", "FAULT_KINDS", "FaultConfig", "FaultPlan", "alter", "fault_response"]

FAULT_KINDS = frozenset(
    {"500", "502", "503", "slow", "drop", "truncate", "malformed", "html", "text", "flat"}
)
ANSWER_KINDS = frozenset({"500", "502", "503", "html", "text", "drop"})  # replace the answer

_HTML = (
    b"<!DOCTYPE html><html><head><title>503 Service Temporarily Unavailable</title></head>"
    b"<body><h1>Service Temporarily Unavailable</h1><p>The server is temporarily unable to"
    b" service your request. Please try again later.</p></body></html>"
)
_JSON_ERRORS = {
    "500": b'{"error":"Internal Server Error","message":"An unexpected error occurred"}',
    "502": b'{"message":"Bad Gateway"}',
    "503": b'{"error":"Service Unavailable","message":"The service is temporarily unavailable"}',
}


@dataclass(frozen=True)
class FaultConfig:
    """How often requests fault (0 = never unless injected) and with which kinds."""

    rate: float = 0.0
    kinds: frozenset[str] = FAULT_KINDS
    seed: int = 0
    slow_seconds: float = 3.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError(f"fault rate must be between 0 and 1 (got {self.rate})")
        unknown = set(self.kinds) - FAULT_KINDS
        if unknown or not self.kinds:
            raise ValueError(
                f"fault kinds must be a non-empty subset of {', '.join(sorted(FAULT_KINDS))}"
                f" (got {', '.join(sorted(self.kinds)) or 'none'})"
            )
        if self.slow_seconds < 0:
            raise ValueError(f"slow_seconds must be >= 0 (got {self.slow_seconds})")


@dataclass
class _Forced:
    kind: str
    count: int
    endpoint: str | None


@dataclass
class FaultPlan:
    """Decides, thread-safely, which requests fault."""

    config: FaultConfig
    _forced: deque[_Forced] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.config.seed)
        self._kinds = sorted(self.config.kinds)

    def inject(self, kind: str, count: int, endpoint: str | None) -> None:
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r}; kinds: {', '.join(sorted(FAULT_KINDS))}")
        if count < 1:
            raise ValueError(f"count must be >= 1 (got {count})")
        with self._lock:
            self._forced.append(_Forced(kind, count, endpoint))

    def draw(self, endpoint: str) -> str | None:
        """The fault of the next request to `endpoint`, or None."""
        with self._lock:
            for forced in self._forced:
                if forced.endpoint in (None, endpoint):
                    forced.count -= 1
                    if not forced.count:
                        self._forced.remove(forced)
                    return forced.kind
            if self.config.rate and self._rng.random() < self.config.rate:
                return self._rng.choice(self._kinds)
        return None


def fault_response(kind: str) -> Response:
    """The answer that replaces a normal one for a kind in `ANSWER_KINDS`."""
    from .http import Response

    if kind == "drop":
        return Response(0, drop=True)
    if kind == "html":
        return Response(503, _HTML, "text/html; charset=utf-8")
    if kind == "text":
        return Response(500, b"Internal Server Error", "text/plain; charset=utf-8")
    return Response(int(kind), _JSON_ERRORS[kind])


def alter(response: Response, kind: str, slow_seconds: float) -> Response:
    """The normal `response` altered by "slow", "truncate" or "malformed" ("flat" acts earlier)."""
    if kind == "slow":
        return replace(response, delay=slow_seconds)
    if kind == "truncate":
        # Cut the body the client receives: uncompressed so that half means half.
        return replace(response, truncate_to=len(response.body) // 2, compressible=False)
    if kind == "malformed":
        return replace(response, body=response.body[: len(response.body) // 3] + b"<!-- upstream garbled -->")
    return response
