"""Every chart helper's SQL against every view it names, for every dimension of the table and
every kind of selection: it binds (the columns exist), and its frame has the types the charts
expect (money exact, as the views keep it: the charts hand Vega floats at the Altair boundary).
Run on the synced chart lake and on an empty lake (the views with no rows), so a type that only
shows without data, or only with it, is caught too."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any, get_args

import duckdb
import polars as pl
import pytest

from commerce_reports.charts import (
    DIMENSION_TABLE,
    DIMENSIONS,
    Selection,
    compare,
    compare_periods,
    queries,
    ranking_frame,
)
from commerce_reports.charts.dimensions import DAILY_FILTERS, Dimension
from commerce_reports.charts.queries import aggregate_span, filter_options, network_gap_frame
from commerce_reports.charts.series import daily_frame, link_trend_frame
from commerce_reports.db import connect
from tests.charts.conftest import END, START

MONEY = pl.Decimal(38, 4)  # exact in every frame; the charts hand Vega floats (`chart_data`)
RANKING = {
    "key": pl.String,
    "detail": pl.String,
    "revenue": MONEY,
    "order_value": MONEY,
    "orders": pl.Int64,
    "returns": pl.Int64,
    "return_rate": pl.Float64,
    "clicks": pl.Float64,
    "aggregate_revenue": MONEY,
    "epc": pl.Float64,
    "conversion_rate": pl.Float64,
    "rank": pl.Int64,
}
_COMPARED = {"revenue": MONEY, "orders": pl.Int64, "returns": pl.Int64, "return_rate": pl.Float64}
_COMPARED |= {"clicks": pl.Int64, "epc": pl.Float64, "conversion_rate": pl.Float64}
COMPARISON = (
    {"key": pl.String}
    | {
        name: dtype
        for figure, kind in _COMPARED.items()
        for name, dtype in ((figure, kind), (f"{figure}_previous", kind), (f"{figure}_change", pl.Float64))
    }
    | {"complete": pl.Boolean, "previous_complete": pl.Boolean}
)
# A range cut inside months, one holding a whole month (the monthly rollups answer it), and each
# filter alone and together (the service slices by one filter at a time).
RANGES = {"days": (START, END), "whole month": (date(2026, 2, 1), END)}
FILTERS = {
    "none": {},
    "network": {"network": "Northwind Affiliates"},
    "device": {"device": "Mobile"},
    "country": {"country": "US"},
    "device and country": {"device": "Tablet", "country": "GB"},
}


@pytest.fixture(scope="module", params=["synced", "empty"])
def any_lake(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[duckdb.DuckDBPyConnection, str | None]]:
    """A connection and the site to select: alpha of the chart lake, or every site of an empty one."""
    synced = request.param == "synced"
    folder = request.getfixturevalue("lake") if synced else tmp_path_factory.mktemp("empty")
    with connect(Path(folder)) as connection:
        yield connection, "alpha" if synced else None


def _schema(frame: pl.DataFrame) -> dict[str, pl.DataType]:
    return dict(frame.schema)


def test_the_dimension_type_lists_exactly_the_table() -> None:
    assert get_args(Dimension) == DIMENSIONS == tuple(DIMENSION_TABLE)


def test_every_dimensions_columns_exist_on_its_views_with_its_type(con: duckdb.DuckDBPyConnection) -> None:
    def typed(sql: str, view: str) -> str:
        return str(con.execute(f"DESCRIBE SELECT {sql} AS x FROM {view}").fetchall()[0][1])

    for spec in DIMENSION_TABLE.values():
        assert typed(spec.key, spec.view) == spec.sql_type, spec.name
        if spec.detail:
            assert typed(spec.detail, spec.view) == "VARCHAR", spec.name
        if spec.daily:
            assert typed(spec.key, spec.daily) == spec.sql_type, spec.name
            if spec.detail:
                assert typed(spec.detail, spec.daily) == "VARCHAR", spec.name
        if spec.daily_without_detail:
            assert typed(spec.key, spec.daily_without_detail) == spec.sql_type, spec.name
    for daily, filters in DAILY_FILTERS.items():  # a filter a daily rollup applies is one of its columns
        columns = {row[0] for row in con.execute(f"DESCRIBE {daily}").fetchall()}
        assert set(filters) <= columns and "day" in columns, daily
        if spec.monthly and spec.monthly_key:
            assert typed(spec.monthly_key, spec.monthly) == spec.sql_type, spec.name
            assert spec.filter in {row[0] for row in con.execute(f"DESCRIBE {spec.monthly}").fetchall()}
        if spec.aggregate_key:
            assert typed(spec.aggregate_key, "networks") == spec.sql_type, spec.name


@pytest.mark.parametrize("span", RANGES)
@pytest.mark.parametrize("dimension", DIMENSIONS)
def test_rankings_and_comparisons_of_every_dimension_run_with_their_types(
    any_lake: tuple[duckdb.DuckDBPyConnection, str | None], dimension: str, span: str
) -> None:
    con, site = any_lake
    start, end = RANGES[span]
    for name, filters in FILTERS.items():
        sel = Selection(site=site, start=start, end=end, **filters)
        frame = ranking_frame(con, dimension, sel, top_n=50)  # type: ignore[arg-type]
        assert _schema(frame) == RANKING, (dimension, span, name)
        if name in ("none", "device"):  # the transaction side is the ranking's; the slices differ
            compared = compare(con, sel, by=dimension)  # type: ignore[arg-type]
            assert _schema(compared) == COMPARISON, (dimension, span, name)


def _figures(
    con: duckdb.DuckDBPyConnection, dimension: Dimension, sel: Selection
) -> tuple[pl.DataFrame, Any]:
    """A ranking and a comparison of `dimension` over `sel`."""
    return ranking_frame(con, dimension, sel, top_n=400), compare_periods(con, sel, by=dimension)


@pytest.mark.parametrize("span", RANGES)
def test_the_daily_rollups_give_the_transactions_figures_exactly(
    con: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch, span: str
) -> None:
    """Every ranking and comparison a daily rollup answers (a leaderboard of any period, a drill
    into a network) equals the one summed from the transactions, to the cent and the count."""
    start, end = RANGES[span]
    answered = 0
    for name, filters in FILTERS.items():
        sel = Selection(site="alpha", start=start, end=end, **filters)
        for dimension in DIMENSIONS:
            summed = _figures(con, dimension, sel)
            with monkeypatch.context() as without:
                without.setattr(queries, "_daily", lambda *_args: None)
                scanned = _figures(con, dimension, sel)
            assert summed[0].equals(scanned[0]), (dimension, name)
            assert summed[1].frame.equals(scanned[1].frame) and summed[1].notes == scanned[1].notes
            answered += queries._daily(DIMENSION_TABLE[dimension], sel, False) is not None
    assert answered >= 10  # the rollups did answer: network, merchant, link, device, country, drilled


def test_totals_series_gap_and_filters_run_with_their_types(
    any_lake: tuple[duckdb.DuckDBPyConnection, str | None],
) -> None:
    con, site = any_lake
    for filters in FILTERS.values():
        sel = Selection(site=site, start=START, end=END, **filters)
        assert _schema(compare(con, sel)) == COMPARISON
        assert _schema(daily_frame(con, sel)) == {
            "period": pl.Date,
            "grain": pl.String,
            "revenue": MONEY,
            "order_value": MONEY,
            "orders": pl.Int64,
            "returns": pl.Int64,
            "return_rate": pl.Float64,
        }
        trend = link_trend_frame(con, sel, ["https://example.org/a"])
        assert _schema(trend) == {
            "period": pl.Date,
            "grain": pl.String,
            "link": pl.String,
            "revenue": MONEY,
            "orders": pl.Int64,
        }
        span = aggregate_span(con, sel)
        assert span is None or all(isinstance(day, date) for day in span)
    gap = network_gap_frame(con, Selection(site=site, start=START, end=END))
    assert _schema(gap) == {
        "key": pl.String,
        "first_day": pl.Date,
        "last_day": pl.Date,
        "aggregate_revenue": MONEY,
        "revenue": MONEY,
        "revenue_gap": MONEY,
        "gap_share": pl.Float64,
    }
    assert set(filter_options(con)) == {"sites", "networks", "devices", "countries"}
