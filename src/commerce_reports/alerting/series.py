"""The daily series alerts judge, from the DuckDB views, per site and per network, device and
country (the dimensions of `charts.dimensions` the service aggregates):

- from the ledger (`transactions`): revenue, orders and returns of each day *as they were known
  `age` days after it* (age 0 to 6), by commission date (for revenue and return rate) and by click
  date (the orders and revenue of a day's clicks, for EPC and conversion rate). A day of this week
  is compared with the same weekday of past weeks at the same age, so late commissions, returns and
  adjustments, which a recent day has not had time to get, do not read as a change;
- from the daily windows of the networks report (`grain = 'day'`, by click date): the clicks.
  The service's own actions and revenue of a recent window are as immature as the ledger's, and
  cannot be taken back to an age; clicks are whole once their day has ended. A lake synced by
  month only has no daily clicks: EPC and conversion are then not checked, and the report says so
  (`commerce-reports sync --grain day` stores them).
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import TYPE_CHECKING, Any

import duckdb
import polars as pl

from ..charts.dimensions import AGGREGATED, DIMENSION_TABLE
from ..charts.queries import fetch_frame
from ..charts.selection import Coverage, Selection

if TYPE_CHECKING:
    from ..db.readonly import Connection

__all__ = ["SITE_SCOPE", "click_series", "daily_coverage", "ledger_series"]

SITE_SCOPE = "site"  # the scope of a whole site's series (its key is the site's name)
_MAX_AGE = 7
_WINDOW_COLUMNS = (
    "site",
    "slice",
    "window_start",
    "window_end",
    "network_name",
    "device_type",
    "country",
    "clicks",
    "fetched_at",
    "complete",
)


def daily_coverage(con: Connection, sel: Selection) -> dict[str, tuple[date, date]]:
    """Per site, the first stored ledger day and the last one fetched after it ended (complete)."""
    params: dict[str, Any] = {}
    scope = sel.site_clause(params)
    rows = con.execute(
        "SELECT site, min(partition_day), max(partition_day), arg_max(fetched_at, partition_day) "
        "FROM transaction_versions WHERE partition_by = 'updateDate'"
        + (f" AND {scope}" if scope else "")
        + " GROUP BY site",
        params,
    ).fetchall()
    days: dict[str, tuple[date, date]] = {}
    for site, first, last, fetched in rows:
        partial = Coverage(first, last, fetched).partial  # the last day, when fetched before it ended
        complete = last if partial is None else last - timedelta(days=1)
        if complete >= first:
            days[str(site)] = (first, complete)
    return days


def ledger_series(con: Connection, sel: Selection, by: str = "commission_date") -> pl.DataFrame:
    """Revenue, orders and returns per site, scope, key, day (`by`: commission_date or click_date)
    and age (0-6), each as known `age` days after the day: a transaction counts once its first
    version is in the ledger, with its latest revenue once that version's update day is reached,
    returned from that day.

    Beside the revenue, what alerts judge it by: each order's revenue capped at the 95th percentile
    of its series' orders (`revenue_capped`, and the sum of its squares: the noise of a sum of
    orders). A week's revenue swings with its few largest orders; the capped sum moves with every
    order (a cut commission, lost orders) and much less with luck."""
    if by not in ("commission_date", "click_date"):
        raise ValueError(f"by: {by!r} is not commission_date or click_date")
    where, params = sel.where(by, filters=False)
    scopes = [f"SELECT site, '{SITE_SCOPE}' AS scope, site AS key, * EXCLUDE (site) FROM t"] + [
        f"SELECT site, '{name}' AS scope, {DIMENSION_TABLE[name].key} AS key, * EXCLUDE (site) FROM t"
        for name in AGGREGATED
    ]
    sql = f"""WITH t AS (
    SELECT site, {by} AS day, first_update_date, update_date, publisher_net_revenue, original_revenue,
           returned, network, device, country
    FROM transactions WHERE {where}
), scoped AS ({" UNION ALL ".join(scopes)}), capped AS (
    SELECT *, quantile_cont(original_revenue, 0.95) OVER (PARTITION BY site, scope, key) AS cap
    FROM scoped
), aged AS (
    SELECT c.*, a.age,
           CASE WHEN c.update_date <= c.day + a.age THEN c.publisher_net_revenue ELSE c.original_revenue END
               AS known_revenue,
           c.returned AND c.update_date <= c.day + a.age AS known_returned
    FROM capped AS c CROSS JOIN (SELECT unnest(range({_MAX_AGE}))::INTEGER AS age) AS a
    WHERE c.first_update_date <= c.day + a.age
)
SELECT site, scope, key, day, age, sum(known_revenue)::DOUBLE AS revenue,
       sum(least(known_revenue, cap))::DOUBLE AS revenue_capped,
       sum(least(known_revenue, cap) ^ 2)::DOUBLE AS revenue_capped_sq,
       count(*)::BIGINT AS orders, count(*) FILTER (WHERE known_returned)::BIGINT AS returns
FROM aged GROUP BY ALL"""
    return fetch_frame(con, sql, params)


def click_series(con: Connection, sel: Selection) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Clicks per site, scope, key and click day from the daily windows of the networks report, and
    the coverage: (site, scope, key, day) of every complete stored window (fetched after its day
    ended, or marked `complete` where the view has that column): a key without clicks that day has
    none. The windows are read in one query (each binding of a lake view takes a snapshot of the
    lake), then cut by scope in a private DuckDB."""
    params: dict[str, Any] = {"start": sel.start, "end": sel.end}
    site = sel.site_clause(params)
    scope = f" AND {site}" if site else ""
    wanted = ", ".join(f"'{c}'" for c in _WINDOW_COLUMNS)  # `complete`: where the view has it
    raw = fetch_frame(
        con,
        f"SELECT COLUMNS(lambda c: c IN ({wanted})) FROM networks "
        f"WHERE grain = 'day' AND window_start BETWEEN $start AND $end{scope}",
        params,
    )
    whole = "complete" if "complete" in raw.columns else "fetched_at >= window_end::TIMESTAMPTZ"
    network = DIMENSION_TABLE["network"]
    parts = [
        f"SELECT site, '{SITE_SCOPE}' AS scope, site AS key, * EXCLUDE (site) FROM w WHERE slice = 'all'",
        f"SELECT site, 'network' AS scope, {network.aggregate_key} AS key, * EXCLUDE (site) FROM w "
        "WHERE slice = 'all'",
    ]
    parts += [
        f"SELECT site, '{spec.name}' AS scope, {spec.aggregate_key} AS key, * EXCLUDE (site) FROM w "
        f"WHERE slice LIKE '{spec.slice}=%'"
        for spec in (DIMENSION_TABLE[name] for name in AGGREGATED)
        if spec.slice != "all"
    ]
    with duckdb.connect() as local:
        local.register("raw", raw.to_arrow())
        local.execute(f"CREATE TABLE w AS SELECT * FROM raw WHERE {whole}")
        frame = local.sql(
            f"""WITH scoped AS ({" UNION ALL ".join(parts)})
SELECT site, scope, key, window_start AS day, sum(clicks)::DOUBLE AS clicks
FROM scoped WHERE key IS NOT NULL GROUP BY ALL"""
        ).pl()
        # A slice's window covers every key of its scope that day, rows or not (no click that day).
        covered = local.sql("SELECT DISTINCT site, slice, window_start AS day FROM w").pl()
    return frame, _key_coverage(frame.select("site", "scope", "key").unique(), covered)


def _key_coverage(keys: pl.DataFrame, covered: pl.DataFrame) -> pl.DataFrame:
    """(site, scope, key, day) for each key and each day its slice holds a complete window."""
    slice_of = {
        spec.name: spec.slice_of
        for spec in (DIMENSION_TABLE[name] for name in AGGREGATED)
        if spec.slice not in (None, "all")
    }
    named = keys.with_columns(
        slice=pl.struct("scope", "key").map_elements(
            lambda row: slice_of[row["scope"]](row["key"]) if row["scope"] in slice_of else "all",
            return_dtype=pl.String,
        )
    )
    return named.join(covered, on=["site", "slice"]).select("site", "scope", "key", "day")
