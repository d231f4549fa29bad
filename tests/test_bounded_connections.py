"""Every lookup under the deadline, and a TLS failure that says which check failed: against real
servers on loopback (the sandbox, and TLS servers with certificates made for the test)."""

from __future__ import annotations

import socket
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import trustme

from commerce_reports import http
from commerce_reports.client import ReportsClient
from commerce_reports.config import Limits
from commerce_reports.errors import TransportError, UnreachableError
from commerce_reports.sandbox import run_sandbox
from tests.lake.conftest import small_config
from tests.servers import serving

SLOW_NAME = "slow.sandbox.test"


@pytest.fixture
def slow_resolver(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """The system resolver as a slow DNS leaves it: `slow.sandbox.test` answers (127.0.0.1) only
    once the test sets the event it gets (or after a minute); other names as usual."""
    answer = threading.Event()
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host == SLOW_NAME:
            answer.wait(60)
            return real("127.0.0.1", *args, **kwargs)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield answer
    answer.set()  # the lookup threads left behind finish now


def test_a_name_lookup_that_does_not_answer_ends_at_the_deadline(slow_resolver: threading.Event) -> None:
    with run_sandbox(small_config()) as running:
        url = running.base_url.replace("127.0.0.1", SLOW_NAME)
        with ReportsClient("sandbox-alpha-key", url, pace=0, limits=Limits(request_deadline=0.3)) as client:
            started = time.monotonic()
            with pytest.raises(UnreachableError) as raised:
                client.transactions(update_date="2026-03-01")
            elapsed = time.monotonic() - started
        assert elapsed < 5  # the resolver would have held it a minute
        assert f"the name {SLOW_NAME} was not resolved within 0.3 s" in str(raised.value)
        slow_resolver.set()  # once the name answers, the same address serves
        with ReportsClient("sandbox-alpha-key", url, pace=0, limits=Limits(request_deadline=5)) as client:
            assert client.transactions(update_date="2026-03-01").num_rows > 0


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def tls_server(cert: trustme.LeafCert) -> Iterator[int]:
    """An HTTPS server on loopback presenting `cert`; its port."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    cert.configure_cert(context)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    with serving(server):
        yield server.server_address[1]


@pytest.fixture
def trusted_ca(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[trustme.CA]:
    """A certificate authority this process trusts (through SSL_CERT_FILE, as a user would)."""
    ca = trustme.CA()
    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    http._tls_context.cache_clear()
    yield ca
    http._tls_context.cache_clear()


NOW = datetime.now(UTC)


@pytest.mark.parametrize(
    ("case", "said"),
    [
        ("expired", "certificate has expired"),
        ("another host", "certificate is for another host name"),
        ("untrusted issuer", "issued by an authority this machine does not trust"),
    ],
)
def test_a_tls_failure_says_which_check_failed_and_what_to_do(
    trusted_ca: trustme.CA, case: str, said: str
) -> None:
    if case == "expired":
        cert = trusted_ca.issue_cert(
            "127.0.0.1", not_before=NOW - timedelta(days=30), not_after=NOW - timedelta(days=1)
        )
    elif case == "another host":
        cert = trusted_ca.issue_cert("api.example.org")
    else:
        cert = trustme.CA().issue_cert("127.0.0.1")
    with tls_server(cert) as port:
        session = http.Session(f"https://127.0.0.1:{port}", auth=http.KeyAuth("x-api-key", _key()))
        try:
            with pytest.raises(TransportError) as raised:
                session.send("GET", "/v1/reports/transactions")
        finally:
            session.close()
    assert said in str(raised.value)
    assert "CERTIFICATE_VERIFY_FAILED" not in str(raised.value).split("(")[0]


def test_a_trusted_certificate_for_the_right_host_is_accepted(trusted_ca: trustme.CA) -> None:
    with tls_server(trusted_ca.issue_cert("127.0.0.1")) as port:
        session = http.Session(f"https://127.0.0.1:{port}", auth=http.KeyAuth("x-api-key", _key()))
        try:
            assert session.send("GET", "/").status == 200
        finally:
            session.close()


def _key() -> Any:
    from commerce_reports.secret import Secret

    return Secret("test-key-123")
