"""The reporting client: validate, authenticate, keep the pace, retry what is safe, type the answer.

    with ReportsClient() as client:               # key and URL from the environment or .env
        day = client.transactions(update_date=date(2026, 11, 20))
        nets = client.networks(date(2026, 11, 1), date(2026, 12, 1), device_type="MBL")

Every method returns one typed Arrow table (`polars.from_arrow(table)` for a DataFrame). With no
secret key configured the client talks to the embedded sandbox (see `commerce_reports.embedded`).
"""

from __future__ import annotations

import logging
import random
import re
from collections.abc import Callable, Mapping
from datetime import date
from typing import Any

import httpx
import pyarrow as pa

from . import __version__
from .config import ENDPOINTS, Settings, parse_pace
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
)
from .pace import Clock, Pacer, SystemClock
from .params import Filters, check_window, transaction_params
from .parse import parse_aggregate, parse_transactions
from .secret import Secret

__all__ = ["ReportsClient", "RetryPolicy"]

log = logging.getLogger(__name__)

_PATHS = {name: f"/v1/reports/{name}" for name in ENDPOINTS}
_MEANINGS = {
    400: "bad request",
    401: "authorization missing or invalid",
    403: "forbidden",
    404: "no data found",
    429: "rate limit exceeded",
}
_HINTS = {
    401: "Check COMMERCE_REPORTS_SECRET_KEY (the site's secret key, sent as 'secret <key>')",
    403: "This key may not read this report",
}


class RetryPolicy:
    """Bounded exponential backoff with jitter for what is safe to retry (GETs are idempotent)."""

    def __init__(
        self,
        max_attempts: int = 5,
        base_delay: float = 2.0,
        max_delay: float = 120.0,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        if max_attempts < 1:
            raise ConfigurationError(f"max_attempts must be at least 1, got {max_attempts}")
        if base_delay < 0 or max_delay < 0:
            raise ConfigurationError("retry delays must be >= 0 seconds")
        self.max_attempts = max_attempts
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.jitter = jitter

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based)."""
        backoff = min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))
        wait = backoff * (0.5 + 0.5 * self.jitter())  # "equal jitter": never less than half
        return max(wait, retry_after or 0.0)


class _SecretAuth(httpx.Auth):
    """Adds `Authorization: secret <key>` per request, so the key lives in no client header dict."""

    def __init__(self, key: Secret) -> None:
        self._key = key

    def auth_flow(self, request: httpx.Request):  # type: ignore[no-untyped-def]
        request.headers["Authorization"] = f"secret {self._key.reveal()}"
        yield request

    def __repr__(self) -> str:
        return "_SecretAuth(***)"


class ReportsClient:
    """Synchronous client for the three reporting endpoints.

    `pace` is seconds between requests per endpoint (a number, a mapping, or the
    `transactions=60,networks=10` form); it defaults to COMMERCE_REPORTS_PACE, else 60 s.
    `clock` and `pace_dir` are injectable so tests never sleep and processes can share a pace.
    """

    def __init__(
        self,
        secret_key: str | Secret | None = None,
        base_url: str | None = None,
        *,
        pace: float | str | Mapping[str, float] | None = None,
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        clock: Clock | None = None,
        pace_dir: Any = None,
        transport: httpx.BaseTransport | None = None,
        settings: Settings | None = None,
        follow_sandbox_pace: bool = True,
    ) -> None:
        settings = settings or Settings.from_env()
        key = secret_key if secret_key is not None else settings.secret_key
        url = base_url or settings.base_url
        if key is None:
            if url:
                raise ConfigurationError(
                    f"a base URL is set ({url}) but no secret key: set COMMERCE_REPORTS_SECRET_KEY "
                    "(or unset COMMERCE_REPORTS_BASE_URL to use the sandbox)"
                )
            from .embedded import embedded_sandbox  # no key anywhere: run against the sandbox

            running = embedded_sandbox()
            key, url = running.sandbox.config.sites[0].secret_key, running.base_url
        if not url:
            raise ConfigurationError(
                "a secret key is set but no base URL: set COMMERCE_REPORTS_BASE_URL to the service's "
                "address, e.g. https://api.example.com"
            )
        self._key = key if isinstance(key, Secret) else Secret(key)
        self.base_url = url.rstrip("/")
        self.retry = retry or RetryPolicy()
        self.clock: Clock = clock or SystemClock()
        # An explicit pace wins; the configured default follows a sandbox on loopback.
        self._follow_sandbox_pace = follow_sandbox_pace and pace is None and _is_loopback(self.base_url)
        self._pacer = Pacer(
            parse_pace(pace) if pace is not None else dict(settings.pace),
            f"{self.base_url}|{self._key.reveal()}",
            state_dir=pace_dir,
            clock=self.clock,
        )
        self._http = httpx.Client(
            base_url=self.base_url,
            auth=_SecretAuth(self._key),
            headers={"Accept-Encoding": "gzip", "User-Agent": f"commerce-reports/{__version__}"},
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            transport=transport,
        )

    @property
    def pace(self) -> dict[str, float]:
        """Seconds kept between two requests to each endpoint."""
        return dict(self._pacer.intervals)

    def __repr__(self) -> str:
        return f"ReportsClient(base_url={self.base_url!r}, secret_key=***, pace={self.pace!r})"

    def __enter__(self) -> ReportsClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # ------------------------------------------------------------------ public methods

    def transactions(
        self,
        *,
        click_date: date | str | None = None,
        commission_date: date | str | None = None,
        update_date: date | str | None = None,
        campaign_ids: Any = None,
        merchant_group_ids: Any = None,
        program_type: Any = None,
    ) -> pa.Table:
        """Transactions of one day (by click, commission and/or update date; all given must match)."""
        params = transaction_params(
            click_date=click_date,
            commission_date=commission_date,
            update_date=update_date,
            campaign_ids=campaign_ids,
            merchant_group_ids=merchant_group_ids,
            program_type=program_type,
        )
        return self._fetch("transactions", params, _require_body(parse_transactions))

    def networks(
        self,
        start: date | str,
        end: date | str,
        filters: Filters | None = None,
        **filter_kwargs: Any,
    ) -> pa.Table:
        """Per-network revenue, clicks, sales, actions, EPC for clicks in [start, end) (<= 31 days)."""
        return self._aggregate("networks", start, end, filters, filter_kwargs)

    def merchandise(
        self,
        start: date | str,
        end: date | str,
        filters: Filters | None = None,
        **filter_kwargs: Any,
    ) -> pa.Table:
        """Per-product revenue, sales, actions for clicks in [start, end) (<= 31 days)."""
        return self._aggregate("merchandise", start, end, filters, filter_kwargs)

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
        params = {
            "clickDateStart": first.isoformat(),
            "clickDateEnd": stop.isoformat(),
            **chosen.to_params(),
        }

        def parse(body: bytes | None) -> pa.Table:
            return parse_aggregate(endpoint, body, first, stop, chosen)

        return self._fetch(endpoint, params, parse)

    def _fetch(
        self,
        endpoint: str,
        params: dict[str, str],
        parse: Callable[[bytes | None], pa.Table],
    ) -> pa.Table:
        """GET with pace and retries; hand the body (None for an empty 404) to `parse`."""
        attempt = 0
        while True:
            attempt += 1
            asked = self.clock.time()
            if (waited := self._pacer.acquire(endpoint) - asked) > 0:
                log.debug("paced %s: waited %.1f s", endpoint, waited)
            try:
                return parse(self._get(endpoint, params, attempt))
            except ServiceError as error:
                if not error.retriable or attempt >= self.retry.max_attempts:
                    raise _with_attempts(error, attempt) from None
                retry_after = getattr(error, "retry_after", None)
                if retry_after:
                    self._pacer.defer(endpoint, retry_after)
                delay = self.retry.delay(attempt, retry_after)
                log.warning(
                    "%s %s failed (attempt %d of %d): %s; retrying in %.1f s",
                    endpoint,
                    _describe(params),
                    attempt,
                    self.retry.max_attempts,
                    error,
                    delay,
                )
                self.clock.sleep(delay)

    def _get(self, endpoint: str, params: dict[str, str], attempt: int) -> bytes | None:
        log.info(
            "GET %s %s%s",
            endpoint,
            _describe(params),
            f" (attempt {attempt})" if attempt > 1 else "",
        )
        try:
            response = self._http.get(_PATHS[endpoint], params=params)
            body = response.content  # decompressed; a cut-short gzip stream raises here
        except httpx.TimeoutException as error:
            raise TransportError(
                f"timed out ({type(error).__name__})", endpoint=endpoint, params=params
            ) from None
        except httpx.DecodingError as error:
            raise MalformedResponseError(
                f"could not decode the body ({error})", endpoint=endpoint, params=params
            ) from None
        except (httpx.TransportError, httpx.StreamError) as error:
            raise TransportError(
                f"connection failed ({type(error).__name__}: {error})",
                endpoint=endpoint,
                params=params,
            ) from None
        self._follow_pace(endpoint, response)
        if response.is_success:
            return body
        if response.status_code == 404 and endpoint != "transactions":
            return None
        raise _status_error(response, body, endpoint, params)

    def _follow_pace(self, endpoint: str, response: httpx.Response) -> None:
        """A sandbox on loopback announces its pace; a faster one lets the demo run quickly."""
        if not self._follow_sandbox_pace:
            return
        announced = response.headers.get("X-Sandbox-Pace")
        try:
            seconds = float(announced) if announced is not None else None
        except ValueError:
            seconds = None
        if seconds is not None and 0 <= seconds != self.pace[endpoint]:
            self._pacer.set_interval(endpoint, seconds)


def _require_body(parse: Callable[[bytes], pa.Table]) -> Callable[[bytes | None], pa.Table]:
    def parse_body(body: bytes | None) -> pa.Table:
        if body is None:  # only aggregates turn a 404 into "no rows"; _get raised for the rest
            raise MalformedResponseError("the service answered without a body")
        return parse(body)

    return parse_body


def _status_error(
    response: httpx.Response, body: bytes, endpoint: str, params: Mapping[str, str]
) -> StatusError:
    status = response.status_code
    kwargs: dict[str, Any] = {
        "body": body,
        "content_type": response.headers.get("content-type", ""),
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
        return RateLimitedError(status, meaning, retry_after=_retry_after(response, body), **kwargs)
    if status >= 500:
        return ServerError(status, meaning, **kwargs)
    return BadRequestError(status, meaning, **kwargs)  # any other 4xx: the request must change


def _retry_after(response: httpx.Response, body: bytes) -> float | None:
    header = response.headers.get("Retry-After", "").strip()
    if re.fullmatch(r"\d+(\.\d+)?", header):
        return float(header)
    match = re.search(rb"retry in (\d+(?:\.\d+)?) seconds?", body[:500], re.IGNORECASE)
    return float(match.group(1)) if match else None


def _with_attempts(error: ServiceError, attempts: int) -> ServiceError:
    """The same error, its message saying how many attempts were made."""
    error.attempts = attempts
    if attempts > 1:
        error.args = (f"{error.args[0]} after {attempts} attempts",)
    return error


def _describe(params: Mapping[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in params.items())


def _is_loopback(url: str) -> bool:
    host = httpx.URL(url).host
    return host in ("127.0.0.1", "localhost", "::1") or host.startswith("127.")
