"""`DealsClient`: create and update deal requests, list targeting values, retrying exactly as
part 7.2 of the contract allows.

- 429: wait the seconds the message states, then retry (bounded by `max_attempts`, `max_wait`).
- An update, a dry run or a read after a 5xx or a lost answer: re-sent identically (idempotent).
- A create after a 500, a 502 or a lost answer: never re-sent; `DealMayExistError` says the deal
  may exist downstream and must be confirmed first.
- An archive that keeps getting 502: landed when a read (`GET /deal-requests/{id}`, where the
  interface offers one) shows `archived`; otherwise `ArchiveUnconfirmedError`.
- 400s, 401s, 403s, 404 and 415 are never retried.
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime
from types import TracebackType
from typing import Any, overload
from urllib.parse import quote

import httpx
import orjson

from ..config import ENV_DEALS_API_KEY, ENV_DEALS_BASE_URL, Secret, Settings
from ..errors import (
    ArchiveUnconfirmedError,
    ConfigurationError,
    DealFailure,
    DealMalformedResponseError,
    DealMayExistError,
    DealRateLimitedError,
    DealServerError,
    DealTransportError,
    DealUpstreamError,
    DealValidationError,
    excerpt,
)
from .checks import AdUnitSizeWarning, check_create, check_targeting_values, check_update
from .models import Deal
from .responses import error_from_response

__all__ = ["DealsClient"]

log = logging.getLogger(__name__)

_START_SANDBOX = (
    "start a local one with `commerce-reports sandbox --deals` and use the URL and keys it prints"
)


def _utc_today() -> date:
    return datetime.now(UTC).date()


class DealsClient:
    """A client of the deal-request interface; the API key travels as `x-api-key`, never shown.

    `api_key` and `base_url` default to COMMERCE_REPORTS_DEALS_API_KEY and
    COMMERCE_REPORTS_DEALS_BASE_URL. `sleep`, `today` and `transport` are injectable for tests.
    """

    def __init__(
        self,
        api_key: str | Secret | None = None,
        base_url: str | None = None,
        *,
        max_attempts: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 8.0,
        max_wait: float = 120.0,
        timeout: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
        today: Callable[[], date] = _utc_today,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if api_key is None or base_url is None:
            settings = Settings.from_env()
            api_key = api_key if api_key is not None else settings.deals_api_key
            base_url = base_url or settings.deals_base_url
        if api_key is None:
            raise ConfigurationError(
                f"no deal-request API key: set {ENV_DEALS_API_KEY} or pass api_key=...; "
                f"for testing, {_START_SANDBOX}"
            )
        if not base_url:
            raise ConfigurationError(
                f"no deal-request base URL: set {ENV_DEALS_BASE_URL} or pass base_url=...; "
                f"for testing, {_START_SANDBOX}"
            )
        if max_attempts < 1:
            raise ConfigurationError(f"max_attempts must be at least 1, got {max_attempts}")
        self._key = api_key if isinstance(api_key, Secret) else Secret(api_key)
        self.base_url = base_url.rstrip("/")
        self.max_attempts = max_attempts
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_wait = max_wait
        self._sleep = sleep
        self._today = today
        self._values: dict[str, tuple[str, ...]] = {}
        self._http = httpx.Client(
            base_url=self.base_url,
            timeout=timeout,
            transport=transport,
            headers={"x-api-key": self._key.reveal(), "accept": "application/json"},
        )

    def __repr__(self) -> str:
        return f"DealsClient(base_url={self.base_url!r}, api_key={self._key!r})"

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> DealsClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- operations --------------------------------------------------------------------------

    def create(
        self,
        deal: Deal | Mapping[str, Any],
        *,
        dry_run: bool = False,
        check_values: bool = False,
        local_checks: bool = True,
    ) -> Deal:
        """Create a deal request (or only validate it, `dry_run`); returns the deal as answered.

        Local checks run first (`local_checks=False` leaves the judging to the service);
        `check_values` also checks enumerated targeting values against `targeting_values`.
        A create is never re-sent after a 500/502 (see `DealMayExistError`).
        """
        model = self._checked(
            deal, "create deal request", update=False, check_values=check_values, on=local_checks
        )
        params = {"dryRun": "true"} if dry_run else None
        result = self._call("POST", "/deal-requests", model.to_dict(), params, idempotent=dry_run)
        deal_read = self._deal(result, "POST", "/deal-requests")
        if deal_read is None and dry_run:
            return model
        if deal_read is None:
            raise DealMalformedResponseError(
                f"HTTP {result.status_code} without a body: the deal was probably created; "
                "confirm before re-sending",
                method="POST",
                path="/deal-requests",
            )
        return deal_read

    def update(
        self,
        deal_id: str | int,
        changes: Deal | Mapping[str, Any],
        *,
        check_values: bool = False,
        local_checks: bool = True,
    ) -> Deal | None:
        """Apply `changes` to a deal request, always as `application/json`.

        Re-sent identically after a 5xx until it succeeds or `max_attempts` is reached. Returns
        the deal as answered (as read, for an archive confirmed by a read), or None on a 204.
        """
        path = self._deal_path(deal_id)
        operation = f"update deal request {deal_id}"
        model = self._checked(changes, operation, update=True, check_values=check_values, on=local_checks)
        confirm = (lambda: self._archived(path)) if model.status == "archived" else None
        result = self._call("PATCH", path, model.to_dict(), None, idempotent=True, confirm=confirm)
        if isinstance(result, Deal):
            log.warning("archive of %s kept getting 502; a read shows it archived", path)
            return result
        return self._deal(result, "PATCH", path)

    def targeting_values(self, attribute: str) -> tuple[str, ...]:
        """The allowed values of an enumerated targeting attribute, fetched once per client."""
        if attribute not in self._values:
            path = f"/targeting-attributes/{quote(attribute, safe='')}/values"
            response = self._call("GET", path, None, None, idempotent=True)
            self._values[attribute] = _values(response, path)
        return self._values[attribute]

    # -- internals ---------------------------------------------------------------------------

    def _checked(
        self,
        deal: Deal | Mapping[str, Any],
        operation: str,
        *,
        update: bool,
        check_values: bool,
        on: bool,
    ) -> Deal:
        model = deal if isinstance(deal, Deal) else Deal.from_dict(deal)
        if not on:
            return model
        report = (check_update if update else check_create)(model, self._today())
        failures = list(report.failures)
        if check_values:
            failures += check_targeting_values(model, self.targeting_values)
        if failures:
            raise DealValidationError(operation, failures)
        for warning in report.warnings:
            warnings.warn(warning, AdUnitSizeWarning, stacklevel=3)
        return model

    @staticmethod
    def _deal_path(deal_id: str | int) -> str:
        text = str(deal_id).strip()
        if not text:
            failure = DealFailure("params/id", "must not be empty: pass the id create returned")
            raise DealValidationError("update deal request", [failure])
        return f"/deal-requests/{quote(text, safe='')}"

    def _pause(self, attempt: int) -> float:
        return float(min(self.max_backoff, self.backoff * 2 ** (attempt - 1)))

    @overload
    def _call(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None,
        params: dict[str, str] | None,
        *,
        idempotent: bool,
        confirm: None = None,
    ) -> httpx.Response: ...

    @overload
    def _call(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None,
        params: dict[str, str] | None,
        *,
        idempotent: bool,
        confirm: Callable[[], Deal | str] | None,
    ) -> httpx.Response | Deal: ...

    def _call(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None,
        params: dict[str, str] | None,
        *,
        idempotent: bool,
        confirm: Callable[[], Deal | str] | None = None,
    ) -> httpx.Response | Deal:
        """Send until an answer may be returned or raised; see the module docstring for when."""
        content = orjson.dumps(body) if body is not None else None
        headers = {"content-type": "application/json"} if content is not None else {}
        for attempt in range(1, self.max_attempts + 1):
            last = attempt == self.max_attempts
            try:
                response = self._http.request(method, path, content=content, params=params, headers=headers)
            except httpx.TransportError as exc:
                sent = not isinstance(exc, httpx.ConnectError)
                what = f"no complete answer from {self.base_url} ({type(exc).__name__})"
                if sent and not idempotent:
                    raise DealMayExistError(what, method=method, path=path) from exc
                if last:
                    raise DealTransportError(
                        f"{what}; check the URL and that the service is running",
                        method=method,
                        path=path,
                        attempts=attempt,
                    ) from exc
                self._retry(attempt, self._pause(attempt), what, method, path)
                continue
            if response.is_success:
                return response
            error = error_from_response(
                response.status_code,
                response.content,
                response.headers.get("content-type", ""),
                response.headers,
                method=method,
                path=path,
                attempts=attempt,
            )
            if isinstance(error, DealRateLimitedError):
                wait = error.retry_after if error.retry_after is not None else self._pause(attempt)
                if last or wait > self.max_wait:
                    raise error
                self._retry(attempt, wait, "HTTP 429", method, path)
                continue
            if not isinstance(error, DealServerError | DealUpstreamError):
                raise error
            upstream = error.upstream if isinstance(error, DealUpstreamError) else ""
            if not idempotent:
                raise DealMayExistError(
                    f"HTTP {error.status} {error.service_message}".strip(),
                    upstream=upstream,
                    method=method,
                    path=path,
                ) from error
            reason = ""
            if confirm is not None and isinstance(error, DealUpstreamError):
                landed = confirm()
                if isinstance(landed, Deal):
                    return landed
                reason = landed
            if last:
                if reason:
                    raise ArchiveUnconfirmedError(
                        502,
                        error.service_message,
                        upstream=upstream,
                        method=method,
                        path=path,
                        body=response.content,
                        content_type=error.content_type,
                        attempts=attempt,
                        hint=f"{reason}; {ArchiveUnconfirmedError.hint}",
                    ) from error
                raise error
            self._retry(attempt, self._pause(attempt), f"HTTP {error.status}", method, path)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _retry(self, attempt: int, wait: float, why: str, method: str, path: str) -> None:
        log.info("%s %s: %s; retry %d in %.1f s", method, path, why, attempt + 1, wait)
        self._sleep(wait)

    def _archived(self, path: str) -> Deal | str:
        """The deal if a read shows it archived, else why the archive is not confirmed."""
        try:
            response = self._http.get(path)
        except httpx.TransportError as exc:
            return f"the read GET {path} got no answer ({type(exc).__name__})"
        if response.status_code != 200:
            return f"no read confirmed it (GET {path} answered {response.status_code})"
        try:
            deal = Deal.from_dict(orjson.loads(response.content))
        except (orjson.JSONDecodeError, DealValidationError):
            return f"the read GET {path} answered a body that is not a deal"
        if deal.status == "archived":
            return deal
        return f"a read shows status {deal.status!r}, not 'archived'"

    @staticmethod
    def _deal(response: httpx.Response, method: str, path: str) -> Deal | None:
        if response.status_code == 204 or not response.content:
            return None
        try:
            return Deal.from_dict(orjson.loads(response.content))
        except (orjson.JSONDecodeError, DealValidationError) as exc:
            raise DealMalformedResponseError(
                f"HTTP {response.status_code} with a body that is not a deal "
                f"({excerpt(response.content)}); the request was accepted, do not re-send it "
                "blindly",
                method=method,
                path=path,
            ) from exc


def _values(response: httpx.Response, path: str) -> tuple[str, ...]:
    """Read a values list: a JSON array, or an object holding one under `values` (or `data`);
    elements are strings or objects with a `value`, `code` or `id`."""
    try:
        data = orjson.loads(response.content)
    except orjson.JSONDecodeError as exc:
        raise DealMalformedResponseError(
            f"the values list is not JSON ({excerpt(response.content)}); retry later",
            method="GET",
            path=path,
        ) from exc
    if isinstance(data, Mapping):
        data = data.get("values", data.get("data"))
    if not isinstance(data, list):
        raise DealMalformedResponseError(
            f"no values list in the answer ({excerpt(response.content)}); retry later",
            method="GET",
            path=path,
        )
    return tuple(str(_value_of(item)) for item in data)


def _value_of(item: Any) -> Any:
    if isinstance(item, Mapping):
        for key in ("value", "code", "id"):
            if key in item:
                return item[key]
    return item
