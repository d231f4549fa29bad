"""Fixtures of the deal-request tests: a deals sandbox on loopback with a fixed day and a fake
clock, clients whose retry waits advance that clock instead of sleeping, and no network but
loopback."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterator
from datetime import date
from typing import Any

import pytest

from commerce_reports.deals import DealsClient
from commerce_reports.deals.sandbox import DEFAULT_WRITE_KEY, DealsSandbox, RunningDealsSandbox
from commerce_reports.http import RetryPolicy
from commerce_reports.sandbox.http import ServerHandle, serve

TODAY = date(2031, 3, 10)


class FakeClock:
    """Seconds for the sandbox's rate limit; `sleep` records each wait and advances time."""

    def __init__(self) -> None:
        self.now = 1_000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Refuse any connection that is not to loopback: these tests never touch a real service."""
    real_connect = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> Any:
        host = address[0] if isinstance(address, tuple) else None
        if host is not None and not ipaddress.ip_address(host).is_loopback:
            raise OSError(f"test tried to reach {host}: only loopback is allowed")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(scope="session")
def _server() -> Iterator[tuple[ServerHandle, list[DealsSandbox]]]:
    """One loopback server for the session, answering with the current test's DealsSandbox
    (stopping a server takes half a second; `run_deals_sandbox` itself is tested on its own)."""
    current: list[DealsSandbox] = []
    with serve(lambda request: current[-1](request)) as handle:
        yield handle, current


@pytest.fixture
def deals_sandbox(
    _server: tuple[ServerHandle, list[DealsSandbox]],
    clock: FakeClock,
    request: pytest.FixtureRequest,
) -> Iterator[RunningDealsSandbox]:
    """A fresh sandbox (fixed day, fake clock); options by indirect parametrization."""
    handle, current = _server
    options = getattr(request, "param", {})
    current.append(DealsSandbox(today=TODAY, clock=clock, **options))
    yield RunningDealsSandbox(handle.base_url, current[-1], handle)
    current.clear()


@pytest.fixture
def make_client(deals_sandbox: RunningDealsSandbox, clock: FakeClock) -> Iterator[Callable[..., DealsClient]]:
    made: list[DealsClient] = []

    def make(key: str = DEFAULT_WRITE_KEY, *, max_attempts: int = 4, **options: Any) -> DealsClient:
        """A client on the sandbox; its waits are the policy's upper bounds (no jitter)."""
        options.setdefault("sleep", clock.sleep)
        options.setdefault("retry", RetryPolicy(max_attempts, 0.5, 8.0, jitter=lambda: 1.0))
        base_url = options.pop("base_url", deals_sandbox.base_url)
        client = DealsClient(key, base_url, today=lambda: TODAY, **options)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


@pytest.fixture
def client(make_client: Callable[..., DealsClient]) -> DealsClient:
    return make_client()


def valid_deal(**fields: Any) -> dict[str, Any]:
    """A deal the sandbox accepts, with `fields` replacing top-level parts."""
    return {
        "name": "Spring sports",
        "type": "private",
        "buyers": [{"dsp": "alphadsp", "seatIds": ["seat-1"]}],
        "commercial": {"takeRate": 0.2},
        "schedule": {"startDate": TODAY.isoformat()},
        "targeting": [{"device.geo.country": ["USA"]}],
    } | fields
