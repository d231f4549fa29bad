"""The DuckDB side of the charts: a validated selection and the small, aggregated frames charts draw.

Every function here returns at most a few hundred rows whatever the lake's size: rankings stop at
`top_n`, time series switch from days to weeks or months on long ranges. Transaction figures
(revenue, order value, orders, returns) count the commission days of the range exactly; the service
aggregates clicks only by click date and calendar month, so clicks, EPC and conversion rate are
those of the month windows overlapping the range (NULL when that slice was not synced).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, Literal, get_args

import duckdb
import polars as pl

from ..errors import ValidationError
from ..params import DeviceType, as_date

__all__ = [
    "AGGREGATE_METRICS",
    "DIMENSIONS",
    "METRICS",
    "Dimension",
    "Metric",
    "Selection",
    "check_top_n",
    "daily_frame",
    "filter_options",
    "link_trend_frame",
    "network_gap_frame",
    "ranking_frame",
    "select",
    "trend_grain",
]

Dimension = Literal["link", "device", "country", "network", "product"]
Metric = Literal[
    "revenue", "orders", "order_value", "returns", "return_rate", "clicks", "epc", "conversion_rate"
]
DIMENSIONS: tuple[Dimension, ...] = get_args(Dimension)
METRICS: tuple[Metric, ...] = get_args(Metric)
AGGREGATE_METRICS: frozenset[Metric] = frozenset({"clicks", "epc", "conversion_rate"})
"""Metrics the service aggregates (by network, device and country only; month windows, click date)."""

DEFAULT_DAYS = 90
MAX_TOP_N = 200
_DEVICES = {d.label: d.value for d in DeviceType}  # Desktop -> DSK


@dataclass(frozen=True)
class Selection:
    """What a chart shows: one site or all, a range of commission days (both included), filters."""

    site: str | None
    start: date
    end: date
    network: str | None = None
    device: str | None = None  # a label: Desktop, Mobile, Tablet, Unknown
    country: str | None = None  # ISO alpha-2, upper case

    @property
    def filtered(self) -> bool:
        """True when a network, device or country filter is set (rollups by day cannot answer)."""
        return any((self.network, self.device, self.country))

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1

    def describe(self) -> str:
        """One line for subtitles: site, range and filters."""
        parts = [self.site or "all sites", f"{self.start} to {self.end}"]
        parts += [f"{name} {value}" for name, value in self._filters().items() if value]
        return " · ".join(parts)

    def _filters(self) -> dict[str, str | None]:
        return {"network": self.network, "device": self.device, "country": self.country}

    def where(
        self, date_column: str = "commission_date", *, filters: bool = True
    ) -> tuple[str, dict[str, Any]]:
        """A WHERE clause (and its parameters) for the transactions, link or daily views."""
        clauses = [f"{date_column} BETWEEN $start AND $end"]
        params: dict[str, Any] = {"start": self.start, "end": self.end}
        if self.site:
            clauses.append("site = $site")
            params["site"] = self.site
        if filters:
            if self.network:
                clauses.append("network = $network")
                params["network"] = self.network
            if self.device:
                clauses.append("device = $device")
                params["device"] = self.device
            if self.country:
                clauses.append("upper(country) = $country")
                params["country"] = self.country
        return " AND ".join(clauses), params


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None) -> pl.DataFrame:
    frame: pl.DataFrame = con.sql(sql, params=params or {}).pl()
    return frame


def _sites(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [str(s) for (s,) in con.sql("SELECT DISTINCT site FROM daily_performance ORDER BY 1").fetchall()]


def _last_day(con: duckdb.DuckDBPyConnection, site: str | None) -> date | None:
    where = "WHERE site = $site" if site else ""
    rows = con.sql(f"SELECT max(day) FROM daily_performance {where}", params={"site": site} if site else {})
    value = rows.fetchall()[0][0]
    return value if isinstance(value, date) else None


def select(
    con: duckdb.DuckDBPyConnection,
    site: str | None = None,
    start: Any = None,
    end: Any = None,
    *,
    network: str | None = None,
    device: str | None = None,
    country: str | None = None,
) -> Selection:
    """A checked Selection: known site, real dates with start <= end, a known device, a 2-letter country.

    `end` defaults to the last day the lake holds (for the site), `start` to 90 days before `end`.
    Bad input raises ValidationError saying what is allowed.
    """
    if site is not None:
        known = _sites(con)
        if site not in known:
            raise ValidationError(
                "site",
                f"{site!r} is not in the lake",
                f"use one of {', '.join(known) or '(none: sync first)'}",
            )
    last = as_date(end, "end") if end is not None else (_last_day(con, site) or date.today())
    first = as_date(start, "start") if start is not None else last - timedelta(days=DEFAULT_DAYS - 1)
    if first > last:
        raise ValidationError("start", f"{first} is after end {last}", "give start <= end (both included)")
    label = None
    if device is not None:
        label = next(
            (k for k, v in _DEVICES.items() if device.strip().lower() in (k.lower(), v.lower())), None
        )
        if label is None:
            raise ValidationError(
                "device", f"{device!r} is not a device", f"use one of {', '.join(_DEVICES)}"
            )
    code = None
    if country is not None:
        code = country.strip().upper()
        if len(code) != 2 or not code.isalpha():
            raise ValidationError(
                "country", f"{country!r} is not a country code", "give an ISO alpha-2 code, e.g. 'US'"
            )
    return Selection(site, first, last, network or None, label, code)


def check_top_n(top_n: int, limit: int = MAX_TOP_N) -> int:
    """`top_n` if 1 <= top_n <= limit, else a ValidationError (rankings must stay small)."""
    if isinstance(top_n, bool) or not isinstance(top_n, int) or not 1 <= top_n <= limit:
        raise ValidationError(
            "top_n", f"{top_n!r} is not a count from 1 to {limit}", "give a small positive integer"
        )
    return top_n


# ----------------------------------------------------------------------------- rankings

_TXN_MEASURES = """sum(publisher_net_revenue) AS revenue, sum(order_value) AS order_value,
        count(*) AS orders, count(*) FILTER (WHERE returned) AS returns"""
_KEYS: dict[str, str] = {
    "link": "coalesce(link_url, '(no click detail)')",
    "device": "device",
    "country": "coalesce(upper(country), '(unknown)')",
    "network": "coalesce(network, '(unknown)')",
}
_SORT: dict[str, str] = {"orders": "orders", "conversion_rate": "conversion_rate"}


_MONTHLY = {
    "device": "device",
    "country": "coalesce(country, '(unknown)')",
    "network": "coalesce(network, '(unknown)')",
}


def _whole_months(sel: Selection) -> tuple[date, date] | None:
    """[first, last) of the calendar months lying wholly inside the range, or None."""
    first = (
        sel.start if sel.start.day == 1 else (sel.start.replace(day=28) + timedelta(days=4)).replace(day=1)
    )
    after = sel.end + timedelta(days=1)
    last = after.replace(day=1)
    return (first, last) if first < last else None


def _transaction_side(dimension: Dimension, sel: Selection) -> tuple[str, dict[str, Any]]:
    if dimension == "product":
        # orders: order lines carrying the product (count(DISTINCT commission_id) costs 2.5x more)
        where, params = sel.where()
        return (
            f"""SELECT coalesce(product_name, '(unnamed)') AS key, any_value(merchant_group_name) AS detail,
        sum(revenue) AS revenue, sum(order_value) AS order_value, count(*) AS orders,
        count(*) FILTER (WHERE returned) AS returns
    FROM transaction_items WHERE {where} GROUP BY 1""",
            params,
        )
    if dimension == "link" and not sel.filtered:
        # The daily link rollup: a fraction of the transactions' rows.
        where, params = sel.where("day", filters=False)
        return (
            f"""SELECT coalesce(link_url, '(no click detail)') AS key, any_value(page_url) AS detail,
        sum(revenue) AS revenue, sum(order_value) AS order_value, sum(transactions) AS orders,
        sum(returns) AS returns
    FROM link_performance WHERE {where} GROUP BY 1""",
            params,
        )
    detail = "any_value(page_url)" if dimension == "link" else "NULL::VARCHAR"
    where, params = sel.where()
    plain = (
        f"SELECT {_KEYS[dimension]} AS key, {detail} AS detail, {_TXN_MEASURES} FROM transactions "
        f"WHERE {where} GROUP BY 1"
    )
    months = _whole_months(sel)
    foreign = {
        "device": (sel.network, sel.country),
        "country": (sel.network, sel.device),
        "network": (sel.device, sel.country),
    }.get(dimension, (True,))
    if months is None or any(foreign):
        return plain, params
    # Whole months from the monthly rollup (a few rows per month), the edge days from transactions.
    own = {"device": sel.device, "country": sel.country, "network": sel.network}[dimension]
    rollup = ["window_start >= $m_first", "window_end <= $m_last", "transactions > 0"]
    if sel.site:
        rollup.append("site = $site")
    if own:
        rollup.append(f"{dimension} = ${dimension}")
    edges = f"{where} AND (commission_date < $m_first OR commission_date >= $m_last)"
    sql = f"""SELECT key, NULL::VARCHAR AS detail, sum(revenue) AS revenue, sum(order_value) AS order_value,
        sum(orders) AS orders, sum(returns) AS returns
    FROM (
        SELECT {_MONTHLY[dimension]} AS key, revenue, order_value, transactions AS orders, returns
        FROM {dimension}_performance WHERE {" AND ".join(rollup)}
        UNION ALL
        SELECT {_KEYS[dimension]} AS key, publisher_net_revenue, order_value, 1, returned::INT
        FROM transactions WHERE {edges}
    ) GROUP BY 1"""
    return sql, {**params, "m_first": months[0], "m_last": months[1]}


def _aggregate_slice(dimension: Dimension, sel: Selection) -> tuple[str, str] | None:
    """(key expression, slice condition) over the `networks` view, or None when no stored slice
    answers this dimension under these filters (the service slices by one filter at a time)."""
    if dimension == "device":
        if sel.country:
            return None
        case = " ".join(f"WHEN 'deviceType={c}' THEN '{label}'" for label, c in _DEVICES.items())
        cond = f"slice = 'deviceType={_DEVICES[sel.device]}'" if sel.device else "slice LIKE 'deviceType=%'"
        return f"CASE slice {case} END", cond
    if dimension == "country":
        if sel.device:
            return None
        cond = f"slice = 'country={sel.country}'" if sel.country else "slice LIKE 'country=%'"
        return "upper(country)", cond
    if dimension == "network":
        if sel.device and sel.country:
            return None
        if sel.device:
            return "network_name", f"slice = 'deviceType={_DEVICES[sel.device]}'"
        if sel.country:
            return "network_name", f"slice = 'country={sel.country}'"
        return "network_name", "slice = 'all'"
    return None


def _aggregate_side(dimension: Dimension, sel: Selection) -> tuple[str, dict[str, Any]] | None:
    chosen = _aggregate_slice(dimension, sel)
    if chosen is None:
        return None
    key, cond = chosen
    clauses = ["grain = 'month'", "window_start <= $end", "window_end > $start", cond]
    params: dict[str, Any] = {"start": sel.start, "end": sel.end}
    if sel.site:
        clauses.append("site = $site")
        params["site"] = sel.site
    if sel.network:
        clauses.append("network_name = $network")
        params["network"] = sel.network
    sql = f"""SELECT {key} AS key, sum(clicks)::DOUBLE AS clicks, sum(revenue)::DOUBLE AS aggregate_revenue,
        sum(actions)::DOUBLE AS actions
    FROM networks WHERE {" AND ".join(clauses)} GROUP BY 1"""
    return sql, params


def ranking_frame(
    con: duckdb.DuckDBPyConnection,
    dimension: Dimension,
    sel: Selection,
    *,
    metric: Metric = "revenue",
    top_n: int = 15,
) -> pl.DataFrame:
    """The `top_n` keys of a dimension by `metric`, one row each: key, detail (page or merchant),
    revenue, order_value, orders, returns, return_rate, clicks, aggregate_revenue, epc,
    conversion_rate, revenue_gap (aggregate minus transaction revenue), rank."""
    if dimension not in DIMENSIONS:
        raise ValidationError(
            "dimension", f"{dimension!r} is not a dimension", f"use one of {', '.join(DIMENSIONS)}"
        )
    if metric not in METRICS:
        raise ValidationError("metric", f"{metric!r} is not a metric", f"use one of {', '.join(METRICS)}")
    check_top_n(top_n, 400)
    t_sql, params = _transaction_side(dimension, sel)
    aggregate = _aggregate_side(dimension, sel)
    if aggregate is not None:
        a_sql, a_params = aggregate
        params = {**params, **a_params}
        source = f"t FULL JOIN ({a_sql}) AS a USING (key)"
        extra = """clicks, aggregate_revenue, aggregate_revenue / nullif(clicks, 0) AS epc,
       actions / nullif(clicks, 0) AS conversion_rate,
       aggregate_revenue - coalesce(revenue, 0) AS revenue_gap"""
    else:
        source = "t"
        extra = """NULL::DOUBLE AS clicks, NULL::DOUBLE AS aggregate_revenue, NULL::DOUBLE AS epc,
       NULL::DOUBLE AS conversion_rate, NULL::DOUBLE AS revenue_gap"""
    sort = _SORT.get(metric, metric)
    where = f"WHERE {sort} IS NOT NULL" if metric in AGGREGATE_METRICS else ""
    sql = f"""WITH t AS ({t_sql}), r AS (
    SELECT key, detail, coalesce(revenue, 0)::DOUBLE AS revenue,
           coalesce(order_value, 0)::DOUBLE AS order_value,
           coalesce(orders, 0)::BIGINT AS orders, coalesce(returns, 0)::BIGINT AS returns,
           (returns / nullif(orders, 0))::DOUBLE AS return_rate, {extra}
    FROM {source}
)
SELECT *, row_number() OVER (ORDER BY {sort} DESC NULLS LAST, key) AS rank
FROM r {where} ORDER BY rank LIMIT {int(top_n)}"""
    return _rows(con, sql, params)


# ----------------------------------------------------------------------------- time series

Grain = Literal["day", "week", "month"]


def trend_grain(sel: Selection, max_periods: int = 400) -> Grain:
    """The finest grain that keeps a series within `max_periods` points."""
    if sel.days <= max_periods:
        return "day"
    if sel.days <= max_periods * 7:
        return "week"
    return "month"


def daily_frame(con: duckdb.DuckDBPyConnection, sel: Selection, *, max_periods: int = 400) -> pl.DataFrame:
    """Revenue, order value, orders and returns per period (day, week or month: see `trend_grain`)."""
    grain = trend_grain(sel, max_periods)
    if sel.filtered:
        where, params = sel.where()
        source = f"SELECT commission_date AS day, {_TXN_MEASURES} FROM transactions WHERE {where} GROUP BY 1"
    else:
        where, params = sel.where("day", filters=False)
        source = (
            "SELECT day, sum(revenue) AS revenue, sum(order_value) AS order_value, "
            "sum(transactions) AS orders, sum(returns) AS returns "
            f"FROM daily_performance WHERE {where} GROUP BY 1"
        )
    sql = f"""SELECT date_trunc('{grain}', day)::DATE AS period, '{grain}' AS grain,
       sum(revenue)::DOUBLE AS revenue, sum(order_value)::DOUBLE AS order_value,
       sum(orders)::BIGINT AS orders, sum(returns)::BIGINT AS returns,
       (sum(returns) / nullif(sum(orders), 0))::DOUBLE AS return_rate
FROM ({source}) GROUP BY 1 ORDER BY 1"""
    return _rows(con, sql, params)


def link_trend_frame(
    con: duckdb.DuckDBPyConnection,
    sel: Selection,
    links: list[str] | None = None,
    *,
    top_n: int = 5,
    max_periods: int = 120,
) -> pl.DataFrame:
    """Revenue and orders per period for `links` (default: the `top_n` links by revenue)."""
    check_top_n(top_n, 12)
    if links is None:
        links = ranking_frame(con, "link", sel, top_n=top_n)["key"].to_list()
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
       coalesce(link_url, '(no click detail)') AS link, sum(revenue)::DOUBLE AS revenue,
       sum(orders)::BIGINT AS orders
FROM ({source}) WHERE list_contains($links, coalesce(link_url, '(no click detail)'))
GROUP BY 1, 3 ORDER BY 3, 1"""
    return _rows(con, sql, {**params, "links": links})


def network_gap_frame(con: duckdb.DuckDBPyConnection, sel: Selection, *, top_n: int = 20) -> pl.DataFrame:
    """Per network, over the calendar months overlapping the range: aggregate revenue (click date),
    transaction revenue (commission date) and their gap, largest absolute gaps first."""
    check_top_n(top_n)
    clauses = ["window_start <= $end", "window_end > $start", "aggregate_revenue IS NOT NULL"]
    params: dict[str, Any] = {"start": sel.start, "end": sel.end}
    if sel.site:
        clauses.append("site = $site")
        params["site"] = sel.site
    if sel.network:
        clauses.append("network = $network")
        params["network"] = sel.network
    sql = f"""SELECT coalesce(network, '(unknown)') AS key, min(window_start) AS first_month,
       max(window_start) AS last_month, sum(aggregate_revenue)::DOUBLE AS aggregate_revenue,
       sum(revenue)::DOUBLE AS revenue, sum(revenue_gap)::DOUBLE AS revenue_gap,
       (sum(revenue_gap) / nullif(sum(aggregate_revenue), 0))::DOUBLE AS gap_share
FROM network_performance WHERE {" AND ".join(clauses)}
GROUP BY 1 ORDER BY abs(sum(revenue_gap)) DESC, 1 LIMIT {int(top_n)}"""
    return _rows(con, sql, params)


# ----------------------------------------------------------------------------- filter options


def filter_options(con: duckdb.DuckDBPyConnection, site: str | None = None) -> dict[str, list[str]]:
    """The values each filter can take (from the small views): sites, networks, devices, countries,
    plus `first_day` / `last_day` (ISO) of the stored commission days."""
    params: dict[str, Any] = {"site": site} if site else {}
    where = "WHERE site = $site" if site else ""
    span = con.sql(f"SELECT min(day), max(day) FROM daily_performance {where}", params=params).fetchall()[0]

    def values(sql: str) -> list[str]:
        return [str(v) for (v,) in con.sql(sql, params=params).fetchall() if v is not None]

    return {
        "sites": _sites(con),
        "networks": values(f"SELECT DISTINCT network FROM network_performance {where} ORDER BY 1"),
        "devices": values(f"SELECT DISTINCT device FROM device_performance {where} ORDER BY 1"),
        "countries": values(f"SELECT DISTINCT country FROM country_performance {where} ORDER BY 1"),
        "first_day": [span[0].isoformat()] if span[0] else [],
        "last_day": [span[1].isoformat()] if span[1] else [],
    }
