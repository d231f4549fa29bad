"""The charts and the dashboard on a lake synced in the published dialect: every helper the notebooks
use draws its marks from the same numbers as on the contract lake of the same sandbox (both dialects
serve one world), and the columns they group by are filled. The two lakes are the notebooks' (two
sites, 30 days with returns and adjustments, device and country slices), synced once per worker."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import altair as alt
import duckdb
import pytest
from polars.testing import assert_frame_equal

import commerce_reports.charts as charts
from commerce_reports.charts import EMPTY_TITLE, Selection
from commerce_reports.charts.queries import DIMENSIONS
from commerce_reports.db import connect
from commerce_reports.widgets import DashboardState, render_state
from tests.charts.specs import figures
from tests.notebooks.conftest import notebook_lake, published_notebook_lake

__all__ = ["notebook_lake", "published_notebook_lake"]

pytestmark = pytest.mark.xdist_group("published-lake")  # the tests that share the published lake

Chart = Callable[[duckdb.DuckDBPyConnection, Selection], alt.TopLevelMixin]

# What the four notebooks draw (with their arguments), and the dashboard by each dimension.
NOTEBOOK_CHARTS: dict[str, Chart] = {
    "daily": charts.daily_chart,
    "top_links": lambda con, sel: charts.top_links_chart(con, sel, top_n=15),
    "link_trend": lambda con, sel: charts.link_trend_chart(con, sel, top_n=5),
    "device": charts.device_chart,
    "country": lambda con, sel: charts.country_chart(con, sel, top_n=12),  # the map above the bars
    "network_epc": charts.network_epc_chart,
    "network_gap": charts.network_gap_chart,
    "top_products": lambda con, sel: charts.top_products_chart(con, sel, top_n=15),
    **{
        f"dashboard_{dimension}": lambda con, sel, d=dimension: (
            render_state(con, DashboardState(sel, d)).chart
        )
        for dimension in DIMENSIONS
    },
}


@pytest.fixture(scope="module")
def lakes(
    notebook_lake: Path, published_notebook_lake: Path
) -> Iterator[dict[str, duckdb.DuckDBPyConnection]]:
    connections = {"contract": connect(notebook_lake), "published": connect(published_notebook_lake)}
    yield connections
    for con in connections.values():
        con.close()


def _units(spec: dict[str, Any], data: dict[str, Any] | None = None) -> Iterator[tuple[dict[str, Any], Any]]:
    """Every unit spec (one with a mark) with the data it draws from (its own or inherited)."""
    data = spec.get("data", data)
    if "mark" in spec:
        yield spec, data
    for key in ("layer", "hconcat", "vconcat", "concat"):
        for child in spec.get(key, []):
            yield from _units(child, data)


@pytest.mark.parametrize("name", NOTEBOOK_CHARTS)
def test_every_notebook_chart_draws_the_same_numbers_on_the_published_lake(
    lakes: dict[str, duckdb.DuckDBPyConnection], name: str
) -> None:
    sel = Selection()  # both sites, every day the lake holds
    specs = {dialect: NOTEBOOK_CHARTS[name](con, sel).to_dict() for dialect, con in lakes.items()}
    published = specs["published"]
    assert EMPTY_TITLE not in str(published)
    drawn = list(_units(published))
    assert drawn
    for unit, data in drawn:
        assert data is not None and published["datasets"][data["name"]], f"{name}: {unit['mark']} has no data"
    assert figures(published) and figures(published) == figures(specs["contract"])


def test_the_filters_offer_the_same_values_on_the_published_lake(
    lakes: dict[str, duckdb.DuckDBPyConnection],
) -> None:
    options = {dialect: charts.filter_options(con) for dialect, con in lakes.items()}
    assert options["published"] == options["contract"]
    assert {"Desktop", "Mobile", "Tablet"} <= set(options["published"]["devices"])
    assert {"US", "GB"} <= set(options["published"]["countries"]) and options["published"]["networks"]


def test_the_columns_the_charts_group_by_are_filled_on_the_published_lake(
    lakes: dict[str, duckdb.DuckDBPyConnection],
) -> None:
    ((total, *filled),) = (
        lakes["published"]
        .execute(
            "SELECT count(*), count(*) FILTER (WHERE device <> 'Unknown'), count(country), count(network), "
            "count(*) FILTER (WHERE partner_product <> 'Unknown'), count(link_url), count(click_date) "
            "FROM transactions"
        )
        .fetchall()
    )
    assert total > 0 and all(count > total * 0.9 for count in filled), (total, filled)


@pytest.mark.parametrize(
    ("view", "order", "apart"),
    [
        # revenueId is a string in the contract, a number in the published file; only the
        # published file has affProductSubType
        ("transactions", "site, commission_id", "EXCLUDE (revenue_id, partner_product_sub_type)"),
        ("networks", "site, window_start, slice, network_name", ""),
        ("merchandise", "site, window_start, slice, product_name, merchant_group_id", ""),
    ],
)
def test_the_views_hold_the_same_rows_on_both_lakes(
    lakes: dict[str, duckdb.DuckDBPyConnection], view: str, order: str, apart: str
) -> None:
    frames = {
        dialect: con.sql(f"SELECT * {apart} FROM {view} ORDER BY {order}").pl()
        for dialect, con in lakes.items()
    }
    assert frames["published"].height > 0
    assert_frame_equal(frames["published"], frames["contract"])
