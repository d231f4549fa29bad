"""The one HTTP layer both clients stand on: bounded reads, one retry policy, keys sent by `httpx.Auth`.

Every request is bounded by construction: the body is streamed and inflated here, with a ceiling
on its decompressed size, and the whole exchange has an overall deadline whatever the server
drips. The retry policy (backoff with jitter, and a cap on how long the service may ask us to
wait) and the reading of `Retry-After` / "retry in N seconds" live here once, for both clients.
"""

from __future__ import annotations

import email.utils
import logging
import random
import re
import time
import zlib
from collections.abc import Callable, Generator, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx

from .config import Limits
from .errors import ConfigurationError, MalformedResponseError, ResponseTooLargeError, TransportError
from .secret import Secret, is_html

__all__ = ["Answer", "KeyAuth", "RetryPolicy", "Session", "retry_after"]

log = logging.getLogger(__name__)
# Failures that prove a request never left: no connection was made.
_NEVER_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.UnsupportedProtocol)


class KeyAuth(httpx.Auth):
    """Sends a key in one header per request (`Authorization: secret <key>`, `x-api-key: <key>`), so
    the key lives in no header dict, log line or repr."""

    def __init__(self, header: str, key: Secret, scheme: str = "") -> None:
        self._header = header
        self._key = key
        self._scheme = scheme

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        value = self._key.reveal()
        request.headers[self._header] = f"{self._scheme} {value}" if self._scheme else value
        yield request

    def __repr__(self) -> str:
        return f"KeyAuth({self._header}: ***)"


class RetryPolicy:
    """Bounded exponential backoff with jitter, and a cap on any wait the service asks for."""

    def __init__(
        self,
        max_attempts: int = 5,
        base_delay: float = 2.0,
        max_delay: float = 120.0,
        jitter: Callable[[], float] = random.random,
        max_wait: float | None = None,
    ) -> None:
        for name, value in (("base_delay", base_delay), ("max_delay", max_delay)):
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ConfigurationError(f"{name} must be a number of seconds >= 0, got {value!r}")
        if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
            raise ConfigurationError(f"max_attempts must be a whole number >= 1, got {max_attempts!r}")
        self.max_attempts = max_attempts
        self.base_delay = float(base_delay)
        self.max_delay = float(max_delay)
        self.jitter = jitter
        self.max_wait = Limits(
            max_retry_wait=Limits().max_retry_wait if max_wait is None else max_wait
        ).max_retry_wait

    def __repr__(self) -> str:
        return (
            f"RetryPolicy(max_attempts={self.max_attempts}, base_delay={self.base_delay:g}, "
            f"max_delay={self.max_delay:g}, max_wait={self.max_wait:g})"
        )

    def delay(self, attempt: int, asked: float | None = None) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based), at least what was asked."""
        backoff = min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))
        wait = backoff * (0.5 + 0.5 * self.jitter())  # "equal jitter": never less than half
        return max(wait, asked or 0.0)

    def too_long(self, asked: float | None) -> bool:
        """Whether a wait the service asked for is past the cap (then the caller gives up, loudly)."""
        return asked is not None and asked > self.max_wait


_RETRY_IN = re.compile(rb"retry in (\d+(?:\.\d+)?) seconds?", re.IGNORECASE)


def retry_after(headers: Mapping[str, str], body: bytes = b"", now: float | None = None) -> float | None:
    """The wait the service asked for: `Retry-After` in seconds or as an HTTP date, else a
    "retry in N seconds" message in the body; None when it said nothing usable."""
    header = headers.get("Retry-After", "").strip()
    if re.fullmatch(r"\d+(\.\d+)?", header):
        return float(header)
    if header:
        try:
            moment = email.utils.parsedate_to_datetime(header)
        except (TypeError, ValueError, IndexError):
            moment = None
        if moment is not None:
            moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
            reference = now if now is not None else datetime.now(UTC).timestamp()
            return max(0.0, moment.timestamp() - reference)
    match = _RETRY_IN.search(body[:500])
    return float(match.group(1)) if match else None


@dataclass(frozen=True)
class Answer:
    """A complete answer: status, headers and the whole (inflated, bounded) body."""

    status: int
    headers: httpx.Headers
    body: bytes
    url: str

    @property
    def content_type(self) -> str:
        return str(self.headers.get("content-type", ""))

    @property
    def is_success(self) -> bool:
        return 200 <= self.status < 300

    @property
    def is_html(self) -> bool:
        return is_html(self.body, self.content_type)


class Session:
    """An httpx client whose every request is bounded in size and time. Raises TransportError
    (no complete answer, deadline passed), ResponseTooLargeError, or MalformedResponseError
    (a body that does not inflate); any status comes back as an `Answer` for the caller to judge."""

    def __init__(
        self,
        base_url: str,
        *,
        auth: httpx.Auth,
        limits: Limits | None = None,
        timeout: float = 60.0,
        headers: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise ConfigurationError(f"timeout must be a positive number of seconds, got {timeout!r}")
        self.limits = limits or Limits()
        self._http = httpx.Client(
            base_url=base_url,
            auth=auth,
            headers={"Accept-Encoding": "gzip", **(headers or {})},
            # No single wait outlasts the deadline either: a silent server ends at a read timeout.
            timeout=httpx.Timeout(min(timeout, self.limits.request_deadline), connect=min(timeout, 10.0)),
            transport=transport,
        )

    def close(self) -> None:
        self._http.close()

    def send(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        json: Any = None,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        where: str = "",
    ) -> Answer:
        """One request and its whole answer, within the size ceiling and the deadline."""
        deadline = time.monotonic() + self.limits.request_deadline
        label = where or f"{method} {path}"
        try:
            request = self._http.build_request(
                method, path, params=params, json=json, content=content, headers=headers
            )
            response = self._http.send(request, stream=True)
            try:
                body = self._read(response, deadline, label)
            finally:
                response.close()
        except httpx.TimeoutException as error:
            sent = not isinstance(error, _NEVER_SENT)
            raise TransportError(f"timed out ({type(error).__name__})", endpoint=label, sent=sent) from None
        except (httpx.TransportError, httpx.StreamError) as error:
            raise TransportError(
                f"connection failed ({type(error).__name__}: {error})",
                endpoint=label,
                sent=not isinstance(error, _NEVER_SENT),
            ) from None
        return Answer(response.status_code, response.headers, body, str(request.url.copy_with(query=None)))

    def _read(self, response: httpx.Response, deadline: float, label: str) -> bytes:
        ceiling = self.limits.max_body_bytes
        declared = response.headers.get("content-length", "")
        encoding = response.headers.get("content-encoding", "").strip().lower()
        if declared.isdigit() and not encoding and int(declared) > ceiling:
            raise _too_large(label, ceiling, f"it declares {int(declared):,} bytes")
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS) if encoding in ("gzip", "x-gzip") else None
        if encoding not in ("", "identity", "gzip", "x-gzip"):
            raise MalformedResponseError(f"the body is encoded as {encoding!r}, not gzip", endpoint=label)
        if response.is_stream_consumed:  # a transport that answered in full at once (tests' mocks)
            chunks: Iterable[bytes] = [response.content]
            inflate = None  # already inflated by httpx
        else:
            chunks = response.iter_raw()  # as the network delivers: each piece meets the deadline check
        body = bytearray()
        received = False
        for chunk in chunks:
            received = received or bool(chunk)
            if time.monotonic() > deadline:
                raise TransportError(
                    f"no complete answer within the {self.limits.request_deadline:g} s deadline "
                    "(COMMERCE_REPORTS_REQUEST_DEADLINE)",
                    endpoint=label,
                )
            data = chunk
            while inflate is not None and data:
                try:
                    out = inflate.decompress(data, ceiling + 1 - len(body))
                except zlib.error as error:
                    raise MalformedResponseError(
                        f"the gzip body is damaged ({error})", endpoint=label
                    ) from None
                body += out
                data = inflate.unconsumed_tail
                if len(body) > ceiling:
                    break
            if inflate is None:
                body += data
            if len(body) > ceiling:
                raise _too_large(label, ceiling, "it is larger once inflated")
        if inflate is not None and received and not inflate.eof:
            raise MalformedResponseError("the gzip body was cut short", endpoint=label)
        return bytes(body)


def _too_large(label: str, ceiling: int, why: str) -> ResponseTooLargeError:
    return ResponseTooLargeError(
        f"the answer is over the {ceiling / 2**20:g} MB ceiling ({why}); nothing was stored. Raise "
        "COMMERCE_REPORTS_MAX_BODY_MB if the service really sends that much",
        endpoint=label,
    )
