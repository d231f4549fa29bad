"""Turn one non-2xx answer of the deal interface into the typed exception of its 7.2 row.

A pure function of (status, body, content type, headers): no I/O. The 401 and 500 bodies are
plain text and are never parsed as JSON (rule 6); other bodies are parsed tolerantly, and an
unexpected shape still yields the status's class with a body excerpt. Every 5xx is a
`DealServerError` (502: its `DealUpstreamError`), since a 5xx from a write may have had effect.
Whatever of the body the error keeps (its message, failures, upstream) is masked as it is read:
an attribute, a repr or a pickle of the error never holds a key the service echoed; and its
control characters are written out (`\x1b`), so that no server drives the terminal it is shown on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx
import orjson

from ..http import retry_after
from ..redaction import excerpt, redact, scrub, visible
from .errors import (
    AccountNotEnabledError,
    ApiKeyInvalidError,
    ApiKeyMissingError,
    ApiKeySyntaxError,
    DealAuthError,
    DealBadRequestError,
    DealForbiddenError,
    DealIdInvalidError,
    DealNotFoundError,
    DealRateLimitedError,
    DealRuleError,
    DealSchemaError,
    DealServerError,
    DealStatusError,
    DealUpstreamError,
    InsufficientScopeError,
    UnsupportedMediaTypeError,
    require,
)
from .messages import parse_failure, split_validation_message

__all__ = ["error_from_response"]

_BASE_URL_FROM = "--base-url or COMMERCE_REPORTS_DEALS_BASE_URL"
_NOTHING_WRITTEN = "a read or a dry run changes nothing: it can be sent again as is"
_VALUES_PATH = "/targeting-attributes/"
_NO_SUCH_ATTRIBUTE = (
    "no values list for this attribute: check its name (values are listed for the enumerated "
    "attributes, e.g. device.geo.country)"
)

_AUTH_TEXT: dict[str, type[DealAuthError]] = {
    "api key not provided": ApiKeyMissingError,
    "invalid api key": ApiKeyInvalidError,
    "invalid api key syntax": ApiKeySyntaxError,
}
_FORBIDDEN: dict[str, type[DealForbiddenError]] = {
    "insufficient scope": InsufficientScopeError,
    "partner not authorized for this api": AccountNotEnabledError,
}
_SIMPLE: dict[int, type[DealStatusError]] = {
    404: DealNotFoundError,
    415: UnsupportedMediaTypeError,
}


def _json_object(body: bytes) -> Mapping[str, Any]:
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        return {}
    return scrub(value) if isinstance(value, Mapping) else {}


def _text(body: bytes) -> str:
    return visible(redact(body.decode("utf-8", "replace").strip()))


def _said(data: Mapping[str, Any], name: str) -> str:
    """The string the service put under `name`, shown safely (empty when it put none)."""
    return visible(str(data.get(name, ""))) if data else ""


def error_from_response(
    status: int,
    body: bytes,
    content_type: str = "",
    headers: Mapping[str, str] | None = None,
    *,
    method: str,
    path: str,
    attempts: int = 1,
    writes: bool | None = None,
) -> DealStatusError:
    """The exception for a non-2xx answer to `method path`; a 429's wait is read from its
    message ("retry in N seconds") or a `Retry-After` header. `writes`: whether the request could
    change anything (default: any method but GET; a dry run writes nothing), so that a 5xx to a
    read is not said to have perhaps had effect."""
    require(status, int, "status", "an HTTP status code such as 400")
    require(body, bytes, "body", "the answer's body as bytes")
    require(content_type, str, "content_type", 'the Content-Type header, e.g. "application/json"')
    require(headers, (Mapping, type(None)), "headers", "the answer's headers as a mapping, or None")
    require(method, str, "method", 'e.g. "PATCH"')
    require(path, str, "path", 'e.g. "/deal-requests/1001"')
    require(writes, (bool, type(None)), "writes", "True, False or None (any method but GET writes)")
    common: dict[str, Any] = {
        "method": method,
        "path": path,
        "body": body,
        "content_type": content_type,
        "attempts": attempts,
    }
    hint = _hint(status, headers or {}, path, writes=method != "GET" if writes is None else writes)
    if hint is not None:
        common["hint"] = hint
    if status in (401, 500):  # plain text by contract: never parsed as JSON
        text = _text(body)
        if status == 500:  # a gateway may put a whole HTML page here: keep one short line of it
            return DealServerError(status, excerpt(body, content_type), **common)
        return _AUTH_TEXT.get(text.lower(), DealAuthError)(status, text, **common)
    data = _json_object(body)
    message = _said(data, "message")
    if status == 400:
        return _bad_request(data, message, common)
    if status == 403:
        cls = _FORBIDDEN.get(message.strip().lower(), DealForbiddenError)
        return cls(status, message, **common)
    if status == 429:
        wait = retry_after(httpx.Headers({str(k): str(v) for k, v in (headers or {}).items()}), body)
        return DealRateLimitedError(status, message, retry_after=wait, **common)
    if status == 502:
        upstream = _said(data, "upstream")
        return DealUpstreamError(status, message, upstream=upstream, **common)
    if status >= 500:  # 503, 504, ...: often a gateway's page; `message` only when JSON carried one
        return DealServerError(status, message, **common)
    return _SIMPLE.get(status, DealStatusError)(status, message, **common)


def _hint(status: int, headers: Mapping[str, str], path: str, *, writes: bool) -> str | None:
    """What to do about `status` for this request beyond what its class says (None: nothing):
    where a redirect points, which attribute a values list lacks, that a 5xx to a request that
    writes nothing left nothing written."""
    if 300 <= status < 400:
        return _moved(headers, path)
    if status == 404 and path.startswith(_VALUES_PATH):
        return _NO_SUCH_ATTRIBUTE
    if status >= 500 and not writes:
        return _NOTHING_WRITTEN
    return None


def _moved(headers: Mapping[str, str], path: str) -> str:
    """What a redirect says: where it points, and the base URL to use instead (it is never
    followed: the key would go to an address nobody configured)."""
    location = next((str(v) for k, v in headers.items() if str(k).lower() == "location"), "")
    if not location:
        return f"a redirect without a Location: check the base URL ({_BASE_URL_FROM})"
    shown = visible(redact(location))
    target = location.split("?", 1)[0].split("#", 1)[0]
    base = target[: -len(path)] if "://" in target and target.endswith(path) else ""
    use = f"set the base URL to {visible(redact(base))}" if base else "set the base URL to that address"
    return (
        f"it points to {shown}: {use} ({_BASE_URL_FROM}); the request was not followed there, "
        "so the key went nowhere else"
    )


def _bad_request(data: Mapping[str, Any], message: str, common: dict[str, Any]) -> DealBadRequestError:
    if data.get("code") == "FST_ERR_VALIDATION" or "statusCode" in data:
        failures = split_validation_message(message)
        id_invalid = any(f.path == "params/id" for f in failures)
        cls = DealIdInvalidError if id_invalid else DealSchemaError
        return cls(400, message, failures=failures, **common)
    if message:
        return DealRuleError(400, message, failures=[parse_failure("", message)], **common)
    return DealBadRequestError(400, "", **common)
