"""Sandboxes on loopback for the tests: small (80 transactions a day, history from 2026-01-01)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from datetime import UTC, date, datetime
from typing import Any, cast

import httpx
import pytest

from commerce_reports.sandbox import SandboxConfig, run_sandbox
from commerce_reports.sandbox.runner import RunningSandbox

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
FIRST_DAY = date(2026, 1, 1)
ALPHA = {"Authorization": "secret sandbox-alpha-key"}


def small_config(**changes: Any) -> SandboxConfig:
    settings: dict[str, Any] = {
        "now": NOW,
        "first_day": FIRST_DAY,
        "pace": 0.0,
        "transactions_per_day": 80,
    }
    return SandboxConfig(**{**settings, **changes})


class Client:
    """An httpx client on a running sandbox, authenticated as site alpha by default."""

    def __init__(self, running: RunningSandbox) -> None:
        self.running = running
        self.sandbox = running.sandbox
        self.http = httpx.Client(base_url=running.base_url, timeout=10)

    def get(self, endpoint: str, auth: str = ALPHA["Authorization"], **params: str) -> httpx.Response:
        """GET a report (or a `/path`) with `Authorization: <auth>` (none when `auth` is empty)."""
        path = endpoint if endpoint.startswith("/") else f"/v1/reports/{endpoint}"
        return self.http.get(path, params=params, headers={"Authorization": auth} if auth else {})


@pytest.fixture(scope="session")
def shared() -> Iterator[Client]:
    """One read-only sandbox for the whole session (its day cache makes later tests cheap)."""
    with run_sandbox(small_config()) as running:
        yield Client(running)


@pytest.fixture(scope="session")
def shared_published() -> Iterator[Client]:
    """The session's read-only sandbox in the published dialect (same world as `shared`)."""
    with run_sandbox(small_config(dialect="published")) as running:
        yield Client(running)


@pytest.fixture(params=["contract", "published"])
def each_dialect(request: pytest.FixtureRequest) -> Client:
    """The shared sandbox of each dialect in turn: tests of the served world run on both."""
    return cast(
        Client, request.getfixturevalue("shared" if request.param == "contract" else "shared_published")
    )


# Published name -> contract name, for the keys that differ.
_CONTRACT_NAMES = {
    "clickSid": "clickId",
    "publisherRevenue": "publisherNetRevenue",
    "destinationUrl": "linkUrl",
    "networkName": "network",
    "merchandise": "product",
}


def view(element: dict[str, Any]) -> dict[str, Any]:
    """A served transaction in either dialect as one flat dict in the contract's names."""
    if "commission" not in element:
        return {_CONTRACT_NAMES.get(key, key): value for key, value in element.items()}
    groups = ("account", "commission", "click", "merchant")
    return {**{k: v for group in groups for k, v in element[group].items()}, "product": element["product"]}


@pytest.fixture
def make_client() -> Iterator[Callable[..., Client]]:
    """A factory of fresh sandboxes, for tests that move the clock, pace or inject faults."""
    contexts: list[AbstractContextManager[RunningSandbox]] = []

    def make(config: SandboxConfig | None = None, **kwargs: Any) -> Client:
        context = run_sandbox(config or small_config(), **kwargs)
        contexts.append(context)
        return Client(context.__enter__())

    yield make
    for context in reversed(contexts):
        context.__exit__(None, None, None)
