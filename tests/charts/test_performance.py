"""Chart helpers, checked through their Vega-Lite specs (`to_dict()`), not pixels."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import altair as alt
import duckdb
import pytest

import commerce_reports.charts as charts
from commerce_reports.charts import Selection, ranking_frame
from commerce_reports.charts.queries import DIMENSIONS
from commerce_reports.db import connect
from commerce_reports.errors import ConfigurationError, ValidationError
from tests.charts.conftest import END, START

ALPHA = Selection(site="alpha", start=START, end=END)


def units(spec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every unit spec (one with a mark) inside layers and concatenations."""
    if "mark" in spec:
        yield spec
    for key in ("layer", "hconcat", "vconcat", "concat"):
        for child in spec.get(key, []):
            yield from units(child)


def data_rows(spec: dict[str, Any]) -> dict[str, int]:
    return {name: len(values) for name, values in spec.get("datasets", {}).items()}


def params(spec: dict[str, Any]) -> list[dict[str, Any]]:
    found = [] if "mark" in spec else list(spec.get("params", []))
    for unit in units(spec):
        found += unit.get("params", [])
    return found


CHARTS: dict[str, Callable[..., alt.TopLevelMixin]] = {
    "top_links": charts.top_links_chart,
    "link_trend": charts.link_trend_chart,
    "device": charts.device_chart,
    "country_map": charts.country_map_chart,
    "country_bars": charts.country_bars_chart,
    "country": charts.country_chart,
    "network_epc": charts.network_epc_chart,
    "network_gap": charts.network_gap_chart,
    "daily": charts.daily_chart,
    "top_products": charts.top_products_chart,
}


@pytest.mark.parametrize("name", CHARTS)
def test_every_chart_has_marks_titles_tooltips_and_few_rows(
    con: duckdb.DuckDBPyConnection, name: str
) -> None:
    spec = CHARTS[name](con, ALPHA).to_dict()
    assert json.dumps(spec)  # serialisable: MaxRowsError would raise here
    assert spec.get("title") or any(u.get("title") for u in units(spec))
    assert charts.EMPTY_TITLE not in json.dumps(spec.get("title", ""))
    for unit in units(spec):
        assert "tooltip" in unit["encoding"], f"{name}: a mark without tooltips"
    assert all(rows <= 400 for rows in data_rows(spec).values())
    assert "url" not in json.dumps(spec)  # everything inline: renders offline


def _axes(spec: dict[str, Any]) -> dict[str, tuple[str, str]]:
    axes = {u["encoding"]["x"]["field"]: u["encoding"]["x"]["axis"] for u in units(spec)}
    return {field: (axis["title"], axis["format"]) for field, axis in axes.items()}


def test_axes_format_money_in_the_configured_currency_and_percent(
    con: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _axes(charts.device_chart(con, ALPHA).to_dict()) == {
        "revenue": ("Revenue (USD)", ",.2f"),  # the default currency
        "orders": ("Orders", ",.0f"),
        "epc": ("EPC, earnings per click (USD)", ",.2f"),
        "conversion_rate": ("Conversion rate", ".1%"),
    }
    monkeypatch.setenv("COMMERCE_REPORTS_CURRENCY", "jpy")  # no minor units
    axes = _axes(charts.device_chart(con, ALPHA).to_dict())
    assert axes["revenue"] == ("Revenue (JPY)", ",.0f") and axes["orders"] == ("Orders", ",.0f")
    spec = charts.top_links_chart(con, ALPHA, currency="EUR").to_dict()  # the argument wins
    assert spec["encoding"]["x"]["axis"]["title"] == "Revenue (EUR)"
    assert [p["bind"]["name"] for p in params(spec)] == ["Minimum revenue (EUR) "]
    monkeypatch.setenv("COMMERCE_REPORTS_CURRENCY", "dollars")
    with pytest.raises(ConfigurationError, match="COMMERCE_REPORTS_CURRENCY: 'DOLLARS' is not an ISO 4217"):
        charts.daily_chart(con, ALPHA)


def test_no_dollar_sign_is_written_in_the_package_or_the_notebooks() -> None:
    """Money is formatted by `money.Currency` alone: no dollar sign before an amount (`${value:,.2f}`,
    `$1`), in a d3 format (`$,.2f`) or as a label (`"$"`, `revenue $ `). (`$name` and `${name}` are
    DuckDB parameters, a `$` ending a regular expression an anchor: none is money.)"""
    root = Path(__file__).resolve().parents[2]
    sources = [*(root / "src" / "commerce_reports").rglob("*.py"), *(root / "notebooks").glob("*.ip*")]
    money = re.compile(r"\$\{[^}]*:|\$[,\d]|[\"']\$[\"']|\$ ")
    found = [
        f"{path.relative_to(root)}:{number}: {line.strip()}"
        for path in [*sources, root / "notebooks" / "build_notebooks.py"]
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if money.search(line)
    ]
    assert found == []


def test_device_chart_has_epc_and_conversion_from_the_device_slices(con: duckdb.DuckDBPyConnection) -> None:
    spec = charts.device_chart(con, ALPHA).to_dict()
    rows = next(iter(spec["datasets"].values()))
    assert {r["key"] for r in rows} <= {"Desktop", "Mobile", "Tablet", "Unknown"}
    assert all(r["epc"] is not None and r["conversion_rate"] is not None for r in rows)


def test_top_links_rows_are_bounded_by_top_n_whatever_the_lake(many_links_lake: Path) -> None:
    con = connect(many_links_lake)
    links = con.sql("SELECT count(DISTINCT link_url) FROM link_performance").fetchall()[0][0]
    assert links > 1000
    for top_n in (1, 7, 25):
        spec = charts.top_links_chart(con, site="bench", top_n=top_n).to_dict()
        assert list(data_rows(spec).values()) == [top_n]
    spec = charts.link_trend_chart(con, Selection(site="bench"), top_n=3).to_dict()
    trend = next(iter(spec["datasets"].values()))
    assert len({r["link"] for r in trend}) == 3 and len(trend) <= 3 * 20


def test_top_links_slider_is_a_vega_param_bound_to_an_input(con: duckdb.DuckDBPyConnection) -> None:
    spec = charts.top_links_chart(con, ALPHA).to_dict()
    (slider,) = [p for p in params(spec) if p["name"] == "min_revenue"]
    assert slider["bind"]["input"] == "range" and slider["value"] == 0
    assert {"filter": "(datum.revenue >= min_revenue)"} in spec["transform"]
    assert spec["encoding"]["color"]["field"] == "return_rate"


def test_network_dropdown_lists_the_charted_networks(con: duckdb.DuckDBPyConnection) -> None:
    spec = charts.network_epc_chart(con, ALPHA, top_n=5).to_dict()
    (pick,) = [p for p in params(spec) if p["name"] == "network_pick"]
    assert pick["bind"]["input"] == "select"
    rows = next(iter(spec["datasets"].values()))
    assert pick["bind"]["options"] == [None, *sorted(r["key"] for r in rows)]
    assert len(rows) == 5 and all(r["clicks"] > 0 for r in rows)


def test_the_network_scatter_names_its_largest_dots(con: duckdb.DuckDBPyConnection) -> None:
    spec = charts.network_epc_chart(con, ALPHA, top_n=12, labels=4).to_dict()
    dots, names = spec["layer"]
    assert dots["mark"]["type"] == "circle" and names["mark"]["type"] == "text"
    assert names["encoding"]["text"]["field"] == "label"
    rows = next(iter(spec["datasets"].values()))
    largest = sorted(rows, key=lambda r: -(r["aggregate_revenue"] or 0))[:4]
    assert {r["label"] for r in rows if r["label"]} == {r["key"] for r in largest}
    assert "Named: the 4 networks with the most revenue" in spec["title"]["subtitle"]


def test_country_map_joins_values_to_the_offline_shapes(con: duckdb.DuckDBPyConnection) -> None:
    spec = charts.country_map_chart(con, ALPHA).to_dict()
    assert spec["mark"]["type"] == "geoshape"
    lookup = spec["transform"][0]
    assert lookup["lookup"] == "id" and lookup["from"]["key"] == "id"
    assert spec["data"]["format"]["type"] == "topojson"
    values = spec["datasets"][lookup["from"]["data"]["name"]]
    assert {"id": 840} in [{"id": v["id"]} for v in values]  # US


def test_long_ranges_are_drawn_by_week_so_the_series_stays_short(many_links_lake: Path) -> None:
    con = connect(many_links_lake)
    spec = charts.daily_chart(con, site="bench", start="2020-01-01", end="2025-01-20").to_dict()
    rows = next(iter(spec["datasets"].values()))
    assert rows and len(rows) <= 400
    assert spec["title"]["text"] == "Revenue per week"
    assert (
        "2025-01-01 to 2025-01-20 (stored days of 2020-01-01 to 2025-01-20)" in spec["title"]["subtitle"][0]
    )


@pytest.mark.parametrize("device", [None, "Mobile"])  # from the link rollup, from transactions
def test_a_ranking_names_a_link_s_page_or_how_many_and_the_first_merchant_of_a_product(
    con: duckdb.DuckDBPyConnection, device: str | None
) -> None:
    """Not any one of them: any_value's pick changes with DuckDB's threads, and the same lake must
    give the same chart; and a link of several pages says how many, not one of them beside the
    link's whole revenue (as if that page had earned it all)."""
    sel = Selection(site="alpha", start=START, end=END, device=device)
    where = (
        "site = 'alpha' AND commission_date BETWEEN $start AND $end AND ($device IS NULL OR device = $device)"
    )
    params = {"start": START, "end": END, "device": device}
    several = "count(DISTINCT page_url)"
    pages = f"CASE WHEN {several} > 1 THEN {several} || ' pages' ELSE min(page_url) END"
    for dimension, key, detail, view in (
        ("link", "coalesce(link_url, '(no click detail)')", pages, "transactions"),
        ("product", "coalesce(product_name, '(unnamed)')", "min(merchant_group_name)", "transaction_items"),
    ):
        first = dict(
            con.sql(f"SELECT {key}, {detail} FROM {view} WHERE {where} GROUP BY 1", params=params).fetchall()
        )
        frame = ranking_frame(con, dimension, sel, top_n=40)
        assert frame.height > 5
        assert dict(zip(frame["key"], frame["detail"], strict=True)) == {k: first[k] for k in frame["key"]}


def test_an_empty_selection_is_a_chart_that_says_so(con: duckdb.DuckDBPyConnection) -> None:
    for chart in (
        charts.top_links_chart(con, ALPHA, network="No Such Network"),
        charts.daily_chart(con, site="beta", start="2020-01-01", end="2020-01-31"),
        charts.device_chart(con, start=START, end=END, network="No Such Network"),
        charts.country_map_chart(con, ALPHA, start="2020-01-01", end="2020-01-02"),
    ):
        spec = chart.to_dict()
        assert spec["title"]["text"] == charts.EMPTY_TITLE
        assert spec["mark"]["type"] == "text" and "tooltip" in spec["encoding"]


@pytest.mark.parametrize(
    ("chart", "where", "said"),
    [
        (
            "country_bars_chart",
            {"device": "Mobile"},
            "EPC, earnings per click: not aggregated by the service per country for device Mobile",
        ),
        (
            "top_products_chart",
            {},
            "EPC, earnings per click is aggregated by the service only per device, country and network",
        ),
        (
            "country_bars_chart",
            {"country": "DE"},
            "the lake keeps no report of the service for country DE (a sync keeps a country's reports "
            "when asked: `commerce-reports sync --country DE`)",
        ),
    ],
)
def test_a_ranking_no_report_answers_says_why_as_the_dashboard_does(
    con: duckdb.DuckDBPyConnection, chart: str, where: dict[str, str], said: str
) -> None:
    """A stand-alone ranking of EPC that no stored report answers said only "No EPC, earnings per
    click per country in this selection" and "Widen the dates or clear a filter"."""
    spec = getattr(charts, chart)(con, site="alpha", start=START, end=END, metric="epc", **where).to_dict()
    assert spec["title"]["text"] == charts.EMPTY_TITLE
    assert any(said in line for line in spec["title"]["subtitle"]), spec["title"]["subtitle"]


@pytest.mark.parametrize(
    ("kwargs", "parameter"),
    [
        ({"start": "2026-02-30"}, "start"),
        ({"start": "yesterday"}, "start"),
        ({"start": "2026-03-05", "end": "2026-03-01"}, "start"),
        ({"site": "gamma"}, "site"),
        ({"top_n": 0}, "top_n"),
        ({"device": "Phone"}, "device"),
        ({"country": "USA"}, "country"),
    ],
)
def test_bad_input_is_a_validation_error(
    con: duckdb.DuckDBPyConnection, kwargs: dict[str, Any], parameter: str
) -> None:
    with pytest.raises(ValidationError) as raised:
        charts.top_links_chart(con, **kwargs)
    assert raised.value.parameter == parameter


@pytest.mark.parametrize("dimension", DIMENSIONS)
def test_rankings_are_sorted_and_bounded(con: duckdb.DuckDBPyConnection, dimension: Any) -> None:
    frame = ranking_frame(con, dimension, ALPHA, top_n=3)
    assert 1 <= frame.height <= 3
    assert frame["revenue"].to_list() == sorted(frame["revenue"].to_list(), reverse=True)
    assert frame["rank"].to_list() == list(range(1, frame.height + 1))


def test_filters_narrow_the_transactions(con: duckdb.DuckDBPyConnection) -> None:
    everything = ranking_frame(con, "device", ALPHA, top_n=10)
    mobile_only = ranking_frame(
        con, "device", Selection(site="alpha", start=START, end=END, device="mbl"), top_n=10
    )
    assert mobile_only["key"].to_list() == ["Mobile"]
    assert mobile_only["revenue"][0] == pytest.approx(
        everything.filter(everything["key"] == "Mobile")["revenue"][0]
    )
