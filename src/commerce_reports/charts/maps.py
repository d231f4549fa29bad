"""Country charts: an offline world map (TopoJSON shipped with the package) and a ranked bar chart."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import altair as alt
import polars as pl

from ..money import Currency
from .geo import country_numeric_id, world_countries
from .performance import ranking_chart
from .queries import AGGREGATE_METRICS, Metric, aggregate_span, check_top_n, ranking_frame, unanswered
from .selection import Selection, scoped
from .style import (
    GREY,
    METRIC_LABELS,
    SEQUENTIAL,
    aggregate_note,
    chart_data,
    chart_title,
    empty_chart,
    money_of,
    number_format,
    tip,
    title_of,
)

if TYPE_CHECKING:
    from ..db.readonly import Connection

__all__ = ["country_bars_chart", "country_chart", "country_map_chart"]


def country_map_chart(
    con: Connection,
    selection: Selection | None = None,
    *,
    metric: Metric = "revenue",
    currency: Currency | str | None = None,
    **where: Any,
) -> alt.Chart:
    """A world choropleth of `metric` per country, drawn from the offline shapes in the package."""
    money = money_of(currency)
    sel, cover = scoped(con, selection, where)
    frame = ranking_frame(con, "country", sel, metric=metric, top_n=300)
    ids = [country_numeric_id(str(k)) if len(str(k)) == 2 else None for k in frame["key"].to_list()]
    rows = frame.with_columns(pl.Series("id", ids, dtype=pl.Int64)).filter(pl.col("id").is_not_null())
    label, kind = METRIC_LABELS[metric]
    if rows.is_empty():
        return empty_chart(sel, "country figures", cover)
    fields = ["key", "revenue", "orders", "returns", "return_rate", "clicks", "epc", "conversion_rate"]
    values = chart_data(rows.select("id", *fields)).to_dicts()
    notes = ["Grey: no revenue in this selection"]
    if metric in AGGREGATE_METRICS or rows["clicks"].is_not_null().any():
        notes.append(aggregate_note(aggregate_span(con, sel)))
    chart: alt.Chart = (
        alt.Chart(world_countries(), title=chart_title(f"{label} by country", sel, cover, *notes))
        .mark_geoshape(stroke="white", strokeWidth=0.4)
        .transform_lookup(lookup="id", from_=alt.LookupData(alt.InlineData(values=values), "id", fields))
        .encode(
            color=alt.condition(
                f"isValid(datum.{metric})",
                alt.Color(
                    f"{metric}:Q",
                    title=title_of(label, kind, money),
                    scale=alt.Scale(scheme=SEQUENTIAL),
                    legend=alt.Legend(format=number_format(kind, money)),
                ),
                alt.value(GREY),
            ),
            tooltip=[
                alt.Tooltip("properties.name:N", title="Country"),
                tip("revenue", "Revenue", money, "currency"),
                tip("orders", "Orders", money),
                tip("return_rate", "Return rate", money, "percent"),
                tip("clicks", "Clicks", money),
                tip("epc", "EPC", money, "currency", money.digits + 1),
            ],
        )
        .project(type="equalEarth")
        .properties(width=560, height=300)
    )
    return chart


def country_bars_chart(
    con: Connection,
    selection: Selection | None = None,
    *,
    metric: Metric = "revenue",
    top_n: int = 15,
    currency: Currency | str | None = None,
    **where: Any,
) -> alt.Chart:
    """The `top_n` countries by `metric`."""
    check_top_n(top_n)
    sel, cover = scoped(con, selection, where)
    frame = ranking_frame(con, "country", sel, metric=metric, top_n=top_n)
    notes = (aggregate_note(aggregate_span(con, sel)),) if metric in AGGREGATE_METRICS else ()
    why = unanswered(con, "country", sel, metric, METRIC_LABELS[metric][0], frame)
    return ranking_chart(frame, "country", metric, sel, cover, notes=notes, currency=currency, why=why)


def country_chart(
    con: Connection,
    selection: Selection | None = None,
    *,
    metric: Metric = "revenue",
    top_n: int = 15,
    currency: Currency | str | None = None,
    **where: Any,
) -> alt.VConcatChart:
    """The world map above the ranked bars of the same selection."""
    check_top_n(top_n)
    money = money_of(currency)
    return alt.vconcat(
        country_map_chart(con, selection, metric=metric, currency=money, **where),
        country_bars_chart(con, selection, metric=metric, top_n=top_n, currency=money, **where),
    )
