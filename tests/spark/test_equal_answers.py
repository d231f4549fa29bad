"""Every view on Spark equals the DuckDB view row for row, money exactly (DECIMAL), on a synced lake."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from commerce_reports.db import VIEWS, connect
from commerce_reports.db.views import View, render
from commerce_reports.lake.repair import rebuild
from commerce_reports.spark import register_views
from commerce_reports.spark.sources import spark_type
from commerce_reports.spark.transpile import spark_sql
from tests.spark.conftest import Lake
from tests.spark.spark_meaning import comparable_rows

# One worker, one SparkSession (`make test` runs with --dist loadgroup); the first test also syncs the
# lake and starts the JVM, which a loaded 2-core machine may take a minute over.
pytestmark = [
    pytest.mark.xdist_group("spark"),
    pytest.mark.timeout(300),
    pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning"),
]


def _type_name(sql_type: str) -> str:
    return sql_type.replace(" ", "").lower()


def differences(con: duckdb.DuckDBPyConnection, spark: Any, view: str) -> tuple[int, list[str]]:
    """The view's row count on DuckDB, and every way Spark's answer differs from it."""
    relation = con.sql(f"SELECT * FROM {view}")
    frame = spark.table(view)
    problems = []
    if frame.columns != relation.columns:
        problems.append(f"{view}: columns {frame.columns} on Spark, {relation.columns} on DuckDB")
    duck_types = [_type_name(spark_type(str(t))) for t in relation.types]
    spark_types = [_type_name(f.dataType.simpleString()) for f in frame.schema.fields]
    if spark_types != duck_types:
        problems.append(f"{view}: types {spark_types} on Spark, {duck_types} (as Spark types) on DuckDB")
    duck = comparable_rows(relation.fetchall())
    sparks = comparable_rows([tuple(row) for row in frame.collect()])
    if duck != sparks:
        only_duck, only_spark = sorted(map(repr, duck - sparks)), sorted(map(repr, sparks - duck))
        problems.append(
            f"{view}: {sum(duck.values())} rows on DuckDB, {sum(sparks.values())} on Spark; "
            f"{len(only_duck)} only on DuckDB, e.g. {only_duck[:2]}; "
            f"{len(only_spark)} only on Spark, e.g. {only_spark[:2]}"
        )
    return sum(duck.values()), problems


def test_every_view_on_spark_equals_duckdb(lake: Lake, spark: Any) -> None:
    """Every view of `VIEWS`, a new one included: the performance views, and the base views
    (`transactions`: latest version, version_count, adjusted, returned, products as lists of
    structs, fetched_at as an instant; `networks`: slice, grain and window from the folder names)."""
    assert register_views(spark, lake.data_dir) == list(VIEWS)
    spark.catalog.cacheTable("transactions")  # computed once for the eight views: a third less time
    try:
        with connect(lake.data_dir) as con:
            counts, problems = {}, []
            for view in VIEWS:
                counts[view], found = differences(con, spark, view)
                problems += found
            sites = con.sql("SELECT site, sum(returns), sum(adjusted) FROM daily_performance GROUP BY site")
            returns_and_adjustments = sites.fetchall()
    finally:
        spark.catalog.uncacheTable("transactions")
    print(f"\n[{lake.dialect}] rows compared:", ", ".join(f"{v} {n}" for v, n in counts.items()))
    assert problems == []
    assert all(n > 0 for n in counts.values()), counts
    assert len(returns_and_adjustments) == 2, returns_and_adjustments  # two sites
    assert all(returns > 0 and adjusted > 0 for _, returns, adjusted in returns_and_adjustments)


def _as_older_file(
    path: Path, drop: str, to_integers: tuple[str, ...] = (), floats: tuple[str, ...] = ()
) -> None:
    """Rewrite a partition file as an older version wrote it: without `drop`, integer counts,
    money as binary floats."""
    table = pq.read_table(path).drop_columns([drop])
    for names, kind in ((to_integers, pa.int64()), (floats, pa.float64())):
        for name in names:
            table = table.set_column(table.schema.get_field_index(name), name, table[name].cast(kind))
    pq.write_table(table, path)


def test_older_damaged_and_missing_files_read_as_in_duckdb(
    lake: Lake, spark: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """One site's ledger and networks, two files as schema version 1 wrote them (no sub type column,
    integer clicks and actions, money as floats), one cut short, no merchandise at all: the cut file
    is left out on both engines, the others read by name and cast (money as DECIMAL), merchandise is
    typed and empty; all equal to DuckDB."""
    site = next((lake.data_dir / "lake").glob("site=*"))
    for dataset in ("transactions", "networks"):
        shutil.copytree(site / dataset, tmp_path / "lake" / site.name / dataset)
    days = sorted((tmp_path / "lake").glob("*/transactions/*/*/part.parquet"))
    _as_older_file(days[0], "partner_product_sub_type", floats=("publisher_net_revenue", "order_value"))
    _as_older_file(
        next((tmp_path / "lake").glob("*/networks/slice=all/*/*/part.parquet")),
        "extra",
        ("clicks", "actions"),
        ("revenue", "sales", "epc"),
    )
    rebuild(tmp_path, site.name.removeprefix("site="), trusted=True)  # the older files, as vouched for
    days[1].write_bytes(days[1].read_bytes()[:100])  # then cut short: no longer what its entry says
    register_views(spark, tmp_path)
    assert f"{days[1]} is left out of the views" in caplog.text
    with connect(tmp_path) as con:
        for view in ("merchandise", "networks", "site_performance", "transactions"):
            rows, problems = differences(con, spark, view)
            assert problems == []
            assert (rows == 0) == (view == "merchandise")


def test_what_sqlglot_does_not_carry_over_means_the_same_on_spark(spark: Any) -> None:
    """list_sum skips NULL items (empty or all-NULL: NULL); a cast to an integer rounds, ties to even."""
    view = View(
        "meanings",
        "",
        "SELECT n, list_sum(list_transform(l, lambda x: x * 2)) AS total, x::BIGINT AS whole FROM (VALUES "
        "(1, [1.25, NULL, 2.5]::DOUBLE[], 2.5::DOUBLE), (2, []::DOUBLE[], 3.5::DOUBLE), "
        "(3, [NULL]::DOUBLE[], -2.5::DOUBLE), (4, NULL::DOUBLE[], 12.7::DOUBLE), "
        "(5, [0.1, 0.2, 0.3]::DOUBLE[], -12.7::DOUBLE)) AS t(n, l, x)",
    )
    duck = sorted(duckdb.sql(render(view, "main", {})).fetchall())
    assert sorted(tuple(row) for row in spark.sql(spark_sql(view)).collect()) == duck
    assert [row[1:] for row in duck[:4]] == [(7.5, 2), (None, 4), (None, -2), (None, 13)]
