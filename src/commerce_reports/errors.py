"""Every exception the toolkit raises, in one tree.

    CommerceReportsError                      base of everything below
    ├── ConfigurationError        [fatal]     bad environment, .env or sites file
    ├── ValidationError           [fatal]     bad input, caught before any request (also a ValueError)
    ├── ServiceError                          the service failed or refused a request
    │   ├── TransportError        [retriable] timeout, refused or dropped connection
    │   │   └── UnreachableError  [fatal]     the address cannot be reached (refused, DNS, TLS before any
    │   │                                     answer, or several requests in a row without one): stop asking
    │   ├── MalformedResponseError[retriable] truncated or unparseable body on a 2xx
    │   ├── ResponseTooLargeError [fatal]     a body over the size ceiling (COMMERCE_REPORTS_MAX_BODY_MB)
    │   └── StatusError                       a non-2xx answer (status, endpoint, params, body excerpt)
    │       ├── BadRequestError       [fatal]     400
    │       ├── AuthenticationError   [fatal]     401
    │       ├── ForbiddenError        [fatal]     403
    │       ├── NotFoundError         [fatal]     404 (an aggregate's 404 is an empty result instead)
    │       ├── RateLimitedError      [retriable] 429, with the wait when the service gave one
    │       └── ServerError           [retriable] 5xx
    ├── LakeError                 [fatal]     the local lake is unusable or locked
    ├── ExportError               [fatal]     a report notebook failed, or its output would leak a secret
    │   └── DeliveryError         [fatal]     the report was written but could not be mailed
    └── DealError                             the deal-request interface: its own tree in deals/errors.py

Retry decisions are made from the kind (`Retriable` / `Fatal` mixins, or `error.retriable`),
never from the class name. No message ever carries a secret key: `redact` masks them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .redaction import excerpt, redact

__all__ = [
    "AuthenticationError",
    "BadRequestError",
    "CommerceReportsError",
    "ConfigurationError",
    "DeliveryError",
    "ExportError",
    "Fatal",
    "ForbiddenError",
    "LakeError",
    "MalformedResponseError",
    "NotFoundError",
    "RateLimitedError",
    "ResponseTooLargeError",
    "Retriable",
    "ServerError",
    "ServiceError",
    "StatusError",
    "TransportError",
    "UnreachableError",
    "ValidationError",
]


class Retriable:
    """Mixin: trying the same request again later may succeed."""

    retriable = True


class Fatal:
    """Mixin: trying the same request again cannot succeed; change something first."""

    retriable = False


class CommerceReportsError(Exception):
    """Base of every error raised by commerce_reports."""

    retriable: bool = False

    def __init__(self, message: str) -> None:
        super().__init__(redact(message))

    @property
    def message(self) -> str:
        return str(self)


class ConfigurationError(Fatal, CommerceReportsError):
    """The environment, `.env` or sites file holds something unusable."""


class ValidationError(Fatal, CommerceReportsError, ValueError):
    """A parameter is wrong; raised before anything is sent. Names the parameter and what is allowed."""

    def __init__(self, parameter: str, problem: str, allowed: str = "") -> None:
        self.parameter = parameter
        self.problem = problem
        self.allowed = allowed
        message = f"{parameter}: {problem}"
        if allowed:
            message += f"; {allowed}"
        super().__init__(message)


class ExportError(Fatal, CommerceReportsError):
    """A scheduled export failed: a cell raised, or a secret would have been written out."""


class DeliveryError(ExportError):
    """A report was written but its mail was not sent (the SMTP server refused it or was out of reach)."""


class LakeError(Fatal, CommerceReportsError):
    """The local lake cannot be read or written as asked."""


class ServiceError(CommerceReportsError):
    """A request to the service failed."""

    def __init__(
        self,
        message: str,
        *,
        endpoint: str = "",
        params: Mapping[str, Any] | None = None,
        attempts: int = 1,
    ) -> None:
        self.endpoint = endpoint
        self.params = dict(params or {})
        self.attempts = attempts
        self.reason = redact(message)  # what happened, without the request it happened to
        where = f" [{endpoint} {_format_params(self.params)}]" if endpoint else ""
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        super().__init__(f"{message}{where}{tries}")


class TransportError(Retriable, ServiceError):
    """The request never got a complete answer: timeout, refused or dropped connection.

    `sent` is False only when the request provably never left (no connection was made): a write
    that was sent may have had effect even without an answer."""

    def __init__(self, message: str, *, sent: bool = True, **kwargs: Any) -> None:
        self.sent = sent
        super().__init__(message, **kwargs)


class UnreachableError(Fatal, TransportError):
    """The service's address cannot be reached: a connection refused, a name that does not resolve
    or a failed TLS handshake before it ever answered, or several requests in a row without an
    answer. Nothing more is asked of it by this client; `asked` is False for the requests that
    were refused for that reason without being sent."""

    def __init__(self, message: str, *, base_url: str, asked: bool = True, **kwargs: Any) -> None:
        self.base_url = base_url
        self.asked = asked
        super().__init__(message, sent=False, **kwargs)


class MalformedResponseError(Retriable, ServiceError):
    """A 2xx answer whose body is truncated or is not the JSON the contract describes."""


class ResponseTooLargeError(Fatal, ServiceError):
    """The answer is larger than the configured ceiling once inflated; nothing of it was kept."""


class StatusError(ServiceError):
    """The service answered with a non-2xx status."""

    def __init__(
        self,
        status: int,
        meaning: str,
        *,
        body: bytes | str = b"",
        content_type: str = "",
        endpoint: str = "",
        params: Mapping[str, Any] | None = None,
        attempts: int = 1,
        hint: str = "",
    ) -> None:
        self.status = status
        self.body_excerpt = excerpt(body, content_type)
        self.content_type = content_type
        message = f"HTTP {status} {meaning}"
        if self.body_excerpt:
            message += f": {self.body_excerpt}"
        if hint:
            message += f". {hint}"
        super().__init__(message, endpoint=endpoint, params=params, attempts=attempts)


class BadRequestError(Fatal, StatusError):
    """400: the service rejected the parameters."""


class AuthenticationError(Fatal, StatusError):
    """401: the secret key is missing, unknown or revoked."""


class ForbiddenError(Fatal, StatusError):
    """403: the key may not do this."""


class NotFoundError(Fatal, StatusError):
    """404: no data (for aggregates the client returns an empty result instead)."""


class RateLimitedError(Retriable, StatusError):
    """429: too many requests; `retry_after` is the wait in seconds when the service said."""

    def __init__(self, *args: Any, retry_after: float | None = None, **kwargs: Any) -> None:
        self.retry_after = retry_after
        super().__init__(*args, **kwargs)


class ServerError(Retriable, StatusError):
    """5xx: the service failed; the same request may succeed later."""


def _format_params(params: Mapping[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in params.items())
