"""Performance charts: Altair charts of the lake, from frames aggregated in DuckDB (`queries.py`).

    con = commerce_reports.connect()
    top_links_chart(con, site="alpha", start="2026-10-01", end="2026-10-31", top_n=20)
    country_chart(con, site="alpha")            # world map + ranked bars
    network_epc_chart(con)                      # a dropdown (a Vega param) picks a network offline

Every chart gets a few hundred rows at most (rankings stop at `top_n`), carries tooltips on every
mark, currency and percent axes, and says its selection in the subtitle. An empty selection gives a
chart titled "No data for this selection" instead of an error; bad input raises ValidationError.
"""

from __future__ import annotations

from typing import Any, Final

import altair as alt
import duckdb
import polars as pl

from .geo import country_numeric_id, world_countries
from .queries import (
    AGGREGATE_METRICS,
    Dimension,
    Metric,
    Selection,
    check_top_n,
    daily_frame,
    link_trend_frame,
    network_gap_frame,
    ranking_frame,
    select,
)

__all__ = [
    "EMPTY_TITLE",
    "METRIC_LABELS",
    "PALETTE",
    "country_bars_chart",
    "country_chart",
    "country_map_chart",
    "daily_chart",
    "device_chart",
    "empty_chart",
    "link_trend_chart",
    "network_epc_chart",
    "network_gap_chart",
    "ranking_chart",
    "top_links_chart",
    "top_products_chart",
]

EMPTY_TITLE = "No data for this selection"
# Okabe & Ito's colour-blind-safe palette (the house theme uses the same order).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
_BAR, _ACCENT, _GREY = PALETTE[0], PALETTE[5], "#dcdcdc"
_SEQUENTIAL: Final = "blues"

METRIC_LABELS: dict[str, tuple[str, str]] = {
    "revenue": ("Revenue", "currency"),
    "orders": ("Orders", "count"),
    "order_value": ("Order value", "currency"),
    "returns": ("Returns", "count"),
    "return_rate": ("Return rate", "percent"),
    "clicks": ("Clicks", "count"),
    "epc": ("EPC (earnings per click)", "currency"),
    "conversion_rate": ("Conversion rate", "percent"),
}
_FORMATS = {"currency": "$,.2f", "percent": ".1%", "count": ",.0f"}
_DIMENSION_LABELS = {
    "link": "Link",
    "device": "Device",
    "country": "Country",
    "network": "Network",
    "product": "Product",
}
_AGGREGATE_NOTE = "Clicks, EPC, conversion: month windows overlapping the range, by click date"


def _axis(kind: str, title: str) -> alt.Axis:
    return alt.Axis(title=title, format=_FORMATS[kind])


def _quantity(metric: str, **kwargs: Any) -> alt.X:
    label, kind = METRIC_LABELS[metric]
    return alt.X(f"{metric}:Q", axis=_axis(kind, label), **kwargs)


def _tip(field: str, title: str, kind: str = "count") -> alt.Tooltip:
    return alt.Tooltip(f"{field}:Q", title=title, format=_FORMATS[kind])


def _ranking_tooltips(dimension: str, aggregates: bool) -> list[alt.Tooltip]:
    tips = [alt.Tooltip("key:N", title=_DIMENSION_LABELS.get(dimension, dimension.title()))]
    if dimension in ("link", "product"):
        tips.append(alt.Tooltip("detail:N", title="Page" if dimension == "link" else "Merchant"))
    tips += [
        _tip("revenue", "Revenue", "currency"),
        _tip("order_value", "Order value", "currency"),
        _tip("orders", "Orders"),
        _tip("returns", "Returns"),
        _tip("return_rate", "Return rate", "percent"),
    ]
    if aggregates:
        tips += [
            _tip("clicks", "Clicks"),
            alt.Tooltip("epc:Q", title="EPC", format="$,.3f"),
            alt.Tooltip("conversion_rate:Q", title="Conversion rate", format=".2%"),
        ]
    return tips


def _title(text: str, sel: Selection, *notes: str) -> alt.TitleParams:
    return alt.TitleParams(text, subtitle=[sel.describe(), *notes], anchor="start")


def empty_chart(sel: Selection, what: str = "", *, width: int = 420) -> alt.Chart:
    """A chart that says there is nothing to draw, and for which selection."""
    message = f"No {what} in this selection" if what else "Nothing to show"
    frame = pl.DataFrame({"message": [message], "hint": ["Widen the dates or clear a filter"]})
    chart: alt.Chart = (
        alt.Chart(frame, title=_title(EMPTY_TITLE, sel))
        .mark_text(fontSize=14, color="#555555")
        .encode(text="message:N", tooltip=[alt.Tooltip("hint:N", title="Try")])
        .properties(width=width, height=80)
    )
    return chart


def ranking_chart(
    frame: pl.DataFrame, dimension: Dimension, metric: Metric, sel: Selection, *, title: str | None = None
) -> alt.Chart:
    """Horizontal bars of `metric` per key of a `ranking_frame`, in rank order."""
    label = METRIC_LABELS[metric][0]
    rows = frame.filter(pl.col(metric).is_not_null())
    if rows.is_empty():
        return empty_chart(sel, f"{label.lower()} per {dimension}")
    aggregates = rows["clicks"].is_not_null().any()
    notes = [_AGGREGATE_NOTE] if metric in AGGREGATE_METRICS else []
    text = title or f"{label} by {dimension}, top {rows.height}"
    chart: alt.Chart = (
        alt.Chart(rows, title=_title(text, sel, *notes))
        .mark_bar(color=_BAR)
        .encode(
            x=_quantity(metric),
            y=alt.Y("key:N", sort=alt.EncodingSortField("rank"), title=None, axis=alt.Axis(labelLimit=260)),
            tooltip=_ranking_tooltips(dimension, bool(aggregates)),
        )
        .properties(width=420, height=alt.Step(18))
    )
    return chart


def top_links_chart(
    con: duckdb.DuckDBPyConnection,
    site: str | None = None,
    start: Any = None,
    end: Any = None,
    *,
    network: str | None = None,
    device: str | None = None,
    country: str | None = None,
    top_n: int = 15,
) -> alt.Chart:
    """The `top_n` links by revenue, coloured by return rate; a slider (a Vega param bound to an
    input, so it works in exported HTML) hides links under a minimum revenue."""
    check_top_n(top_n)
    sel = select(con, site, start, end, network=network, device=device, country=country)
    frame = ranking_frame(con, "link", sel, top_n=top_n)
    if frame.is_empty():
        return empty_chart(sel, "link revenue")
    highest = max(float(frame["revenue"].max() or 0.0), 1.0)  # type: ignore[arg-type]
    minimum = alt.param(
        name="min_revenue",
        value=0,
        bind=alt.binding_range(
            min=0, max=round(highest), step=max(round(highest / 100), 1), name="Minimum revenue $ "
        ),
    )
    chart: alt.Chart = (
        alt.Chart(
            frame,
            title=_title(f"Top {frame.height} links by revenue", sel, "Colour: share of orders returned"),
        )
        .mark_bar()
        .encode(
            x=_quantity("revenue"),
            y=alt.Y("key:N", sort=alt.EncodingSortField("rank"), title=None, axis=alt.Axis(labelLimit=300)),
            color=alt.Color(
                "return_rate:Q",
                title="Return rate",
                scale=alt.Scale(scheme="orangered", domainMin=0),
                legend=alt.Legend(format=".0%"),
            ),
            tooltip=_ranking_tooltips("link", False),
        )
        .add_params(minimum)
        .transform_filter(alt.datum.revenue >= minimum)
        .properties(width=420, height=alt.Step(18))
    )
    return chart


def link_trend_chart(
    con: duckdb.DuckDBPyConnection,
    site: str | None = None,
    start: Any = None,
    end: Any = None,
    *,
    links: list[str] | None = None,
    network: str | None = None,
    device: str | None = None,
    country: str | None = None,
    top_n: int = 5,
) -> alt.Chart:
    """Revenue over time for `links` (default: the `top_n` by revenue, at most 12); click the
    legend to pick one. Long ranges show weeks or months so the series stays short."""
    sel = select(con, site, start, end, network=network, device=device, country=country)
    frame = link_trend_frame(con, sel, links, top_n=top_n)
    if frame.is_empty():
        return empty_chart(sel, "link revenue")
    grain = str(frame["grain"][0])
    pick = alt.selection_point(name="link_pick", fields=["link"], bind="legend")
    chart: alt.Chart = (
        alt.Chart(
            frame,
            title=_title(f"Revenue per {grain} of the top links", sel, "Click a legend entry to isolate it"),
        )
        .mark_line(point=True)
        .encode(
            x=alt.X("period:T", title=None, axis=alt.Axis(format="%b %d")),
            y=alt.Y("revenue:Q", axis=_axis("currency", "Revenue")),
            color=alt.Color(
                "link:N",
                title="Link",
                scale=alt.Scale(range=list(PALETTE)),
                legend=alt.Legend(labelLimit=260, orient="bottom", columns=1),
            ),
            opacity=alt.condition(pick, alt.value(1.0), alt.value(0.15)),
            tooltip=[
                alt.Tooltip("link:N", title="Link"),
                alt.Tooltip("period:T", title=grain.title(), format="%Y-%m-%d"),
                _tip("revenue", "Revenue", "currency"),
                _tip("orders", "Orders"),
            ],
        )
        .add_params(pick)
        .properties(width=520, height=260)
    )
    return chart


def _select(
    con: duckdb.DuckDBPyConnection, site: str | None, start: Any, end: Any, **filters: str | None
) -> Selection:
    return select(con, site, start, end, **filters)


def device_chart(
    con: duckdb.DuckDBPyConnection,
    site: str | None = None,
    start: Any = None,
    end: Any = None,
    *,
    network: str | None = None,
    country: str | None = None,
) -> alt.HConcatChart | alt.Chart:
    """Revenue, orders, EPC and conversion rate per device, side by side (one row per device)."""
    sel = _select(con, site, start, end, network=network, country=country)
    frame = ranking_frame(con, "device", sel, top_n=10)
    if frame.is_empty():
        return empty_chart(sel, "device figures")
    aggregates = bool(frame["clicks"].is_not_null().any())
    panels = []
    for metric in ("revenue", "orders", "epc", "conversion_rate"):
        label, kind = METRIC_LABELS[metric]
        panels.append(
            alt.Chart(title=label)
            .mark_bar(color=_BAR)
            .encode(
                x=alt.X(f"{metric}:Q", axis=_axis(kind, label)),
                y=alt.Y("key:N", sort=alt.EncodingSortField("rank"), title=None),
                tooltip=_ranking_tooltips("device", aggregates),
            )
            .properties(width=160, height=alt.Step(22))
        )
    notes = [_AGGREGATE_NOTE if aggregates else "EPC and conversion: no stored slice for this selection"]
    return alt.hconcat(*panels, data=frame, title=_title("Performance by device", sel, *notes))


def country_map_chart(
    con: duckdb.DuckDBPyConnection,
    site: str | None = None,
    start: Any = None,
    end: Any = None,
    *,
    network: str | None = None,
    device: str | None = None,
    metric: Metric = "revenue",
) -> alt.Chart:
    """A world choropleth of `metric` per country, drawn from the offline shapes in the package."""
    sel = _select(con, site, start, end, network=network, device=device)
    frame = ranking_frame(con, "country", sel, metric=metric, top_n=300)
    ids = [country_numeric_id(str(k)) if len(str(k)) == 2 else None for k in frame["key"].to_list()]
    rows = frame.with_columns(pl.Series("id", ids, dtype=pl.Int64)).filter(pl.col("id").is_not_null())
    label, kind = METRIC_LABELS[metric]
    if rows.is_empty():
        return empty_chart(sel, "country figures")
    fields = ["key", "revenue", "orders", "returns", "return_rate", "clicks", "epc", "conversion_rate"]
    values = rows.select("id", *fields).to_dicts()
    chart: alt.Chart = (
        alt.Chart(
            world_countries(), title=_title(f"{label} by country", sel, "Grey: no revenue in this selection")
        )
        .mark_geoshape(stroke="white", strokeWidth=0.4)
        .transform_lookup(lookup="id", from_=alt.LookupData(alt.InlineData(values=values), "id", fields))
        .encode(
            color=alt.condition(
                f"isValid(datum.{metric})",
                alt.Color(
                    f"{metric}:Q",
                    title=label,
                    scale=alt.Scale(scheme=_SEQUENTIAL),
                    legend=alt.Legend(format=_FORMATS[kind]),
                ),
                alt.value(_GREY),
            ),
            tooltip=[
                alt.Tooltip("properties.name:N", title="Country"),
                _tip("revenue", "Revenue", "currency"),
                _tip("orders", "Orders"),
                _tip("return_rate", "Return rate", "percent"),
                _tip("clicks", "Clicks"),
                alt.Tooltip("epc:Q", title="EPC", format="$,.3f"),
            ],
        )
        .project(type="equalEarth")
        .properties(width=560, height=300)
    )
    return chart


def country_bars_chart(
    con: duckdb.DuckDBPyConnection,
    site: str | None = None,
    start: Any = None,
    end: Any = None,
    *,
    network: str | None = None,
    device: str | None = None,
    metric: Metric = "revenue",
    top_n: int = 15,
) -> alt.Chart:
    """The `top_n` countries by `metric`."""
    check_top_n(top_n)
    sel = _select(con, site, start, end, network=network, device=device)
    return ranking_chart(
        ranking_frame(con, "country", sel, metric=metric, top_n=top_n), "country", metric, sel
    )


def country_chart(
    con: duckdb.DuckDBPyConnection,
    site: str | None = None,
    start: Any = None,
    end: Any = None,
    *,
    network: str | None = None,
    device: str | None = None,
    metric: Metric = "revenue",
    top_n: int = 15,
) -> alt.VConcatChart:
    """The world map above the ranked bars of the same selection."""
    args = {"network": network, "device": device, "metric": metric}
    return alt.vconcat(
        country_map_chart(con, site, start, end, **args),  # type: ignore[arg-type]
        country_bars_chart(con, site, start, end, top_n=top_n, **args),  # type: ignore[arg-type]
    )


def network_epc_chart(
    con: duckdb.DuckDBPyConnection,
    site: str | None = None,
    start: Any = None,
    end: Any = None,
    *,
    device: str | None = None,
    country: str | None = None,
    top_n: int = 20,
) -> alt.Chart:
    """EPC against clicks per network (bubble size: aggregate revenue) for the `top_n` networks by
    clicks; a dropdown (a Vega param bound to a select input, kept in exported HTML) highlights one."""
    check_top_n(top_n)
    sel = _select(con, site, start, end, device=device, country=country)
    frame = ranking_frame(con, "network", sel, metric="clicks", top_n=top_n)
    if frame.is_empty():
        return empty_chart(sel, "network clicks (sync the networks report)")
    names = sorted(str(k) for k in frame["key"].to_list())
    pick = alt.param(
        name="network_pick",
        value=None,
        bind=alt.binding_select(options=[None, *names], labels=["All networks", *names], name="Network "),
    )
    chosen = "network_pick == null || datum.key == network_pick"
    chart: alt.Chart = (
        alt.Chart(frame, title=_title("EPC against clicks by network", sel, _AGGREGATE_NOTE))
        .mark_circle(stroke="white", strokeWidth=0.5)
        .encode(
            x=alt.X("clicks:Q", axis=_axis("count", "Clicks"), scale=alt.Scale(type="log")),
            y=alt.Y("epc:Q", axis=alt.Axis(title="EPC (earnings per click)", format="$,.2f")),
            size=alt.Size(
                "aggregate_revenue:Q", title="Revenue (aggregate)", legend=alt.Legend(format="$,.0f")
            ),
            color=alt.condition(chosen, alt.value(_BAR), alt.value(_GREY)),
            opacity=alt.condition(chosen, alt.value(0.9), alt.value(0.3)),
            tooltip=_ranking_tooltips("network", True),
        )
        .add_params(pick)
        .properties(width=460, height=320)
    )
    return chart


def network_gap_chart(
    con: duckdb.DuckDBPyConnection,
    site: str | None = None,
    start: Any = None,
    end: Any = None,
    *,
    network: str | None = None,
    top_n: int = 20,
) -> alt.Chart:
    """Aggregate revenue minus transaction revenue per network over the calendar months touching
    the range (largest gaps first): positive when the service's totals exceed the stored ledger."""
    sel = _select(con, site, start, end, network=network)
    frame = network_gap_frame(con, sel, top_n=top_n)
    if frame.is_empty():
        return empty_chart(sel, "network aggregates")
    first, last = frame["first_month"].min(), frame["last_month"].max()
    months = f"Months {first!s} to {last!s}; aggregate by click date"
    chart: alt.Chart = (
        alt.Chart(frame, title=_title("Revenue gap: aggregate minus transactions", sel, months))
        .mark_bar()
        .encode(
            x=alt.X("revenue_gap:Q", axis=_axis("currency", "Revenue gap")),
            y=alt.Y("key:N", sort="-x", title=None, axis=alt.Axis(labelLimit=200)),
            color=alt.condition(alt.datum.revenue_gap >= 0, alt.value(_BAR), alt.value(_ACCENT)),
            tooltip=[
                alt.Tooltip("key:N", title="Network"),
                _tip("aggregate_revenue", "Aggregate revenue", "currency"),
                _tip("revenue", "Transaction revenue", "currency"),
                _tip("revenue_gap", "Gap", "currency"),
                _tip("gap_share", "Gap share of aggregate", "percent"),
            ],
        )
        .properties(width=420, height=alt.Step(18))
    )
    return chart


def daily_chart(
    con: duckdb.DuckDBPyConnection,
    site: str | None = None,
    start: Any = None,
    end: Any = None,
    *,
    network: str | None = None,
    device: str | None = None,
    country: str | None = None,
) -> alt.LayerChart | alt.Chart:
    """Revenue per day (weeks or months on long ranges) with returns marked."""
    sel = select(con, site, start, end, network=network, device=device, country=country)
    frame = daily_frame(con, sel)
    if frame.is_empty():
        return empty_chart(sel, "revenue")
    grain = str(frame["grain"][0])
    tips = [
        alt.Tooltip("period:T", title=grain.title(), format="%a %Y-%m-%d"),
        _tip("revenue", "Revenue", "currency"),
        _tip("order_value", "Order value", "currency"),
        _tip("orders", "Orders"),
        _tip("returns", "Returns"),
        _tip("return_rate", "Return rate", "percent"),
    ]
    base = alt.Chart(frame).encode(x=alt.X("period:T", title=None), tooltip=tips)
    line = base.mark_line(color=_BAR, point=alt.OverlayMarkDef(color=_BAR, size=18)).encode(
        y=alt.Y("revenue:Q", axis=_axis("currency", "Revenue"))
    )
    returns = (
        base.transform_filter(alt.datum.returns > 0)
        .mark_tick(color=_ACCENT, thickness=2)
        .encode(y=alt.Y("revenue:Q"))
    )
    title = _title(f"Revenue per {grain}", sel, "Orange ticks: periods with returns")
    return alt.LayerChart(layer=[line, returns], title=title, width=560, height=240)


def top_products_chart(
    con: duckdb.DuckDBPyConnection,
    site: str | None = None,
    start: Any = None,
    end: Any = None,
    *,
    network: str | None = None,
    device: str | None = None,
    country: str | None = None,
    metric: Metric = "revenue",
    top_n: int = 15,
) -> alt.Chart:
    """The `top_n` products by `metric` (revenue split by each item's share of the order)."""
    check_top_n(top_n)
    sel = select(con, site, start, end, network=network, device=device, country=country)
    frame = ranking_frame(con, "product", sel, metric=metric, top_n=top_n)
    return ranking_chart(
        frame,
        "product",
        metric,
        sel,
        title=f"Top {frame.height} products by {METRIC_LABELS[metric][0].lower()}",
    )
