"""The DuckDB side of the charts: rankings, the network revenue gap and the filters' values, as small
aggregated frames (time series are in `series.py`).

Every function here returns at most a few hundred rows whatever the lake's size: rankings stop at
`top_n`, time series switch from days to weeks or months on long ranges. Transaction figures
(revenue, order value, orders, returns) count the commission days of the range exactly; the service
aggregates clicks only by click date and calendar month, so clicks, EPC and conversion rate are
those of the month windows overlapping the range (NULL when that slice was not synced). Which
columns and views a dimension reads is the table in `dimensions.py`.
"""

from __future__ import annotations

import weakref
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any, Literal, get_args

import polars as pl

from ..contract import MONEY_SUM
from ..db.views import VIEWS
from ..errors import ValidationError
from .dimensions import (
    AGGREGATED,
    DAILY_FILTERS,
    DIMENSION_TABLE,
    DIMENSIONS,
    FILTERED,
    Dimension,
    DimensionSpec,
)
from .selection import Selection, check_connection, resolve

if TYPE_CHECKING:
    from ..db.readonly import Connection

__all__ = [
    "AGGREGATE_METRICS",
    "DIMENSIONS",
    "METRICS",
    "Dimension",
    "Metric",
    "aggregate_slice",
    "aggregate_span",
    "check_dimension",
    "check_top_n",
    "closed",
    "columns_of",
    "fetch_frame",
    "filter_options",
    "network_gap_frame",
    "ranking_frame",
    "totals_side",
    "transaction_side",
    "unaggregated",
    "unanswered",
    "unsynced",
]

Metric = Literal[
    "revenue", "orders", "order_value", "returns", "return_rate", "clicks", "epc", "conversion_rate"
]
METRICS: tuple[Metric, ...] = get_args(Metric)
AGGREGATE_METRICS: frozenset[Metric] = frozenset({"clicks", "epc", "conversion_rate"})
"""Metrics the service aggregates (by network, device and country only; by click date)."""

MAX_TOP_N = 200


def fetch_frame(con: Connection, sql: str, params: dict[str, Any] | None = None) -> pl.DataFrame:
    frame: pl.DataFrame = con.sql(sql, params=params or {}).pl()
    return frame


_COLUMNS: weakref.WeakKeyDictionary[Any, dict[str, dict[str, str]]] = weakref.WeakKeyDictionary()


def columns_of(con: Connection, view: str) -> dict[str, str]:
    """The columns of a view and their SQL types, in order: what code reading a column that not every
    lake has yet (e.g. `complete`) checks first. Kept per connection for the package's views,
    whose columns do not change while it is open (a dashboard asks at every click)."""
    check_connection(con)
    kept = _COLUMNS.setdefault(con, {}) if view in VIEWS else {}
    if view not in kept:
        rows = con.execute(f"DESCRIBE SELECT * FROM {view} LIMIT 0").fetchall()
        kept[view] = {str(row[0]): str(row[1]) for row in rows}
    return dict(kept[view])


def closed(con: Connection, sel: Selection) -> Selection:
    """`sel` with open dates closed on the lake (a chart passes one already closed: no query)."""
    check_connection(con)
    if not isinstance(sel, Selection):
        raise ValidationError("selection", f"{sel!r} is not a Selection", "give Selection(site=..., ...)")
    if sel.start is None or sel.end is None:
        return resolve(con, sel)[0]
    return sel


def check_top_n(top_n: int, limit: int = MAX_TOP_N) -> int:
    """`top_n` if 1 <= top_n <= limit, else a ValidationError (rankings must stay small)."""
    if isinstance(top_n, bool) or not isinstance(top_n, int) or not 1 <= top_n <= limit:
        raise ValidationError(
            "top_n", f"{top_n!r} is not a count from 1 to {limit}", "give a small positive integer"
        )
    return top_n


# ----------------------------------------------------------------------------- rankings

TXN_MEASURES = """sum(publisher_net_revenue) AS revenue, sum(order_value) AS order_value,
        count(*) AS orders, count(*) FILTER (WHERE returned) AS returns"""
ROLLUP_MEASURES = """sum(revenue) AS revenue, sum(order_value) AS order_value,
        sum(transactions) AS orders, sum(returns) AS returns"""
"""The same figures as `TXN_MEASURES`, over a daily rollup's rows (one per day and key)."""
_SORT: dict[str, str] = {"orders": "orders", "conversion_rate": "conversion_rate"}


def check_dimension(dimension: Any) -> Dimension:
    """`dimension` if the table knows it, else a ValidationError listing those it knows."""
    if not isinstance(dimension, str) or dimension not in DIMENSION_TABLE:
        raise ValidationError(
            "dimension", f"{dimension!r} is not a dimension", f"use one of {', '.join(DIMENSIONS)}"
        )
    return DIMENSION_TABLE[dimension].name


def _whole_months(sel: Selection) -> tuple[date, date] | None:
    """[first, last) of the calendar months lying wholly inside the range, or None."""
    start, end = sel.bounds
    first = start if start.day == 1 else (start.replace(day=28) + timedelta(days=4)).replace(day=1)
    after = end + timedelta(days=1)
    last = after.replace(day=1)
    return (first, last) if first < last else None


def _daily(spec: DimensionSpec, sel: Selection, detail: bool) -> str | None:
    """The daily rollup that answers the figures of `spec` over the selection: one that holds
    every filter it sets (and the detail, when asked), or None."""
    rollups = [spec.daily] if detail and spec.detail else [spec.daily, spec.daily_without_detail]
    wanted = set(sel.filters())
    return next((r for r in rollups if r is not None and wanted <= DAILY_FILTERS[r]), None)


def transaction_side(
    dimension: Dimension, sel: Selection, *, detail: bool = True
) -> tuple[str, dict[str, Any]]:
    """SQL (and parameters) of the transaction figures per key of `dimension` over the selection's
    commission days: key, detail (NULL unless `detail`), revenue, order_value, orders, returns."""
    spec = DIMENSION_TABLE[dimension]
    # detail: a link's page (or how many), one merchant of a product. min(), not any_value(): the
    # same lake must give the same chart on every run (any_value's pick changes with the threads).
    detail_sql = (spec.detail if detail else None) or "NULL::VARCHAR"
    if spec.view == "transaction_items":
        # orders: order lines carrying the product (count(DISTINCT commission_id) costs 2.5x more)
        where, params = sel.where()
        return (
            f"""SELECT {spec.key} AS key, {detail_sql} AS detail, sum(revenue) AS revenue,
        sum(order_value) AS order_value, count(*) AS orders, count(*) FILTER (WHERE returned) AS returns
    FROM {spec.view} WHERE {where} GROUP BY 1""",
            params,
        )
    daily = _daily(spec, sel, detail)
    if daily is not None:
        # A daily rollup: a fraction of the transactions' rows (the same sums, exactly).
        where, params = sel.where("day")
        return (
            f"SELECT {spec.key} AS key, {detail_sql} AS detail, {ROLLUP_MEASURES} FROM {daily} "
            f"WHERE {where} GROUP BY 1",
            params,
        )
    where, params = sel.where()
    plain = (
        f"SELECT {spec.key} AS key, {detail_sql} AS detail, {TXN_MEASURES} FROM {spec.view} "
        f"WHERE {where} GROUP BY 1"
    )
    months = _whole_months(sel)
    foreign = [sel.filters().get(other.filter or "") for other in FILTERED if other.filter != spec.filter]
    if spec.monthly is None or spec.filter is None or months is None or any(foreign):
        return plain, params
    # Whole months from the monthly rollup (a few rows per month), the edge days from transactions.
    rollup = ["window_start >= $m_first", "window_end <= $m_last", "transactions > 0"]
    site = sel.site_clause(params)
    if site:
        rollup.append(site)
    if sel.filters().get(spec.filter):
        rollup.append(f"{spec.filter} = ${spec.filter}")
    edges = f"{where} AND (commission_date < $m_first OR commission_date >= $m_last)"
    sql = f"""SELECT key, NULL::VARCHAR AS detail, sum(revenue) AS revenue, sum(order_value) AS order_value,
        sum(orders) AS orders, sum(returns) AS returns
    FROM (
        SELECT {spec.monthly_key} AS key, revenue, order_value, transactions AS orders, returns
        FROM {spec.monthly} WHERE {" AND ".join(rollup)}
        UNION ALL
        SELECT {spec.key} AS key, publisher_net_revenue, order_value, 1, returned::INT
        FROM {spec.view} WHERE {edges}
    ) GROUP BY 1"""
    return sql, {**params, "m_first": months[0], "m_last": months[1]}


def totals_side(sel: Selection, *, per_day: bool = False) -> tuple[str, dict[str, Any]]:
    """SQL (and parameters) of the selection's transaction figures in total, or per commission day
    (`day`): revenue, order_value, orders, returns. Without a filter the daily rollup answers (a
    fraction of the transactions' rows)."""
    if sel.filtered:
        where, params = sel.where()
        day, measures, view = "commission_date", TXN_MEASURES, "transactions"
    else:
        where, params = sel.where("day", filters=False)
        day, measures, view = "day", ROLLUP_MEASURES, "daily_performance"
    if per_day:
        return f"SELECT {day} AS day, {measures} FROM {view} WHERE {where} GROUP BY 1", params
    return f"SELECT {measures} FROM {view} WHERE {where}", params


def _slicing_filters(spec: DimensionSpec, sel: Selection) -> list[tuple[DimensionSpec, str]]:
    """The filters of `sel` that pick a slice of the service's aggregates (device, country), but
    `spec`'s own, with their values."""
    set_filters = sel.filters()
    return [
        (other, set_filters[other.filter])
        for other in FILTERED
        if other.slice not in (None, "all") and other.filter in set_filters and other.name != spec.name
    ]


def aggregate_slice(dimension: Dimension, sel: Selection) -> tuple[str, str] | None:
    """(key expression, slice condition) over the `networks` view, or None when no stored slice
    answers this dimension under these filters (the service slices by one filter at a time)."""
    wanted = _wanted_slice(dimension, sel)
    if wanted is None:
        return None
    name, every = wanted
    condition = f"slice LIKE '{name}=%'" if every else f"slice = '{name}'"
    return str(DIMENSION_TABLE[dimension].aggregate_key), condition


def _wanted_slice(dimension: Dimension, sel: Selection) -> tuple[str, bool] | None:
    """The stored slice answering this dimension under these filters (`every`: each slice of that
    name, e.g. every country's), or None when none does."""
    spec = DIMENSION_TABLE[dimension]
    if spec.aggregate_key is None or spec.slice is None:
        return None
    chosen = _slicing_filters(spec, sel)
    if spec.slice == "all":  # the unfiltered report, or the one slice a filter names
        if len(chosen) > 1:
            return None
        return (chosen[0][0].slice_of(chosen[0][1]) if chosen else "all"), False
    if chosen:
        return None
    own = sel.filters().get(spec.filter or "")
    return (spec.slice_of(own), False) if own else (spec.slice, True)


def unanswered(
    con: Connection,
    dimension: Dimension,
    sel: Selection,
    metric: Metric,
    what: str,
    ranking: pl.DataFrame | None = None,
) -> str | None:
    """Why no stored report answers the aggregate `metric` (said as `what`) per `dimension` under
    `sel`'s filters: the service does not aggregate it so (`unaggregated`), or the lake never kept
    the slice that would (`unsynced`); None when one does, or for a metric of the transactions.
    `ranking`, its `ranking_frame` when made: one with a value of `metric` is answered, and the
    lake is not asked (a chart's every draw would ask it)."""
    if metric not in AGGREGATE_METRICS:
        return None
    if ranking is not None and metric in ranking.columns and ranking[metric].is_not_null().any():
        return None
    return unaggregated(dimension, sel, what) or unsynced(con, dimension, sel, what)


_NOT_YET = "for these filters yet (a sync fetches it)"


def unsynced(con: Connection, dimension: Dimension, sel: Selection, what: str) -> str | None:
    """Why no stored report answers `what` (clicks, EPC or conversion rate, as said) per
    `dimension` under `sel`'s filters though the service aggregates it: the lake keeps no such
    slice for the sites chosen, over any window (a country's is kept when a sync is asked for it);
    None when it keeps one. An empty ranking would otherwise read as no data."""
    wanted = _wanted_slice(dimension, sel)
    if wanted is None:
        return None
    name, every = wanted
    params: dict[str, Any] = {"slice": f"{name}=%" if every else name}
    clauses = [f"slice {'LIKE' if every else '='} $slice", *sel.network_clauses(params)]
    ((held,),) = con.execute(
        f"SELECT count(*) > 0 FROM networks WHERE {' AND '.join(clauses)}", params
    ).fetchall()
    if held:
        return None
    label = DIMENSION_TABLE[dimension].label.lower()
    country = DIMENSION_TABLE["country"].slice
    if name == country or name.startswith(f"{country}="):
        code = name.partition("=")[2] or "US"
        kept = "for any country" if every else f"for country {code}"
        return (
            f"{what} per {label}: the lake keeps no report of the service {kept} (a sync keeps a "
            f"country's reports when asked: `commerce-reports sync --country {code}`)"
        )
    return f"{what} per {label}: the lake keeps no report of the service {_NOT_YET}"


def unaggregated(dimension: Dimension, sel: Selection, what: str) -> str | None:
    """Why the service aggregates no `what` (clicks, EPC or conversion rate, as said) per
    `dimension` under `sel`'s filters, and what to choose instead; None when a slice answers it
    (`aggregate_slice`). An empty ranking would otherwise read as no data."""
    if aggregate_slice(dimension, sel) is not None:
        return None
    spec = DIMENSION_TABLE[dimension]
    if spec.slice is None:
        kinds = [DIMENSION_TABLE[d].label.lower() for d in AGGREGATED]
        return f"{what} is aggregated by the service only per {', '.join(kinds[:-1])} and {kinds[-1]}"
    chosen = _slicing_filters(spec, sel)
    under = " and ".join(f"{other.label.lower()} {value}" for other, value in chosen)
    names = [other.label.lower() for other, _ in chosen]
    if spec.slice == "all":  # the unfiltered report, or one filter's slice: two filters set
        advice = f"clear the {' or the '.join(names)} filter"
    else:  # its own slices (a country's, over every device): another filter set
        advice = f"clear the {names[0]} filter, or show it per {names[0]}"
    return (
        f"{what}: not aggregated by the service per {spec.label.lower()} for {under} (it slices its "
        f"reports by one filter at a time): {advice}"
    )


def _aggregate_side(dimension: Dimension, sel: Selection) -> tuple[str, dict[str, Any]] | None:
    chosen = aggregate_slice(dimension, sel)
    if chosen is None:
        return None
    key, cond = chosen
    params: dict[str, Any] = {"start": sel.start, "end": sel.end}
    clauses = ["grain = 'month'", "window_start <= $end", "window_end > $start", cond]
    clauses += sel.network_clauses(params)
    sql = f"""SELECT {key} AS key, sum(clicks)::DOUBLE AS clicks,
        CAST(sum(revenue) AS {MONEY_SUM}) AS aggregate_revenue, sum(actions)::DOUBLE AS actions
    FROM networks WHERE {" AND ".join(clauses)} GROUP BY 1"""
    return sql, params


def ranking_frame(
    con: Connection,
    dimension: Dimension,
    sel: Selection,
    *,
    metric: Metric = "revenue",
    top_n: int = 15,
) -> pl.DataFrame:
    """The `top_n` keys of a dimension by `metric`, one row each: key, detail (a page or merchant),
    revenue, order_value, orders, returns, return_rate, clicks, aggregate_revenue, epc,
    conversion_rate, rank."""
    sel = closed(con, sel)
    check_dimension(dimension)
    if metric not in METRICS:
        raise ValidationError("metric", f"{metric!r} is not a metric", f"use one of {', '.join(METRICS)}")
    check_top_n(top_n, 400)
    t_sql, params = transaction_side(dimension, sel)
    aggregate = _aggregate_side(dimension, sel)
    if aggregate is not None:
        a_sql, a_params = aggregate
        params = {**params, **a_params}
        source = f"t FULL JOIN ({a_sql}) AS a USING (key)"
        extra = """clicks, aggregate_revenue, aggregate_revenue / nullif(clicks, 0) AS epc,
       actions / nullif(clicks, 0) AS conversion_rate"""
    else:
        source = "t"
        extra = f"""NULL::DOUBLE AS clicks, NULL::{MONEY_SUM} AS aggregate_revenue, NULL::DOUBLE AS epc,
       NULL::DOUBLE AS conversion_rate"""
    sort = _SORT.get(metric, metric)
    where = f"WHERE {sort} IS NOT NULL" if metric in AGGREGATE_METRICS else ""
    sql = f"""WITH t AS ({t_sql}), r AS (
    SELECT key, detail, coalesce(revenue, 0)::{MONEY_SUM} AS revenue,
           coalesce(order_value, 0)::{MONEY_SUM} AS order_value,
           coalesce(orders, 0)::BIGINT AS orders, coalesce(returns, 0)::BIGINT AS returns,
           (returns / nullif(orders, 0))::DOUBLE AS return_rate, {extra}
    FROM {source}
)
SELECT *, row_number() OVER (ORDER BY {sort} DESC NULLS LAST, key) AS rank
FROM r {where} ORDER BY rank LIMIT {int(top_n)}"""
    return fetch_frame(con, sql, params)


def network_gap_frame(con: Connection, sel: Selection, *, top_n: int = 20) -> pl.DataFrame:
    """Per network: the aggregate's revenue (click date) against the ledger's (commission date) over
    the days both cover, largest absolute gaps first.

    An aggregate is one month window that cannot be cut into days, so a window is compared only
    when the ledger holds every day it covers: from its first day to the day it was fetched (its
    last day when fetched later). A window starting before the ledger's first stored day is left
    out. Columns: key, first_day, last_day (the days compared), aggregate_revenue, revenue,
    revenue_gap, gap_share.
    """
    sel = closed(con, sel)
    check_top_n(top_n)
    for name in ("device", "country"):
        if getattr(sel, name):
            raise ValidationError(
                name, "the revenue gap compares the unfiltered networks report", f"clear the {name} filter"
            )
    params: dict[str, Any] = {"start": sel.start, "end": sel.end}
    site = sel.site_clause(params)
    scope = f" AND {site}" if site else ""
    network = " AND network = $network" if sel.network else ""
    if sel.network:
        params["network"] = sel.network
    sql = f"""WITH ledger AS (
    SELECT site, first_day, last_day FROM ledger_coverage WHERE true{scope}
), windows AS (
    SELECT site, window_start, least(max(window_end) - 1,
           max(timezone('UTC', fetched_at))::DATE) AS covered_to
    FROM networks
    WHERE grain = 'month' AND slice = 'all' AND window_start <= $end AND window_end > $start{scope}
    GROUP BY site, window_start
), compared AS (
    SELECT w.site, w.window_start, w.covered_to
    FROM windows AS w JOIN ledger AS l USING (site)
    WHERE w.window_start >= l.first_day AND w.covered_to <= l.last_day
), a AS (
    SELECT coalesce(network_name, '(unknown)') AS network, sum(revenue) AS aggregate_revenue
    FROM networks JOIN compared USING (site, window_start)
    WHERE grain = 'month' AND slice = 'all'
    GROUP BY 1
), t AS (
    SELECT coalesce(network, '(unknown)') AS network, sum(publisher_net_revenue) AS revenue
    FROM transactions AS x JOIN compared AS c
      ON x.site = c.site AND x.commission_date BETWEEN c.window_start AND c.covered_to
    WHERE x.commission_date BETWEEN (SELECT min(window_start) FROM compared)
                                AND (SELECT max(covered_to) FROM compared)
    GROUP BY 1
)
SELECT network AS key, (SELECT min(window_start) FROM compared) AS first_day,
       (SELECT max(covered_to) FROM compared) AS last_day,
       coalesce(aggregate_revenue, 0)::{MONEY_SUM} AS aggregate_revenue,
       coalesce(revenue, 0)::{MONEY_SUM} AS revenue,
       (coalesce(aggregate_revenue, 0) - coalesce(revenue, 0))::{MONEY_SUM} AS revenue_gap,
       ((coalesce(aggregate_revenue, 0) - coalesce(revenue, 0)) / nullif(aggregate_revenue, 0))::DOUBLE
           AS gap_share
FROM a FULL JOIN t USING (network)
WHERE true{network}
ORDER BY abs(revenue_gap) DESC, key LIMIT {int(top_n)}"""
    return fetch_frame(con, sql, params)


def aggregate_span(con: Connection, sel: Selection) -> tuple[date, date] | None:
    """The days that the month windows of the networks report overlapping the range cover (first
    window's first day to the last one's last day, or the day it was fetched), or None."""
    sel = closed(con, sel)
    params: dict[str, Any] = {"start": sel.start, "end": sel.end}
    site = sel.site_clause(params)
    row = con.execute(
        "SELECT min(window_start), max(least(window_end - 1, timezone('UTC', fetched_at)::DATE)) "
        "FROM networks WHERE grain = 'month' AND window_start <= $end AND window_end > $start"
        + (f" AND {site}" if site else ""),
        params,
    ).fetchall()
    return (row[0][0], row[0][1]) if row and row[0][0] is not None else None


# ----------------------------------------------------------------------------- filter options


def filter_options(con: Connection, site: str | None = None) -> dict[str, list[str]]:
    """The values each filter can take (from the small views): sites, networks, devices, countries."""
    check_connection(con)
    params: dict[str, Any] = {}
    clause = Selection(site=site).site_clause(params)
    where = f"WHERE {clause}" if clause else ""

    def values(sql: str, scoped: bool = True) -> list[str]:
        rows = con.sql(sql, params=params if scoped else {}).fetchall()
        return [str(v) for (v,) in rows if v is not None]

    return {
        "sites": values("SELECT DISTINCT site FROM daily_performance ORDER BY 1", scoped=False),
        "networks": values(f"SELECT DISTINCT network FROM network_performance {where} ORDER BY 1"),
        "devices": values(f"SELECT DISTINCT device FROM device_performance {where} ORDER BY 1"),
        "countries": values(f"SELECT DISTINCT country FROM country_performance {where} ORDER BY 1"),
    }
