"""The one HTTP layer both clients stand on: bounded reads, one retry policy, keys sent by `httpx.Auth`.

Every request is bounded by construction: the body is streamed and inflated here, with a ceiling
on its decompressed size, and each attempt has one overall deadline covering the connection, the
response headers and the body, whatever the server drips (`Deadline`). The retry policy (backoff
with jitter, and a cap on how long the service may ask us to wait) and the reading of
`Retry-After` / "retry in N seconds" live here once, for both clients.
"""

from __future__ import annotations

import contextlib
import email.utils
import errno
import functools
import ipaddress
import logging
import math
import random
import re
import socket
import ssl
import threading
import time
import urllib.request
import zlib
from collections.abc import Callable, Generator, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpcore
import httpx

from .config import Limits
from .errors import ConfigurationError, MalformedResponseError, ResponseTooLargeError, TransportError
from .redaction import is_html
from .secret import Secret
from .waits import Signal, start_thread

__all__ = ["Answer", "Deadline", "KeyAuth", "RetryPolicy", "Session", "describe_failure", "retry_after"]

log = logging.getLogger(__name__)
_STOPPED = "stopped before its answer was complete: the caller was told to stop"
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
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < math.inf:
                raise ConfigurationError(f"{name} must be a finite number of seconds >= 0, got {value!r}")
        if max_delay < base_delay:
            raise ConfigurationError(
                f"max_delay ({max_delay!r}) is below base_delay ({base_delay!r}): raise it"
            )
        if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
            raise ConfigurationError(f"max_attempts must be a whole number >= 1, got {max_attempts!r}")
        if not callable(jitter):
            raise ConfigurationError(f"jitter must be a function giving a number from 0 to 1, got {jitter!r}")
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
    def served_at(self) -> datetime | None:
        """The moment the server says it answered (its `Date` header, UTC), or None when it sent
        none that parses: the service's clock, against which a client's own is judged."""
        header = self.headers.get("date", "")
        try:
            moment = email.utils.parsedate_to_datetime(header) if header else None
        except (TypeError, ValueError, IndexError):
            return None
        if moment is None:
            return None
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)

    @property
    def is_success(self) -> bool:
        return 200 <= self.status < 300

    @property
    def is_html(self) -> bool:
        return is_html(self.body, self.content_type)


class Deadline:
    """The wall-clock end of one attempt, enforced on its socket.

    httpx's timeouts bound each read and write, not the exchange: a server sending one header line
    a second, or the body a byte at a time, resets them forever. So the attempt's socket is taken
    as it connects (httpcore's `trace` extension) and shut down by a timer when the deadline passes:
    whatever read or write waits on it returns at once, the headers included. Connecting, the name
    lookup included (`_Resolving`), is bounded by the connect timeout, never longer than the deadline.
    The timer is a `waits.Signal` wait, which a faked clock cannot stretch; `cut` ends the attempt
    at once (a sync told to stop).
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._passed = False
        self._closed = Signal()
        start_thread(self._watch, "request-deadline")

    def _watch(self) -> None:
        if not self._closed.wait(self.seconds):
            self.cut()

    def trace(self, event: str, info: Mapping[str, Any]) -> None:
        """httpcore's trace hook: hold a handle on each socket the attempt connects."""
        if not event.endswith("connect_tcp.complete"):
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if not isinstance(sock, socket.socket):
            return
        held = sock.dup()  # the connection itself, whatever TLS later wraps around it
        with self._lock:
            self._sockets.append(held)
            if self._passed:
                _shut(held)

    @property
    def connected(self) -> bool:
        """Whether a connection was made (then the request may have been sent)."""
        with self._lock:
            return bool(self._sockets)

    def cut(self) -> None:
        """End the attempt now: shut its sockets, so that whatever waits on them returns."""
        with self._lock:
            self._passed = True
            for held in self._sockets:
                _shut(held)

    def close(self) -> bool:
        """Stop the timer and let go of the sockets; whether the attempt was cut first."""
        self._closed.set()
        with self._lock:
            for held in self._sockets:
                held.close()
            self._sockets.clear()
            return self._passed


def _shut(held: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed by the other end or by httpcore
        held.shutdown(socket.SHUT_RDWR)


class _Resolving(httpcore.NetworkBackend):
    """httpcore's own network backend, with the host name looked up within the connect timeout.

    The system resolver cannot be interrupted, and a slow one (25 s to answer) held every attempt
    that long whatever the deadline. So the lookup runs in a thread of its own, and when the time is
    up the attempt fails and the thread is left to finish on its own (its late answer is dropped).
    Then each address is tried in turn, as `socket.create_connection` does, in the time left."""

    def __init__(self) -> None:
        self._backend = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        started = time.monotonic()
        addresses = _resolve(host, port, timeout)
        failure: Exception | None = None
        for address in addresses:
            left = None if timeout is None else max(0.001, timeout - (time.monotonic() - started))
            try:
                return self._backend.connect_tcp(address, port, left, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as error:
                failure = error
        raise failure or httpcore.ConnectError(f"{host} resolved to no address")

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        return self._backend.connect_unix_socket(path, timeout, socket_options)

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


_UNRESOLVED = "was not resolved"


class _LookupFailed(httpcore.ConnectError):
    """The resolver's own error, kept on the exception: httpcore's pool re-raises what a
    connection raised `from None`, which cuts the cause chain `describe_failure` walks."""

    def __init__(self, error: OSError) -> None:
        super().__init__(str(error))
        self.error = error


def _resolve(host: str, port: int, timeout: float | None) -> list[str]:
    """The addresses of `host` (an address as it is), looked up in a thread within `timeout`."""
    try:
        ipaddress.ip_address(host.strip("[]"))
        return [host.strip("[]")]
    except ValueError:
        pass
    found: list[Any] = []

    def lookup() -> None:
        try:
            found.append(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except OSError as error:
            found.append(error)

    done = start_thread(lookup, f"resolve-{host}")  # a wait no faked clock stretches (waits.py)
    # no bound asked for: as long as the resolver takes, a minute's wait at a time
    while not done.wait(60.0 if timeout is None else timeout):
        if timeout is None:
            continue
        raise httpcore.ConnectTimeout(
            f"the name {host} {_UNRESOLVED} within {timeout:g} s: the system's resolver did not "
            "answer; check the network's DNS (each attempt's lookup is bounded by its deadline)"
        )
    if isinstance(found[0], OSError):
        raise _LookupFailed(found[0])
    return list(dict.fromkeys(str(info[4][0]) for info in found[0]))


def _lookup_failure(failure: Exception | None) -> str:
    """What a name lookup that did not answer in time said (empty for any other failure)."""
    return str(failure) if isinstance(failure, httpx.ConnectTimeout) and _UNRESOLVED in str(failure) else ""


def _transport(limits: httpx.Limits) -> httpx.BaseTransport | None:
    """The transport whose connections look names up within the deadline (`_Resolving`); None
    when the environment names a proxy (then httpx's own, which honours it: the proxy resolves)."""
    if urllib.request.getproxies():
        return None
    transport = httpx.HTTPTransport(verify=_tls_context(), limits=limits)
    # httpx takes no network backend (encode/httpx#3749): its pool, made again with ours
    transport._pool = httpcore.ConnectionPool(
        ssl_context=_tls_context(),
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=_Resolving(),
    )
    return transport


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """The certificates httpx would trust (certifi's, or `SSL_CERT_FILE`/`SSL_CERT_DIR`), loaded once
    per process: loading them took ~20 ms, paid by every client of every site and lane."""
    return httpx.create_ssl_context(trust_env=True)


class Session:
    """An httpx client whose every request is bounded in size and time. Raises TransportError
    (no complete answer, deadline passed), ResponseTooLargeError, or MalformedResponseError
    (a body that does not inflate); any status comes back as an `Answer` for the caller to judge.

    Each attempt has its own connection (no keep-alive, and `Connection: close` asked of the
    server): `Deadline` holds the socket it made, and at one request a minute per endpoint a
    kept-alive connection would have expired anyway."""

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
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout < math.inf:
            raise ConfigurationError(f"timeout must be a finite number of seconds > 0, got {timeout!r}")
        self.limits = limits or Limits()
        deadline = self.limits.request_deadline
        pool = httpx.Limits(max_keepalive_connections=0)
        self._http = httpx.Client(
            base_url=base_url,
            auth=auth,
            # `Connection: close`: an answer's end closes its connection, which is never another
            # attempt's (a pool may hand a request the connection of an answer ending as it asks:
            # no `Deadline` holds that one, and a stop or the deadline would not cut it).
            headers={"Accept-Encoding": "gzip", **(headers or {}), "Connection": "close"},
            # After connecting, `Deadline` cuts the attempt at its end; connecting it cannot cut, so
            # connecting (the name lookup included) has a timeout of its own, within the deadline.
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0, deadline)),
            limits=pool,
            transport=transport or _transport(pool),
            verify=_tls_context(),
        )
        self._guard = threading.Lock()
        self._live: set[Deadline] = set()
        self._stopped = False

    def close(self) -> None:
        self._http.close()

    def stop(self) -> None:
        """Cut every request in flight now and refuse new ones (a sync told to stop): each raises
        TransportError at once instead of waiting for its answer."""
        with self._guard:
            self._stopped = True
            live = list(self._live)
        for deadline in live:
            deadline.cut()

    @property
    def stopped(self) -> bool:
        """Whether `stop` was called: what fails from then on is the stop, nothing to retry."""
        return self._stopped

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
        label = where or f"{method} {path}"
        if self._http.is_closed:
            raise ConfigurationError(
                f"{label}: this client was closed; open another (or use it in a `with` block)"
            )
        with self._guard:
            if self._stopped:
                raise TransportError(_STOPPED, endpoint=label, sent=False)
            deadline = Deadline(self.limits.request_deadline)
            self._live.add(deadline)
        failure: Exception | None = None
        try:
            request = self._http.build_request(
                method,
                path,
                params=params,
                json=json,
                content=content,
                headers=headers,
                extensions={"trace": deadline.trace},
            )
            response = self._http.send(request, stream=True)
            try:
                body = self._read(response, label)
            finally:
                response.close()
        except Exception as error:  # judged below, once the deadline is known to have passed or not
            failure = error
        finally:
            connected = deadline.connected
            passed = deadline.close()
            with self._guard:
                self._live.discard(deadline)
        if passed and self._stopped:
            raise TransportError(_STOPPED, endpoint=label, sent=connected) from None
        lookup = _lookup_failure(failure)
        if passed:  # whatever the cut socket looked like (an error, or a body that ended early)
            raise TransportError(
                f"no complete answer within the {self.limits.request_deadline:g} s deadline "
                f"(COMMERCE_REPORTS_REQUEST_DEADLINE){f': {lookup}' if lookup else ''}",
                endpoint=label,
                sent=connected,
            ) from None
        if lookup:
            raise TransportError(lookup, endpoint=label, sent=False) from None
        if isinstance(failure, httpx.TimeoutException):
            sent = not isinstance(failure, _NEVER_SENT)
            raise TransportError(f"timed out ({type(failure).__name__})", endpoint=label, sent=sent) from None
        if isinstance(failure, httpx.TransportError | httpx.StreamError):
            sent = not isinstance(failure, _NEVER_SENT)
            raise TransportError(describe_failure(failure), endpoint=label, sent=sent) from None
        if failure is not None:
            raise failure
        return Answer(response.status_code, response.headers, body, str(request.url.copy_with(query=None)))

    def _read(self, response: httpx.Response, label: str) -> bytes:
        ceiling = self.limits.max_body_bytes
        inflate = _decoder(response, label, ceiling)
        if response.is_stream_consumed:  # a transport that answered in full at once (tests' mocks)
            chunks: Iterable[bytes] = [response.content]
            inflate = None  # already inflated by httpx
        else:
            chunks = response.iter_raw()  # as the network delivers, until the deadline cuts it
        body = bytearray()
        received = False
        for chunk in chunks:
            received = received or bool(chunk)
            body += chunk if inflate is None else _inflated(inflate, chunk, ceiling + 1 - len(body), label)
            if len(body) > ceiling:
                raise _too_large(label, ceiling, "it is larger once inflated")
        if inflate is not None and received and not inflate.eof:
            raise MalformedResponseError("the gzip body was cut short", endpoint=label)
        return bytes(body)


def _decoder(response: httpx.Response, label: str, ceiling: int) -> zlib._Decompress | None:
    """The gzip decoder of a body sent gzipped (None: sent as is), once its headers are checked: a
    body declared over the `ceiling`, or in an encoding this client does not read, is refused."""
    declared = response.headers.get("content-length", "")
    encoding = response.headers.get("content-encoding", "").strip().lower()
    if declared.isdigit() and not encoding and int(declared) > ceiling:
        raise _too_large(label, ceiling, f"it declares {int(declared):,} bytes")
    if encoding not in ("", "identity", "gzip", "x-gzip"):
        raise MalformedResponseError(f"the body is encoded as {encoding!r}, not gzip", endpoint=label)
    return zlib.decompressobj(16 + zlib.MAX_WBITS) if encoding in ("gzip", "x-gzip") else None


def _inflated(inflate: zlib._Decompress, data: bytes, room: int, label: str) -> bytearray:
    """`data` inflated, at most `room` bytes of it (a body inflating past its ceiling stops there:
    a small gzip bomb never fills memory)."""
    out = bytearray()
    while data and len(out) < room:
        try:
            out += inflate.decompress(data, room - len(out))
        except zlib.error as error:
            raise MalformedResponseError(f"the gzip body is damaged ({error})", endpoint=label) from None
        data = inflate.unconsumed_tail
    return out


def _too_large(label: str, ceiling: int, why: str) -> ResponseTooLargeError:
    return ResponseTooLargeError(
        f"the answer is over the {ceiling / 2**20:g} MB ceiling ({why}); nothing was stored. Raise "
        "COMMERCE_REPORTS_MAX_BODY_MB if the service really sends that much",
        endpoint=label,
    )


def describe_failure(error: BaseException) -> str:
    """What went wrong with a connection, in words: refused, a name that does not resolve, TLS,
    or the transport's own message. Walks the causes down to the operating system's error."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, _LookupFailed):
            seen = seen.error
        if isinstance(seen, ConnectionRefusedError):
            return "connection refused: nothing listens at that address and port"
        if isinstance(seen, socket.gaierror):
            return f"the host name does not resolve (DNS: {seen.strerror or seen})"
        if isinstance(seen, ssl.SSLCertVerificationError):
            return _certificate_problem(seen)
        if isinstance(seen, ssl.SSLError):
            return f"the TLS handshake failed ({seen.reason or seen})"
        if isinstance(seen, OSError) and seen.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH):
            return f"no route to the host ({seen.strerror})"
        seen = seen.__cause__ or seen.__context__
    return f"connection failed ({type(error).__name__}: {error})"


# OpenSSL's verify codes (X509_V_ERR_*) that say which check of the server's certificate failed.
_EXPIRED, _NOT_YET_VALID = 10, 9
_HOST_MISMATCH = {62, 64}  # the host name, or the IP address, is not the certificate's
_UNTRUSTED = {18, 19, 20, 21, 27}  # self-signed, self-signed in chain, unknown issuer, untrusted


def _certificate_problem(error: ssl.SSLCertVerificationError) -> str:
    """Which check of the server's certificate failed, and what to do about it."""
    code, said = error.verify_code, error.verify_message or error.reason or str(error)
    if code == _EXPIRED:
        return (
            f"the server's TLS certificate has expired ({said}): the service must renew it; if it is "
            "not expired, this machine's clock is wrong"
        )
    if code == _NOT_YET_VALID:
        return f"the server's TLS certificate is not valid yet ({said}): check this machine's clock"
    if code in _HOST_MISMATCH:
        return (
            f"the server's TLS certificate is for another host name ({said}): check the address in "
            "COMMERCE_REPORTS_BASE_URL (a proxy or a wrong host answers there)"
        )
    if code in _UNTRUSTED:
        return (
            f"the server's TLS certificate is issued by an authority this machine does not trust "
            f"({said}): if the service uses a private authority, point SSL_CERT_FILE at its certificate"
        )
    return f"the server's TLS certificate was refused ({said})"
