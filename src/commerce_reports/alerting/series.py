"""The daily series alerts judge, from the DuckDB views, per site and per network, device, country,
merchant and link (the busy ones: a key without the volume any rule needs is not read):

- from the ledger (`transactions`): orders, revenue and the logarithms of the orders' revenue of
  each day *as they were known `age` days after it* (age 0 to 6), by commission date (revenue,
  orders, order value; returns on the day they are recorded) and by click date (the orders and
  revenue of a day's clicks, for EPC and conversion rate). A day of this week is compared with
  the same weekday of past weeks at the same age, so late commissions and adjustments, which a
  recent day has not had time to get, do not read as a change. An order is a transaction that
  earned (its first revenue above zero); a separate return is revenue, not an order;
- from the daily windows of the networks report (`grain = 'day'`, by click date): the clicks, of
  every window fetched after its day ended (clicks are whole then; the service's actions and
  revenue are not, which is why the ledger gives those). The unfiltered slice gives sites and
  networks, `deviceType=` and `country=` slices devices and countries, and a `merchantGroupIds=`
  slice of one merchant that merchant. A lake synced by month only has no daily clicks: clicks,
  EPC and conversion are then not judged, and the alerts say so (`sync --grain day` stores them).
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import TYPE_CHECKING, Any

import duckdb
import polars as pl

from ..charts.dimensions import AGGREGATED, DIMENSION_TABLE
from ..charts.queries import fetch_frame
from ..charts.selection import Selection, site_coverages

if TYPE_CHECKING:
    from ..db.readonly import Connection

__all__ = [
    "LEDGER_PARTS",
    "MAX_AGE",
    "SCOPE_KEYS",
    "SITE_SCOPE",
    "click_series",
    "daily_coverage",
    "ledger_series",
]

SITE_SCOPE = "site"  # the scope of a whole site's series (its key is the site's name)
MAX_AGE = 7  # ages 0..6: a span of up to 7 days ending today holds each of its days at one age
LEDGER_PARTS = ("orders", "revenue", "returns", "log_value", "log_value_sq")
SCOPE_KEYS: dict[str, str] = {
    SITE_SCOPE: "site",
    **{name: DIMENSION_TABLE[name].key for name in AGGREGATED},
    "merchant": DIMENSION_TABLE["merchant"].key,
    "link": "link_url",  # a transaction without click detail has no link: not judged per link
}
"""Each scope's key as SQL over the `transactions` view."""
_MERCHANT_SLICE = "merchantGroupIds="
_WINDOW_COLUMNS = ("site", "slice", "window_start", "network_name", "clicks")


def daily_coverage(con: Connection, sel: Selection) -> dict[str, tuple[date, date]]:
    """Per site, the first stored ledger day and the last one fetched after it ended (complete)."""
    days: dict[str, tuple[date, date]] = {}
    for site, cover in site_coverages(con, sel.sites).items():
        if cover.first is None or cover.last is None:
            continue
        # the last day, when fetched before it ended, is partial
        complete = cover.last if cover.partial is None else cover.last - timedelta(days=1)
        if complete >= cover.first:
            days[site] = (cover.first, complete)
    return days


def ledger_series(
    con: Connection,
    sel: Selection,
    by: str = "commission_date",
    min_orders: dict[str, int] | None = None,
) -> pl.DataFrame:
    """Orders, revenue and the sum (and sum of squares) of the logarithm of each order's revenue
    per site, scope, key, day (`by`: commission_date or click_date) and age (0-6), each as known
    `age` days after the day: a transaction counts once its first version is in the ledger, with
    its latest revenue once that version's update day is reached. By commission date, `returns`
    are the returns *recorded* that day (their update day: a return arrives days to weeks after
    its order, so a wave of returns shows the day it comes, not weeks later on its orders' days).

    `min_orders` maps a scope to the orders its keys need over the selection's days to be read
    (a merchant or link with a handful of orders a month can never be judged); scopes not named
    are not read. Default: every scope, every key."""
    if by not in ("commission_date", "click_date"):
        raise ValueError(f"by: {by!r} is not commission_date or click_date")
    wanted = min_orders if min_orders is not None else dict.fromkeys(SCOPE_KEYS, 0)
    where, params = sel.where(by, filters=False)
    keys = "network, device, country, merchant_group_name, link_url"
    recorded = (
        f"""
    UNION ALL  -- each return on the day it was recorded
    SELECT site, update_date AS day, {keys}, 0 AS first_lag, 0 AS update_lag, 0.0 AS revenue,
           0.0 AS original, NULL::DOUBLE AS log_value, true AS returned
    FROM transactions WHERE returned AND {sel.where("update_date", filters=False)[0]}"""
        if by == "commission_date"
        else ""
    )
    scopes = [
        f"SELECT site, '{scope}' AS scope, ({SCOPE_KEYS[scope]})::VARCHAR AS key, * EXCLUDE (site) FROM t"
        for scope in SCOPE_KEYS
        if scope in wanted
    ]
    busy = " OR ".join(f"(scope = '{scope}' AND orders >= {int(least)})" for scope, least in wanted.items())
    sql = f"""WITH t AS (
    SELECT site, {by} AS day, {keys},
           least(greatest(first_update_date - {by}, 0), {MAX_AGE}) AS first_lag,
           least(greatest(update_date - {by}, 0), {MAX_AGE}) AS update_lag,
           publisher_net_revenue::DOUBLE AS revenue, original_revenue::DOUBLE AS original,
           CASE WHEN original_revenue > 0 THEN ln(original_revenue::DOUBLE) END AS log_value,
           false AS returned
    FROM transactions WHERE {where} AND {by} IS NOT NULL{recorded}
), scoped AS ({" UNION ALL ".join(scopes)}), busy AS (
    SELECT site, scope, key FROM (
        SELECT site, scope, key, count(log_value) AS orders FROM scoped WHERE key IS NOT NULL GROUP BY ALL
    ) WHERE {busy}
), lags AS (  -- the same day's transactions that became known, and changed, after as many days
    SELECT site, scope, key, day, first_lag, update_lag, count(log_value) AS orders,
           sum(revenue) AS latest, sum(original) AS first, count(*) FILTER (WHERE returned) AS returned,
           coalesce(sum(log_value), 0) AS log_value, coalesce(sum(log_value ^ 2), 0) AS log_value_sq
    FROM scoped SEMI JOIN busy USING (site, scope, key) GROUP BY ALL
)
SELECT site, scope, key, day, a.age,
       sum(orders)::DOUBLE AS orders,
       sum(CASE WHEN update_lag <= a.age THEN latest ELSE first END)::DOUBLE AS revenue,
       sum(returned)::DOUBLE AS returns,
       sum(log_value)::DOUBLE AS log_value, sum(log_value_sq)::DOUBLE AS log_value_sq
FROM lags CROSS JOIN (SELECT unnest(range({MAX_AGE}))::INTEGER AS age) AS a
WHERE first_lag <= a.age GROUP BY ALL"""
    return fetch_frame(con, sql, params)


def click_series(con: Connection, sel: Selection) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Clicks per site, scope, key and click day from the daily windows of the networks report
    fetched after their day ended, and the coverage: (site, scope, key, day) of every such window
    (a key without clicks that day had none). The windows are read in one query (each binding of a
    lake view takes a snapshot of the lake), then cut by scope in a private DuckDB."""
    params: dict[str, Any] = {"start": sel.start, "end": sel.end}
    site = sel.site_clause(params)
    scope = f" AND {site}" if site else ""
    columns = ", ".join(_WINDOW_COLUMNS)
    raw = fetch_frame(
        con,
        f"SELECT {columns} FROM networks WHERE grain = 'day' AND window_start BETWEEN $start AND $end"
        f" AND fetched_at >= window_end::TIMESTAMPTZ{scope}",
        params,
    )
    names = _merchant_names(con, sel, raw)
    network = DIMENSION_TABLE["network"]
    parts = [
        f"SELECT site, '{SITE_SCOPE}' AS scope, site AS key, * EXCLUDE (site) FROM w WHERE slice = 'all'",
        f"SELECT site, 'network' AS scope, {network.aggregate_key} AS key, * EXCLUDE (site) FROM w "
        "WHERE slice = 'all'",
        "SELECT w.site, 'merchant' AS scope, m.name AS key, w.* EXCLUDE (site) FROM w "
        "JOIN merchants AS m ON w.slice = m.slice",
    ]
    parts += [
        f"SELECT site, '{spec.name}' AS scope, {_slice_value(spec.name)} AS key, * EXCLUDE (site) FROM w "
        f"WHERE slice LIKE '{spec.slice}=%' AND slice NOT LIKE '%&%'"
        for spec in (DIMENSION_TABLE[name] for name in AGGREGATED)
        if spec.slice != "all"
    ]
    with duckdb.connect() as local:
        local.register("w", raw.to_arrow())
        local.register("merchants", names.to_arrow())
        local.execute(
            f"CREATE VIEW scoped AS SELECT * FROM ({' UNION ALL '.join(parts)}) WHERE key IS NOT NULL"
        )
        frame = local.sql(
            "SELECT site, scope, key, window_start AS day, sum(clicks)::DOUBLE AS clicks FROM scoped "
            "GROUP BY ALL"
        ).pl()
        covered = local.sql("SELECT DISTINCT site, scope, key, slice FROM scoped").pl()
        windows = local.sql("SELECT DISTINCT site, slice, window_start AS day FROM w").pl()
    # A slice's window covers every key of its scope that day, rows or not (no click that day).
    coverage = covered.join(windows, on=["site", "slice"]).select("site", "scope", "key", "day")
    return frame, coverage.unique()


def _slice_value(dimension: str) -> str:
    """SQL: the key a one-filter slice (`deviceType=MBL`, `country=GB`) stands for."""
    spec = DIMENSION_TABLE[dimension]
    value = "split_part(slice, '=', 2)"
    if spec.codes:
        cases = " ".join(f"WHEN '{code}' THEN '{label}'" for label, code in spec.codes.items())
        return f"CASE {value} {cases} END"
    return f"upper({value})"


def _merchant_names(con: Connection, sel: Selection, windows: pl.DataFrame) -> pl.DataFrame:
    """(slice, name) of every one-merchant `merchantGroupIds=` slice among `windows`, the name the
    ledger gives that merchant group (a merchant the ledger never saw keeps its id)."""
    slices = windows.filter(
        pl.col("slice").str.starts_with(_MERCHANT_SLICE) & ~pl.col("slice").str.contains("[,&]")
    )["slice"].unique()
    ids = [int(s.removeprefix(_MERCHANT_SLICE)) for s in slices if s.removeprefix(_MERCHANT_SLICE).isdigit()]
    if not ids:
        return pl.DataFrame(schema={"slice": pl.String, "name": pl.String})
    params: dict[str, Any] = {"ids": ids}
    site = sel.site_clause(params)
    rows = con.execute(
        f"SELECT merchant_group_id, any_value({SCOPE_KEYS['merchant']}) FROM transactions "
        f"WHERE merchant_group_id IN (SELECT unnest($ids)){f' AND {site}' if site else ''} GROUP BY 1",
        params,
    ).fetchall()
    known = {int(number): str(name) for number, name in rows}
    return pl.DataFrame(
        {"slice": [f"{_MERCHANT_SLICE}{i}" for i in ids], "name": [known.get(i, str(i)) for i in ids]}
    )
