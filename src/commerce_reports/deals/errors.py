"""Errors of the deal-request interface (contract part 7.2): every row of the 7.2 table has a class.

    DealError                                 base (a CommerceReportsError)
    ├── DealValidationError   [fatal]     local check failed, nothing sent (a ValidationError)
    ├── DealArgumentError     [fatal]     a function of `deals` got an unusable argument (a ValidationError)
    ├── DealSettingMissingError [fatal]   no key or address given anywhere (a ConfigurationError)
    ├── DealTransportError    [retriable] no complete answer: refused, timed out, dropped or garbled
    ├── DealResponseTooLargeError [fatal] an answer over the size ceiling (COMMERCE_REPORTS_MAX_BODY_MB)
    ├── DealMalformedResponseError [fatal] a 2xx whose body is not the JSON expected
    ├── DealMayExistError     [fatal]     a create got a 5xx, or no answer after it was sent: confirm first
    └── DealStatusError                   non-2xx (status, method, path, service message)
        ├── DealBadRequestError   [fatal]     400, never retried; `.failures` with kinds
        │   ├── DealSchemaError               FST_ERR_VALIDATION, a failure per path
        │   │   └── DealIdInvalidError        params/id Invalid deal request ID
        │   └── DealRuleError                 `{message}` only: rule on the stored deal
        ├── DealAuthError         [fatal]     401, plain text, never parsed as JSON
        │   ├── ApiKeyMissingError            api key not provided
        │   ├── ApiKeyInvalidError            invalid api key (unknown, revoked or expired)
        │   └── ApiKeySyntaxError             invalid api key syntax
        ├── DealForbiddenError    [fatal]     403
        │   ├── InsufficientScopeError        a read-only key sent a write
        │   └── AccountNotEnabledError        Partner not authorized for this API
        ├── DealNotFoundError     [fatal]     404 Deal request not found
        ├── UnsupportedMediaTypeError [fatal] 415 a PATCH not sent as application/json
        ├── DealRateLimitedError  [retriable] 429, `.retry_after` parsed from the message
        └── DealServerError       [retriable] any 5xx (500 plain text, 503, 504, ...): a write may
            │                                 have had effect (7.2 rule 2)
            └── DealUpstreamError [retriable] 502, `.upstream` names the downstream system
                └── ArchiveUnconfirmedError [fatal] archive kept getting 502, no read confirmed

A 400 carries one `DealFailure` per failing field, each with a machine-readable `DealRuleKind`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ..errors import CommerceReportsError, ConfigurationError, Fatal, Retriable, ValidationError
from ..redaction import excerpt

__all__ = [
    "AccountNotEnabledError",
    "ApiKeyInvalidError",
    "ApiKeyMissingError",
    "ApiKeySyntaxError",
    "ArchiveUnconfirmedError",
    "DealArgumentError",
    "DealAuthError",
    "DealBadRequestError",
    "DealError",
    "DealFailure",
    "DealForbiddenError",
    "DealIdInvalidError",
    "DealMalformedResponseError",
    "DealMayExistError",
    "DealNotFoundError",
    "DealRateLimitedError",
    "DealResponseTooLargeError",
    "DealRuleError",
    "DealRuleKind",
    "DealSchemaError",
    "DealServerError",
    "DealSettingMissingError",
    "DealStatusError",
    "DealTransportError",
    "DealUpstreamError",
    "DealValidationError",
    "InsufficientScopeError",
    "UnsupportedMediaTypeError",
    "require",
]


class DealRuleKind(StrEnum):
    """What a matchable 400 message of part 7.2 is about: stable names to branch on, not text."""

    TAKE_RATE = "take_rate"
    START_DATE = "start_date"
    RUN_OF_NETWORK_AND_TARGETING = "run_of_network_and_targeting"
    TOO_MANY_TARGETING_GROUPS = "too_many_targeting_groups"
    UNKNOWN_SEGMENTS = "unknown_segments"
    COUNTRY_NOT_AVAILABLE = "country_not_available"
    DEVICE_TYPE_NOT_AVAILABLE = "device_type_not_available"
    TARGETING_VALUE_NOT_AVAILABLE = "targeting_value_not_available"  # other enumerated attributes
    PUBLISHER_ID_INVALID = "publisher_id_invalid"
    END_DATE_REQUIRED = "end_date_required"
    OPEN_DEAL_SEATS = "open_deal_seats"
    OPEN_DEAL_BUYERS = "open_deal_buyers"
    SEATS_REQUIRED = "seats_required"
    INVALID_STATUS = "invalid_status"
    STATUS_NOT_SETTABLE = "status_not_settable"
    INVALID_DEAL_ID = "invalid_deal_id"


@dataclass(frozen=True)
class DealFailure:
    """One failing field: its path (`body/commercial/takeRate`, "" when none), the message after
    the path, its kind when the message is one the contract lists, the `<list>` it names, and any
    detail (the blocking DSP of a status that is not settable)."""

    path: str
    message: str
    kind: DealRuleKind | None = None
    values: tuple[str, ...] = ()
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.path} {self.message}" if self.path else self.message


class DealError(CommerceReportsError):
    """Base of every deal-request error."""


class DealValidationError(ValidationError, DealError):
    """A local check failed before anything was sent; `failures` holds each field and kind."""

    def __init__(self, operation: str, failures: Sequence[DealFailure]) -> None:
        self.operation = operation
        self.failures = tuple(failures)
        paths = ", ".join(f.path or "body" for f in self.failures)
        # one failure: its path, then its message; several: each after its own path
        alone = len(self.failures) == 1
        said = self.failures[0].message if alone else ", ".join(str(f) for f in self.failures)
        super().__init__(
            paths if alone else "body",
            said,
            f"{operation} was not sent; fix the deal and send it again",
        )
        self.parameter = paths

    @property
    def kinds(self) -> tuple[DealRuleKind | None, ...]:
        return tuple(f.kind for f in self.failures)


class DealArgumentError(ValidationError, DealError):
    """A function of `deals` got an argument of the wrong type or value; nothing was sent."""


class DealSettingMissingError(ConfigurationError, DealError):
    """The deal interface's key or address is given nowhere (no argument, variable, `.env` or
    project file): the `deals` command's exit 3, where a setting given that cannot be used is a
    usage error (exit 2), as on every other command."""


def require(value: Any, kinds: type | tuple[type, ...], parameter: str, allowed: str) -> None:
    """Raise `DealArgumentError` unless `value` is an instance of `kinds` (a bool is no number)."""
    listed = kinds if isinstance(kinds, tuple) else (kinds,)
    if isinstance(value, kinds) and (bool in listed or not isinstance(value, bool)):
        return
    raise DealArgumentError(parameter, f"got {type(value).__name__} {value!r:.60}", allowed)


class _DealRequestError(DealError):
    """A deal error tied to one request (`method`, `path`) and the number of attempts made."""

    def __init__(self, message: str, *, method: str, path: str, attempts: int = 1) -> None:
        self.method = method
        self.path = path
        self.attempts = attempts
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        super().__init__(f"{method} {path}{tries}: {message}")


class DealTransportError(Retriable, _DealRequestError):
    """The deal interface gave no complete answer (connection refused, timeout, dropped, garbled)."""


class DealResponseTooLargeError(Fatal, _DealRequestError):
    """The answer was over the size ceiling once inflated; nothing of it was read."""


class DealMalformedResponseError(Fatal, _DealRequestError):
    """A 2xx answer whose body is not the JSON expected; the write may well have landed."""


class DealMayExistError(Fatal, _DealRequestError):
    """A create got a 5xx, or no complete answer after it was sent: the deal may exist downstream
    with no deal request recorded. Never re-sent; `cause` is what happened, `upstream` the system
    a 502 named."""

    def __init__(self, cause: str, *, upstream: str = "", method: str, path: str) -> None:
        self.cause = cause
        self.upstream = upstream
        where = f"in {upstream} " if upstream else ""
        super().__init__(
            f"{cause}. The deal may exist downstream {where}with no deal request recorded; it was "
            "NOT re-sent, to avoid a duplicate. Confirm whether it exists before creating it again",
            method=method,
            path=path,
        )


class DealStatusError(_DealRequestError):
    """The deal interface answered a non-2xx status; `service_message` is its own words."""

    hint = "see part 7.2 of the service contract"

    def __init__(
        self,
        status: int,
        service_message: str,
        *,
        method: str,
        path: str,
        body: bytes | str = b"",
        content_type: str = "",
        attempts: int = 1,
        hint: str = "",
    ) -> None:
        self.status = status
        self.service_message = service_message
        self.body_excerpt = excerpt(body, content_type)
        self.content_type = content_type
        said = service_message or self.body_excerpt or "(no body)"
        message = f"HTTP {status} {said}. {hint or self.hint}"
        super().__init__(message, method=method, path=path, attempts=attempts)


class DealBadRequestError(Fatal, DealStatusError):
    """400: the request is wrong as sent; never retried. `failures` names each field and kind."""

    hint = "nothing was changed; fix the request before sending it again"

    def __init__(self, *args: Any, failures: Sequence[DealFailure] = (), **kwargs: Any) -> None:
        self.failures = tuple(failures)
        super().__init__(*args, **kwargs)

    @property
    def kinds(self) -> tuple[DealRuleKind | None, ...]:
        return tuple(f.kind for f in self.failures)


class DealSchemaError(DealBadRequestError):
    """400 FST_ERR_VALIDATION: fields failed the schema; one failure per comma-joined path."""


class DealIdInvalidError(DealSchemaError):
    """400 `params/id Invalid deal request ID`: the id in the path is malformed."""

    hint = "check the deal request id (as returned by create)"


class DealRuleError(DealBadRequestError):
    """400 `{message}` only: rule on the stored deal refused the request."""

    @property
    def kind(self) -> DealRuleKind | None:
        return self.failures[0].kind if self.failures else None


class DealAuthError(Fatal, DealStatusError):
    """401 (plain text): the `x-api-key` was refused at the gateway."""

    hint = "set COMMERCE_REPORTS_DEALS_API_KEY to a valid deal API key"


class ApiKeyMissingError(DealAuthError):
    """401 `api key not provided`: no x-api-key header was sent."""


class ApiKeyInvalidError(DealAuthError):
    """401 `invalid api key`: the key is unknown, revoked or expired."""

    hint = "the key is unknown, revoked or expired: ask for a new one"


class ApiKeySyntaxError(DealAuthError):
    """401 `invalid api key syntax`: the key is malformed (often cut short or with whitespace)."""

    hint = "the key is malformed: copy it again in full into COMMERCE_REPORTS_DEALS_API_KEY"


class DealForbiddenError(Fatal, DealStatusError):
    """403: the key or account may not do this."""


class InsufficientScopeError(DealForbiddenError):
    """403 `Insufficient scope`: a read-only key sent a write (dry runs included)."""

    hint = "this key is read-only; use a key with write scope"


class AccountNotEnabledError(DealForbiddenError):
    """403 `Partner not authorized for this API`: the account is not enabled for deal requests."""

    hint = "the account is not enabled for the deal-request API; ask the service to enable it"


class DealNotFoundError(Fatal, DealStatusError):
    """404: no deal request with that id on this account (or no such route or attribute)."""

    hint = "check the id and that the key belongs to the account owning the deal"


class UnsupportedMediaTypeError(Fatal, DealStatusError):
    """415: the body was not sent as `application/json`."""

    hint = "send the body as application/json (DealsClient always does)"


class DealRateLimitedError(Retriable, DealStatusError):
    """429: too many requests; `retry_after` is the wait in seconds the message stated."""

    def __init__(self, *args: Any, retry_after: float | None = None, hint: str = "", **kwargs: Any) -> None:
        self.retry_after = retry_after
        wait = f"retry in {retry_after:g} s" if retry_after is not None else "retry later"
        super().__init__(*args, hint=hint or f"rate limit: {wait}", **kwargs)


class DealServerError(Retriable, DealStatusError):
    """Any 5xx: 500 (plain text) when the downstream deal system was unreachable, timed out or
    failed; 503, 504 and the rest from the service or a gateway in front of it."""

    hint = "a write may still have had effect; an update can be re-sent as is"


class DealUpstreamError(DealServerError):
    """502: the downstream system (`upstream`) rejected the request or answered unusably."""

    hint = "a write may still have had effect; an archived deal refuses every edit"

    def __init__(self, *args: Any, upstream: str = "", **kwargs: Any) -> None:
        self.upstream = upstream
        super().__init__(*args, **kwargs)


class ArchiveUnconfirmedError(Fatal, DealUpstreamError):
    """An archive kept getting 502 and no read showed `archived`: it may or may not have landed."""

    hint = "the archive may have landed; check the deal's status before archiving it again"
