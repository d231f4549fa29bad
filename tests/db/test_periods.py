"""Every view with a period says whether the lake holds all of it (`complete`) and whether the
service may still revise it (`final`), from what the manifests say was stored and settled."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from commerce_reports.contract import TRANSACTION_SCHEMA, PartitionKey, next_month
from commerce_reports.db import connect, refresh_rollups
from commerce_reports.db.coverage import DEFAULT_REVISION_DAYS, REPORT_SETTLE_DAYS
from commerce_reports.db.views import VIEW_LIST
from commerce_reports.lake.manifest import Manifest
from commerce_reports.lake.store import write_partition
from commerce_reports.params import Filters
from commerce_reports.parse.aggregates import parse_aggregate
from tests.factories import networks_body

NOW = datetime(2026, 6, 10, 12, 0, tzinfo=UTC)
LEDGER = (date(2026, 1, 10), date(2026, 6, 10))  # the updateDate days stored, both included
EARNED = {  # update day -> the commission day of the one transaction it holds
    date(2026, 1, 10): date(2026, 1, 5),  # earned before the ledger's first day
    date(2026, 3, 3): date(2026, 3, 3),
    date(2026, 6, 7): date(2026, 6, 7),  # settled, but inside the revision horizon
    date(2026, 6, 9): date(2026, 6, 9),  # not settled yet
}
pytestmark = pytest.mark.xdist_group("periods")  # the module's lake built once, on one worker


def _store(data_dir: Path, key: PartitionKey, table: pa.Table, settled: bool) -> None:
    written = write_partition(data_dir, "alpha", key, table, NOW)
    Manifest.record(data_dir, "alpha", key, written, NOW, settled)


@pytest.fixture(scope="module")
def con(tmp_path_factory: pytest.TempPathFactory) -> Iterator[duckdb.DuckDBPyConnection]:
    data_dir = tmp_path_factory.mktemp("periods")
    day = LEDGER[0]
    while day <= LEDGER[1]:
        rows = []
        if day in EARNED:
            rows.append(
                {
                    "commission_id": f"c-{day}",
                    "commission_date": EARNED[day],
                    "update_date": day,
                    "publisher_net_revenue": Decimal(10),
                    "order_value": Decimal(100),
                    "network": "Net A",
                    "products": [],
                }
            )
        settled = datetime.combine(day, time(), UTC) + timedelta(days=2) <= NOW  # the sync's policy
        _store(
            data_dir, PartitionKey.transactions(day), pa.Table.from_pylist(rows, TRANSACTION_SCHEMA), settled
        )
        day += timedelta(days=1)
    month = date(2026, 1, 1)
    while month <= NOW.date():
        key = PartitionKey.aggregate("networks", month, Filters(), "month")
        table = parse_aggregate("networks", networks_body(), month, key.end)
        settles = datetime.combine(key.end, time(), UTC) + timedelta(days=REPORT_SETTLE_DAYS)
        _store(data_dir, key, table, settles <= NOW)
        month = next_month(month)
    refresh_rollups(data_dir)
    with connect(data_dir) as connection:
        yield connection


def _flags(con: duckdb.DuckDBPyConnection, sql: str) -> dict[str, tuple[bool, bool]]:
    return {str(key): (complete, final) for key, complete, final in con.execute(sql).fetchall()}


def test_every_view_with_a_period_has_complete_and_final(con: duckdb.DuckDBPyConnection) -> None:
    for view in VIEW_LIST:
        described = {name: kind for name, kind, *_ in con.execute(f"DESCRIBE {view.name}").fetchall()}
        has_period = "window_start" in described or "day" in described
        assert ("complete" in described) == has_period == (view.period is not None), view.name
        if has_period:
            assert described["complete"] == described["final"] == "BOOLEAN", view.name


def test_months_are_complete_once_every_day_settled_and_final_past_the_horizon(
    con: duckdb.DuckDBPyConnection,
) -> None:
    assert DEFAULT_REVISION_DAYS == 45  # the dates below are chosen around it
    months = _flags(con, "SELECT window_start, complete, final FROM site_performance ORDER BY 1")
    assert months == {
        "2026-01-01": (False, False),  # the ledger starts on Jan 10
        "2026-02-01": (True, True),  # ledger and report window reach 45 days past the month
        "2026-03-01": (True, True),
        "2026-04-01": (True, False),  # whole, but the service may still revise it until mid-June
        "2026-05-01": (True, False),
        "2026-06-01": (False, False),  # the current month
    }
    assert _flags(con, "SELECT window_start, complete, final FROM networks ORDER BY 1") == {
        **months,
        "2026-01-01": (True, True),  # the window itself was fetched long after it settled
    }
    fetched = con.execute("SELECT DISTINCT report_fetched_at FROM network_performance").fetchall()
    assert fetched == [(NOW,)]


def test_days_are_complete_once_settled_and_final_past_the_horizon(con: duckdb.DuckDBPyConnection) -> None:
    days = _flags(con, "SELECT day, complete, final FROM daily_performance ORDER BY 1")
    assert days == {
        "2026-01-05": (False, False),
        "2026-03-03": (True, True),
        "2026-06-07": (True, False),
        "2026-06-09": (False, False),
    }
    assert _flags(con, "SELECT day, complete, final FROM link_performance ORDER BY 1") == days


def test_a_day_whose_file_is_gone_is_not_held(tmp_path: Path) -> None:
    """A settled day's file removed by hand, with no published generation to read (none yet, or
    a folder without hard links): the views counted the month without it and called it complete."""
    first = date(2026, 3, 1)
    for n in range(31):
        day = first + timedelta(days=n)
        row = {
            "commission_id": f"{day}-0",
            "commission_date": day,
            "update_date": day,
            "publisher_net_revenue": Decimal("10"),
            "order_value": Decimal("100"),
            "products": [],
        }
        table = pa.Table.from_pylist([row], TRANSACTION_SCHEMA)
        _store(tmp_path, PartitionKey.transactions(day), table, settled=True)
    query = "SELECT transactions, complete FROM site_performance"
    with connect(tmp_path) as con:
        assert con.sql(query).fetchall() == [(31, True)]
    next(tmp_path.glob("lake/site=alpha/transactions/*/day=2026-03-15/part.parquet")).unlink()
    with connect(tmp_path) as con:
        assert con.sql(query).fetchall() == [(30, False)]
