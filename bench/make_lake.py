"""Write a synthetic lake of 10 million transactions over 365 days, in the lake's exact layout.

    .venv/bin/python bench/make_lake.py [DATA_DIR] [--transactions 10000000] [--days 365]

DATA_DIR defaults to `data/bench-lake` (git-ignored). One site, `bench`: every transaction's first
version on its commission day, ~4% returned later (an adjusted version of the same commission id,
or a separate negative transaction, by network), ~3% without click detail; plus month slices of
the networks and merchandise aggregates (`all`, each deviceType, five countries). Everything is
generated inside DuckDB from hashes of the row number, so it is deterministic and takes seconds.
"""

from __future__ import annotations

import argparse
import shutil
import time
from datetime import date
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

from commerce_reports.contract import PART_FILE, PartitionKey, dataset_schema, site_root
from commerce_reports.lake.repair import rebuild
from commerce_reports.params import Filters

SITE = "bench"
FIRST_DAY = date(2025, 1, 1)
DEVICES = ("Mobile", "Desktop", "Tablet")  # null = unknown
COUNTRIES = [
    "us",
    "gb",
    "de",
    "fr",
    "ca",
    "au",
    "nl",
    "es",
    "it",
    "se",
    "ie",
    "in",
    "br",
    "mx",
    "jp",
    "nz",
    "be",
    "ch",
    "at",
    "dk",
]
SLICES = (
    Filters(),
    *(Filters(device_type=d) for d in ("MBL", "DSK", "TBL", "UKN")),
    *(Filters(country=c) for c in ("US", "GB", "DE", "FR", "CA")),
)

# h(k) is a deterministic pseudo-random integer per row and purpose.
_BASE = """
WITH base AS (
    SELECT i, i * {days} // {n} AS cday, h(i, 'link') % 3000 AS link, h(i, 'link') % 3000 % 300 AS m,
           h(i, 'place') % 1000 AS place, h(i, 'detail') % 100 < 3 AS no_detail,
           h(i, 'lag') % 3 AS lag, h(i, 'ret') % 1000 AS ret, 1 + h(i, 'rday') % 30 AS rdays,
           CASE WHEN h(i, 'items') % 10 < 6 THEN 1 + h(i, 'nitems') % 3 ELSE 0 END AS n_items,
           19.0 + (h(i, 'order') % 30000) / 100.0 AS order_value
    FROM range({n}) t(i)
), shaped AS (
    SELECT *, 'ck' || i AS cid, m % 20 AS network_no, (m % 20) % 3 = 0 AS separate,
           DATE '{first}' + cday::INT AS commission_date, round(order_value * 0.06, 2) AS revenue
    FROM base
), versions AS (
    SELECT *, 0 AS v, commission_date AS update_date, order_value AS ov, revenue AS rev, cid AS tid
    FROM shaped
    UNION ALL
    SELECT *, 1 AS v, commission_date + rdays::INT, CASE WHEN separate THEN -order_value ELSE 0 END,
           -revenue, CASE WHEN separate THEN cid || 'r' ELSE cid END
    FROM shaped WHERE ret < 40 AND cday + rdays < {days}
)
SELECT
    'updateDate' AS by, update_date AS day,
    1234567::BIGINT AS account_id, (100 + link % 12)::BIGINT AS campaign_id,
    'Campaign ' || (link % 12) AS campaign_name, 'rv' || tid AS revenue_id, tid AS commission_id,
    CASE WHEN v = 1 AND separate THEN update_date ELSE commission_date END AS commission_date,
    update_date, ov::DECIMAL(18, 4) AS order_value, rev::DECIMAL(18, 4) AS publisher_net_revenue,
    CASE WHEN m % 7 = 0 THEN 'cpc' ELSE 'cpa' END AS program_type,
    CASE WHEN no_detail THEN NULL ELSE 'c' || i END AS click_id,
    CASE WHEN no_detail THEN NULL ELSE commission_date - lag::INT END AS click_date,
    CASE WHEN no_detail OR link % 3 = 0 THEN NULL ELSE 'cu-' || link END AS cuid,
    {link_utm}, {page_utm},
    CASE WHEN no_detail THEN NULL ELSE 'https://bench.example/page-' || (link % 320) END AS page_url,
    CASE WHEN no_detail THEN NULL ELSE 'https://merchant-' || m || '.com/p/' || link END AS link_url,
    CASE WHEN no_detail THEN NULL ELSE ['Link', 'JavaScript', 'Link API'][1 + link % 3] END
        AS partner_product,
    NULL::VARCHAR AS partner_product_sub_type,
    CASE WHEN no_detail THEN NULL ELSE {countries}[1 + (place % {n_countries})] END AS country,
    CASE WHEN no_detail OR place >= 970 THEN NULL ELSE {devices}[1 + place % 3] END AS device,
    (10000 + m)::BIGINT AS merchant_group_id, 'Merchant ' || m AS merchant_group_name,
    'Network ' || network_no AS network,
    list_transform(range(n_items), lambda k: {{
        'product_id': (10000 + m) || '-' || ((link + k) % 24),
        'product_name': 'Product ' || m || '-' || ((link + k) % 24),
        'price': round(order_value / n_items, 2)::DECIMAL(18, 4), 'quantity': 1.0::DOUBLE}}) AS products,
    NULL::VARCHAR AS extra,
    (update_date + 1)::TIMESTAMPTZ AS fetched_at
FROM versions
ORDER BY update_date, commission_id
"""


# The answer's totals (the bench has none to keep): the columns, typed, empty.
_NO_TOTALS = "NULL::VARCHAR AS totals, NULL::DECIMAL(18, 4) AS total_revenue"
_NO_TOTALS_AFTER = "NULL::DECIMAL(18, 4) AS total_sales, NULL::DOUBLE AS total_actions"


def _utm(prefix: str) -> str:
    keys = ("source", "medium", "campaign", "term", "content")
    return ", ".join(
        f"CASE WHEN no_detail OR (link + {k}) % 4 = 0 THEN NULL ELSE '{prefix}{k}-' || (link % {3 + k}) END"
        f" AS {prefix}_utm_{key}"
        for k, key in enumerate(keys)
    )


def _rename_parts(folder: Path) -> int:
    """DuckDB names partition files `data_0.parquet`; the lake wants exactly `part.parquet`."""
    count = 0
    for written in folder.rglob("data_*.parquet"):
        target = written.with_name(PART_FILE)
        if target.exists():
            raise SystemExit(f"two files in one partition: {written.parent}")
        written.rename(target)
        count += 1
    return count


def make_lake(data_dir: Path, n: int, days: int) -> None:
    site = site_root(data_dir, SITE)
    if site.exists():
        shutil.rmtree(site)
    con = duckdb.connect(config={"preserve_insertion_order": False})
    con.execute("CREATE MACRO h(i, what) AS (hash(i, what) % 1000000007)::BIGINT")
    query = _BASE.format(
        n=n,
        days=days,
        first=FIRST_DAY.isoformat(),
        link_utm=_utm("link"),
        page_utm=_utm("page"),
        countries="[" + ", ".join(f"'{c}'" for c in COUNTRIES) + "]",
        n_countries=len(COUNTRIES),
        devices="[" + ", ".join(f"'{d}'" for d in DEVICES) + "]",
    )
    started = time.perf_counter()
    con.execute(f"CREATE TEMP TABLE versions AS {query}")
    rows = con.execute("SELECT count(*) FROM versions").fetchone()
    print(f"generated {rows[0] if rows else 0:,} versions in {time.perf_counter() - started:.1f} s")
    folder = site / "transactions"
    folder.mkdir(parents=True)
    con.execute(
        f"COPY versions TO '{folder}' (FORMAT parquet, COMPRESSION zstd, PARTITION_BY (\"by\", day),"
        " OVERWRITE_OR_IGNORE true)"
    )
    print(f"wrote {_rename_parts(folder)} day partitions in {time.perf_counter() - started:.1f} s")
    _write_aggregates(con, site)
    _check_schema(site)
    rebuild(data_dir, SITE, why="of a generated lake")  # a file no manifest entry vouches for is never read
    print(f"lake ready at {data_dir} in {time.perf_counter() - started:.1f} s")


def _write_aggregates(con: duckdb.DuckDBPyConnection, site: Path) -> None:
    """Month slices from the generated current state (click date, as the service aggregates)."""
    con.execute(
        "CREATE TEMP TABLE state AS SELECT * FROM versions "
        "QUALIFY row_number() OVER (PARTITION BY commission_id ORDER BY update_date DESC) = 1"
    )
    months = [
        m
        for (m,) in con.execute(
            "SELECT DISTINCT date_trunc('month', click_date)::DATE FROM state WHERE click_date IS NOT NULL"
        ).fetchall()
    ]
    codes = {"MBL": "Mobile", "DSK": "Desktop", "TBL": "Tablet"}
    for filters in SLICES:
        where = "true"
        if filters.device_type is not None:
            label = codes.get(filters.device_type.value)
            where = f"device = '{label}'" if label else "device IS NULL"
        elif filters.country is not None:
            where = f"upper(country) = '{filters.country}'"
        stamp = ", ".join(
            f"{'NULL' if v is None else repr(v)}::VARCHAR AS {k}" for k, v in filters.as_columns().items()
        )
        for month in months:
            for dataset, select in (
                (
                    "networks",
                    "network AS network_name, sum(publisher_net_revenue)::DECIMAL(18, 4) AS revenue, "
                    "(count(*) * 25)::DOUBLE AS clicks, sum(order_value)::DECIMAL(18, 4) AS sales, "
                    "count(*)::DOUBLE AS actions, count(*) / (count(*) * 25.0) AS conversion_rate, "
                    "round(sum(publisher_net_revenue) / (count(*) * 25), 4)::DECIMAL(18, 4) AS epc, "
                    f"{_NO_TOTALS}, NULL::DOUBLE AS total_clicks, {_NO_TOTALS_AFTER}",
                ),
                (
                    "merchandise",
                    "p.product_name, merchant_group_name, merchant_group_id, "
                    "round(sum(publisher_net_revenue / len(products)), 4)::DECIMAL(18, 4) AS revenue, "
                    "sum(p.price)::DECIMAL(18, 4) AS sales, count(*)::DOUBLE AS actions, "
                    f"{_NO_TOTALS}, {_NO_TOTALS_AFTER}",
                ),
            ):
                key = PartitionKey.aggregate(dataset, month, filters, "month")  # type: ignore[arg-type]
                folder = site / key.relpath
                folder.mkdir(parents=True, exist_ok=True)
                source = "state" if dataset == "networks" else "(SELECT *, unnest(products) AS p FROM state)"
                group = (
                    "network"
                    if dataset == "networks"
                    else "p.product_name, merchant_group_name, merchant_group_id"
                )
                con.execute(
                    f"COPY (SELECT {select}, NULL::VARCHAR AS extra, DATE '{month}' AS window_start, "
                    f"DATE '{key.end}' AS window_end, {stamp}, now()::TIMESTAMPTZ AS fetched_at "
                    f"FROM {source} WHERE click_date >= DATE '{month}' AND click_date < DATE '{key.end}' "
                    f"AND {where} GROUP BY {group}) TO '{folder / PART_FILE}' (FORMAT parquet, COMPRESSION "
                    "zstd)"
                )


def _check_schema(site: Path) -> None:
    """The generated files hold exactly the columns (and types) the sync writes."""
    for dataset in ("transactions", "networks", "merchandise"):
        first = next((site / dataset).rglob(PART_FILE))
        written = pq.read_schema(first)
        expected = dataset_schema(dataset)
        if written.names != expected.names:
            raise SystemExit(f"{dataset}: columns {written.names} != {expected.names}")
        for field in expected:
            got = written.field(field.name).type
            if str(got).replace("element", "item") != str(field.type).replace("element", "item"):
                raise SystemExit(f"{dataset}.{field.name}: {got} != {field.type}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", nargs="?", type=Path, default=Path("data/bench-lake"))
    parser.add_argument("--transactions", type=int, default=10_000_000)
    parser.add_argument("--days", type=int, default=365)
    args = parser.parse_args()
    make_lake(args.data_dir, args.transactions, args.days)


if __name__ == "__main__":
    main()
