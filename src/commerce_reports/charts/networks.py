"""Network charts: EPC against clicks (a dropdown bound to a Vega param picks one), and the gap
between the aggregate's revenue and the transactions' over the days both cover."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import altair as alt
import polars as pl

from ..errors import ValidationError
from ..money import Currency
from .queries import aggregate_span, check_top_n, network_gap_frame, ranking_frame
from .selection import Selection, scoped
from .style import (
    ACCENT,
    BAR,
    GREY,
    aggregate_note,
    axis,
    chart_data,
    chart_title,
    empty_chart,
    money_of,
    ranking_tooltips,
    tip,
    title_of,
)

if TYPE_CHECKING:
    from ..db.readonly import Connection

__all__ = ["network_epc_chart", "network_gap_chart"]


def network_epc_chart(
    con: Connection,
    selection: Selection | None = None,
    *,
    top_n: int = 20,
    labels: int = 8,
    currency: Currency | str | None = None,
    **where: Any,
) -> alt.LayerChart | alt.Chart:
    """EPC against clicks per network (bubble size: aggregate revenue) for the `top_n` networks by
    clicks, the `labels` largest by revenue named beside their dot (readable printed or mailed);
    a dropdown (a Vega param bound to a select input, kept in exported HTML) highlights one."""
    check_top_n(top_n)
    if isinstance(labels, bool) or not isinstance(labels, int) or labels < 0:
        raise ValidationError("labels", f"{labels!r} is not a count of dots", "give 0 (none) or more")
    money = money_of(currency)
    sel, cover = scoped(con, selection, where)
    frame = ranking_frame(con, "network", sel, metric="clicks", top_n=top_n)
    if frame.is_empty():
        return empty_chart(sel, "network clicks (sync the networks report)", cover)
    names = sorted(str(k) for k in frame["key"].to_list())
    pick = alt.param(
        name="network_pick",
        value=None,
        bind=alt.binding_select(options=[None, *names], labels=["All networks", *names], name="Network "),
    )
    chosen = "network_pick == null || datum.key == network_pick"
    note = aggregate_note(aggregate_span(con, sel))
    named = set(frame.sort("aggregate_revenue", descending=True, nulls_last=True)["key"].head(labels))
    frame = frame.with_columns(label=pl.when(pl.col("key").is_in(list(named))).then(pl.col("key")))
    base = alt.Chart(chart_data(frame)).encode(
        x=alt.X("clicks:Q", axis=axis("count", "Clicks", money), scale=alt.Scale(type="log")),
        y=alt.Y("epc:Q", axis=axis("currency", "EPC, earnings per click", money)),
        tooltip=ranking_tooltips("network", True, money),
    )
    dots = base.mark_circle(stroke="white", strokeWidth=0.5).encode(
        size=alt.Size(
            "aggregate_revenue:Q",
            title=title_of("Revenue (aggregate)", "currency", money),
            legend=alt.Legend(format=money.d3_format(0)),
        ),
        color=alt.condition(chosen, alt.value(BAR), alt.value(GREY)),
        opacity=alt.condition(chosen, alt.value(0.9), alt.value(0.3)),
    )
    names = (
        base.transform_filter("isValid(datum.label)")
        .mark_text(align="left", dx=7, dy=-6, fontSize=10, color="#333333")
        .encode(text=alt.Text("label:N"), opacity=alt.condition(chosen, alt.value(1.0), alt.value(0.3)))
    )
    notes = [note, f"Named: the {len(named)} networks with the most revenue"] if named else [note]
    title = chart_title("EPC against clicks by network", sel, cover, *notes)
    return alt.LayerChart(layer=[dots.add_params(pick), names], title=title, width=460, height=320)


def network_gap_chart(
    con: Connection,
    selection: Selection | None = None,
    *,
    top_n: int = 20,
    currency: Currency | str | None = None,
    **where: Any,
) -> alt.Chart:
    """Aggregate revenue minus transaction revenue per network (largest gaps first) over the days
    both cover: month windows the ledger holds from their first day to the day they were fetched.
    Positive when the service's totals exceed the stored ledger."""
    money = money_of(currency)
    sel, cover = scoped(con, selection, where)
    frame = network_gap_frame(con, sel, top_n=top_n)
    if frame.is_empty():
        return empty_chart(
            sel, "month window that the ledger covers whole (sync from a month's first day)", cover
        )
    first, last = frame["first_day"][0], frame["last_day"][0]
    compared = sel.describe(f"compared {first} to {last}, the days both sides cover")
    title = alt.TitleParams(
        "Revenue gap: aggregate minus transactions",
        subtitle=[compared, "Aggregate by click date (month windows), ledger by commission date"],
        anchor="start",
    )
    chart: alt.Chart = (
        alt.Chart(chart_data(frame), title=title)
        .mark_bar()
        .encode(
            x=alt.X("revenue_gap:Q", axis=axis("currency", "Revenue gap", money)),
            y=alt.Y("key:N", sort="-x", title=None, axis=alt.Axis(labelLimit=200)),
            color=alt.condition(alt.datum.revenue_gap >= 0, alt.value(BAR), alt.value(ACCENT)),
            tooltip=[
                alt.Tooltip("key:N", title="Network"),
                tip("aggregate_revenue", "Aggregate revenue", money, "currency"),
                tip("revenue", "Transaction revenue", money, "currency"),
                tip("revenue_gap", "Gap", money, "currency"),
                tip("gap_share", "Gap share of aggregate", money, "percent"),
            ],
        )
        .properties(width=420, height=alt.Step(18))
    )
    return chart
