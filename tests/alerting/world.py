"""The sandbox's world as the views alerts read, without files: an in-memory DuckDB whose tables
`transactions`, `ledger_coverage`, `networks` (daily windows) and `daily_performance` hold
what a daily sync would have stored by `now` (the ledger's updateDate days up to yesterday, each
fetched the morning after; the networks report per day for every slice), computed from the
sandbox's `World` directly. A lake of ten weeks builds in seconds, where a sync over loopback takes
minutes: what the per-rule behaviour tests and the incident benchmark replay run on.

The tables hold the views' columns that alerts and explanations read (`series.py`, `explain.py`);
`tests/alerting/test_world.py` checks them against a lake synced from the same world."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime, time, timedelta

import duckdb
import polars as pl

from commerce_reports.sandbox import Incident
from commerce_reports.sandbox.catalog import COUNTRIES, DEVICE_CODES, DEVICES, busiest
from commerce_reports.sandbox.world import LAG_DAYS, World, day_number

SYNCED_AT = time(6)  # the daily sync's hour (UTC): each day is fetched the morning after it ends
COUNTRY_SLICES = ("US", "GB", "DE", "FR", "CA")
MERCHANT_SLICES = 5  # the busiest merchants of each site get a merchantGroupIds slice
_EPOCH = date(1970, 1, 1)


def world_lake(
    *,
    seed: int,
    now: datetime,
    days: int,
    sites: tuple[str, ...] = ("alpha",),
    transactions_per_day: int = 200,
    incidents: Iterable[Incident] = (),
) -> duckdb.DuckDBPyConnection:
    """What a daily sync of `days` days up to `now` would hold, as an in-memory DuckDB."""
    world = World(seed, sites, now.date() - timedelta(days=days + 60), transactions_per_day, tuple(incidents))
    first = now.date() - timedelta(days=days - 1)
    con = duckdb.connect()
    ledgers, windows, stored = [], [], []
    for site in sites:
        ledgers.append(_transactions(world, site, first, now))
        windows.append(_windows(world, site, first, now))
        stored.append(_ledger(site, first, now))
    con.register("transactions_frame", pl.concat(ledgers).to_arrow())
    con.register("networks_frame", pl.concat(windows).to_arrow())
    con.register("ledger_frame", pl.concat(stored).to_arrow())
    con.execute(
        "CREATE TABLE transactions AS SELECT * REPLACE ("
        "publisher_net_revenue::DECIMAL(18,4) AS publisher_net_revenue, "
        "original_revenue::DECIMAL(18,4) AS original_revenue, order_value::DECIMAL(18,4) AS order_value) "
        "FROM transactions_frame"
    )
    con.execute("CREATE TABLE networks AS SELECT * FROM networks_frame")
    con.execute("CREATE TABLE ledger_coverage AS SELECT * FROM ledger_frame")
    con.execute("CREATE VIEW daily_performance AS SELECT DISTINCT site FROM transactions")
    for name in ("transactions_frame", "networks_frame", "ledger_frame"):
        con.unregister(name)
    return con


def _ledger(site: str, first: date, now: datetime) -> pl.DataFrame:
    """The site's row of `ledger_coverage`: every updateDate day up to `now`'s stored, the day of
    `now` fetched partial, at `now`."""
    return pl.DataFrame(
        {"site": [site], "first_day": [first], "last_day": [now.date()], "last_fetched_at": [now]}
    )


def _transactions(world: World, site: str, first: date, now: datetime) -> pl.DataFrame:
    """The `transactions` view over the updateDate days first..today: per commission, its latest
    stored version, with the first stored version's update day and revenue. Clicks from more than
    `LAG_DAYS` before the first day are left out (their commissions are all before it; only a few
    of their returns fall inside), which spares generating six weeks of the world."""
    links = world.catalog(site).link_frame
    versions = world.versions(site, first - timedelta(days=LAG_DAYS + 1), now.date(), now).filter(
        pl.col("update_day") >= day_number(first)
    )
    ordered = versions.sort("cid", "update_ts", "version")
    named = ordered.group_by("cid", maintain_order=True).agg(
        pl.all().last(),
        pl.col("update_day").first().alias("first_update_day"),
        pl.col("revenue_cents").first().alias("original_cents"),
        pl.col("order_cents").first().alias("original_order_cents"),
    )
    detail = pl.col("detail")
    return named.join(links, on="link", how="left").select(
        pl.lit(site).alias("site"),
        pl.col("cid").alias("commission_id"),
        _date("commission_day").alias("commission_date"),
        _date("update_day").alias("update_date"),
        pl.when(detail).then(_date("click_day")).alias("click_date"),
        _date("first_update_day").alias("first_update_date"),
        (pl.col("revenue_cents") / 100).alias("publisher_net_revenue"),
        (pl.col("original_cents") / 100).alias("original_revenue"),
        (pl.col("order_cents") / 100).alias("order_value"),
        (
            (pl.col("revenue_cents") < 0)
            | (pl.col("revenue_cents") < pl.col("original_cents"))
            | (pl.col("order_cents") < pl.col("original_order_cents"))
        ).alias("returned"),
        pl.col("network"),
        pl.when(detail)
        .then(pl.col("device").replace_strict(list(range(len(DEVICES))), [d or "Unknown" for d in DEVICES]))
        .otherwise(pl.lit("Unknown"))
        .alias("device"),
        pl.when(detail)
        .then(pl.col("country").replace_strict(list(range(len(COUNTRIES))), list(COUNTRIES)))
        .alias("country"),
        pl.col("merchant_group_id").cast(pl.Int64),
        pl.col("merchant_group_name"),
        pl.when(detail).then(pl.col("link_url")).alias("link_url"),
    )


def _date(column: str) -> pl.Expr:
    return pl.lit(_EPOCH) + pl.duration(days=pl.col(column))


def _windows(world: World, site: str, first: date, now: datetime) -> pl.DataFrame:
    """The networks report per click day and slice (all, each device, `COUNTRY_SLICES`, the busiest
    merchants), each fetched the morning after its day; `complete` once fetched two days after."""
    catalog = world.catalog(site)
    links = catalog.link_frame.select("link", "network", "merchant_group_id")
    last = now.date() - timedelta(days=1)  # today's window is not fetched after its day yet
    clicks = (
        world.clicks(site, first, last, now).join(links, on="link").with_columns(day=pl.col("ts") // 86_400)
    )
    slices = [("all", pl.lit(True))]
    slices += [(f"deviceType={code}", pl.col("device") == n) for n, code in enumerate(DEVICE_CODES)]
    slices += [
        (f"country={code}", pl.col("country") == COUNTRIES.index(code.lower())) for code in COUNTRY_SLICES
    ]
    slices += [
        (f"merchantGroupIds={m}", pl.col("merchant_group_id") == m)
        for m in busiest(catalog, "merchant_group_id", MERCHANT_SLICES)
    ]
    frames = []
    for name, condition in slices:
        rows = (
            clicks.filter(condition).group_by("day", "network").agg(pl.len().cast(pl.Int64).alias("clicks"))
        )
        frames.append(rows.with_columns(pl.lit(name).alias("slice")))
    day = _date("day")
    fetched = pl.min_horizontal(
        (day + pl.duration(days=3, hours=SYNCED_AT.hour)).cast(pl.Datetime("us", "UTC")), pl.lit(now)
    )  # the copy a daily sync keeps last: the morning two days after the first
    settled = (day + pl.duration(days=3)).cast(pl.Datetime("us", "UTC"))  # two days after the window ends
    return pl.concat(frames).select(
        pl.lit(site).alias("site"),
        day.alias("window_start"),
        (day + pl.duration(days=1)).alias("window_end"),
        pl.lit("day").alias("grain"),
        pl.col("slice"),
        pl.col("network").alias("network_name"),
        pl.col("clicks"),
        fetched.alias("fetched_at"),
        (fetched >= settled).alias("complete"),
    )
