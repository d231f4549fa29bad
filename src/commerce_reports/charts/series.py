"""Time series for the charts: revenue per day, week or month, overall and per link.

The grain is the finest that keeps a series short (`trend_grain`): days on a few months, weeks or
months on years, so a chart gets a few hundred points whatever the lake's size.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import polars as pl

from ..contract import MONEY_SUM
from ..errors import ValidationError
from .queries import check_top_n, closed, fetch_frame, ranking_frame, totals_side
from .selection import Selection

if TYPE_CHECKING:
    from ..db.readonly import Connection

__all__ = ["Grain", "daily_frame", "link_trend_frame", "trend_grain"]

Grain = Literal["day", "week", "month"]


def trend_grain(sel: Selection, max_periods: int = 400) -> Grain:
    """The finest grain that keeps a series within `max_periods` points (`sel` resolved)."""
    if isinstance(max_periods, bool) or not isinstance(max_periods, int) or max_periods < 1:
        raise ValidationError("max_periods", f"{max_periods!r} is not a count", "give a positive integer")
    if not isinstance(sel, Selection):
        raise ValidationError("selection", f"{sel!r} is not a Selection", "give Selection(...)")
    if sel.days <= max_periods:
        return "day"
    if sel.days <= max_periods * 7:
        return "week"
    return "month"


def daily_frame(con: Connection, sel: Selection, *, max_periods: int = 400) -> pl.DataFrame:
    """Revenue, order value, orders and returns per period (day, week or month: see `trend_grain`)."""
    sel = closed(con, sel)
    grain = trend_grain(sel, max_periods)
    source, params = totals_side(sel, per_day=True)
    sql = f"""SELECT date_trunc('{grain}', day)::DATE AS period, '{grain}' AS grain,
       sum(revenue)::{MONEY_SUM} AS revenue, sum(order_value)::{MONEY_SUM} AS order_value,
       sum(orders)::BIGINT AS orders, sum(returns)::BIGINT AS returns,
       (sum(returns) / nullif(sum(orders), 0))::DOUBLE AS return_rate
FROM ({source}) GROUP BY 1 ORDER BY 1"""
    return fetch_frame(con, sql, params)


def link_trend_frame(
    con: Connection,
    sel: Selection,
    links: list[str] | None = None,
    *,
    top_n: int = 5,
    max_periods: int = 120,
) -> pl.DataFrame:
    """Revenue and orders per period for `links` (default: the `top_n` links by revenue)."""
    sel = closed(con, sel)
    check_top_n(top_n, 12)
    if links is None:
        links = ranking_frame(con, "link", sel, top_n=top_n)["key"].to_list()
    elif not isinstance(links, list) or not all(isinstance(link, str) for link in links):
        raise ValidationError("links", f"{links!r} is not a list of links", "give a list of link URLs")
    elif len(links) > 12:
        raise ValidationError("links", f"{len(links)} links", "chart at most 12 links at a time")
    grain = trend_grain(sel, max_periods)
    if sel.filtered:
        where, params = sel.where()
        source = (
            "SELECT commission_date AS day, link_url, sum(publisher_net_revenue) AS revenue, "
            "count(*) AS orders "
            f"FROM transactions WHERE {where} GROUP BY ALL"
        )
    else:
        where, params = sel.where("day", filters=False)
        source = (
            "SELECT day, link_url, sum(revenue) AS revenue, sum(transactions) AS orders "
            f"FROM link_performance WHERE {where} GROUP BY ALL"
        )
    sql = f"""SELECT date_trunc('{grain}', day)::DATE AS period, '{grain}' AS grain,
       coalesce(link_url, '(no click detail)') AS link, sum(revenue)::{MONEY_SUM} AS revenue,
       sum(orders)::BIGINT AS orders
FROM ({source}) WHERE list_contains($links, coalesce(link_url, '(no click detail)'))
GROUP BY 1, 3 ORDER BY 3, 1"""
    return fetch_frame(con, sql, {**params, "links": links})
