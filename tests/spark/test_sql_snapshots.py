"""The SQL each engine runs for every view, kept in snapshot files and checked without starting Spark.

    tests/snapshots/duckdb/<view>.sql    what DuckDB runs (`db.snapshot.view_sql`, the live view)
    tests/snapshots/spark/<view>.sql     what Spark runs (`spark.transpile.spark_sql`)

Both are rendered for one fixed lake: the folder `data`, one site whose files all read, one run of
covered days. A change of a view or of its translation shows as a diff of these files. After a
deliberate change, write them again and review the diff:

    .venv/bin/python -m pytest tests/spark/test_sql_snapshots.py --snapshot-update
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from commerce_reports.contract import DATASETS
from commerce_reports.db.coverage import SiteCoverage
from commerce_reports.db.snapshot import reading_of, view_sql
from commerce_reports.db.views import VIEW_LIST, View
from commerce_reports.errors import ValidationError
from commerce_reports.spark.transpile import spark_sql

pytest.importorskip("sqlglot")  # the Spark extra's translator (Spark itself is never started here)

SNAPSHOTS = Path(__file__).parents[1] / "snapshots"
COVERAGE = (SiteCoverage("alpha", ((date(2026, 1, 1), date(2026, 3, 10)),), revision_days=45),)
READING = reading_of(Path("data"), (), ("alpha",), dict.fromkeys(DATASETS, "one"), COVERAGE)


@pytest.mark.parametrize("view", VIEW_LIST, ids=lambda view: view.name)
def test_the_sql_of_each_view_on_each_engine_is_the_snapshot(view: View, snapshot: object) -> None:
    """The exact SQL each engine is given (DuckDB's as its templates lay it out; Spark's pretty)."""
    snapshot.snapshot_dir = SNAPSHOTS  # type: ignore[attr-defined]
    snapshot.assert_match(view_sql(READING, "live", view) + "\n", f"duckdb/{view.name}.sql")  # type: ignore[attr-defined]
    snapshot.assert_match(spark_sql(view, COVERAGE) + "\n", f"spark/{view.name}.sql")  # type: ignore[attr-defined]


def test_every_snapshot_names_a_view() -> None:
    names = {f"{view.name}.sql" for view in VIEW_LIST}
    for engine in ("duckdb", "spark"):
        assert {p.name for p in (SNAPSHOTS / engine).glob("*.sql")} == names, engine


def _cast(expression: str) -> str:
    """The Spark form of one cast of a networks source column (`clicks` DOUBLE, `network_name` text,
    `campaign_ids` text, `window_start` DATE) inside a one-column view."""
    view = View("probe", "", f"SELECT {expression} AS x FROM {{networks}}")
    return " ".join(spark_sql(view).split()).split(" AS x FROM")[0].removeprefix("SELECT ")


@pytest.mark.parametrize(
    ("duckdb", "spark"),
    [
        ("CAST(clicks AS BIGINT)", "CAST(BROUND(clicks, 0) AS BIGINT)"),  # ties to even, as DuckDB
        ("CAST(sum(clicks) AS INTEGER)", "CAST(BROUND(SUM(clicks), 0) AS INT)"),
        (
            "CAST(CAST(clicks AS DECIMAL(18, 4)) AS BIGINT)",
            "CAST(ROUND(CAST(clicks AS DECIMAL(18, 4)), 0) AS BIGINT)",
        ),
        (
            "TRY_CAST(network_name AS BIGINT)",
            "TRY_CAST(ROUND(TRY_CAST(network_name AS DECIMAL(38, 18)), 0) AS BIGINT)",
        ),
        ("CAST(campaign_ids AS BIGINT)", "CAST(ROUND(CAST(campaign_ids AS DECIMAL(38, 18)), 0) AS BIGINT)"),
        ("CAST(count(*) AS INTEGER)", "CAST(COUNT(*) AS INT)"),  # an integer stays as it is
        ("CAST(clicks > 0 AS INTEGER)", "CAST(clicks > 0 AS INT)"),
        ("CAST(clicks AS VARCHAR)", "CAST(clicks AS STRING)"),  # not an integer cast: untouched
    ],
)
def test_a_cast_to_an_integer_is_translated_by_what_it_casts(duckdb: str, spark: str) -> None:
    assert _cast(duckdb) == spark


def test_a_cast_of_what_cannot_be_typed_raises() -> None:
    with pytest.raises(ValidationError, match="cannot tell how Spark should read"):
        _cast("CAST(window_start AS BIGINT)")
