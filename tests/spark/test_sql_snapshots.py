"""The SQL each engine runs for every view, kept in snapshot files and checked without starting Spark.

    tests/snapshots/duckdb/<view>.sql    what DuckDB runs (`db.snapshot.view_sql`, the live view)
    tests/snapshots/spark/<view>.sql     what Spark runs (`spark.transpile.spark_sql`)

Both are rendered for one fixed lake: the folder `data`, one site whose files all read, one run of
covered days. A change of a view or of its translation shows as a diff of these files. After a
deliberate change, write them again and review the diff:

    .venv/bin/python -m pytest tests/spark/test_sql_snapshots.py --snapshot-update

Beside the text, its meaning: each view's Spark SQL runs on DuckDB with Spark's meaning of every
function it calls (`spark_meaning.py`) over a synced lake, and must answer what the DuckDB view
answers. A function whose translation means something else on Spark (DuckDB's `isodow` became an
expression off by one there) fails it, naming the view, with no JVM.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb
import pytest

from commerce_reports.contract import DATASETS
from commerce_reports.db.coverage import SiteCoverage, ledger_select, with_status
from commerce_reports.db.snapshot import reading_of, take_snapshot, view_sql
from commerce_reports.db.sources import part_glob, read_sql
from commerce_reports.db.views import LEDGER, VIEW_LIST, View, render
from commerce_reports.errors import ValidationError
from commerce_reports.spark.sources import SOURCE_VIEWS
from commerce_reports.spark.transpile import spark_sql
from tests.spark.conftest import Lake
from tests.spark.spark_meaning import differences, duckdb_form, rows

pytest.importorskip("sqlglot")  # the Spark extra's translator (Spark itself is never started here)

SNAPSHOTS = Path(__file__).parents[1] / "snapshots"
COVERAGE = (
    SiteCoverage(
        "alpha",
        ((date(2026, 1, 1), date(2026, 3, 10)),),
        revision_days=45,
        stored=(date(2026, 1, 1), date(2026, 3, 12), datetime(2026, 3, 12, 6, 30, tzinfo=UTC)),
    ),
)
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


def test_a_view_that_breaks_the_contract_is_refused_in_its_words_not_the_optimisers() -> None:
    """A monthly view without `report_fetched_at`: sqlglot cannot type its status columns, and the
    error names the view, the rule and the column."""
    sql = """SELECT site, date_trunc('month', commission_date)::DATE AS window_start,
       (date_trunc('month', commission_date) + INTERVAL 1 MONTH)::DATE AS window_end, count(*) AS n
FROM {src}.transactions GROUP BY ALL"""
    with pytest.raises(ValidationError, match=r"view monthly: .*it has no column report_fetched_at"):
        spark_sql(View("monthly", "", sql, period="month"), COVERAGE)


@pytest.fixture(scope="module")
def both_meanings(lake: Lake) -> Iterator[tuple[duckdb.DuckDBPyConnection, list[SiteCoverage]]]:
    """A DuckDB over the synced lake: the lake's datasets as Spark's sources (`lake_transactions`,
    ...), and every view twice: as DuckDB runs it (schema `duck`) and its Spark SQL with Spark's
    meaning (schema `main`, where the Spark SQL finds the views it reads by bare name)."""
    coverage = list(take_snapshot(lake.data_dir).coverage)  # as both engines judge the lake now
    sources: dict[str, str] = {d: read_sql(d, [part_glob(lake.data_dir, d)], by_name=False) for d in DATASETS}
    sources[LEDGER] = ledger_select(coverage)
    with duckdb.connect() as con:
        con.execute("CREATE SCHEMA duck")
        for dataset, name in SOURCE_VIEWS.items():
            con.execute(f"CREATE VIEW {name} AS {sources[dataset]}")
        for view in VIEW_LIST:
            _create_both(con, view, sources, coverage)
        yield con, coverage


def _create_both(
    con: duckdb.DuckDBPyConnection, view: View, sources: dict[str, str], coverage: list[SiteCoverage]
) -> None:
    con.execute(
        f"CREATE VIEW duck.{view.name} AS {with_status(view.period, render(view, 'duck', sources), coverage)}"
    )
    con.execute(f"CREATE VIEW main.{view.name} AS {duckdb_form(spark_sql(view, coverage))}")


def _meaning_differs(con: duckdb.DuckDBPyConnection, name: str) -> list[str]:
    return list(differences(rows(con, f"SELECT * FROM duck.{name}"), rows(con, f"SELECT * FROM main.{name}")))


@pytest.mark.parametrize("view", VIEW_LIST, ids=lambda view: view.name)
def test_each_view_means_on_spark_what_it_means_on_duckdb(
    view: View, both_meanings: tuple[duckdb.DuckDBPyConnection, list[SiteCoverage]]
) -> None:
    con, _ = both_meanings
    assert con.execute(f"SELECT count(*) FROM duck.{view.name}").fetchall()[0][0] > 0
    assert _meaning_differs(con, view.name) == []


def test_a_translation_off_by_one_on_spark_is_caught(
    both_meanings: tuple[duckdb.DuckDBPyConnection, list[SiteCoverage]],
) -> None:
    """sqlglot writes DuckDB's `isodow` as `(DAYOFWEEK(d) % 7) + 1`, which is Monday 3, Sunday 2 on
    Spark (DAYOFWEEK counts from 1 on Sunday): the check names the difference."""
    con, coverage = both_meanings
    probe = View("weekdays", "", "SELECT window_start, isodow(window_start) AS weekday FROM {src}.networks")
    with con.cursor() as cursor:
        sources = {d: f"SELECT * FROM {name}" for d, name in SOURCE_VIEWS.items()}
        _create_both(cursor, probe, sources, coverage)
        (found,) = _meaning_differs(cursor, "weekdays")
    assert "only on DuckDB" in found and "only with Spark's meaning" in found


def test_a_function_whose_spark_meaning_is_not_written_down_is_refused() -> None:
    with pytest.raises(ValueError, match="no Spark meaning written down for Levenshtein"):
        duckdb_form("SELECT LEVENSHTEIN(network_name, 'x') FROM lake_networks")
