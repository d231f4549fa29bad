"""The reports sandbox as an HTTP application: routing, auth, faults, validation, pace, answers.

A request to a reporting endpoint goes: 401 without a known `Authorization: secret <key>` ->
fault draw (an answer-replacing fault answers now) -> 400 on any parameter rule -> 429 when the
key asked this endpoint less than `pace` seconds ago (only answered requests count) -> the report
(404 for an empty window) -> an altering fault. Every answer carries `X-Sandbox-Pace`. The
config's dialect picks the parameter names and the transaction element; both serve one world.
Loopback tooling without auth: `GET /_sandbox/info` and `GET /_sandbox/truth`.
"""

from __future__ import annotations

import email.utils
import functools
import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

import orjson
import polars as pl

from ..endpoints import ENDPOINTS
from . import queries, shapes
from .config import SandboxConfig
from .faults import ANSWER_KINDS, FaultPlan, alter, fault_response
from .http import Request, Response
from .params import (
    BadRequest,
    TransactionsRequest,
    WindowRequest,
    parse_transactions,
    parse_truth,
    parse_window,
)
from .world import World

__all__ = ["ReportsSandbox", "RequestRecord"]

_BY_PATH = {declared.path: name for name, declared in ENDPOINTS.items()}


@dataclass(frozen=True)
class RequestRecord:
    """One request as served. `status` is None when the connection was dropped; never the key."""

    time: datetime
    site: str | None
    endpoint: str
    params: dict[str, str]
    status: int | None
    fault: str | None


class _Clock:
    """UTC time, frozen at a moment or following the real clock, shifted by `advance`."""

    def __init__(self, frozen: datetime | None) -> None:
        self._frozen = frozen
        self._offset = timedelta()
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return (self._frozen or datetime.now(UTC)) + self._offset

    def set(self, moment: datetime) -> None:
        moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
        with self._lock:
            if self._frozen is None:
                self._offset = moment - datetime.now(UTC)
            else:
                self._frozen, self._offset = moment, timedelta()

    def advance(self, step: timedelta) -> None:
        with self._lock:
            self._offset += step


def _json(status: int, payload: object, headers: dict[str, str] | None = None) -> Response:
    return Response(status, orjson.dumps(payload), headers=headers or {})


def _error(status: int, error: str, message: str, headers: dict[str, str] | None = None) -> Response:
    return _json(status, {"error": error, "message": message}, headers)


class ReportsSandbox:
    """A deterministic offline reporting service; the instance is the HTTP app."""

    def __init__(
        self,
        config: SandboxConfig | None = None,
        *,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config or SandboxConfig()
        self._clock = _Clock(self.config.now)
        first_day = self.config.first_day or self._clock.now().date() - timedelta(400)
        self._world = World(
            self.config.seed,
            tuple(s.name for s in self.config.sites),
            first_day,
            self.config.transactions_per_day,
            self.config.incidents,
        )
        self._keys = {site.secret_key: site.name for site in self.config.sites}
        self._faults = FaultPlan(self.config.faults)
        self._monotonic = monotonic
        self._last: dict[tuple[str, str], float] = {}
        self._log: list[RequestRecord] = []
        self._lock = threading.Lock()

    @property
    def now(self) -> datetime:
        return self._clock.now()

    @property
    def first_day(self) -> date:
        return self._world.first_day

    def set_now(self, moment: datetime) -> None:
        """Set the clock (a frozen clock stays frozen, a running one runs on from `moment`)."""
        self._clock.set(moment)

    def advance(self, step: timedelta) -> None:
        self._clock.advance(step)

    def inject(self, kind: str, count: int = 1, endpoint: str | None = None) -> None:
        """Make the next `count` authenticated requests (to `endpoint` or any) fault with `kind`."""
        if endpoint is not None and endpoint not in ENDPOINTS:
            raise ValueError(f"endpoint must be one of {', '.join(ENDPOINTS)} or None (got {endpoint!r})")
        self._faults.inject(kind, count, endpoint)

    @property
    def request_log(self) -> list[RequestRecord]:
        with self._lock:
            return list(self._log)

    def ground_truth(
        self,
        site: str,
        start: date,
        end: date,
        *,
        by: str = "commission_date",
        group_by: Sequence[str] = (),
    ) -> pl.DataFrame:
        """What a client should compute for `site` over [start, end] (inclusive), as of now."""
        if site not in self._world.sites:
            raise ValueError(f"unknown site {site!r}; sites: {', '.join(self._world.sites)}")
        return queries.ground_truth(self._world, site, self.now, start, end, by=by, group_by=group_by)

    def __call__(self, request: Request) -> Response:
        site: str | None = None
        fault: str | None = None
        endpoint = _BY_PATH.get(request.path, request.path)
        if request.method != "GET":
            response = _error(405, "Method Not Allowed", f"{request.method}: only GET is served")
        elif endpoint in ENDPOINTS:
            site, fault, response = self._report(endpoint, request)
        elif request.path == "/_sandbox/info":
            response = _json(200, self._info())
        elif request.path == "/_sandbox/truth":
            response = self._truth(request)
        else:
            response = _error(404, "Not Found", f"{request.path}: no such endpoint")
        response.headers["X-Sandbox-Pace"] = f"{self.config.pace:g}"
        response.headers["Date"] = email.utils.format_datetime(self.now, usegmt=True)  # its world's clock
        record = RequestRecord(
            self.now,
            site,
            endpoint,
            dict(request.query),
            None if response.drop else response.status,
            fault,
        )
        with self._lock:
            self._log.append(record)
        return response

    def _report(self, endpoint: str, request: Request) -> tuple[str | None, str | None, Response]:
        site = self._authenticate(request)
        if site is None:
            message = "Authorization: expected 'secret <key>' with a secret key of this sandbox"
            return None, None, _error(401, "Unauthorized", message)
        fault = self._faults.draw(endpoint)
        if fault in ANSWER_KINDS:
            return site, fault, fault_response(fault)
        dialect = self.config.dialect
        try:
            query: TransactionsRequest | WindowRequest = (
                parse_transactions(request.query, request.repeated_query, dialect)
                if endpoint == "transactions"
                else parse_window(endpoint, request.query, request.repeated_query, dialect)
            )
        except BadRequest as exc:
            return site, None, _error(400, "Bad Request", str(exc))
        response = self._paced(site, endpoint)
        if response is None:
            response = (
                self._transactions(site, query, self._renderer(fault))
                if isinstance(query, TransactionsRequest)
                else self._aggregate(endpoint, site, query)
            )
        if fault is None or (fault != "slow" and response.status != 200):
            return site, None, response
        key = request.headers.get("authorization", "").partition(" ")[2]
        return site, fault, alter(response, fault, self.config.faults.slow_seconds, key)

    def _authenticate(self, request: Request) -> str | None:
        scheme, _, key = request.headers.get("authorization", "").partition(" ")
        return self._keys.get(key) if scheme == "secret" else None

    def _paced(self, site: str, endpoint: str) -> Response | None:
        """A 429 when `site` asked `endpoint` too recently; otherwise records this request."""
        with self._lock:
            moment = self._monotonic()
            last = self._last.get((site, endpoint))
            if self.config.pace and last is not None and moment - last < self.config.pace:
                wait = max(1, math.ceil(self.config.pace - (moment - last)))
                message = (
                    f"{endpoint}: at most one request every {self.config.pace:g} seconds"
                    f" per key; retry in {wait} seconds"
                )
                return _error(429, "Too Many Requests", message, {"Retry-After": str(wait)})
            self._last[(site, endpoint)] = moment
        return None

    def _renderer(self, fault: str | None) -> Callable[[shapes.Row, int], dict[str, object]]:
        """How a transaction goes out: the dialect's element (the "flat" fault acts on the contract's)."""
        if self.config.dialect == "published":
            return functools.partial(shapes.published, date_style=self.config.date_style)
        return shapes.flat if fault == "flat" or self.config.shape == "flat" else shapes.nested

    def _transactions(
        self, site: str, query: TransactionsRequest, render: Callable[[shapes.Row, int], dict[str, object]]
    ) -> Response:
        rows = queries.transactions(
            self._world,
            site,
            self.now,
            click=query.click,
            commission=query.commission,
            update=query.update,
            filters=query.filters,
        )
        account = self._world.catalog(site).account_id
        return _json(200, {"transactions": [render(row, account) for row in rows.iter_rows(named=True)]})

    def _aggregate(self, endpoint: str, site: str, query: WindowRequest) -> Response:
        report = queries.networks if endpoint == "networks" else queries.merchandise
        body = report(self._world, site, self.now, query.start, query.end, query.filters)
        if body is None:
            return _error(
                404,
                "Not Found",
                f"no {endpoint} data for clicks from {query.start}"
                f" to {query.end} (excluded) with these filters",
            )
        return _json(200, body)

    def _info(self) -> dict[str, object]:
        return {
            "pace": self.config.pace,
            "now": self.now.isoformat(),
            "firstDay": self.first_day.isoformat(),
            "sites": list(self._world.sites),
            "shape": self.config.shape,
            "dialect": self.config.dialect,
        }

    def _truth(self, request: Request) -> Response:
        try:
            query = parse_truth(request.query, request.repeated_query)
            frame = self.ground_truth(
                query.site, query.start, query.end, by=query.by, group_by=query.group_by
            )
        except (BadRequest, ValueError) as exc:
            return _error(400, "Bad Request", str(exc))
        return _json(200, {"rows": frame.to_dicts()})
