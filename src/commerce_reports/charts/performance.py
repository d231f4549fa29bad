"""Performance charts per link, device, day and product, from frames aggregated in DuckDB
(`queries.py`, `series.py`); country charts are in `maps.py`, network charts in `networks.py`.

    con = commerce_reports.connect()
    top_links_chart(con, Selection(site="alpha", start="2026-10-01", end="2026-10-31"), top_n=20)
    top_links_chart(con, site="alpha", start="2026-10-01")    # the same fields as keywords
    daily_chart(con)                                          # every site, every stored day

Every chart gets a few hundred rows at most (rankings stop at `top_n`), carries tooltips on every
mark, currency and percent axes, and says in its subtitle which days it really covers (the stored
ones, which may be fewer than those asked for, and whether the last is still partial). An empty
selection gives a chart titled "No data for this selection" instead of an error; bad input raises
ValidationError.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

import altair as alt
import polars as pl

from ..errors import ValidationError
from ..money import Currency
from .dimensions import Dimension
from .queries import (
    AGGREGATE_METRICS,
    METRICS,
    Metric,
    aggregate_span,
    check_top_n,
    ranking_frame,
    unanswered,
)
from .selection import Coverage, Selection, scoped
from .series import daily_frame, link_trend_frame
from .style import (
    ACCENT,
    BAR,
    METRIC_LABELS,
    PALETTE,
    aggregate_note,
    axis,
    chart_data,
    chart_title,
    empty_chart,
    money_of,
    quantity,
    ranking_tooltips,
    tip,
)

if TYPE_CHECKING:
    from ..db.readonly import Connection

__all__ = [
    "daily_chart",
    "device_chart",
    "link_trend_chart",
    "ranking_chart",
    "top_links_chart",
    "top_products_chart",
]


def ranking_chart(
    frame: pl.DataFrame,
    dimension: Dimension,
    metric: Metric,
    sel: Selection,
    cover: Coverage | None = None,
    *,
    title: str | None = None,
    notes: tuple[str, ...] = (),
    currency: Currency | str | None = None,
    why: str | None = None,
) -> alt.Chart:
    """Horizontal bars of `metric` per key of a `ranking_frame`, in rank order; the subtitle says
    the days `cover` holds of `sel`, then `notes`; money in `currency` (default: the configured one).
    `why`: why no report answers `metric` here (`queries.unanswered`), said if nothing is drawn."""
    if not isinstance(frame, pl.DataFrame) or "key" not in frame.columns:
        raise ValidationError("frame", "is not a ranking", "give the frame of ranking_frame(...)")
    if metric not in METRICS:
        raise ValidationError("metric", f"{metric!r} is not a metric", f"use one of {', '.join(METRICS)}")
    label = METRIC_LABELS[metric][0]
    money = money_of(currency)
    rows = frame.filter(pl.col(metric).is_not_null()) if metric in frame.columns else frame.clear()
    if rows.is_empty():
        return empty_chart(sel, f"{label.lower()} per {dimension}", cover, why=why)
    aggregates = rows["clicks"].is_not_null().any()
    text = title or f"{label} by {dimension}, top {rows.height}"
    chart: alt.Chart = (
        alt.Chart(chart_data(rows), title=chart_title(text, sel, cover, *notes))
        .mark_bar(color=BAR)
        .encode(
            x=quantity(metric, money),
            y=alt.Y("key:N", sort=alt.EncodingSortField("rank"), title=None, axis=alt.Axis(labelLimit=260)),
            tooltip=ranking_tooltips(dimension, bool(aggregates), money),
        )
        .properties(width=420, height=alt.Step(18))
    )
    return chart


def top_links_chart(
    con: Connection,
    selection: Selection | None = None,
    *,
    top_n: int = 15,
    currency: Currency | str | None = None,
    **where: Any,
) -> alt.Chart:
    """The `top_n` links by revenue, coloured by return rate; a slider (a Vega param bound to an
    input, so it works in exported HTML) hides links under a minimum revenue.

    `selection`, or its fields as keywords (`site=`, `start=`, ...), says what to chart; money is
    shown in `currency` (default: the configured one), as in every chart."""
    check_top_n(top_n)
    money = money_of(currency)
    sel, cover = scoped(con, selection, where)
    frame = ranking_frame(con, "link", sel, top_n=top_n)
    if frame.is_empty():
        return empty_chart(sel, "link revenue", cover)
    highest = max(float(frame["revenue"].max() or 0.0), 1.0)  # type: ignore[arg-type]
    minimum = alt.param(
        name="min_revenue",
        value=0,
        bind=alt.binding_range(
            min=0,
            max=round(highest),
            step=max(round(highest / 100), 1),
            name=f"Minimum revenue ({money.code}) ",
        ),
    )
    title = chart_title(
        f"Top {frame.height} links by revenue", sel, cover, "Colour: share of orders returned"
    )
    chart: alt.Chart = (
        alt.Chart(chart_data(frame), title=title)
        .mark_bar()
        .encode(
            x=quantity("revenue", money),
            y=alt.Y("key:N", sort=alt.EncodingSortField("rank"), title=None, axis=alt.Axis(labelLimit=300)),
            color=alt.Color(
                "return_rate:Q",
                title="Return rate",
                scale=alt.Scale(scheme="orangered", domainMin=0),
                legend=alt.Legend(format=".0%"),
            ),
            tooltip=ranking_tooltips("link", False, money),
        )
        .add_params(minimum)
        .transform_filter(alt.datum.revenue >= minimum)
        .properties(width=420, height=alt.Step(18))
    )
    return chart


def link_trend_chart(
    con: Connection,
    selection: Selection | None = None,
    *,
    links: list[str] | None = None,
    top_n: int = 5,
    currency: Currency | str | None = None,
    **where: Any,
) -> alt.Chart:
    """Revenue over time for `links` (default: the `top_n` by revenue, at most 12); click the
    legend to pick one. Long ranges show weeks or months so the series stays short."""
    money = money_of(currency)
    sel, cover = scoped(con, selection, where)
    frame = link_trend_frame(con, sel, links, top_n=top_n)
    if frame.is_empty():
        return empty_chart(sel, "link revenue", cover)
    grain = str(frame["grain"][0])
    pick = alt.selection_point(name="link_pick", fields=["link"], bind="legend")
    title = chart_title(
        f"Revenue per {grain} of the top links", sel, cover, "Click a legend entry to isolate it"
    )
    chart: alt.Chart = (
        alt.Chart(chart_data(frame), title=title)
        .mark_line(point=True)
        .encode(
            x=alt.X("period:T", title=None, axis=alt.Axis(format="%b %d")),
            y=alt.Y("revenue:Q", axis=axis("currency", "Revenue", money)),
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
                tip("revenue", "Revenue", money, "currency"),
                tip("orders", "Orders", money),
            ],
        )
        .add_params(pick)
        .properties(width=520, height=260)
    )
    return chart


def device_chart(
    con: Connection,
    selection: Selection | None = None,
    *,
    currency: Currency | str | None = None,
    **where: Any,
) -> alt.HConcatChart | alt.Chart:
    """Revenue, orders, EPC and conversion rate per device, side by side (one row per device)."""
    money = money_of(currency)
    sel, cover = scoped(con, selection, where)
    frame = ranking_frame(con, "device", sel, top_n=10)
    if frame.is_empty():
        return empty_chart(sel, "device figures", cover)
    aggregates = bool(frame["clicks"].is_not_null().any())
    panels = []
    for metric in ("revenue", "orders", "epc", "conversion_rate"):
        label, kind = METRIC_LABELS[metric]
        panels.append(
            alt.Chart(title=label)
            .mark_bar(color=BAR)
            .encode(
                x=alt.X(f"{metric}:Q", axis=axis(kind, label, money)),
                y=alt.Y("key:N", sort=alt.EncodingSortField("rank"), title=None),
                tooltip=ranking_tooltips("device", aggregates, money),
            )
            .properties(width=160, height=alt.Step(22))
        )
    note = (
        aggregate_note(aggregate_span(con, sel))
        if aggregates
        else "EPC and conversion: no stored slice for this selection"
    )
    return alt.hconcat(
        *panels, data=chart_data(frame), title=chart_title("Performance by device", sel, cover, note)
    )


def _period_of(day: Any, grain: str) -> Any:
    """The first day of the period (day, ISO week, month) holding `day`: how daily_frame labels it."""
    if grain == "week":
        return day - timedelta(days=day.weekday())
    if grain == "month":
        return day.replace(day=1)
    return day


def daily_chart(
    con: Connection,
    selection: Selection | None = None,
    *,
    currency: Currency | str | None = None,
    **where: Any,
) -> alt.LayerChart | alt.Chart:
    """Revenue per day (weeks or months on long ranges). A last day that was fetched before it
    ended (the service still filling it) is drawn apart and labelled partial, not read as a drop."""
    money = money_of(currency)
    sel, cover = scoped(con, selection, where)
    frame = daily_frame(con, sel)
    if frame.is_empty():
        return empty_chart(sel, "revenue", cover)
    grain = str(frame["grain"][0])
    day = cover.partial_in(sel)
    partial = _period_of(day, grain) if day else None
    last_whole = frame.filter(pl.col("period") != partial)["period"].max() if partial else None
    frame = frame.with_columns(
        partial=pl.col("period") == partial if partial else pl.lit(False),
        tail=pl.col("period").is_in([last_whole, partial]) if partial else pl.lit(False),
    )
    tips = [
        alt.Tooltip("period:T", title=grain.title(), format="%a %Y-%m-%d"),
        tip("revenue", "Revenue", money, "currency"),
        tip("order_value", "Order value", money, "currency"),
        tip("orders", "Orders", money),
        tip("returns", "Returns", money),
        tip("return_rate", "Return rate", money, "percent"),
        alt.Tooltip("partial:N", title="Partial (still being filled)"),
    ]
    base = alt.Chart(chart_data(frame)).encode(
        x=alt.X("period:T", title=None),
        y=alt.Y("revenue:Q", axis=axis("currency", "Revenue", money)),
        tooltip=tips,
    )
    # Vega expressions, not Python comparisons:
    whole, last, tail = alt.datum.partial == False, alt.datum.partial == True, alt.datum.tail == True  # noqa: E712
    layers = [base.transform_filter(whole).mark_line(color=BAR, point=alt.OverlayMarkDef(color=BAR, size=18))]
    notes = []
    if partial is not None:
        layers += [
            base.transform_filter(tail).mark_line(color=ACCENT, strokeDash=[4, 3]),
            base.transform_filter(last).mark_point(color=ACCENT, size=60, filled=False, strokeWidth=2),
            base.transform_filter(last).mark_text(color=ACCENT, align="right", dx=-8, dy=-10, text="partial"),
        ]
        notes.append(f"Dashed, hollow point: the last {grain} was still being filled when fetched")
    title = chart_title(f"Revenue per {grain}", sel, cover, *notes)
    return alt.LayerChart(layer=layers, title=title, width=560, height=240)


def top_products_chart(
    con: Connection,
    selection: Selection | None = None,
    *,
    metric: Metric = "revenue",
    top_n: int = 15,
    currency: Currency | str | None = None,
    **where: Any,
) -> alt.Chart:
    """The `top_n` products by `metric` (revenue split by each item's share of the order)."""
    check_top_n(top_n)
    sel, cover = scoped(con, selection, where)
    frame = ranking_frame(con, "product", sel, metric=metric, top_n=top_n)
    label = METRIC_LABELS[metric][0].lower()
    notes = (aggregate_note(aggregate_span(con, sel)),) if metric in AGGREGATE_METRICS else ()
    return ranking_chart(
        frame,
        "product",
        metric,
        sel,
        cover,
        title=f"Top {frame.height} products by {label}",
        notes=notes,
        currency=currency,
        why=unanswered(con, "product", sel, metric, METRIC_LABELS[metric][0], frame),
    )
