"""The client against the sandbox over real loopback HTTP: the whole contract, faults included."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

from commerce_reports.client import ReportsClient, RetryPolicy
from commerce_reports.errors import AuthenticationError, ConfigurationError, ServerError
from commerce_reports.pace import spacing
from commerce_reports.sandbox import FAST_PACE, SandboxConfig, run_sandbox
from commerce_reports.sandbox.runner import RunningSandbox
from tests.conftest import FakeClock

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
KEY = "sandbox-alpha-key"


def config(**changes: object) -> SandboxConfig:
    base: dict[str, object] = {
        "now": NOW,
        "first_day": date(2026, 1, 1),
        "pace": 0.0,
        "transactions_per_day": 60,
    }
    return SandboxConfig(**{**base, **changes})  # type: ignore[arg-type]


@pytest.fixture
def running() -> Iterator[RunningSandbox]:
    with run_sandbox(config()) as running:
        yield running


def client_for(running: RunningSandbox, clock: FakeClock, tmp_path: Path, **kwargs: object) -> ReportsClient:
    options: dict[str, object] = {
        "pace": 0,
        "clock": clock,
        "pace_dir": tmp_path / "pace",
        "retry": RetryPolicy(max_attempts=4, jitter=lambda: 0.0),
    }
    options.update(kwargs)
    return ReportsClient(KEY, running.base_url, **options)  # type: ignore[arg-type]


def test_transactions_of_a_day_match_the_sandbox_ground_truth(
    running: RunningSandbox, clock: FakeClock, tmp_path: Path
) -> None:
    day = date(2026, 3, 2)
    with client_for(running, clock, tmp_path) as client:
        table = pl.from_arrow(client.transactions(commission_date=day))
    assert isinstance(table, pl.DataFrame)
    truth = running.sandbox.ground_truth("alpha", day, day)
    assert table.height == truth["transactions"][0] > 0
    assert table["publisher_net_revenue"].sum() == Decimal(repr(round(truth["revenue"][0], 2)))  # exact
    assert set(table["commission_date"].unique()) == {day}


def test_flat_shape_and_nested_shape_give_the_same_table(clock: FakeClock, tmp_path: Path) -> None:
    tables = []
    for shape in ("nested", "flat"):
        with run_sandbox(config(shape=shape)) as running, client_for(running, clock, tmp_path) as client:
            tables.append(client.transactions(update_date=date(2026, 3, 3)))
    assert tables[0].num_rows > 0
    assert tables[0].equals(tables[1])


def test_aggregates_reconcile_with_transactions_by_click_date(
    running: RunningSandbox, clock: FakeClock, tmp_path: Path
) -> None:
    start, end = date(2026, 2, 1), date(2026, 2, 8)
    with client_for(running, clock, tmp_path) as client:
        networks = pl.from_arrow(client.networks(start, end))
        mobile = pl.from_arrow(client.networks(start, end, device_type="MBL"))
        days = [client.transactions(click_date=start + timedelta(days=n)) for n in range(7)]
    assert isinstance(networks, pl.DataFrame) and isinstance(mobile, pl.DataFrame)
    revenue = sum(sum(t["publisher_net_revenue"].to_pylist()) for t in days)
    assert abs(networks["revenue"].sum() - revenue) < 0.01 * networks.height
    assert 0 < mobile["clicks"].sum() < networks["clicks"].sum()
    assert set(mobile["device_type"]) == {"MBL"}


def test_an_empty_window_is_an_empty_table_not_an_error(
    running: RunningSandbox, clock: FakeClock, tmp_path: Path
) -> None:
    with client_for(running, clock, tmp_path) as client:
        table = client.merchandise(date(2025, 1, 1), date(2025, 1, 31))
    assert table.num_rows == 0
    assert running.sandbox.request_log[-1].status == 404


def test_a_wrong_key_is_an_authentication_error_sent_once(
    running: RunningSandbox, clock: FakeClock, tmp_path: Path
) -> None:
    with ReportsClient("not-a-real-key", running.base_url, pace=0, clock=clock, pace_dir=tmp_path) as client:
        with pytest.raises(AuthenticationError) as caught:
            client.networks(date(2026, 3, 1), date(2026, 3, 2))
    assert caught.value.status == 401 and "not-a-real-key" not in str(caught.value)
    assert len(running.sandbox.request_log) == 1


@pytest.mark.parametrize("kind", ["500", "502", "503", "html", "text", "drop", "truncate", "malformed"])
def test_every_fault_kind_is_retried_to_the_same_answer(
    kind: str, running: RunningSandbox, clock: FakeClock, tmp_path: Path
) -> None:
    day = date(2026, 3, 4)
    with client_for(running, clock, tmp_path) as client:
        clean = client.transactions(update_date=day)
        running.sandbox.inject(kind, count=2, endpoint="transactions")
        again = client.transactions(update_date=day)
    assert again.equals(clean)
    assert [r.fault for r in running.sandbox.request_log[-3:]] == [kind, kind, None]


def test_a_slow_answer_times_out_and_the_retry_succeeds(clock: FakeClock, tmp_path: Path) -> None:
    from commerce_reports.sandbox import FaultConfig

    with run_sandbox(config(faults=FaultConfig(slow_seconds=1.0))) as running:
        with client_for(running, clock, tmp_path, timeout=0.3) as client:
            running.sandbox.inject("slow", endpoint="networks")
            table = client.networks(date(2026, 3, 1), date(2026, 3, 2))
    assert table.num_rows > 0
    assert len([s for s in clock.sleeps if s]) == 1


def test_errors_that_persist_end_in_a_server_error_after_the_bound(
    running: RunningSandbox, clock: FakeClock, tmp_path: Path
) -> None:
    running.sandbox.inject("html", count=10)
    with client_for(running, clock, tmp_path) as client, pytest.raises(ServerError) as caught:
        client.networks(date(2026, 3, 1), date(2026, 3, 2))
    assert caught.value.attempts == 4 and "HTML page" in str(caught.value)
    assert len(running.sandbox.request_log) == 4


def test_the_sandbox_pace_is_honoured_by_the_client_given_it(clock: FakeClock, tmp_path: Path) -> None:
    with run_sandbox(config(pace=FAST_PACE), monotonic=clock.time) as running:
        with ReportsClient(KEY, running.base_url, clock=clock, pace_dir=tmp_path, pace=FAST_PACE) as client:
            assert client.pace["networks"] == FAST_PACE
            client.networks(date(2026, 3, 1), date(2026, 3, 2))
            client.networks(date(2026, 3, 2), date(2026, 3, 3))
    assert max(clock.sleeps) == pytest.approx(spacing(FAST_PACE), abs=1e-5)
    assert all(r.status == 200 for r in running.sandbox.request_log)


def test_a_429_from_the_sandbox_is_waited_out(clock: FakeClock, tmp_path: Path) -> None:
    ticks = [0.0]
    with run_sandbox(config(pace=60.0), monotonic=lambda: ticks[0]) as running:
        # Two clients on one key whose own pace is off: the second is refused, then waits Retry-After.
        with (
            client_for(running, clock, tmp_path / "a") as first,
            client_for(running, clock, tmp_path / "b") as second,
        ):
            first.networks(date(2026, 3, 1), date(2026, 3, 2))

            def advance(seconds: float) -> None:
                clock.now += seconds
                ticks[0] += seconds

            clock.sleep = advance  # type: ignore[method-assign]
            second.networks(date(2026, 3, 1), date(2026, 3, 2))
    statuses = [r.status for r in running.sandbox.request_log]
    assert statuses == [200, 429, 200]
    assert ticks[0] >= 60


def test_no_key_configured_the_entry_point_runs_against_the_embedded_sandbox() -> None:
    import commerce_reports as cr

    with pytest.raises(ConfigurationError, match=r"never reads the environment.*open_client\(\)"):
        ReportsClient()  # the class itself never starts a server, nor reads a key
    with cr.open_client() as client:
        assert client.base_url.startswith("http://127.0.0.1:")
        table = client.networks(date.today() - timedelta(days=3), date.today())
    assert table.num_rows > 0


def test_a_process_that_used_the_embedded_sandbox_exits_promptly(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "import commerce_reports as cr\n"
        "with cr.open_client() as client:\n"
        "    print(client.dialect)"  # the entry point started the embedded sandbox in the configured dialect
    )
    env = {**os.environ, "COMMERCE_REPORTS_DIALECT": "published"}  # the dialect it serves, too
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30, env=env)
    assert done.returncode == 0 and done.stdout.strip() == "published"
