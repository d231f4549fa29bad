"""Country charts: an offline world map (TopoJSON shipped with the package) and a ranked bar chart."""

from __future__ import annotations

from typing import Any

import altair as alt
import duckdb
import polars as pl

from .geo import country_numeric_id, world_countries
from .performance import ranking_chart
from .queries import Metric, check_top_n, ranking_frame, select
from .style import FORMATS, GREY, METRIC_LABELS, SEQUENTIAL, chart_title, empty_chart, tip

__all__ = ["country_bars_chart", "country_chart", "country_map_chart"]


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
    sel = select(con, site, start, end, network=network, device=device)
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
            world_countries(),
            title=chart_title(f"{label} by country", sel, "Grey: no revenue in this selection"),
        )
        .mark_geoshape(stroke="white", strokeWidth=0.4)
        .transform_lookup(lookup="id", from_=alt.LookupData(alt.InlineData(values=values), "id", fields))
        .encode(
            color=alt.condition(
                f"isValid(datum.{metric})",
                alt.Color(
                    f"{metric}:Q",
                    title=label,
                    scale=alt.Scale(scheme=SEQUENTIAL),
                    legend=alt.Legend(format=FORMATS[kind]),
                ),
                alt.value(GREY),
            ),
            tooltip=[
                alt.Tooltip("properties.name:N", title="Country"),
                tip("revenue", "Revenue", "currency"),
                tip("orders", "Orders"),
                tip("return_rate", "Return rate", "percent"),
                tip("clicks", "Clicks"),
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
    sel = select(con, site, start, end, network=network, device=device)
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
