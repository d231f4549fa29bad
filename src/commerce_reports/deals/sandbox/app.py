"""The deals sandbox app: every row of contract part 7.2, answered in its order of checks.

Order: key (401, plain text) → rate limit (429) → route → write scope (403, before the body) →
media type (415) → id, then body validation (400) → account enabled (403, after the body on a
write) → stored deal (404, open-deal and status rules) → downstream (archived deals, armed faults
of `faults`: 500, 502, 503, 504 or no answer) → applied. `GET /deal-requests/{id}` is an extra the
contract does not show (switch it off with `offer_read=False`); it lets a client confirm an archive.
"""

from __future__ import annotations

import copy
import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any
from urllib.parse import unquote

import orjson

from ...errors import ConfigurationError
from ...sandbox.http import Request, Response
from .faults import Fault, Faults
from .replies import (
    invalid_json,
    json_reply,
    not_enabled,
    not_found,
    text_reply,
    unsupported_media_type,
    validation,
)
from .rules import normalise_targeting, validate_create, validate_id, validate_patch
from .world import ACCOUNT, DISABLED_ACCOUNT, DSPS, TARGETING_VALUES, UPSTREAM
from .world import seed_deals as _seed

__all__ = [
    "DEFAULT_DISABLED_KEY",
    "DEFAULT_READ_KEY",
    "DEFAULT_WRITE_KEY",
    "DealsSandbox",
    "DownstreamWrite",
    "RecordedRequest",
]

DEFAULT_WRITE_KEY = "sbx-deals-write-0000000000000001"
DEFAULT_READ_KEY = "sbx-deals-read-00000000000000002"
DEFAULT_DISABLED_KEY = "sbx-deals-disabled-0000000000003"
KEY_SYNTAX = re.compile(r"^[A-Za-z0-9_-]{16,128}$")
_DEAL_PATH = re.compile(r"^/deal-requests/(?P<id>[^/]+)$")
_VALUES_PATH = re.compile(r"^/targeting-attributes/(?P<attribute>[^/]+)/values$")


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the sandbox saw it, with the status it answered (0: it hung up instead)."""

    method: str
    path: str
    query: dict[str, str]
    content_type: str
    body: bytes
    status: int


@dataclass(frozen=True)
class DownstreamWrite:
    """A write that reached the downstream deal system (whether or not a 2xx followed)."""

    operation: str  # "create" or "update"
    deal_id: str | None  # None for a create that left no deal request recorded
    body: dict[str, Any]


@dataclass
class _Key:
    account: str
    can_write: bool


class DealsSandbox:
    """The deal-request interface as an http app (`sandbox(request) -> Response`).

    `today` (a date or a callable) and `clock` (seconds, for the rate limit) are injectable.
    Inspect `requests`, `downstream_writes` and `deal(id)`; arm faults with `arm_fault`.
    """

    def __init__(
        self,
        write_key: str | None = None,
        read_key: str | None = None,
        disabled_key: str | None = None,
        *,
        today: date | Callable[[], date] | None = None,
        clock: Callable[[], float] = time.monotonic,
        rate_limit: int = 100,
        rate_window: float = 60.0,
        offer_read: bool = True,
        timeout_delay: float = 0.05,
    ) -> None:
        self.write_key = write_key or DEFAULT_WRITE_KEY
        self.read_key = read_key or DEFAULT_READ_KEY
        self.disabled_key = disabled_key or DEFAULT_DISABLED_KEY
        keys = (self.write_key, self.read_key, self.disabled_key)
        for key in keys:
            if not isinstance(key, str) or not KEY_SYNTAX.match(key):
                shown = f"{key[:4]}…" if isinstance(key, str) else f"of type {type(key).__name__}"
                raise ConfigurationError(
                    f"sandbox key {shown} is malformed: use 16 to 128 letters, digits, - or _"
                )
        if len(set(keys)) != 3:
            raise ConfigurationError("the write, read and disabled sandbox keys must differ")
        _require_number("rate_limit", rate_limit, 1, whole=True)
        _require_number("rate_window", rate_window, 0)
        _require_number("timeout_delay", timeout_delay, 0)
        self._keys = {
            self.write_key: _Key(ACCOUNT, can_write=True),
            self.read_key: _Key(ACCOUNT, can_write=False),
            self.disabled_key: _Key(DISABLED_ACCOUNT, can_write=True),
        }
        self._today = today if callable(today) else (lambda: today or datetime.now(UTC).date())
        self._clock = clock
        self.rate_limit = rate_limit
        self.rate_window = rate_window
        self.offer_read = offer_read
        self.revoked: set[str] = set()
        self.requests: list[RecordedRequest] = []
        self.downstream_writes: list[DownstreamWrite] = []
        self._deals = _seed(self._today())
        self._next_id = 2001
        self._faults = Faults(timeout_delay)
        self._hits: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    # -- inspection and control -------------------------------------------------------------

    def arm_fault(self, fault: Fault | str, *, times: int = 1, method: str | None = None) -> None:
        """Make the next `times` writes that reach downstream fail (only `method` ones if given;
        "GET" makes reads fail instead)."""
        with self._lock:
            self._faults.arm(fault, times, method)

    def revoke(self, key: str) -> None:
        """From now on `key` gets 401 invalid api key."""
        self.revoked.add(str(key))

    def deal(self, deal_id: str | int) -> dict[str, Any] | None:
        """A copy of the stored deal request, whatever account owns it."""
        with self._lock:
            stored = self._deals.get(str(deal_id))
            return copy.deepcopy(stored[1]) if stored else None

    def calls(self, method: str | None = None, path: str | None = None) -> list[RecordedRequest]:
        """The recorded requests, optionally only those with this method and path."""
        return [
            r
            for r in list(self.requests)
            if (method is None or r.method == method) and (path is None or r.path == path)
        ]

    # -- the app ----------------------------------------------------------------------------

    def __call__(self, request: Request) -> Response:
        with self._lock:
            response = self._answer(request)
            self.requests.append(
                RecordedRequest(
                    request.method,
                    request.path,
                    dict(request.query),
                    request.headers.get("content-type", ""),
                    request.body,
                    response.status,
                )
            )
        return response

    def _answer(self, request: Request) -> Response:
        key = request.headers.get("x-api-key")
        if key is None:
            return text_reply(401, "api key not provided")
        if not KEY_SYNTAX.match(key):
            return text_reply(401, "invalid api key syntax")
        holder = self._keys.get(key)
        if holder is None or key in self.revoked:
            return text_reply(401, "invalid api key")
        limited = self._rate_limited(key)
        if limited is not None:
            return limited
        method, path = request.method, request.path
        deal_match = _DEAL_PATH.match(path)
        values_match = _VALUES_PATH.match(path)
        if method == "POST" and path == "/deal-requests":
            return self._create(request, holder)
        if method == "PATCH" and deal_match:
            return self._patch(request, holder, unquote(deal_match["id"]))
        if method == "GET" and deal_match and self.offer_read:
            return self._read(holder, unquote(deal_match["id"]))
        if method == "GET" and values_match:
            return self._values(holder, unquote(values_match["attribute"]))
        message = f"Route {method}:{path} not found"
        return json_reply(404, {"message": message, "error": "Not Found", "statusCode": 404})

    def _rate_limited(self, key: str) -> Response | None:
        now = self._clock()
        hits = self._hits.setdefault(key, deque())
        while hits and hits[0] <= now - self.rate_window:
            hits.popleft()
        if len(hits) >= self.rate_limit:
            wait = max(1, math.ceil(hits[0] + self.rate_window - now))
            return json_reply(429, {"message": f"Rate limit exceeded, retry in {wait} seconds"})
        hits.append(now)
        return None

    def _body(self, request: Request, holder: _Key) -> Response | Any:
        """The parsed JSON body of a write, or the answer refusing it (scope, media type, JSON)."""
        if not holder.can_write:
            return json_reply(403, {"message": "Insufficient scope"})
        media = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media != "application/json":
            return unsupported_media_type()
        try:
            return orjson.loads(request.body)
        except orjson.JSONDecodeError:
            return invalid_json()

    def _create(self, request: Request, holder: _Key) -> Response:
        body = self._body(request, holder)
        if isinstance(body, Response):
            return body
        failures = validate_create(body, self._today())
        if failures:
            return validation(", ".join(failures))
        if holder.account == DISABLED_ACCOUNT:
            return not_enabled()
        deal = self._new_deal(body)
        if request.query.get("dryRun", "").lower() == "true":
            return json_reply(200, deal)
        fault = self._faults.take("POST")
        if fault is not None and not fault.applies:
            return self._faults.answer(fault)
        self.downstream_writes.append(DownstreamWrite("create", None, copy.deepcopy(deal)))
        if fault is not None:
            return self._faults.answer(fault)
        deal["id"] = str(self._next_id)
        self._next_id += 1
        self._deals[deal["id"]] = (holder.account, deal)
        return json_reply(201, deal)

    def _new_deal(self, body: dict[str, Any]) -> dict[str, Any]:
        deal = copy.deepcopy(body)
        deal.pop("id", None)
        start = date.fromisoformat(deal["schedule"]["startDate"])
        deal.setdefault("type", "private")
        deal.setdefault("status", "scheduled" if start > self._today() else "active")
        deal["statusSettable"] = _status_settable(deal["buyers"])
        if "targeting" in deal:
            deal["targeting"] = normalise_targeting(deal["targeting"])
        return deal

    def _stored(self, holder: _Key, deal_id: str) -> dict[str, Any] | Response:
        if holder.account == DISABLED_ACCOUNT:
            return not_enabled()
        stored = self._deals.get(deal_id)
        if stored is None or stored[0] != holder.account:
            return not_found()
        return stored[1]

    def _patch(self, request: Request, holder: _Key, deal_id: str) -> Response:
        body = self._body(request, holder)
        if isinstance(body, Response):
            return body
        failures = validate_id(deal_id) or validate_patch(body, self._today())
        if failures:
            return validation(", ".join(failures))
        deal = self._stored(holder, deal_id)
        if isinstance(deal, Response):
            return deal
        if deal.get("type") == "open" and "buyers" in body:
            message = "buyers cannot be edited on an open deal; create a new deal request instead"
            return json_reply(400, {"message": message})
        if "status" in body and not deal.get("statusSettable", True):
            blocking = ", ".join(sorted({b.get("dsp", "?") for b in deal.get("buyers", [])}))
            return json_reply(
                400,
                {
                    "message": "status is not settable on this deal: every buyer is on a DSP that "
                    f"manages deal status through its own integration ({blocking})"
                },
            )
        merged = copy.deepcopy(deal)
        _apply(merged, body)
        if merged.get("runOfNetwork") and merged.get("targeting"):  # rule 5, on the deal it would make
            return validation(
                "body runOfNetwork and targeting are mutually exclusive; provide one or the other"
            )
        if deal.get("status") == "archived":
            message = f"{UPSTREAM} refused the edit: the deal is archived"
            return json_reply(502, {"message": message, "upstream": UPSTREAM})
        fault = self._faults.take("PATCH")
        if fault is not None and not fault.applies:
            return self._faults.answer(fault)
        deal.update(merged)  # (the update, applied above to judge the deal it makes)
        self.downstream_writes.append(DownstreamWrite("update", deal_id, copy.deepcopy(body)))
        if fault is not None:
            return self._faults.answer(fault)
        return json_reply(200, deal)

    def _read(self, holder: _Key, deal_id: str) -> Response:
        if validate_id(deal_id):
            return validation(validate_id(deal_id)[0])
        deal = self._stored(holder, deal_id)
        if isinstance(deal, Response):
            return deal
        fault = self._faults.take("GET")
        return self._faults.answer(fault) if fault is not None else json_reply(200, deal)

    def _values(self, holder: _Key, attribute: str) -> Response:
        if holder.account == DISABLED_ACCOUNT:
            return not_enabled()
        values = TARGETING_VALUES.get(attribute)
        if values is None:
            message = f"Targeting attribute {attribute} not found or not enumerated"
            return json_reply(404, {"message": message})
        fault = self._faults.take("GET")
        if fault is not None:
            return self._faults.answer(fault)
        return json_reply(200, {"attribute": attribute, "values": values})


def _require_number(name: str, value: Any, least: float, *, whole: bool = False) -> None:
    kinds = (int,) if whole else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or not least <= value < math.inf:
        kind = "a whole number" if whole else "a number"
        raise ConfigurationError(f"{name} must be {kind} >= {least:g}, got {value!r}")


def _status_settable(buyers: list[dict[str, Any]]) -> bool:
    dsps = [DSPS.get(b.get("dsp", "")) for b in buyers]
    return not (dsps and all(d is not None and d.manages_status for d in dsps))


def _apply(deal: dict[str, Any], changes: dict[str, Any]) -> None:
    """Merge an update into a stored deal (one level deep for commercial and schedule)."""
    for name, value in changes.items():
        if name == "id":
            continue
        if name in ("commercial", "schedule") and isinstance(value, dict):
            deal[name] = {**deal.get(name, {}), **value}
        elif name == "targeting" and isinstance(value, list):
            deal[name] = normalise_targeting(value)
        else:
            deal[name] = copy.deepcopy(value)
    if "buyers" in changes:
        deal["statusSettable"] = _status_settable(deal["buyers"])
