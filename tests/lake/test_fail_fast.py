"""A sync against an address that does not answer ends fast and says so once: a refused connection,
a name that does not resolve or a failed TLS handshake on the first request ends the sync at once;
a lane whose requests go unanswered a few times in a row stops asking; a refused key is one line."""

from __future__ import annotations

import socket
import socketserver
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from commerce_reports.api import SyncOptions, sync
from commerce_reports.cli import EXIT_UNREACHABLE, main
from commerce_reports.client import GIVE_UP_AFTER
from commerce_reports.config import Limits
from commerce_reports.errors import UnreachableError
from commerce_reports.sandbox import SandboxConfig, run_sandbox
from commerce_reports.sandbox.runner import RunningSandbox
from commerce_reports.secret import Secret
from commerce_reports.sites import SiteProfile
from tests.conftest import FakeClock
from tests.servers import serving


def _dead_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _options(now: datetime, clock: FakeClock) -> SyncOptions:
    """The lake at `now`, no pace, no bars; the retries' backoff passes on `clock`."""
    return SyncOptions(now=lambda: now, pace=0, progress=False, clock=clock)


@pytest.fixture
def today() -> Iterator[RunningSandbox]:
    """A small sandbox frozen at this instant, so the CLI (on the real clock) agrees with it."""
    now = datetime.now(UTC).replace(microsecond=0)
    config = SandboxConfig(
        now=now, first_day=now.date() - timedelta(days=20), pace=0.0, transactions_per_day=5
    )
    with run_sandbox(config) as running:
        yield running


@pytest.mark.parametrize("kind", ["refused", "dns", "tls"])
def test_an_address_that_cannot_be_reached_ends_the_sync_at_once_with_one_line(
    kind: str,
    today: RunningSandbox,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url, cause = {
        "refused": (f"http://127.0.0.1:{_dead_port()}", "connection refused"),
        "dns": ("https://reports.invalid", "the host name does not resolve"),
        "tls": (today.base_url.replace("http://", "https://"), "the TLS handshake failed"),  # plain HTTP
    }[kind]
    monkeypatch.setenv("COMMERCE_REPORTS_SECRET_KEY", "sandbox-alpha-key")
    monkeypatch.setenv("COMMERCE_REPORTS_BASE_URL", url)
    began = time.monotonic()
    code = main(
        ["sync", "--no-progress", "--data-dir", str(tmp_path), "--start", str(today.sandbox.now.date())]
    )
    took = time.monotonic() - began
    err = capsys.readouterr().err
    assert code == EXIT_UNREACHABLE
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and f"{url} cannot be reached: {cause}" in errors[0], err
    assert "Traceback" not in err and took < 10  # no retries, no pace waits: one attempt
    assert not list(tmp_path.glob("lake/site=*/transactions/**/*.parquet"))


def test_a_known_address_gone_silent_stops_every_lane_of_its_site_in_one_line(tmp_path: Path) -> None:
    """A site synced before (its address is not checked again) whose address now refuses: each
    lane's first request fails at once, the rest is not asked, and the failures read as one line."""
    url = f"http://127.0.0.1:{_dead_port()}"
    gone = SiteProfile("alpha", Secret("sandbox-alpha-key"), url, sandbox=True)  # sandbox: no check
    now = datetime(2026, 3, 10, 12, tzinfo=UTC)
    clock = FakeClock()
    result = sync(
        now.date() - timedelta(days=9), sites=[gone], data_dir=tmp_path, options=_options(now, clock)
    )
    assert result.unreachable == [url] and not result.stored
    assert sum(f.attempted for f in result.failed) <= 3  # at most the first request of each lane
    lines = result.failure_lines()
    assert len(lines) == 1 and lines[0].startswith(f"alpha: {len(result.failed)} partitions not stored")
    assert f"{url} cannot be reached: connection refused" in lines[0]
    assert [s for s in clock.sleeps if s > 1] == []  # no backoff, no pace wait


class _Hang(socketserver.ThreadingTCPServer):
    """Accepts every connection, reads the request line, never answers; counts requests per path."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.release = threading.Event()
        server = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                line = self.request.recv(65536).split(b"\r\n", 1)[0].decode()
                server.paths.append(line.split()[1].split("?")[0] if line else "")
                server.release.wait(30)  # until the client hangs up or the test ends

        super().__init__(("127.0.0.1", 0), Handler)


@pytest.fixture
def hanging() -> Iterator[_Hang]:
    with serving(_Hang()) as server:
        yield server
        server.release.set()


def test_a_lane_whose_requests_go_unanswered_stops_asking_after_a_few(hanging: _Hang, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{hanging.server_address[1]}"
    profile = SiteProfile(
        "alpha", Secret("sandbox-alpha-key"), url, limits=Limits(request_deadline=0.3), sandbox=True
    )
    now = datetime(2026, 3, 10, 12, tzinfo=UTC)
    clock = FakeClock()
    began = time.monotonic()
    result = sync(
        now.date() - timedelta(days=30), sites=[profile], data_dir=tmp_path, options=_options(now, clock)
    )
    assert time.monotonic() - began < 10
    asked: dict[str, int] = {}
    for path in hanging.paths:
        asked[path.rsplit("/", 1)[-1]] = asked.get(path.rsplit("/", 1)[-1], 0) + 1
    assert asked == dict.fromkeys(("transactions", "networks", "merchandise"), GIVE_UP_AFTER)
    assert result.unreachable == [url] and not result.stored
    planned = len(result.plan.requests)
    assert len(result.failed) == planned and sum(f.attempted for f in result.failed) == 3  # one per lane
    assert all(isinstance(f.error, UnreachableError) for f in result.failed)
    lines = result.failure_lines()
    assert len(lines) == 3, lines  # one per lane: each says its endpoint and why
    assert all(f"gave no answer to {GIVE_UP_AFTER}" in line and "0.3 s deadline" in line for line in lines)
    assert sum(int(line.split(": ", 1)[1].split()[0]) for line in lines) == planned


def test_a_refused_key_is_said_once_per_site(
    today: RunningSandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, value in {
        "COMMERCE_REPORTS_SECRET_KEY_ALPHA": "not-the-alpha-key-123",
        "COMMERCE_REPORTS_BASE_URL": today.base_url,
        "COMMERCE_REPORTS_PACE": "0",
    }.items():
        monkeypatch.setenv(name, value)
    start = today.sandbox.now.date() - timedelta(days=5)
    code = main(["sync", "--no-progress", "--data-dir", str(tmp_path), "--start", str(start)])
    err = capsys.readouterr().err
    assert code == 1
    failed = [line for line in err.splitlines() if line.startswith("failed:")]
    assert len(failed) == 1 and failed[0].startswith("failed: alpha: ") and "HTTP 401" in failed[0], err
    assert err.count("HTTP 401") == 1
