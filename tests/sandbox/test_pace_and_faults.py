"""Pace (429 + Retry-After, injected monotonic clock) and every fault kind, over real HTTP."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import httpx
import orjson
import pytest

from commerce_reports.sandbox import FAULT_KINDS, FaultConfig

from .conftest import Client, small_config

UPDATE = {"updateDate": "2026-02-03"}


class FakeMonotonic:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_pace_per_key_and_endpoint(make_client: Callable[..., Client]) -> None:
    clock = FakeMonotonic()
    client = make_client(small_config(pace=60.0), monotonic=clock)
    assert client.get("transactions", **UPDATE).status_code == 200
    clock.now += 20.5
    paced = client.get("transactions", **UPDATE)
    assert paced.status_code == 429
    assert paced.headers["Retry-After"] == "40"
    assert "retry in 40 seconds" in paced.json()["message"]
    # Another endpoint and another key have their own pace; 400 and 401 do not count.
    assert client.get("networks", clickDateStart="2026-02-01", clickDateEnd="2026-02-02").status_code == 200
    beta = "secret sandbox-beta-key"
    assert client.get("transactions", auth=beta, **UPDATE).status_code == 200
    assert client.get("merchandise").status_code == 400
    assert client.get("merchandise", auth="").status_code == 401
    assert (
        client.get("merchandise", clickDateStart="2026-02-01", clickDateEnd="2026-02-02").status_code == 200
    )
    # A 429 does not restart the interval.
    clock.now += 39.5
    assert client.get("transactions", **UPDATE).status_code == 200
    assert all(r.headers["X-Sandbox-Pace"] == "60" for r in [paced])


def test_every_answer_tells_the_pace(make_client: Callable[..., Client]) -> None:
    client = make_client(small_config(pace=0.05))
    for response in (
        client.get("transactions", **UPDATE),
        client.get("transactions"),
        client.get("/_sandbox/info"),
        client.get("networks", auth=""),
    ):
        assert response.headers["X-Sandbox-Pace"] == "0.05"


@pytest.mark.parametrize(
    ("kind", "status", "content_type"),
    [
        ("500", 500, "application/json"),
        ("502", 502, "application/json"),
        ("503", 503, "application/json"),
        ("html", 503, "text/html"),
        ("text", 500, "text/plain"),
    ],
)
def test_error_faults(make_client: Callable[..., Client], kind: str, status: int, content_type: str) -> None:
    client = make_client()
    client.sandbox.inject(kind, count=2, endpoint="transactions")
    assert client.get("networks", clickDateStart="2026-02-01", clickDateEnd="2026-02-02").status_code == 200
    for _ in range(2):
        response = client.get("transactions", **UPDATE)
        assert response.status_code == status
        assert response.headers["content-type"].startswith(content_type)
        if content_type == "application/json":
            orjson.loads(response.content)
        else:
            with pytest.raises(orjson.JSONDecodeError):
                orjson.loads(response.content)
    assert client.get("transactions", **UPDATE).status_code == 200
    assert [r.fault for r in client.sandbox.request_log] == [None, kind, kind, None]


def test_drop_fault_closes_without_answer(make_client: Callable[..., Client]) -> None:
    client = make_client()
    client.sandbox.inject("drop")
    with pytest.raises(httpx.TransportError):
        client.get("transactions", **UPDATE)
    record = client.sandbox.request_log[-1]
    assert (record.status, record.fault) == (None, "drop")


@pytest.mark.parametrize("gzip", [False, True])
def test_truncate_fault_cuts_the_body(make_client: Callable[..., Client], gzip: bool) -> None:
    client = make_client()
    full = client.get("transactions", **UPDATE).content
    client.sandbox.inject("truncate")
    headers = {"Authorization": "secret sandbox-alpha-key", "Accept-Encoding": "gzip" if gzip else "identity"}
    with httpx.stream(
        "GET", f"{client.running.base_url}/v1/reports/transactions", params=UPDATE, headers=headers
    ) as response:
        assert response.status_code == 200
        received = b""
        with pytest.raises(httpx.RemoteProtocolError):
            for chunk in response.iter_raw():
                received += chunk
    assert received == full[: len(full) // 2]


def test_malformed_fault_is_200_but_not_json(make_client: Callable[..., Client]) -> None:
    client = make_client()
    client.sandbox.inject("malformed")
    response = client.get("transactions", **UPDATE)
    assert response.status_code == 200
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(response.content)


def test_slow_fault_delays_the_normal_answer(make_client: Callable[..., Client]) -> None:
    client = make_client(small_config(faults=FaultConfig(slow_seconds=0.3)))
    fast = client.get("transactions", **UPDATE)
    client.sandbox.inject("slow")
    slow = client.get("transactions", **UPDATE)
    assert slow.content == fast.content
    assert slow.elapsed.total_seconds() >= 0.3


def test_flat_fault_serves_the_flat_shape_once(make_client: Callable[..., Client]) -> None:
    client = make_client()
    client.sandbox.inject("flat")
    flat = client.get("transactions", **UPDATE).json()["transactions"]
    nested = client.get("transactions", **UPDATE).json()["transactions"]
    assert "publisherRevenue" in flat[0] and "commission" in nested[0]


def test_inject_rejects_unknown_kinds_and_endpoints(make_client: Callable[..., Client]) -> None:
    client = make_client()
    with pytest.raises(ValueError, match="unknown fault kind"):
        client.sandbox.inject("404")
    with pytest.raises(ValueError, match="endpoint"):
        client.sandbox.inject("500", endpoint="deals")


def test_seeded_fault_rate_is_reproducible(make_client: Callable[..., Client]) -> None:
    config = small_config(faults=FaultConfig(rate=0.5, kinds=frozenset({"500", "503", "flat"}), seed=7))
    runs = []
    for _ in range(2):
        client = make_client(config)
        statuses = [
            client.get("networks", clickDateStart="2026-02-01", clickDateEnd="2026-02-02").status_code
            for _ in range(30)
        ]
        runs.append(statuses)
        faults = [r.fault for r in client.sandbox.request_log]
        assert {"500", "503"} <= set(faults) and None in faults
    assert runs[0] == runs[1]
    with pytest.raises(ValueError):
        FaultConfig(rate=1.5)
    with pytest.raises(ValueError):
        FaultConfig(kinds=frozenset({"teapot"}))
    assert replace(FaultConfig(), kinds=FAULT_KINDS).kinds == FAULT_KINDS
