"""`DealsClient`: create and update deal requests, list targeting values.

It stands on the toolkit's HTTP layer (`http.Session`, the key sent by `KeyAuth` as `x-api-key`,
`RetryPolicy`) and sends each request through `Exchange`, which re-sends exactly as part 7.2 of
the contract allows: a create never after it may have reached the service, an update, dry run or
read identically after any 5xx or lost answer, an archive stuck on 502 confirmed by a read.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, date, datetime
from types import TracebackType
from typing import Any
from urllib.parse import quote

import httpx
import orjson

from .._version import __version__
from ..config import Limits
from ..errors import CommerceReportsError
from ..http import Answer, KeyAuth, RetryPolicy, Session
from ..redaction import excerpt, scrub
from ..secret import Secret
from .checks import AdUnitSizeWarning, check_create, check_targeting_values, check_update
from .config import ENV_DEALS_API_KEY, ENV_DEALS_BASE_URL, DealSettings
from .errors import (
    DealArgumentError,
    DealFailure,
    DealMalformedResponseError,
    DealMayExistError,
    DealValidationError,
    require,
)
from .exchange import Call, Exchange
from .models import Deal

__all__ = ["ENV_DEALS_API_KEY", "ENV_DEALS_BASE_URL", "DealsClient"]

_FUNCTIONS = {"sleep": "e.g. time.sleep", "today": "a function returning today's date (UTC)"}


def _utc_today() -> date:
    return datetime.now(UTC).date()


def _default_retry(limits: Limits) -> RetryPolicy:
    """4 attempts, 0.5 s doubling to at most 8 s between them, service-asked waits capped by `limits`."""
    return RetryPolicy(max_attempts=4, base_delay=0.5, max_delay=8.0, max_wait=limits.max_retry_wait)


class DealsClient:
    """A client of the deal-request interface; the API key travels as `x-api-key`, never shown.

    `api_key` and `base_url` default to those of `settings` (`cr.open_deals_client()` hands it the
    configured COMMERCE_REPORTS_DEALS_API_KEY and _BASE_URL); the client never reads the
    environment itself. `retry` sets
    the attempts and waits, `limits` the body ceiling, deadline and longest wait; `sleep`, `today`
    and `transport` are injectable for tests.
    """

    def __init__(
        self,
        api_key: str | Secret | None = None,
        base_url: str | None = None,
        *,
        retry: RetryPolicy | None = None,
        limits: Limits | None = None,
        timeout: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
        today: Callable[[], date] = _utc_today,
        transport: httpx.BaseTransport | None = None,
        settings: DealSettings | None = None,
    ) -> None:
        require(settings, (DealSettings, type(None)), "settings", "a DealSettings, or None")
        settings = settings or DealSettings()
        self._key, self.base_url = settings.connection(api_key, base_url)
        limits = limits or settings.limits
        require(retry, (RetryPolicy, type(None)), "retry", "a commerce_reports.http.RetryPolicy, or None")
        require(limits, Limits, "limits", "a commerce_reports.config.Limits, or None")
        for name, value in (("sleep", sleep), ("today", today)):
            if not callable(value):
                raise DealArgumentError(name, f"got {type(value).__name__}, not a function", _FUNCTIONS[name])
        self.retry = retry or _default_retry(limits)
        self._today = today
        self._values: dict[str, tuple[str, ...]] = {}
        session = Session(
            self.base_url,
            auth=KeyAuth("x-api-key", self._key),
            limits=limits,
            timeout=timeout,
            headers={"accept": "application/json", "User-Agent": f"commerce-reports/{__version__}"},
            transport=transport,
        )
        self._exchange = Exchange(session, self.retry, sleep)

    def __repr__(self) -> str:
        return f"DealsClient(base_url={self.base_url!r}, api_key={self._key!r})"

    def close(self) -> None:
        self._exchange.session.close()

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
        A create is never re-sent once it may have reached the service: after any 5xx, a lost
        answer, or a 2xx that is not a deal with its id (a 202, an empty or unreadable body),
        `DealMayExistError` says to confirm first. A dry run creates nothing and is re-sent.
        """
        require(dry_run, bool, "dry_run", "True or False")  # ("no" would only validate: nothing created)
        model = self._checked(
            deal, "create deal request", update=False, check_values=check_values, on=local_checks
        )
        call = Call(
            "POST",
            "/deal-requests",
            orjson.dumps(model.to_dict()),
            {"dryRun": "true"} if dry_run else None,
            resend=bool(dry_run),
        )
        answer = self._exchange.send(call)
        if dry_run:
            return _deal(answer, call) or model
        return _created(answer, call)

    def update(
        self,
        deal_id: str | int,
        changes: Deal | Mapping[str, Any],
        *,
        check_values: bool = False,
        local_checks: bool = True,
    ) -> Deal | None:
        """Apply `changes` to a deal request, always as `application/json`.

        Re-sent identically after any 5xx or lost answer until it succeeds or the retry policy's
        attempts are spent; an archive answered 502 is confirmed by a read. Returns the deal as
        answered (as read, for an archive confirmed by a read), or None on a 204.
        """
        path = _deal_path(deal_id)
        operation = f"update deal request {deal_id}"
        model = self._checked(changes, operation, update=True, check_values=check_values, on=local_checks)
        call = Call("PATCH", path, orjson.dumps(model.to_dict()))
        wanted = str(deal_id).strip()
        confirm = (lambda: self._archived(path, wanted)) if model.status == "archived" else None
        result = self._exchange.send(call, confirm)
        return result if isinstance(result, Deal) else _updated(result, call, wanted)

    def targeting_values(self, attribute: str) -> tuple[str, ...]:
        """The allowed values of an enumerated targeting attribute, fetched once per client."""
        require(attribute, str, "attribute", "a targeting attribute name, e.g. device.geo.country")
        if not attribute.strip():
            raise DealArgumentError("attribute", "is empty", "e.g. device.geo.country")
        if attribute not in self._values:
            call = Call("GET", f"/targeting-attributes/{quote(attribute, safe='')}/values")
            self._values[attribute] = _values(self._exchange.send(call), call)
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
        require(check_values, bool, "check_values", "True or False")  # ("no" is true)
        require(on, bool, "local_checks", "True or False")
        model = deal if isinstance(deal, Deal) else Deal.from_dict(deal)
        unsendable = list(_unsendable(deal if isinstance(deal, Mapping) else model.to_dict(), "body"))
        if unsendable:  # (orjson would raise a bare TypeError, or send a null dropped or a float)
            raise DealValidationError(operation, unsendable)
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

    def _archived(self, path: str, wanted: str) -> Deal | str:
        """Deal `wanted` if a read shows it archived, else why the archive is not confirmed."""
        try:
            answer = self._exchange.once(Call("GET", path))
        except CommerceReportsError as error:
            return f"the read GET {path} got no answer ({type(error).__name__})"
        if answer.status != 200:
            return f"no read confirmed it (GET {path} answered {answer.status})"
        try:
            deal = Deal.from_dict(_parsed(answer.body))
        except (orjson.JSONDecodeError, DealValidationError):
            return f"the read GET {path} answered a body that is not a deal"
        if deal.id != wanted:
            return f"the read GET {path} answered deal {deal.id!r}, not {wanted!r}"
        if deal.status == "archived":
            return deal
        return f"a read shows status {deal.status!r}, not 'archived'"


_INT64 = (-(2**63), 2**64 - 1)  # the whole numbers JSON carries exactly (orjson's range)


def _unsendable(value: Any, path: str) -> Iterator[DealFailure]:
    """What in a body cannot be sent as given (see `_scalar_problem`), and a key that is not a
    string."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str):
                yield from _unsendable(item, f"{path}/{key}")
            else:
                yield DealFailure(path, f"has the key {key!r}, a {type(key).__name__}: keys are strings")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _unsendable(item, f"{path}/{i}")
    elif (problem := _scalar_problem(value)) is not None:
        yield DealFailure(path, problem)


def _scalar_problem(value: Any) -> str | None:
    """Why a value that holds no other cannot be sent as given: a null (the models would drop it,
    unsaid), a whole number past 64 bits (read as a float: an id loses digits), a value JSON has
    not (a set, a Decimal, a float that is not finite); None when it can."""
    if value is None:
        return "is null: leave the field out instead (a null is not sent)"
    if isinstance(value, bool | str):
        return None
    if isinstance(value, int):
        if _INT64[0] <= value <= _INT64[1]:
            return None
        return f"{value} is past 64 bits, which JSON numbers keep exactly: send it as a string"
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{value} is not a finite number"
    return f"is a {type(value).__name__}, not a JSON value (string, number, true/false, array or object)"


def _deal_path(deal_id: str | int) -> str:
    require(deal_id, (str, int), "deal_id", "the id create returned, e.g. '2001'")
    text = str(deal_id).strip()
    if not text:
        failure = DealFailure("params/id", "must not be empty: pass the id create returned")
        raise DealValidationError("update deal request", [failure])
    return f"/deal-requests/{quote(text, safe='')}"


def _parsed(body: bytes) -> Any:
    """A 2xx answer's JSON with every known key masked in its strings: a service echoing the key
    (in a note, as a value) would otherwise hand it to whoever prints or reprs the result."""
    return scrub(orjson.loads(body))


def _created(answer: Answer, call: Call) -> Deal:
    """The deal a create's answer holds: a 200 or 201 with a deal and its id (service notes).
    Any other 2xx reached the service and says nothing usable: `DealMayExistError`, confirm first."""
    if answer.status not in (200, 201):
        why = "({said}) is not a create's 200 or 201"
    else:
        try:
            deal = _deal(answer, call)
        except DealMalformedResponseError as error:
            raise _may_exist(answer, call, "with a body that is not a deal ({said})") from error
        if deal is not None and deal.id:
            return deal
        why = "without a deal id ({said})"
    raise _may_exist(answer, call, why)


def _may_exist(answer: Answer, call: Call, why: str) -> DealMayExistError:
    """A create's answer that says nothing usable: `why`, where `{said}` stands for what it held
    (an excerpt, made only for this error)."""
    said = excerpt(answer.body) or "no body"
    return DealMayExistError(
        f"HTTP {answer.status} {why.format(said=said)}", method=call.method, path=call.path
    )


def _updated(answer: Answer, call: Call, wanted: str) -> Deal | None:
    """The deal an update's answer holds (None on a 204); `DealMalformedResponseError` when it is
    another deal than the one updated."""
    deal = _deal(answer, call)
    if deal is None or deal.id is None or deal.id == wanted:
        return deal
    raise DealMalformedResponseError(
        f"HTTP {answer.status} answered deal {deal.id!r}, not {wanted!r}: read deal {wanted} to see "
        "whether the update landed (an update can be re-sent as is)",
        method=call.method,
        path=call.path,
    )


def _deal(answer: Answer, call: Call) -> Deal | None:
    if answer.status == 204 or not answer.body:
        return None
    try:
        return Deal.from_dict(_parsed(answer.body))
    except (orjson.JSONDecodeError, DealValidationError) as exc:
        raise DealMalformedResponseError(
            f"HTTP {answer.status} with a body that is not a deal ({excerpt(answer.body)}); the "
            "request was accepted: an update or a dry run can be sent again as is",
            method=call.method,
            path=call.path,
        ) from exc


def _values(answer: Answer, call: Call) -> tuple[str, ...]:
    """Read a values list: a JSON array, or an object holding one under `values` (or `data`);
    elements are strings or objects with a `value`, `code` or `id`."""
    try:
        data = _parsed(answer.body)
    except orjson.JSONDecodeError as exc:
        raise DealMalformedResponseError(
            f"the values list is not JSON ({excerpt(answer.body)}); retry later",
            method=call.method,
            path=call.path,
        ) from exc
    if isinstance(data, Mapping):
        data = data.get("values", data.get("data"))
    if not isinstance(data, list):
        raise DealMalformedResponseError(
            f"no values list in the answer ({excerpt(answer.body)}); retry later",
            method=call.method,
            path=call.path,
        )
    return tuple(str(_value_of(item)) for item in data)


def _value_of(item: Any) -> Any:
    if isinstance(item, Mapping):
        for key in ("value", "code", "id"):
            if key in item:
                return item[key]
    return item
