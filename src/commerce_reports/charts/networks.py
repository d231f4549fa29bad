"""Network charts: EPC against clicks (a dropdown bound to a Vega param picks one), and the gap
between the aggregate's revenue and the transactions' over the days both cover."""

from __future__ import annotations

from typing import Any

import altair as alt
import duckdb

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
    ranking_tooltips,
    tip,
)

__all__ = ["network_epc_chart", "network_gap_chart"]


def network_epc_chart(
    con: duckdb.DuckDBPyConnection, selection: Selection | None = None, *, top_n: int = 20, **where: Any
) -> alt.Chart:
    """EPC against clicks per network (bubble size: aggregate revenue) for the `top_n` networks by
    clicks; a dropdown (a Vega param bound to a select input, kept in exported HTML) highlights one."""
    check_top_n(top_n)
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
    chart: alt.Chart = (
        alt.Chart(chart_data(frame), title=chart_title("EPC against clicks by network", sel, cover, note))
        .mark_circle(stroke="white", strokeWidth=0.5)
        .encode(
            x=alt.X("clicks:Q", axis=axis("count", "Clicks"), scale=alt.Scale(type="log")),
            y=alt.Y("epc:Q", axis=alt.Axis(title="EPC (earnings per click)", format="$,.2f")),
            size=alt.Size(
                "aggregate_revenue:Q", title="Revenue (aggregate)", legend=alt.Legend(format="$,.0f")
            ),
            color=alt.condition(chosen, alt.value(BAR), alt.value(GREY)),
            opacity=alt.condition(chosen, alt.value(0.9), alt.value(0.3)),
            tooltip=ranking_tooltips("network", True),
        )
        .add_params(pick)
        .properties(width=460, height=320)
    )
    return chart


def network_gap_chart(
    con: duckdb.DuckDBPyConnection, selection: Selection | None = None, *, top_n: int = 20, **where: Any
) -> alt.Chart:
    """Aggregate revenue minus transaction revenue per network (largest gaps first) over the days
    both cover: month windows the ledger holds from their first day to the day they were fetched.
    Positive when the service's totals exceed the stored ledger."""
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
            x=alt.X("revenue_gap:Q", axis=axis("currency", "Revenue gap")),
            y=alt.Y("key:N", sort="-x", title=None, axis=alt.Axis(labelLimit=200)),
            color=alt.condition(alt.datum.revenue_gap >= 0, alt.value(BAR), alt.value(ACCENT)),
            tooltip=[
                alt.Tooltip("key:N", title="Network"),
                tip("aggregate_revenue", "Aggregate revenue", "currency"),
                tip("revenue", "Transaction revenue", "currency"),
                tip("revenue_gap", "Gap", "currency"),
                tip("gap_share", "Gap share of aggregate", "percent"),
            ],
        )
        .properties(width=420, height=alt.Step(18))
    )
    return chart
