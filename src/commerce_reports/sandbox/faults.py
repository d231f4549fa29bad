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

Hostile data (`DATA_KINDS`): a well-formed 200 that holds what a day cannot. A retry does not help,
so they are drawn only when named (`inject`, or `FaultConfig.kinds`), never by a bare rate:
- "duplicate": the first transaction sent twice (the copy last);
- "foreign_day": the first transaction's updateDate moved to 2000-01-01, a day nobody asked for;
- "huge_number": the first row's revenue written `1e400` (transactions, networks, merchandise);
- "negative_infinity": likewise `-Infinity` (not JSON, but what some servers write);
- "echo_key": every transaction carries the caller's key in unknown fields, as it is, in hex,
  reversed, spaced out and in base64.
"""

from __future__ import annotations

import base64
import random
import threading
from collections import deque
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:  # the server loads with a sandbox that answers: naming faults stays light
    from .http import Response

__all__ = ["ANSWER_KINDS", "DATA_KINDS", "FAULT_KINDS", "FaultConfig", "FaultPlan", "alter", "fault_response"]

FAULT_KINDS = frozenset(
    {"500", "502", "503", "slow", "drop", "truncate", "malformed", "html", "text", "flat"}
)
DATA_KINDS = frozenset({"duplicate", "foreign_day", "huge_number", "negative_infinity", "echo_key"})
_KNOWN = FAULT_KINDS | DATA_KINDS
FOREIGN_DAY = "2000-01-01"
_RAW = "@sandbox-raw-number@"  # a placeholder for a number orjson cannot write
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
        unknown = set(self.kinds) - _KNOWN
        if unknown or not self.kinds:
            raise ValueError(
                f"fault kinds must be a non-empty subset of {', '.join(sorted(_KNOWN))}"
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
        if kind not in _KNOWN:
            raise ValueError(f"unknown fault kind {kind!r}; kinds: {', '.join(sorted(_KNOWN))}")
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


def alter(response: Response, kind: str, slow_seconds: float, key: str = "") -> Response:
    """The normal `response` altered by "slow", "truncate", "malformed" or a kind of hostile data
    (`key`: the caller's, for "echo_key"); "flat" acts earlier."""
    if kind in DATA_KINDS:
        return replace(response, body=_hostile(response.body, kind, key))
    if kind == "slow":
        return replace(response, delay=slow_seconds)
    if kind == "truncate":
        # Cut the body the client receives: uncompressed so that half means half.
        return replace(response, truncate_to=len(response.body) // 2, compressible=False)
    if kind == "malformed":
        return replace(response, body=response.body[: len(response.body) // 3] + b"<!-- upstream garbled -->")
    return response


def _revenue_key(row: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """Where a row's revenue sits: a nested transaction's commission, a flat one, an aggregate row."""
    commission = row.get("commission")
    if isinstance(commission, dict):
        return commission, "publisherNetRevenue"
    return row, "publisherRevenue" if "publisherRevenue" in row else "revenue"


def _echoes(key: str) -> dict[str, str]:
    return {
        "echo": key,
        "hex": key.encode().hex(),
        "reversed": key[::-1],
        "spaced": " ".join(key),
        "b64": base64.b64encode(key.encode()).decode(),
    }


def _hostile(body: bytes, kind: str, key: str) -> bytes:
    """`body` (a JSON answer of any endpoint) holding the hostile data `kind` (see the module)."""
    payload = orjson.loads(body)
    rows = payload.get("transactions", payload.get("data")) if isinstance(payload, dict) else None
    if not isinstance(rows, list) or not rows:
        return body
    first = rows[0]
    raw = ""
    if kind == "duplicate" and "transactions" in payload:
        rows.append(orjson.loads(orjson.dumps(first)))
    elif kind == "foreign_day" and "transactions" in payload:
        holder = first["commission"] if isinstance(first.get("commission"), dict) else first
        holder["updateDate"] = FOREIGN_DAY
    elif kind in ("huge_number", "negative_infinity"):
        holder, name = _revenue_key(first)
        holder[name] = _RAW
        raw = "1e400" if kind == "huge_number" else "-Infinity"
    elif kind == "echo_key" and "transactions" in payload:
        for row in rows:
            row["debug"] = _echoes(key)
    text = orjson.dumps(payload)
    return text.replace(f'"{_RAW}"'.encode(), raw.encode()) if raw else text
