"""A hostile server on loopback: every answer is bounded in size and time, and every failure is clear."""

from __future__ import annotations

import contextlib
import gzip
import logging
import os
import socket
import socketserver
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from commerce_reports.client import ReportsClient
from commerce_reports.config import Limits
from commerce_reports.deals import DealsClient
from commerce_reports.errors import (
    CommerceReportsError,
    MalformedResponseError,
    RateLimitedError,
    ResponseTooLargeError,
    TransportError,
)
from commerce_reports.http import RetryPolicy
from commerce_reports.pace import Pacer
from tests.conftest import FakeClock
from tests.servers import serving
from tests.waiting import wait_for

KEY = "hostile-test-key-0123456789"
MB = 2**20
Behaviour = Callable[[socket.socket], None]


def _head(status: str = "200 OK", **headers: str) -> bytes:
    lines = [
        f"HTTP/1.1 {status}",
        "Connection: close",
        *(f"{k.replace('_', '-')}: {v}" for k, v in headers.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


@pytest.fixture
def hostile() -> Iterator[Callable[[Behaviour], str]]:
    """Start a loopback server answering every request with `behaviour(socket)`; give its URL."""
    servers = contextlib.ExitStack()
    stop = threading.Event()

    def start(behaviour: Behaviour) -> str:
        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                self.request.recv(65536)
                with contextlib.suppress(OSError):  # the client hung up, as it should
                    behaviour(self.request)

        server = servers.enter_context(serving(_Server(("127.0.0.1", 0), Handler)))
        server.stop = stop  # type: ignore[attr-defined]
        return f"http://127.0.0.1:{server.server_address[1]}"

    with servers:
        yield start
        stop.set()


def _client(url: str, tmp_path: Path, clock: FakeClock, **limits: float) -> ReportsClient:
    return ReportsClient(
        KEY,
        url,
        pace=0,
        clock=clock,
        pace_dir=tmp_path / "pace",
        timeout=5,
        retry=RetryPolicy(max_attempts=1),
        limits=Limits(**{"max_body_bytes": MB, "request_deadline": 60.0, **limits}),  # type: ignore[arg-type]
    )


def _drip(stop_after: int | None) -> Behaviour:
    def behaviour(sock: socket.socket) -> None:
        sock.sendall(_head(Content_Type="application/json"))  # no length: the body runs until close
        sent = 0
        while stop_after is None or sent < stop_after:
            sock.sendall(b" ")
            sent += 1
            time.sleep(0.05)  # the server's own pace of dripping, not a wait of the test

    return behaviour


def test_a_gzip_bomb_stops_at_the_ceiling_and_stores_nothing(
    hostile: Callable[[Behaviour], str], tmp_path: Path, clock: FakeClock
) -> None:
    bomb = gzip.compress(b"\0" * (64 * MB), compresslevel=9)  # 64 KB on the wire
    url = hostile(lambda s: s.sendall(_head(Content_Encoding="gzip", Content_Length=str(len(bomb))) + bomb))
    with _client(url, tmp_path, clock) as client, pytest.raises(ResponseTooLargeError) as caught:
        client.transactions(update_date="2026-11-05")
    assert "1 MB ceiling" in str(caught.value) and "COMMERCE_REPORTS_MAX_BODY_MB" in str(caught.value)


def test_an_oversize_body_is_refused_whether_declared_or_not(
    hostile: Callable[[Behaviour], str], tmp_path: Path, clock: FakeClock
) -> None:
    declared = hostile(lambda s: s.sendall(_head(Content_Length=str(5 * MB)) + b"[" * MB))
    streamed = hostile(lambda s: s.sendall(_head() + b"{" * (3 * MB)))  # no length: read until close
    for url in (declared, streamed):
        with _client(url, tmp_path, clock) as client, pytest.raises(ResponseTooLargeError):
            client.networks("2026-11-01", "2026-11-02")


@pytest.mark.parametrize("stop_after", [40, None], ids=["slow drip", "endless drip"])
def test_a_dripping_body_is_cut_at_the_overall_deadline(
    hostile: Callable[[Behaviour], str], tmp_path: Path, clock: FakeClock, stop_after: int | None
) -> None:
    url = hostile(_drip(stop_after))  # each byte arrives well within the read timeout
    began = time.monotonic()
    with (
        _client(url, tmp_path, clock, request_deadline=0.5) as client,
        pytest.raises(TransportError) as caught,
    ):
        client.transactions(update_date="2026-11-05")
    assert "0.5 s deadline" in str(caught.value)
    assert time.monotonic() - began < 5  # the read timeout is 5 s: the deadline, not it, ended this


def _stopped_in_flight(client: ReportsClient, asked: threading.Event) -> tuple[TransportError, float]:
    """Ask for a networks window in a thread of its own (a sync's lane), stop the client once the
    server has the request (`asked`); the request's error and the seconds from the stop to it."""
    failed: list[TransportError] = []

    def request() -> None:
        try:
            client.networks("2026-11-02", "2026-11-03")
        except TransportError as error:
            failed.append(error)

    lane = threading.Thread(target=request)
    lane.start()
    wait_for(asked.is_set, "the request to reach the server", timeout=30)
    began = time.monotonic()
    client.stop()
    wait_for(lambda: bool(failed), "the request to end", timeout=30)
    took = time.monotonic() - began
    lane.join()
    return failed[0], took


def test_a_client_told_to_stop_cuts_its_request_in_flight_and_sends_no_other(
    hostile: Callable[[Behaviour], str], tmp_path: Path, clock: FakeClock
) -> None:
    """What Ctrl-C does to a sync's lanes: a request whose answer never comes ends at once."""
    asked = threading.Event()

    def silent(sock: socket.socket) -> None:  # reads the request, then holds the line
        asked.set()
        sock.recv(1)

    with _client(hostile(silent), tmp_path, clock) as client:  # a read timeout of 5 s, a deadline of 60
        error, took = _stopped_in_flight(client, asked)
        assert took < 2  # not the read timeout, not the deadline: the stop
        assert "stopped before its answer was complete" in str(error)
        with pytest.raises(TransportError, match="stopped"):
            client.transactions(update_date="2026-11-05")  # refused before anything is sent


def test_a_request_on_a_connection_an_earlier_answer_left_open_is_cut_by_the_stop_too(
    hostile: Callable[[Behaviour], str], tmp_path: Path, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    """A sync's lanes share their site's client. When one lane's answer ends just as another lane
    asks, the connection pool may hand the second request the first one's connection, kept open
    (a server answering with keep-alive, as the sandbox and most servers do): a sync's SIGTERM
    then left that request waiting for its answer, 60 s, since the stop cuts the sockets each
    attempt connected. A transport that keeps connections stands for that moment here: each
    attempt still has a connection of its own, which the stop cuts; and a request stopped is not
    retried, nor said to be (the log said "waiting 3 s" after the Ctrl-C)."""
    asked = threading.Event()
    answered = 0

    def keeping_alive(sock: socket.socket) -> None:  # (its request read) the first answer keeps the line
        nonlocal answered
        if answered == 0:
            answered += 1
            sock.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: 27\r\n\r\n{"data": [], "totals": {}}\n')
            if not sock.recv(65536):  # the client closed the line: the next request comes on another
                return
        asked.set()  # the second request, read: never answered
        sock.recv(1)

    kept = httpx.HTTPTransport(limits=httpx.Limits(max_keepalive_connections=5))
    url = hostile(keeping_alive)
    with ReportsClient(KEY, url, pace=0, clock=clock, pace_dir=tmp_path, timeout=5, transport=kept) as client:
        client.networks("2026-11-01", "2026-11-02")
        error, took = _stopped_in_flight(client, asked)
    assert took < 2  # the stop, not the read timeout (5 s)
    assert "stopped before its answer was complete" in str(error) and error.sent
    assert "waiting" not in caplog.text and "attempt" not in str(error)


def _drip_headers(lines: int | None, gap: float) -> Behaviour:
    """A status line, then header lines one every `gap` seconds: `lines` of them and the blank line
    that ends them, or (None) never an end. Every line arrives well within the read timeout."""

    def behaviour(sock: socket.socket) -> None:
        sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
        sent = 0
        while lines is None or sent < lines:
            time.sleep(gap)  # the server's pace of dripping, not a wait of the test
            sock.sendall(f"X-Drip-{sent}: {'x' * 20}\r\n".encode())
            sent += 1
        sock.sendall(b"Content-Length: 20\r\n\r\n" + b'{"transactions": []}')

    return behaviour


@pytest.mark.parametrize(
    ("lines", "gap"), [(None, 0.2), (40, 0.1)], ids=["headers never end", "headers dripped slowly"]
)
def test_dripped_headers_are_cut_at_the_overall_deadline(
    hostile: Callable[[Behaviour], str],
    tmp_path: Path,
    clock: FakeClock,
    monkeypatch: pytest.MonkeyPatch,
    lines: int | None,
    gap: float,
) -> None:
    """The deadline covers the headers too: a server dripping them (forever, or over 4 s) ends
    the attempt at the deadline (2 s, from COMMERCE_REPORTS_REQUEST_DEADLINE) plus a small margin,
    while each line comes far inside the read timeout (5 s)."""
    monkeypatch.setenv("COMMERCE_REPORTS_REQUEST_DEADLINE", "2")
    url = hostile(_drip_headers(lines, gap))
    limits = Limits.from_env(dict(os.environ))
    began = time.monotonic()
    with (
        ReportsClient(
            KEY,
            url,
            pace=0,
            clock=clock,
            pace_dir=tmp_path,
            timeout=5,
            limits=limits,
            retry=RetryPolicy(max_attempts=1),
        ) as client,
        pytest.raises(TransportError) as caught,
    ):
        client.transactions(update_date="2026-11-05")
    took = time.monotonic() - began
    assert "2 s deadline" in str(caught.value) and "COMMERCE_REPORTS_REQUEST_DEADLINE" in str(caught.value)
    assert 2 <= took < 3.5, took


def test_the_deals_client_has_the_same_deadline(
    hostile: Callable[[Behaviour], str], clock: FakeClock
) -> None:
    url = hostile(_drip_headers(None, 0.2))
    began = time.monotonic()
    with (
        DealsClient(
            "deals-key-0123456789",
            url,
            limits=Limits(request_deadline=1),
            sleep=clock.sleep,
            retry=RetryPolicy(max_attempts=1),
        ) as client,
        pytest.raises(CommerceReportsError) as caught,
    ):
        client.targeting_values("device.language")
    assert "1 s deadline" in str(caught.value)
    assert time.monotonic() - began < 2.5


def test_an_html_page_with_200_is_not_taken_for_data(
    hostile: Callable[[Behaviour], str], tmp_path: Path, clock: FakeClock
) -> None:
    page = b"<!DOCTYPE html><html><head><title>Sign in</title></head><body>portal</body></html>"
    url = hostile(lambda s: s.sendall(_head(Content_Type="text/html") + page))
    with _client(url, tmp_path, clock) as client, pytest.raises(MalformedResponseError) as caught:
        client.transactions(update_date="2026-11-05")
    assert "HTML page" in str(caught.value) and "COMMERCE_REPORTS_BASE_URL" in str(caught.value)


def test_a_wrong_envelope_is_a_malformed_answer(
    hostile: Callable[[Behaviour], str], tmp_path: Path, clock: FakeClock
) -> None:
    url = hostile(lambda s: s.sendall(_head(Content_Type="application/json") + b'{"data": [], "page": 1}'))
    with _client(url, tmp_path, clock) as client, pytest.raises(MalformedResponseError) as caught:
        client.transactions(update_date="2026-11-05")
    assert "transactions" in str(caught.value)


def test_a_cut_gzip_stream_is_malformed_not_short(
    hostile: Callable[[Behaviour], str], tmp_path: Path, clock: FakeClock
) -> None:
    whole = gzip.compress(b'{"transactions": []}' * 50)
    url = hostile(lambda s: s.sendall(_head(Content_Encoding="gzip") + whole[: len(whole) // 2]))
    with _client(url, tmp_path, clock) as client, pytest.raises(MalformedResponseError, match="cut short"):
        client.transactions(update_date="2026-11-05")


def _answers(*responses: httpx.Response) -> httpx.MockTransport:
    queue = list(responses)
    return httpx.MockTransport(lambda request: queue.pop(0) if len(queue) > 1 else queue[0])


def test_a_huge_retry_after_is_refused_and_kept_for_the_key_without_sleeping(
    tmp_path: Path, clock: FakeClock
) -> None:
    transport = _answers(httpx.Response(429, headers={"Retry-After": "86400"}, text="slow down"))
    with ReportsClient(
        KEY, "https://reports.example", pace=1, clock=clock, pace_dir=tmp_path, transport=transport
    ) as client:
        pacer = Pacer({"networks": 1}, f"{client.base_url}|{KEY}", state_dir=tmp_path, clock=clock)
        with pytest.raises(RateLimitedError) as caught:
            client.networks("2026-11-01", "2026-11-02")
        with pytest.raises(RateLimitedError, match="nothing more is sent until then"):
            client.networks("2026-11-02", "2026-11-03")  # the service asked: it is asked nothing meanwhile
    assert "86400 s" in str(caught.value) and "COMMERCE_REPORTS_MAX_RETRY_WAIT" in str(caught.value)
    turn = pacer.turn("networks")  # (every process of the key holds back)
    assert turn.asked and turn.not_before - clock.time() == 86400
    assert max(clock.sleeps, default=0) < 5  # and none sleeps through it: each says it and stops


def test_a_long_wait_asked_by_the_service_is_said_in_the_log(
    tmp_path: Path, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    ok = httpx.Response(200, json={"data": [], "totals": {}})
    transport = _answers(httpx.Response(429, headers={"Retry-After": "58"}), ok)
    caplog.set_level(logging.INFO)
    with ReportsClient(
        KEY, "https://reports.example", pace=0, clock=clock, pace_dir=tmp_path, transport=transport
    ) as client:
        client.networks("2026-11-01", "2026-11-02")
    assert "waiting 58 s: the service asked to slow down" in caplog.text
    assert KEY not in caplog.text
