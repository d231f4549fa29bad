"""The reporting client: validate, authenticate, keep the pace, retry what is safe, type the answer.

    with ReportsClient(key, "https://api.example.com") as client:
        day = client.transactions(update_date=date(2026, 11, 20))
        nets = client.networks(date(2026, 11, 1), date(2026, 12, 1), device_type="MBL")

Every method returns one typed Arrow table (`polars.from_arrow(table)` for a DataFrame). The client
talks to whatever it is given and never reads the environment (as httpx's `Client`): the entry
points (`commerce_reports.open_client()`, a sync) resolve the settings and hand them in, and
choosing the built-in sandbox when no key is set is their decision, not this class's.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa

from ._version import __version__
from .config import Dialect, Limits, check_dialect, normalise_base_url, parse_pace
from .contract import SERVED_AT
from .endpoints import ENDPOINTS, SERVICE_CHECK, Window
from .errors import (
    AuthenticationError,
    BadRequestError,
    ConfigurationError,
    ForbiddenError,
    MalformedResponseError,
    NotFoundError,
    RateLimitedError,
    ServerError,
    ServiceError,
    StatusError,
    TransportError,
    UnreachableError,
    ValidationError,
)
from .http import Answer, KeyAuth, RetryPolicy, Session, retry_after
from .pace import LONG_WAIT, Clock, Pacer, SystemClock, WaitTooLong
from .params import Filters, as_date, check_window, transaction_params
from .parse import parse_aggregate, parse_transactions
from .secret import Secret

__all__ = ["GIVE_UP_AFTER", "ReportsClient", "RetryPolicy", "normalise_base_url"]

log = logging.getLogger(__name__)

# Attempts in a row that got no answer from the address (transport failures, deadlines) before the
# client stops asking it: a hung service is given up in minutes, not after every partition's retries.
GIVE_UP_AFTER = 3
_MEANINGS = {
    400: "bad request",
    401: "authorization missing or invalid",
    403: "forbidden",
    404: "no data found",
    429: "rate limit exceeded",
}
_HINTS = {
    401: "Check COMMERCE_REPORTS_SECRET_KEY: the site's key, sent in the Authorization header",
    403: "This key may not read this report",
}


class _Reach:
    """Whether the address has answered yet, and per endpoint (a sync's lane) how many attempts in a
    row got no answer. A connection that fails before the address ever answered gives the address
    up; `GIVE_UP_AFTER` silent attempts give the endpoint up. What is given up is refused without
    being sent from then on (the lanes of a site share its client)."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self._lock = threading.Lock()
        self._answered = False
        self._silent: dict[str, int] = {}
        self._given_up: dict[str, UnreachableError] = {}  # by endpoint; "" for the whole address

    def answered(self, endpoint: str) -> None:
        with self._lock:
            self._answered = True
            self._silent[endpoint] = 0

    def failed(self, endpoint: str, error: TransportError) -> UnreachableError | None:
        """Count an attempt without an answer; the error that ends the asking, if it does."""
        with self._lock:
            silent = self._silent[endpoint] = self._silent.get(endpoint, 0) + 1
            if not self._answered and not error.sent:  # refused, a name that does not resolve, TLS
                scope, why = "", f"{self.base_url} cannot be reached: {error.reason}"
            elif silent >= GIVE_UP_AFTER:
                scope = endpoint
                why = (
                    f"{self.base_url} gave no answer to {silent} {endpoint} requests in a row: {error.reason}"
                )
            else:
                return None
            return self._given_up.setdefault(
                scope,
                UnreachableError(
                    f"{why}; check COMMERCE_REPORTS_BASE_URL and the network. Nothing more is asked of "
                    "it in this run",
                    base_url=self.base_url,
                ),
            )

    def refuse(self, endpoint: str) -> None:
        """Raise, without sending, when the address or `endpoint` is given up."""
        with self._lock:
            given_up = self._given_up.get("") or self._given_up.get(endpoint)
        if given_up is not None:
            raise UnreachableError(given_up.reason, base_url=self.base_url, asked=False)


class ReportsClient:
    """Synchronous client for the three reporting endpoints of one site (one key).

    `pace` is seconds between requests per endpoint (a number, a mapping, or the
    `transactions=60,networks=10` form; default 60 s, the documented limit). `dialect` names the
    wire (`contract`, the default, or `published`); the Python side keeps one vocabulary. `limits`
    bound every request (default `Limits()`). `clock` and `pace_dir` are injectable so tests never
    sleep and processes can share a pace. A wait for the pace over two seconds is a warning saying
    so (`quiet_pace=True`: a log line, for a caller that says its waits itself, as a sync does).
    Nothing here comes from the environment.
    """

    def __init__(
        self,
        secret_key: str | Secret | None = None,
        base_url: str | None = None,
        *,
        dialect: Dialect | None = None,
        pace: float | str | Mapping[str, float] | None = None,
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        limits: Limits | None = None,
        clock: Clock | None = None,
        pace_dir: Path | None = None,
        transport: httpx.BaseTransport | None = None,
        quiet_pace: bool = False,
    ) -> None:
        _check_kinds(
            limits=limits, retry=retry, transport=transport, pace_dir=pace_dir, quiet_pace=quiet_pace
        )
        if clock is not None and not all(callable(getattr(clock, name, None)) for name in ("time", "sleep")):
            raise ValidationError(
                "clock", f"{clock!r:.60} is not a clock", "give one with time() and sleep()"
            )
        if secret_key is None:
            raise ConfigurationError(
                "no secret key given: ReportsClient takes the site's key and address and never reads "
                "the environment; call commerce_reports.open_client() for the configured site (or the "
                "built-in sandbox when no key is set)"
            )
        if not base_url:
            raise ConfigurationError(
                "a secret key but no base URL: give the service's address, e.g. https://api.example.com "
                "(commerce_reports.open_client() takes it from COMMERCE_REPORTS_BASE_URL)"
            )
        self._key = secret_key if isinstance(secret_key, Secret) else Secret(secret_key)
        self.base_url = normalise_base_url(base_url)
        self.dialect: Dialect = check_dialect(dialect, "dialect") if dialect is not None else "contract"
        self.limits = limits or Limits()
        self.retry = retry or RetryPolicy(max_wait=self.limits.max_retry_wait)
        self.clock: Clock = clock or SystemClock()
        self._pacer = Pacer(
            parse_pace(pace),
            f"{self.base_url}|{self._key.reveal()}",
            state_dir=None if pace_dir is None else Path(pace_dir),  # (a str too, as its check says)
            clock=self.clock,
            quiet_pace=quiet_pace,
        )
        self._session = Session(
            self.base_url,
            auth=KeyAuth("Authorization", self._key, scheme="secret"),
            limits=self.limits,
            timeout=timeout,
            headers={"User-Agent": f"commerce-reports/{__version__}"},
            transport=transport,
        )
        self._waits = threading.local()
        self._reach = _Reach(self.base_url)

    @property
    def pace(self) -> dict[str, float]:
        """Seconds kept between two requests to each endpoint."""
        return dict(self._pacer.intervals)

    def __repr__(self) -> str:
        return (
            f"ReportsClient(base_url={self.base_url!r}, secret_key=***, dialect={self.dialect!r}, "
            f"pace={self.pace!r})"
        )

    def __enter__(self) -> ReportsClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._session.close()

    def stop(self) -> None:
        """Cut the requests in flight and refuse new ones, from any thread (a sync told to stop):
        each raises TransportError at once instead of waiting for its answer."""
        self._session.stop()

    # ------------------------------------------------------------------ public methods

    def transactions(
        self,
        *,
        click_date: date | str | None = None,
        commission_date: date | str | None = None,
        update_date: date | str | None = None,
        **filters: Any,
    ) -> pa.Table:
        """Transactions of one day (by click, commission and/or update date; all given must match),
        filtered by the transactions filters (campaign_ids, merchant_group_ids, program_type)."""
        params = transaction_params(
            click_date=click_date, commission_date=commission_date, update_date=update_date, **filters
        )
        return self._fetch("transactions", params, _require_body(parse_transactions))

    def networks(
        self, start: date | str, end: date | str, filters: Filters | None = None, **filter_kwargs: Any
    ) -> pa.Table:
        """Per-network revenue, clicks, sales, actions, EPC for clicks in [start, end) (<= 31 days)."""
        return self._aggregate("networks", start, end, filters, filter_kwargs)

    def merchandise(
        self, start: date | str, end: date | str, filters: Filters | None = None, **filter_kwargs: Any
    ) -> pa.Table:
        """Per-product revenue, sales, actions for clicks in [start, end) (<= 31 days)."""
        return self._aggregate("merchandise", start, end, filters, filter_kwargs)

    def last_wait(self) -> float:
        """Seconds the calling thread's last request spent waiting for its pace turn, between
        retries and in the attempts that failed: a sync counts what a request cost this machine
        without them (the service's trouble is no cost of this machine's: an attempt cut at the
        deadline, learned as work, made later plans announce minutes for seconds). Per thread,
        because the lanes of one site share its client."""
        return float(getattr(self._waits, "seconds", 0.0))

    def check_service(self, day: date | None = None) -> int:
        """One cheap request that proves the base URL answers as the reporting API; its status.

        A transactions request for one day answers 200, 400 or 401 there; a 404 or an HTML page
        means the URL points elsewhere, which is a ConfigurationError naming it. A 429 or a 5xx
        proves nothing yet: it is the RateLimitedError or ServerError it is (a Retry-After kept
        for the key's next requests), for the caller to check again later.
        """
        answer = self.probe(day)
        if answer.status == 404 or answer.is_html:
            raise self._not_the_api(answer)
        if answer.status == 429 or answer.status >= 500:
            wait = retry_after(answer.headers, answer.body)
            if answer.status == 429 and wait:
                self._pacer.defer(SERVICE_CHECK.pace, wait)
            kind = RateLimitedError if answer.status == 429 else ServerError
            raise kind(answer.status, "the service could not answer now", endpoint=SERVICE_CHECK.name)
        return answer.status

    def probe(self, day: date | None = None) -> Answer:
        """One transactions request for `day` (default yesterday), in its pace turn, and the answer
        as it came (any status): what `check_service` and `commerce-reports check` judge. An address
        that cannot be reached raises UnreachableError at once (nothing is retried)."""
        declared = SERVICE_CHECK
        asked = as_date(day, "day") if day is not None else date.today() - timedelta(days=1)
        params = {"updateDate": asked.isoformat()}
        self._reach.refuse(declared.name)
        try:
            with self._pacer.slot(declared.pace):
                answer = self._session.send("GET", declared.path, params=params, where=declared.name)
        except TransportError as error:
            raise self._reach.failed(declared.name, error) or error from None
        self._reach.answered(declared.name)
        return answer

    def seconds_to_turn(self, endpoint: str) -> float:
        """Seconds until `endpoint` may next be asked under this key (the pace state shared by every
        process); 0 when it may be asked now."""
        if endpoint not in ENDPOINTS:
            raise ValidationError(
                "endpoint", f"{endpoint!r:.60} is no endpoint", f"one of {', '.join(ENDPOINTS)}"
            )
        return max(0.0, self._pacer.next_allowed(ENDPOINTS[endpoint].pace) - self.clock.time())

    # ------------------------------------------------------------------ machinery

    def _aggregate(
        self,
        endpoint: str,
        start: date | str,
        end: date | str,
        filters: Filters | None,
        filter_kwargs: dict[str, Any],
    ) -> pa.Table:
        first, stop = check_window(start, end)
        chosen = Filters.of(filters, **filter_kwargs)
        window = ENDPOINTS[endpoint].span
        assert isinstance(window, Window), "the aggregates are declared with a window"
        params = {window.start: first.isoformat(), window.end: stop.isoformat(), **chosen.to_params()}

        def parse(body: bytes | None) -> pa.Table:
            table = parse_aggregate(endpoint, body, first, stop, chosen)
            if body is None:  # a 404: no rows, said in the metadata so a sync can judge it
                table = table.replace_schema_metadata({**(table.schema.metadata or {}), b"not_found": b"1"})
            return table

        return self._fetch(endpoint, params, parse)

    def _fetch(
        self, endpoint: str, params: dict[str, str], parse: Callable[[bytes | None], pa.Table]
    ) -> pa.Table:
        """GET with pace and retries; hand the body (None for an aggregate's 404) to `parse`.

        `params` are named as the lake names them; a filter this client's dialect does not declare
        for `endpoint` is a ValidationError before anything is sent."""
        declared = ENDPOINTS[endpoint]
        sent = declared.wire(self.dialect, params)
        attempt = 0
        self._waits.seconds = 0.0
        while True:
            attempt += 1
            self._reach.refuse(endpoint)
            asked = sent_at = self.clock.time()
            try:
                # The turn is held while the request is sent and read: the next one starts a full
                # interval after this one ended, however late it was sent (cross-process pace).
                with self._pacer.slot(declared.pace, longest=self.retry.max_wait) as turn:
                    self._waits.seconds += max(0.0, turn - asked)
                    sent_at = self.clock.time()
                    body, served_at = self._get(endpoint, params, sent, attempt)
                return _served(parse(body), served_at)
            except WaitTooLong as held:  # asked earlier, by this process or another of the key
                raise self._held_back(endpoint, params, attempt, held.seconds) from None
            except ServiceError as error:
                if self._session.stopped:  # the caller's stop, not the service's trouble: no retry
                    raise
                given_up = self._reach.failed(endpoint, error) if isinstance(error, TransportError) else None
                if given_up is not None:
                    raise given_up from None
                if not error.retriable or attempt >= self.retry.max_attempts:
                    raise _with_attempts(error, attempt) from None
                wait: float | None = getattr(error, "retry_after", None)
                if wait:  # kept for the key: one past the allowance holds its next requests back
                    self._pacer.defer(declared.pace, wait)
                if wait is not None and self.retry.too_long(wait):
                    raise self._held_back(endpoint, params, attempt, wait) from None
                delay = self.retry.delay(attempt, wait)
                took = self.clock.time() - sent_at  # (an attempt cut at the deadline: minutes lost)
                self._waits.seconds += took
                level = logging.WARNING if max(delay, took) > LONG_WAIT else logging.INFO
                log.log(
                    level,
                    "%s %s failed%s (attempt %d of %d): %s; waiting %.0f s%s",
                    endpoint,
                    _describe(params),
                    f" after {took:.0f} s" if took > LONG_WAIT else "",
                    attempt,
                    self.retry.max_attempts,
                    error,
                    delay,
                    ": the service asked to slow down" if wait else "",
                )
                self._waits.seconds += delay
                self.clock.sleep(delay)

    def _held_back(
        self, endpoint: str, params: dict[str, str], attempt: int, left: float
    ) -> RateLimitedError:
        """The error of a wait the service asked for that runs `left` seconds more, past the
        allowance (a Retry-After this process or another of the key was given): the service is
        asked nothing more until it ends, not the rest of a sync's requests at once."""
        until = datetime.fromtimestamp(self.clock.time() + left, UTC)
        return RateLimitedError(
            429,
            "rate limit exceeded",
            endpoint=endpoint,
            params=params,
            attempts=attempt,
            retry_after=left,
            hint=f"the service asked to wait {left:.0f} s (until {until:%Y-%m-%d %H:%M} UTC), more than "
            f"the {self.retry.max_wait:g} s allowed (COMMERCE_REPORTS_MAX_RETRY_WAIT); nothing more is "
            "sent until then",
        )

    def _get(
        self, endpoint: str, params: dict[str, str], sent: dict[str, str], attempt: int
    ) -> tuple[bytes | None, datetime | None]:
        """One GET of `sent` (the wire's names): its body, and when the service says it answered;
        errors name the request by `params` (the lake's)."""
        declared = ENDPOINTS[endpoint]
        log.info("GET %s %s%s", endpoint, _describe(sent), f" (attempt {attempt})" if attempt > 1 else "")
        try:
            answer = self._session.send("GET", declared.path, params=sent, where=endpoint)
        except ServiceError as error:
            raise error.naming(params) from None
        self._reach.answered(endpoint)
        if answer.is_success:
            if answer.is_html:
                raise MalformedResponseError(
                    f"the service answered {answer.status} with an HTML page, not JSON; check "
                    f"COMMERCE_REPORTS_BASE_URL ({self.base_url})",
                    endpoint=endpoint,
                    params=params,
                )
            return answer.body, answer.served_at
        if answer.status == 404 and declared.not_found == "no rows":
            if answer.is_html:
                raise self._not_the_api(answer)
            return None, answer.served_at
        raise _status_error(answer, endpoint, params)

    def _not_the_api(self, answer: Answer) -> ConfigurationError:
        kind = "an HTML page" if answer.is_html else f"HTTP {answer.status}"
        return ConfigurationError(
            f"{answer.url} answered {kind}: COMMERCE_REPORTS_BASE_URL ({self.base_url}) does not point at "
            "the reporting API; give the address whose /v1/reports/... paths answer "
            "(e.g. https://api.example.com or https://api.example.com/v1)"
        )


def _require_body(parse: Callable[[bytes], pa.Table]) -> Callable[[bytes | None], pa.Table]:
    def parse_body(body: bytes | None) -> pa.Table:
        if body is None:  # only a 404 that means "no rows" has no body; _get raised for the rest
            raise MalformedResponseError("the service answered without a body")
        return parse(body)

    return parse_body


def _served(table: pa.Table, served_at: datetime | None) -> pa.Table:
    """`table` with the moment the service answered in its metadata (see `SERVED_AT`)."""
    if served_at is None:
        return table
    return table.replace_schema_metadata(
        {**(table.schema.metadata or {}), SERVED_AT: served_at.isoformat().encode()}
    )


def _status_error(answer: Answer, endpoint: str, params: Mapping[str, str]) -> StatusError:
    status = answer.status
    kwargs: dict[str, Any] = {
        "body": answer.body,
        "content_type": answer.content_type,
        "endpoint": endpoint,
        "params": params,
        "hint": _HINTS.get(status, ""),
    }
    meaning = _MEANINGS.get(status, "server error" if status >= 500 else "unexpected status")
    if status == 400:
        return BadRequestError(status, meaning, **kwargs)
    if status == 401:
        return AuthenticationError(status, meaning, **kwargs)
    if status == 403:
        return ForbiddenError(status, meaning, **kwargs)
    if status == 404:
        return NotFoundError(status, meaning, **kwargs)
    if status == 429:
        asked = retry_after(answer.headers, answer.body)
        return RateLimitedError(status, meaning, retry_after=asked, **kwargs)
    if status >= 500:
        return ServerError(status, meaning, **kwargs)
    return BadRequestError(status, meaning, **kwargs)  # any other 4xx: the request must change


def _with_attempts(error: ServiceError, attempts: int) -> ServiceError:
    """The same error, its message saying how many attempts were made."""
    error.attempts = attempts
    if attempts > 1 and "attempts" not in error.args[0]:
        error.args = (f"{error.args[0]} after {attempts} attempts",)
    return error


def _describe(params: Mapping[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in params.items())


def _check_kinds(**given: Any) -> None:
    """A ValidationError for an argument of the wrong kind, before anything is built from it."""
    kinds: dict[str, Any] = {
        "limits": (Limits,),
        "retry": (RetryPolicy,),
        "transport": (httpx.BaseTransport,),
        "pace_dir": (str, Path),
        "quiet_pace": (bool,),
    }
    for name, value in given.items():
        if value is not None and not isinstance(value, kinds[name]):
            allowed = " or ".join(kind.__name__ for kind in kinds[name])
            raise ValidationError(name, f"{value!r:.60} is not a {allowed}", f"give a {allowed}, or None")
