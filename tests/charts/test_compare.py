"""A period against the previous one: the right previous period, figures that add up to the
views', whole-month EPC from the month windows, incomplete periods said, and the chart's labels."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

import duckdb
import polars as pl
import pytest

from commerce_reports.charts import Selection, compare, compare_periods, comparison_chart, previous_period
from commerce_reports.charts.changes import comparison_chart_of, comparison_spec
from commerce_reports.errors import ValidationError
from tests.charts.conftest import END, START


def test_the_previous_period_is_as_long_or_the_months_before() -> None:
    week = previous_period(Selection(site="alpha", start="2026-03-02", end="2026-03-08"))
    assert (week.start, week.end, week.site) == (date(2026, 2, 23), date(2026, 3, 1), "alpha")
    month = previous_period(Selection(start="2026-03-01", end="2026-03-31"))
    assert (month.start, month.end) == (date(2026, 2, 1), date(2026, 2, 28))
    quarter = previous_period(Selection(start="2026-01-01", end="2026-03-31"))
    assert (quarter.start, quarter.end) == (date(2025, 10, 1), date(2025, 12, 31))


def _sums(con: duckdb.DuckDBPyConnection, start: date, end: date) -> tuple[Decimal, int, int]:
    ((revenue, orders, returns),) = con.execute(
        "SELECT sum(revenue), sum(transactions), sum(returns) FROM daily_performance "
        "WHERE site = 'alpha' AND day BETWEEN ? AND ?",
        [start, end],
    ).fetchall()
    return Decimal(revenue), int(orders), int(returns)


def test_totals_and_changes_are_the_views_figures(con: duckdb.DuckDBPyConnection) -> None:
    result = compare_periods(con, site="alpha", start="2026-03-02", end="2026-03-08")
    (row,) = result.frame.to_dicts()
    revenue, orders, returns = _sums(con, date(2026, 3, 2), date(2026, 3, 8))
    before = _sums(con, date(2026, 2, 23), date(2026, 3, 1))
    assert row["key"] == "Total" and row["revenue"] == revenue  # to the cent: money stays exact
    assert (row["orders"], row["returns"], row["orders_previous"]) == (orders, returns, before[1])
    assert row["revenue_change"] == pytest.approx(float(revenue / before[0]) - 1)
    assert row["return_rate"] == pytest.approx(returns / orders)
    assert result.complete and result.previous_complete and result.final is False  # the views' columns
    assert result.notes == ("the service may still revise these figures (late commissions and returns)",)
    assert row["epc"] is None and "sync --grain day" in result.aggregate_note  # weeks: no daily clicks here
    per_network = compare(con, site="alpha", start="2026-03-02", end="2026-03-08", by="network", top_n=200)
    assert per_network["revenue"].sum() == revenue
    assert per_network["orders_previous"].sum() == before[1]
    assert per_network["revenue"].to_list() == sorted(per_network["revenue"].to_list(), reverse=True)
    gone = per_network.filter(pl.col("orders") == 0)  # networks of the week before only
    assert gone["revenue_change"].to_list() == [-1.0] * gone.height
    # A change against nothing, or against a week that returns made negative, is no ratio: a
    # recovery from -$13.72 to $38.83 read as -383%. None, which tables and charts show as "-".
    links = compare(con, site="alpha", start="2026-03-02", end="2026-03-08", by="link", top_n=200)
    unmeasured = links.filter(pl.col("revenue_previous") <= 0)
    assert unmeasured.height and unmeasured["revenue_change"].null_count() == unmeasured.height
    measured = links.filter(pl.col("revenue_previous") > 0)
    assert measured["revenue_change"].null_count() == 0


def test_whole_months_compare_month_windows_and_a_period_beyond_the_lake_is_partial(
    con: duckdb.DuckDBPyConnection,
) -> None:
    result = compare_periods(con, site="alpha", start="2026-03-01", end="2026-03-31", by="device")
    assert (result.previous.start, result.previous.end) == (date(2026, 2, 1), date(2026, 2, 28))
    assert result.aggregates == "month" and result.aggregate_note == ""
    frame = result.frame
    assert frame["epc"].is_not_null().all() and frame["clicks"].dtype == pl.Int64
    ((clicks,),) = con.execute(
        "SELECT sum(clicks)::BIGINT FROM networks WHERE site = 'alpha' AND grain = 'month' "
        "AND window_start = '2026-03-01' AND slice = 'deviceType=MBL'"
    ).fetchall()
    assert frame.filter(pl.col("key") == "Mobile")["clicks"].item() == clicks
    # one revenue basis in a row: clicks x EPC is the revenue beside them, conversion its orders
    assert (frame["clicks"] * frame["epc"] - frame["revenue"].cast(pl.Float64)).abs().max() < 1e-6
    assert (frame["clicks"] * frame["conversion_rate"] - frame["orders"]).abs().max() < 1e-6
    assert not result.complete and not result.previous_complete  # March ends after the lake; February
    assert "2026-03-01 to 2026-03-31 is not complete in the lake" in result.notes[0]  # began after the 1st
    assert date(2026, 3, 31) > END


def test_the_frame_says_whether_each_period_is_whole_in_the_lake(con: duckdb.DuckDBPyConnection) -> None:
    """A week whose previous week began before the lake's first day compares with part of that week
    and reads as growth: the frame said nothing of it. Each row now carries both periods' flags."""
    inside = compare(con, site="alpha", start="2026-03-02", end="2026-03-08", by="network")
    assert inside.height > 1 and inside["complete"].all() and inside["previous_complete"].all()
    first = START + timedelta(days=3)  # the week before begins 4 days before the lake
    straddling = compare(con, site="alpha", start=first, end=first + timedelta(days=6))
    (row,) = straddling.select("key", "revenue_previous", "complete", "previous_complete").to_dicts()
    assert row["revenue_previous"] > 0 and (row["complete"], row["previous_complete"]) == (True, False)
    assert straddling["previous_complete"].dtype == pl.Boolean


def test_a_comparison_chart_labels_each_change(con: duckdb.DuckDBPyConnection) -> None:
    spec = comparison_chart(con, site="alpha", start="2026-03-02", end="2026-03-08", by="device").to_dict()
    rule, before, _, text = spec["layer"]
    assert (rule["mark"]["type"], before["mark"]["type"], text["mark"]["type"]) == ("rule", "point", "text")
    rows = next(iter(spec["datasets"].values()))
    for row in rows:
        change = row["revenue_change"]
        percent = round(change * 100)
        assert row["change_label"] == (f"+{percent}%" if percent > 0 else f"{percent}%")
    assert spec["layer"][0]["encoding"]["x"]["axis"]["title"] == "Revenue (USD)"
    assert "Grey: 2026-02-23 to 2026-03-01; dot: 2026-03-02 to 2026-03-08" in spec["title"]["subtitle"]
    with pytest.raises(ValidationError, match="'sales' is not compared"):
        comparison_chart(con, site="alpha", metric="sales")
    with pytest.raises(ValidationError, match="'campaign' is not a dimension"):
        compare(con, site="alpha", by="campaign")  # type: ignore[arg-type]


def test_the_served_spec_is_the_charts_own_without_altair(con: duckdb.DuckDBPyConnection) -> None:
    week = compare_periods(con, site="alpha", start="2026-03-02", end="2026-03-08", by="device")
    month = compare_periods(con, site="alpha", start="2026-02-01", end="2026-02-28", by="device")
    specs = []
    for result, metric in ((month, "clicks"), (month, "revenue"), (week, "revenue")):
        chart = comparison_chart_of(result, "device", metric=metric, currency="EUR").to_dict()  # validated
        spec = comparison_spec(result, "device", metric=metric, currency="EUR")
        rows = spec.pop("datasets")[spec.pop("data")["name"]]
        assert rows and rows == chart.pop("datasets")[chart.pop("data")["name"]]
        assert spec == chart
        specs.append(spec)
    # nothing in the layers is the periods' (a served page gives a drawn chart new rows and a title)
    assert specs[1]["layer"] == specs[2]["layer"] and specs[1]["title"] != specs[2]["title"]


def test_the_report_s_title_says_a_partial_period_and_one_the_service_may_still_revise(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """As the views' `complete` and `final` say (the title said nothing of a revisable week)."""
    from commerce_reports.report.sections import title

    week = title(con, Selection(site="alpha", start="2026-03-02", end="2026-03-08")).html
    assert "may still revise these figures" in week and "partial" not in week
    month = title(con, Selection(site="alpha", start="2026-03-01", end="2026-03-31")).html
    assert "figures are partial" in month and "may still revise" not in month


def test_sites_several_as_everywhere_sites_are_chosen(con: duckdb.DuckDBPyConnection) -> None:
    both = compare(con, sites=["alpha", "beta"], start="2026-03-02", end="2026-03-08")
    assert both.equals(compare(con, site=["alpha", "beta"], start="2026-03-02", end="2026-03-08"))
    with pytest.raises(ValidationError, match="site: and sites= both given"):
        compare(con, site="alpha", sites=["beta"])
