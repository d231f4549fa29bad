"""The performance views' figures against the sandbox's ground truth, on a lake synced from it."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal

import duckdb
import polars as pl
import pytest

from tests.db.conftest import MONTHS, NOW, SITES, SyncedLake


def _month_end(month: date) -> date:
    return min((month + timedelta(days=32)).replace(day=1) - timedelta(days=1), NOW.date())


def _money(value: object) -> object:
    """A figure as an exact amount: a view's DECIMAL as it is, the ground truth's float (whole
    cents) as the amount its text says; counts as they are."""
    return Decimal(repr(round(value, 2))) if isinstance(value, float) else value


def _by(frame: pl.DataFrame, key: str, value: str) -> dict[object, object]:
    return {k: _money(v) for k, v in frame.select(key, value).iter_rows()}


@pytest.mark.parametrize("site", list(SITES))
def test_network_revenue_matches_ground_truth_from_both_sources(
    synced: SyncedLake, synced_con: duckdb.DuckDBPyConnection, site: str
) -> None:
    view = synced_con.sql(f"SELECT * FROM network_performance WHERE site = '{site}'").pl()
    for month in MONTHS:
        rows = view.filter(pl.col("window_start") == month)
        by_commission = synced.sandbox.ground_truth(site, month, _month_end(month), group_by=["network"])
        by_click = synced.sandbox.ground_truth(
            site, month, _month_end(month), by="click_date", group_by=["network"]
        )
        earning = rows.filter(pl.col("transactions") > 0)  # a network may have clicks and no transactions
        assert _by(earning, "network", "revenue") == _by(by_commission, "network", "revenue")
        assert _by(rows.filter(pl.col("actions") > 0), "network", "aggregate_revenue") == _by(
            by_click, "network", "revenue"
        )
        stored = rows.drop_nulls("aggregate_revenue")
        gap = stored["aggregate_revenue"] - stored["revenue"]
        assert stored.height > 0 and stored["revenue_gap"].to_list() == gap.to_list()  # exact


def test_device_and_country_aggregates_match_ground_truth(
    synced: SyncedLake, synced_con: duckdb.DuckDBPyConnection
) -> None:
    """Clicks exist only in the aggregates; their revenue per device/country is the truth by click date."""
    month = MONTHS[1]
    devices = synced_con.sql(f"SELECT * FROM device_performance WHERE window_start = '{month}'").pl()
    countries = synced_con.sql(f"SELECT * FROM country_performance WHERE window_start = '{month}'").pl()
    for site in SITES:
        truth = synced.sandbox.ground_truth(
            site, month, _month_end(month), by="click_date", group_by=["device"]
        )
        mine = devices.filter(pl.col("site") == site, pl.col("actions") > 0)
        assert _by(mine, "device", "aggregate_revenue") == _by(truth, "device", "revenue")
        assert mine["clicks"].min() > 0  # type: ignore[operator]
        epc = [  # revenue per click, half away from zero to 4 places
            (revenue / clicks).quantize(Decimal("0.0001"), ROUND_HALF_UP)
            for revenue, clicks in mine.select("aggregate_revenue", "clicks").iter_rows()
        ]
        assert mine["epc"].to_list() == epc
        truth = synced.sandbox.ground_truth(
            site, month, _month_end(month), by="click_date", group_by=["country"]
        )
        stored = countries.filter(pl.col("site") == site, pl.col("actions") > 0)
        expected = {k.upper(): v for k, v in _by(truth, "country", "revenue").items() if k in ("us", "gb")}
        assert _by(stored, "country", "aggregate_revenue") == expected


@pytest.mark.parametrize("view, key", [("device_performance", "device"), ("country_performance", "country")])
def test_transaction_figures_per_device_and_country_add_up_to_ground_truth(
    synced: SyncedLake, synced_con: duckdb.DuckDBPyConnection, view: str, key: str
) -> None:
    """A transaction served without click detail has no device or country (Unknown / NULL): the
    split differs from the sandbox's, which knows the click, but every total and count agrees."""
    rows = synced_con.sql(f"SELECT * FROM {view}").pl()
    split = synced_con.sql(
        f"SELECT site, date_trunc('month', commission_date)::DATE AS m, "
        f"{'upper(country)' if key == 'country' else 'device'} AS k, sum(publisher_net_revenue) AS r "
        "FROM transactions GROUP BY ALL"
    ).pl()
    for site in SITES:
        for month in MONTHS:
            truth = synced.sandbox.ground_truth(site, month, _month_end(month))
            mine = rows.filter(pl.col("site") == site, pl.col("window_start") == month)
            assert mine["revenue"].sum() == _money(truth["revenue"][0])
            assert mine["transactions"].sum() == truth["transactions"][0]
            assert mine["returns"].sum() == truth["returns"][0]
            expected = split.filter(pl.col("site") == site, pl.col("m") == month)
            assert _by(mine, key, "revenue") == _by(expected, "k", "r")


@pytest.mark.parametrize("site", list(SITES))
def test_daily_figures_and_return_counts_match_ground_truth(
    synced: SyncedLake, synced_con: duckdb.DuckDBPyConnection, site: str
) -> None:
    start, end = date(2026, 1, 15), date(2026, 3, 5)
    truth = synced.sandbox.ground_truth(site, start, end, group_by=["day"])
    daily = synced_con.sql(
        f"SELECT * FROM daily_performance WHERE site = '{site}' AND day BETWEEN '{start}' AND '{end}'"
    ).pl()
    links = synced_con.sql(
        f"SELECT day, sum(returns) AS returns, sum(revenue) AS revenue FROM link_performance "
        f"WHERE site = '{site}' AND day BETWEEN '{start}' AND '{end}' GROUP BY day"
    ).pl()
    joined = truth.join(daily, on="day", suffix="_view")
    assert joined.height == truth.height
    assert truth["returns"].sum() > 0
    for column in ("returns", "transactions"):
        assert joined[column].to_list() == joined[f"{column}_view"].to_list()
    assert [_money(v) for v in joined["revenue"]] == joined["revenue_view"].to_list()
    assert _by(links, "day", "returns") == _by(truth, "day", "returns")


def test_merchandise_items_split_transaction_revenue(synced_con: duckdb.DuckDBPyConnection) -> None:
    items = synced_con.sql(
        "SELECT site, window_start, sum(revenue) AS r FROM merchandise_performance GROUP BY ALL"
    ).pl()
    whole = synced_con.sql(
        "SELECT site, date_trunc('month', commission_date)::DATE AS window_start, "
        "sum(publisher_net_revenue) AS r FROM transactions WHERE len(products) > 0 GROUP BY ALL"
    ).pl()
    stored = synced_con.execute("SELECT count(*) FROM merchandise_performance WHERE actions > 0").fetchone()
    assert items.sort("site", "window_start")["r"].round(2).to_list() == (
        whole.sort("site", "window_start")["r"].round(2).to_list()
    )
    assert stored is not None and stored[0] > 0


def test_site_performance_totals_match_ground_truth(
    synced: SyncedLake, synced_con: duckdb.DuckDBPyConnection
) -> None:
    rows = synced_con.sql("SELECT * FROM site_performance").pl()
    for site in SITES:
        for month in MONTHS:
            row = rows.filter(pl.col("site") == site, pl.col("window_start") == month)
            truth = synced.sandbox.ground_truth(site, month, _month_end(month))
            assert row["revenue"][0] == _money(truth["revenue"][0])
            clicks_truth = synced.sandbox.ground_truth(site, month, _month_end(month), by="click_date")
            assert row["aggregate_revenue"][0] == _money(clicks_truth["revenue"][0])
            assert row["clicks"][0] > row["actions"][0] > 0
