"""A small threaded HTTP/1.1 server on loopback that both sandboxes (reports, deals) run on.

An application is a function from `Request` to `Response`. A response can also misbehave on
purpose (delay, drop the connection, cut the body short) so that clients can be tested against
the faults real networks produce.
"""

from __future__ import annotations

import contextlib
import gzip
import logging
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from ..errors import ConfigurationError

__all__ = ["App", "Request", "Response", "ServerHandle", "serve", "serve_forever"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: Mapping[str, str]  # lower-cased names
    body: bytes = b""
    repeated_query: tuple[str, ...] = ()  # names given more than once in the query string


@dataclass
class Response:
    status: int
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering
    drop: bool = False  # close the connection without answering
    truncate_to: int | None = None  # send only this many bytes of the (encoded) body
    compressible: bool = True  # gzip when the client asks for it


App = Callable[[Request], Response]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "commerce-reports-sandbox"
    # Headers and body go out in two writes; with Nagle on, the client's delayed ACK adds ~40 ms.
    disable_nagle_algorithm = True
    app: App

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_PATCH(self) -> None:
        self._handle()

    def do_PUT(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    def _handle(self) -> None:
        split = urlsplit(self.path)
        pairs = parse_qsl(split.query, keep_blank_values=True)
        names = [name for name, _ in pairs]
        length = int(self.headers.get("Content-Length") or 0)
        request = Request(
            method=self.command,
            path=split.path,
            query=dict(pairs),
            headers={k.lower(): v for k, v in self.headers.items()},
            body=self.rfile.read(length) if length else b"",
            repeated_query=tuple(sorted({n for n in names if names.count(n) > 1})),
        )
        try:
            response = self.app(request)
        except Exception:  # the sandbox must answer like a server, not crash a client's test
            log.exception("sandbox application failed on %s %s", request.method, request.path)
            response = Response(500, b"Internal Server Error", "text/plain")
        self._send(request, response)

    def _send(self, request: Request, response: Response) -> None:
        if response.delay:
            time.sleep(response.delay)
        if response.drop:
            self.close_connection = True
            self._hang_up()
            return
        body = response.body
        headers = dict(response.headers)
        self._date = headers.pop("Date", None)  # an app with a clock of its own says its time
        accepts_gzip = "gzip" in request.headers.get("accept-encoding", "").lower()
        if response.compressible and accepts_gzip and body:
            body = gzip.compress(body, compresslevel=5)
            headers["Content-Encoding"] = "gzip"
        self.send_response(response.status)
        if response.content_type:
            self.send_header("Content-Type", response.content_type)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if response.truncate_to is not None:
            self.wfile.write(body[: response.truncate_to])
            self.wfile.flush()
            self.close_connection = True
            self._hang_up()
            return
        self.wfile.write(body)

    def date_time_string(self, timestamp: float | None = None) -> str:
        """The `Date` header: the app's own time when it gave one, else the real time."""
        date: str | None = getattr(self, "_date", None)
        return date if date is not None and timestamp is None else super().date_time_string(timestamp)

    def _hang_up(self) -> None:
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def log_message(self, format: str, *args: object) -> None:
        log.debug("%s - %s", self.address_string(), format % args)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        """Answer one connection, as socketserver does; a Ctrl-C or a kernel's interrupt that lands
        in this thread ends this answer alone, without a traceback."""
        try:
            super().process_request_thread(request, client_address)
        except KeyboardInterrupt:
            log.debug("the answer to %s was interrupted", client_address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (reset, broken pipe: a sync stopped, a kernel interrupted) is the
        client's business: a debug line. Anything else is the sandbox's bug: an error line, its
        traceback in the debug log (socketserver printed both raw on standard error)."""
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError):
            log.debug("the client at %s hung up: %s", client_address, error)
            return
        log.error(
            "the sandbox failed answering %s: %s: %s (its traceback: in the debug log)",
            client_address,
            type(error).__name__,
            error,
        )
        log.debug("the sandbox's failure", exc_info=error)


def _make_server(app: App, host: str, port: int) -> _Server:
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ConfigurationError(f"port {port!r} is not a TCP port; give 0 (any free port) to 65535")
    handler = type("Handler", (_Handler,), {"app": staticmethod(app)})
    try:
        return _Server((host, port), handler)
    except OSError as error:
        raise ConfigurationError(
            f"cannot listen on {host}:{port} ({error.strerror or error}); "
            "is another sandbox running there? Choose another --port, or 0 for any free one"
        ) from None


@dataclass(frozen=True)
class ServerHandle:
    """A running server: where it listens."""

    host: str
    port: int

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"


@contextmanager
def serve(app: App, host: str = "127.0.0.1", port: int = 0) -> Iterator[ServerHandle]:
    """Run `app` in a background thread (port 0 picks a free port) until the block ends."""
    server = _make_server(app, host, port)
    # A short poll interval lets `shutdown` return at once instead of after up to half a second.
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.02}, name="sandbox-http", daemon=True
    )
    thread.start()
    try:
        yield ServerHandle(host, server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def serve_forever(
    app: App,
    host: str = "127.0.0.1",
    port: int = 8765,
    on_ready: Callable[[ServerHandle], None] | None = None,
) -> None:
    """Run `app` in the foreground until interrupted (Ctrl-C stops it cleanly)."""
    server = _make_server(app, host, port)
    if on_ready is not None:
        on_ready(ServerHandle(host, server.server_address[1]))
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
