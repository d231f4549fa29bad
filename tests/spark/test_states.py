"""Spark reads the state of the lake the DuckDB views read: the published generation, whole, kept by
a registered session until `register_views` is called again; with none to trust, the lake's files,
what nothing vouches for left out. A few days of a small ledger, stored as a sync stores them."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from commerce_reports.contract import TRANSACTION_SCHEMA, PartitionKey
from commerce_reports.db import connect
from commerce_reports.db.published import publish
from commerce_reports.lake.manifest import store_partition
from commerce_reports.lake.repair import quarantine
from commerce_reports.spark import register_views

pytestmark = [
    pytest.mark.xdist_group("spark"),
    pytest.mark.timeout(300),
    pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning"),
]

FIRST = date(2026, 3, 1)
FETCHED = datetime(2026, 3, 20, 12, tzinfo=UTC)
TOTALS = "SELECT count(*), sum(publisher_net_revenue) FROM transactions"


def _store(data_dir: Path, day: date, rows: int, revenue: str = "10") -> None:
    """One settled ledger day of `rows` commissions of `revenue` each, as a sync stores it (its
    file, then its manifest entry), without publishing."""
    table = pa.Table.from_pylist(
        [
            {
                "commission_id": f"{day}-{n}",
                "commission_date": day,
                "update_date": day,
                "publisher_net_revenue": Decimal(revenue),
                "order_value": Decimal("100"),
                "products": [],
            }
            for n in range(rows)
        ],
        TRANSACTION_SCHEMA,
    )
    store_partition(data_dir, "alpha", PartitionKey.transactions(day), table, FETCHED, settled=True)


def _totals(spark: Any) -> tuple[int, Decimal]:
    ((count, revenue),) = spark.sql(TOTALS).collect()
    return count, revenue


def _duckdb_totals(data_dir: Path) -> tuple[int, Decimal]:
    with connect(data_dir) as con:
        ((count, revenue),) = con.sql(TOTALS).fetchall()
    return count, revenue


def test_a_registration_reads_the_published_state_whole_and_keeps_it(spark: Any, tmp_path: Path) -> None:
    """Registered while a sync stores files (a day replaced at its path, a new day, not yet
    published), Spark counts what DuckDB counts, the published state; registered before a sync and
    queried after it, it still counts that state, neither the replaced day's new rows nor the new
    day; registered again, the new one."""
    for n in range(3):
        _store(tmp_path, FIRST + timedelta(days=n), rows=2)
    publish(tmp_path)
    published = (6, Decimal("60"))
    _store(tmp_path, FIRST, rows=5, revenue="1")  # mid-sync: a day replaced, a new day
    _store(tmp_path, FIRST + timedelta(days=3), rows=1)
    register_views(spark, tmp_path)
    assert _totals(spark) == _duckdb_totals(tmp_path) == published
    publish(tmp_path)  # the sync ends
    synced = (10, Decimal("55"))
    assert _duckdb_totals(tmp_path) == synced
    assert _totals(spark) == published
    register_views(spark, tmp_path)
    assert _totals(spark) == synced


def test_a_month_with_a_day_left_out_is_neither_complete_nor_final_on_spark(
    spark: Any, tmp_path: Path
) -> None:
    """A whole month of settled days, one of them cut short: its file is left out of the views, so
    the month is short and says so on Spark as on DuckDB, read from the lake (nothing published)
    and from a generation published without it."""
    for n in range(31):
        _store(tmp_path, FIRST + timedelta(days=n), rows=1)
    cut = next(tmp_path.glob("lake/site=alpha/transactions/*/day=2026-03-15/part.parquet"))
    cut.write_bytes(cut.read_bytes()[:100])
    query = "SELECT site, window_start, transactions, complete, final FROM site_performance"
    for publishing in (False, True):
        if publishing:
            publish(tmp_path)
        register_views(spark, tmp_path)
        found = [tuple(row) for row in spark.sql(query).collect()]
        with connect(tmp_path) as con:
            assert found == con.sql(query).fetchall() == [("alpha", FIRST, 30, False, False)]


def test_a_data_folder_named_with_glob_and_uri_characters_is_read_as_named(
    spark: Any, tmp_path: Path
) -> None:
    """Hadoop's glob characters (`[`, `{`, `*`) beside a space, `%`, `'`, `,`, `#`, `é` and `:`
    (which Hadoop's globbing cannot take in a folder's name), read from the lake (nothing
    published) and from its published generation. (A `?` is refused for every engine: DuckDB
    could never write the catalog below it.)"""
    data_dir = tmp_path / "Q3 100% [x]'s, #1 {a,b} é 10:30 *:" / "data"
    _store(data_dir, FIRST, rows=2)
    for publishing in (False, True):
        if publishing:
            publish(data_dir)
        register_views(spark, data_dir)
        assert _totals(spark) == (2, Decimal("20"))


def test_a_registered_session_outlives_a_partition_quarantined_after_it(spark: Any, tmp_path: Path) -> None:
    """Registered, then a day's file moved out of the lake (as `verify` quarantines it) and the lake
    published again: the session still answers from the generation it registered, not with
    Spark's FILE_NOT_EXIST; registered again, without the day."""
    for n in range(2):
        _store(tmp_path, FIRST + timedelta(days=n), rows=1)
    publish(tmp_path)
    register_views(spark, tmp_path)
    quarantine(tmp_path, "alpha", f"transactions/by=updateDate/day={FIRST}", "a test's")
    publish(tmp_path)
    assert _totals(spark) == (2, Decimal("20"))
    register_views(spark, tmp_path)
    assert _totals(spark) == (1, Decimal("10"))
