"""Performance charts per link, device, day and product, from frames aggregated in DuckDB
(`queries.py`); country charts are in `maps.py`, network charts in `networks.py`.

    con = commerce_reports.connect()
    top_links_chart(con, site="alpha", start="2026-10-01", end="2026-10-31", top_n=20)
    country_chart(con, site="alpha")            # world map + ranked bars
    network_epc_chart(con)                      # a dropdown (a Vega param) picks a network offline

Every chart gets a few hundred rows at most (rankings stop at `top_n`), carries tooltips on every
mark, currency and percent axes, and says its selection in the subtitle. An empty selection gives a
chart titled "No data for this selection" instead of an error; bad input raises ValidationError.
"""

from __future__ import annotations

from typing import Any

import altair as alt
import duckdb
import polars as pl

from .queries import (
    AGGREGATE_METRICS,
    Dimension,
    Metric,
    Selection,
    check_top_n,
    daily_frame,
    link_trend_frame,
    ranking_frame,
    select,
)
from .style import (
    ACCENT,
    AGGREGATE_NOTE,
    BAR,
    METRIC_LABELS,
    PALETTE,
    axis,
    chart_title,
    empty_chart,
    quantity,
    ranking_tooltips,
    tip,
)

__all__ = [
    "daily_chart",
    "device_chart",
    "link_trend_chart",
    "ranking_chart",
    "top_links_chart",
    "top_products_chart",
]


def ranking_chart(
    frame: pl.DataFrame, dimension: Dimension, metric: Metric, sel: Selection, *, title: str | None = None
) -> alt.Chart:
    """Horizontal bars of `metric` per key of a `ranking_frame`, in rank order."""
    label = METRIC_LABELS[metric][0]
    rows = frame.filter(pl.col(metric).is_not_null())
    if rows.is_empty():
        return empty_chart(sel, f"{label.lower()} per {dimension}")
    aggregates = rows["clicks"].is_not_null().any()
    notes = [AGGREGATE_NOTE] if metric in AGGREGATE_METRICS else []
    text = title or f"{label} by {dimension}, top {rows.height}"
    chart: alt.Chart = (
        alt.Chart(rows, title=chart_title(text, sel, *notes))
        .mark_bar(color=BAR)
        .encode(
            x=quantity(metric),
            y=alt.Y("key:N", sort=alt.EncodingSortField("rank"), title=None, axis=alt.Axis(labelLimit=260)),
            tooltip=ranking_tooltips(dimension, bool(aggregates)),
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
            title=chart_title(
                f"Top {frame.height} links by revenue", sel, "Colour: share of orders returned"
            ),
        )
        .mark_bar()
        .encode(
            x=quantity("revenue"),
            y=alt.Y("key:N", sort=alt.EncodingSortField("rank"), title=None, axis=alt.Axis(labelLimit=300)),
            color=alt.Color(
                "return_rate:Q",
                title="Return rate",
                scale=alt.Scale(scheme="orangered", domainMin=0),
                legend=alt.Legend(format=".0%"),
            ),
            tooltip=ranking_tooltips("link", False),
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
            title=chart_title(
                f"Revenue per {grain} of the top links", sel, "Click a legend entry to isolate it"
            ),
        )
        .mark_line(point=True)
        .encode(
            x=alt.X("period:T", title=None, axis=alt.Axis(format="%b %d")),
            y=alt.Y("revenue:Q", axis=axis("currency", "Revenue")),
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
                tip("revenue", "Revenue", "currency"),
                tip("orders", "Orders"),
            ],
        )
        .add_params(pick)
        .properties(width=520, height=260)
    )
    return chart


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
    sel = select(con, site, start, end, network=network, country=country)
    frame = ranking_frame(con, "device", sel, top_n=10)
    if frame.is_empty():
        return empty_chart(sel, "device figures")
    aggregates = bool(frame["clicks"].is_not_null().any())
    panels = []
    for metric in ("revenue", "orders", "epc", "conversion_rate"):
        label, kind = METRIC_LABELS[metric]
        panels.append(
            alt.Chart(title=label)
            .mark_bar(color=BAR)
            .encode(
                x=alt.X(f"{metric}:Q", axis=axis(kind, label)),
                y=alt.Y("key:N", sort=alt.EncodingSortField("rank"), title=None),
                tooltip=ranking_tooltips("device", aggregates),
            )
            .properties(width=160, height=alt.Step(22))
        )
    notes = [AGGREGATE_NOTE if aggregates else "EPC and conversion: no stored slice for this selection"]
    return alt.hconcat(*panels, data=frame, title=chart_title("Performance by device", sel, *notes))


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
        tip("revenue", "Revenue", "currency"),
        tip("order_value", "Order value", "currency"),
        tip("orders", "Orders"),
        tip("returns", "Returns"),
        tip("return_rate", "Return rate", "percent"),
    ]
    base = alt.Chart(frame).encode(x=alt.X("period:T", title=None), tooltip=tips)
    line = base.mark_line(color=BAR, point=alt.OverlayMarkDef(color=BAR, size=18)).encode(
        y=alt.Y("revenue:Q", axis=axis("currency", "Revenue"))
    )
    returns = (
        base.transform_filter(alt.datum.returns > 0)
        .mark_tick(color=ACCENT, thickness=2)
        .encode(y=alt.Y("revenue:Q"))
    )
    title = chart_title(f"Revenue per {grain}", sel, "Orange ticks: periods with returns")
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
