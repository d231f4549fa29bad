"""Write a synthetic lake of any size in the lake's exact layout, in constant memory.

    .venv/bin/python bench/make_lake.py [DATA_DIR] [--transactions 10000000] [--days 365] [--memory 1GB]

DATA_DIR defaults to `data/bench-lake` (git-ignored; big lakes belong outside the clone, e.g.
/work/bench-lakes/100m). One site, `bench`: every transaction's first version on its commission day,
~4% returned later (an adjusted version of the same commission id, or a separate negative
transaction, by network), ~3% without click detail; plus month slices of the networks and
merchandise aggregates (`all`, each deviceType, five countries), and the site's manifest, rebuilt
from the files by the lake's own `lake.repair.rebuild` (an entry per partition with its sha256,
settled as a sync leaves a past day: the views read only what an entry vouches for). Every value
is a hash of the transaction's number, so the lake is deterministic.

It streams: the ledger is written a few update days at a time (a *chunk* of about `CHUNK_ROWS`
versions: the transactions earned on those days, and the returns dated on them, drawn from the 30
days before), and each chunk adds its transactions' current state to small month cubes (network
or product by device, and by country) from which a month's aggregate files are written once no
later chunk can add to it. So memory holds one chunk and two months of cubes whatever the size, and
DuckDB spills to `DATA_DIR/.make-lake-spill` past `--memory`. The chunking changes no byte of the
ledger (`tests/db/test_bench_lake.py` builds a lake in chunks and in one).
"""

from __future__ import annotations

import argparse
import shutil
import time
from datetime import date, timedelta
from pathlib import Path
from typing import NamedTuple

import duckdb
import pyarrow.parquet as pq

from commerce_reports.contract import PART_FILE, PartitionKey, dataset_schema, site_root
from commerce_reports.lake.repair import rebuild
from commerce_reports.params import Filters
from commerce_reports.syncing import SettlePolicy

SITE = "bench"
# Every ledger day was fetched the day after it (its rows' fetched_at): settled, as a sync leaves a
# past day once it has settled; the windows by their horizon, as a sync's policy says.
_SETTLED = SettlePolicy(update_days=timedelta(0))
FIRST_DAY = date(2025, 1, 1)
CHUNK_ROWS = 500_000  # versions per chunk of update days: what memory holds at a time
MAX_CHUNK_DAYS = 60  # DuckDB keeps a file open per partition written by one COPY
RETURN_DAYS = 30  # a return is dated 1 to 30 days after its transaction
MAX_CLICK_LAG = 2  # a click is 0 to 2 days before its commission
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
_SLICE_COUNTRIES = [f.country for f in SLICES if f.country is not None]
_DEVICE_LABELS = {"MBL": "Mobile", "DSK": "Desktop", "TBL": "Tablet"}  # UKN: no device

# The versions dated on update days [d0, d1): the transactions earned on them (numbers [lo, hi)),
# and the returns of those earned since `lo_returns`, drawn first by one hash so that the 30 days
# before a chunk cost a hash per transaction. h(k, purpose) is a pseudo-random integer per row.
_VERSIONS = """
WITH drawn AS (
    SELECT i, i * {days} // {n} AS cday, h(i, 'ret') % 1000 AS ret
    FROM range({lo_returns}, {hi}) t(i)
), kept AS (
    SELECT *, 1 + h(i, 'rday') % {return_days} AS rdays FROM drawn WHERE i >= {lo} OR ret < 40
), base AS (
    SELECT i, cday, ret, rdays, h(i, 'link') % 3000 AS link, h(i, 'link') % 3000 % 300 AS m,
           h(i, 'place') % 1000 AS place, h(i, 'detail') % 100 < 3 AS no_detail,
           h(i, 'lag') % {lags} AS lag,
           CASE WHEN h(i, 'items') % 10 < 6 THEN 1 + h(i, 'nitems') % 3 ELSE 0 END AS n_items,
           19.0 + (h(i, 'order') % 30000) / 100.0 AS order_value
    FROM kept WHERE i >= {lo} OR (ret < 40 AND cday + rdays >= {d0} AND cday + rdays < {d1})
), shaped AS (
    SELECT *, 'ck' || i AS cid, m % 20 AS network_no, (m % 20) % 3 = 0 AS separate,
           ret < 40 AND cday + rdays < {days} AS returned,
           DATE '{first}' + cday::INT AS commission_date, round(order_value * 0.06, 2) AS revenue
    FROM base
), versions AS (
    SELECT *, 0 AS v, commission_date AS update_date, order_value AS ov, revenue AS rev, cid AS tid
    FROM shaped WHERE i >= {lo}
    UNION ALL
    SELECT *, 1 AS v, commission_date + rdays::INT, CASE WHEN separate THEN -order_value ELSE 0 END,
           -revenue, CASE WHEN separate THEN cid || 'r' ELSE cid END
    FROM shaped WHERE returned AND cday + rdays >= {d0} AND cday + rdays < {d1}
)
SELECT
    update_date AS day, v AS _v, returned AS _returned, separate AS _separate,
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

# The current state of the chunk's transactions earned in it, from their first versions alone (the
# returns of later chunks included): the first version unless a return replaced it (an adjustment of
# the same id), and the return (same click, negative revenue; a separate one also a negative order).
_STATE = """
SELECT date_trunc('month', click_date)::DATE AS month, network, device, upper(country) AS country,
       merchant_group_id, merchant_group_name, products, publisher_net_revenue AS revenue, order_value
FROM chunk WHERE _v = 0 AND click_date IS NOT NULL AND NOT (_returned AND NOT _separate)
UNION ALL
SELECT date_trunc('month', click_date)::DATE, network, device, upper(country), merchant_group_id,
       merchant_group_name, products, -publisher_net_revenue, CASE WHEN _separate THEN -order_value ELSE 0 END
FROM chunk WHERE _v = 0 AND click_date IS NOT NULL AND _returned
"""


class _Cube(NamedTuple):
    """A dataset's month cubes: what their rows are grouped by (beside month and device or
    country), their partial sums (which add up across chunks), and a window's row made of them.
    (A NamedTuple: `tests/` and the other benches load this script by its path.)"""

    keys: str
    measures: str
    window: str

    @property
    def group(self) -> str:
        return self.keys.replace("p.", "")


_CUBES = {
    "networks": _Cube(
        "network",
        "sum(revenue)::DECIMAL(38, 4) AS revenue, count(*) AS actions, "
        "sum(order_value)::DECIMAL(38, 4) AS sales",
        "network AS network_name, sum(revenue)::DECIMAL(18, 4) AS revenue, (sum(actions) * 25)::DOUBLE "
        "AS clicks, sum(sales)::DECIMAL(18, 4) AS sales, sum(actions)::DOUBLE AS actions, "
        "sum(actions) / (sum(actions) * 25.0) AS conversion_rate, "
        "round(sum(revenue) / (sum(actions) * 25), 4)::DECIMAL(18, 4) AS epc, "
        "NULL::VARCHAR AS totals, NULL::DECIMAL(18, 4) AS total_revenue, NULL::DOUBLE AS total_clicks, "
        "NULL::DECIMAL(18, 4) AS total_sales, NULL::DOUBLE AS total_actions",
    ),
    "merchandise": _Cube(
        "p.product_name, merchant_group_name, merchant_group_id",
        "sum(revenue / len(products)) AS revenue, sum(p.price)::DECIMAL(38, 4) AS sales, count(*) AS actions",
        "product_name, merchant_group_name, merchant_group_id, round(sum(revenue), 4)::DECIMAL(18, 4) "
        "AS revenue, sum(sales)::DECIMAL(18, 4) AS sales, sum(actions)::DOUBLE AS actions, "
        "NULL::VARCHAR AS totals, NULL::DECIMAL(18, 4) AS total_revenue, "
        "NULL::DECIMAL(18, 4) AS total_sales, NULL::DOUBLE AS total_actions",
    ),
}
_CUBE_BY = ("device", "country")


def _utm(prefix: str) -> str:
    keys = ("source", "medium", "campaign", "term", "content")
    return ", ".join(
        f"CASE WHEN no_detail OR (link + {k}) % 4 = 0 THEN NULL ELSE '{prefix}{k}-' || (link % {3 + k}) END"
        f" AS {prefix}_utm_{key}"
        for k, key in enumerate(keys)
    )


def _first(day: int, n: int, days: int) -> int:
    """The number of the first transaction earned on day `day` (counted from FIRST_DAY)."""
    return -(-day * n // days)


def _chunks(n: int, days: int, rows: int) -> list[tuple[int, int]]:
    """Update days [d0, d1) of about `rows` versions each."""
    width = max(1, min(MAX_CHUNK_DAYS, rows * days // max(n, 1)))
    return [(d0, min(d0 + width, days)) for d0 in range(0, days, width)]


def _quoted(values: list[str] | tuple[str, ...]) -> str:
    return "[" + ", ".join(f"'{v}'" for v in values) + "]"


def _versions_sql(n: int, days: int, d0: int, d1: int) -> str:
    return _VERSIONS.format(
        n=n,
        days=days,
        d0=d0,
        d1=d1,
        lo=_first(d0, n, days),
        hi=_first(d1, n, days),
        lo_returns=_first(max(0, d0 - RETURN_DAYS), n, days),
        return_days=RETURN_DAYS,
        lags=MAX_CLICK_LAG + 1,
        first=FIRST_DAY.isoformat(),
        link_utm=_utm("link"),
        page_utm=_utm("page"),
        countries=_quoted(COUNTRIES),
        n_countries=len(COUNTRIES),
        devices=_quoted(DEVICES),
    )


def _cube_select(dataset: str, by: str, source: str) -> str:
    """SQL: the partial sums of `source`'s current state for one cube (`dataset` by `by`)."""
    cube = _CUBES[dataset]
    rows = f"(SELECT *, unnest(products) AS p FROM ({source}))" if dataset == "merchandise" else f"({source})"
    where = f"country IN ({_quoted(_SLICE_COUNTRIES)[1:-1]})" if by == "country" else "true"
    return f"SELECT month, {cube.keys}, {by}, {cube.measures} FROM {rows} WHERE {where} GROUP BY ALL"


def _connect(spill: Path, memory: str) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection that spills past `memory`, with the hash macro and the empty cubes."""
    con = duckdb.connect(config={"memory_limit": memory, "temp_directory": str(spill)})
    con.execute("SET enable_progress_bar = false")
    con.execute("CREATE MACRO h(i, what) AS (hash(i, what) % 1000000007)::BIGINT")
    con.execute(f"CREATE TEMP TABLE chunk AS {_versions_sql(1, 1, 0, 0)} LIMIT 0")
    for dataset in _CUBES:
        for by in _CUBE_BY:
            con.execute(f"CREATE TEMP TABLE {dataset}_by_{by} AS {_cube_select(dataset, by, _STATE)} LIMIT 0")
    return con


def _write_days(con: duckdb.DuckDBPyConnection, site: Path, d0: int, d1: int) -> int:
    """Write the chunk's update days [d0, d1) as ledger partitions; return how many versions."""
    columns = ", ".join(dataset_schema("transactions").names)
    for offset in range(d0, d1):
        day = FIRST_DAY + timedelta(days=offset)
        target = site / PartitionKey.transactions(day).relpath / PART_FILE
        target.parent.mkdir(parents=True)
        con.execute(
            f"COPY (SELECT {columns} FROM chunk WHERE day = DATE '{day}') TO '{target}' "
            "(FORMAT parquet, COMPRESSION zstd)"
        )
    (count,) = con.execute("SELECT count(*) FROM chunk").fetchall()[0]
    return int(count)


def _add_to_cubes(con: duckdb.DuckDBPyConnection) -> None:
    """Add the current state of the chunk's transactions to the month cubes."""
    for dataset in _CUBES:
        for by in _CUBE_BY:
            con.execute(f"INSERT INTO {dataset}_by_{by} {_cube_select(dataset, by, _STATE)}")


def _write_months(con: duckdb.DuckDBPyConnection, site: Path, fetched: date, until: date | None) -> None:
    """Write every slice's aggregate windows of the click months in the cubes that end by `until`
    (None: all), then drop those months from the cubes."""
    bound = "true" if until is None else f"month + INTERVAL 1 MONTH <= DATE '{until}'"
    months = con.execute(f"SELECT DISTINCT month FROM networks_by_device WHERE {bound} ORDER BY 1").fetchall()
    for (month,) in months:
        for filters in SLICES:
            for dataset in _CUBES:
                _write_window(con, site, dataset, month, filters, fetched)
    for dataset in _CUBES:
        for by in _CUBE_BY:
            con.execute(f"DELETE FROM {dataset}_by_{by} WHERE {bound}")


def _write_window(
    con: duckdb.DuckDBPyConnection, site: Path, dataset: str, month: date, filters: Filters, fetched: date
) -> None:
    """One month window of one slice of `dataset`, from its cube."""
    cube = _CUBES[dataset]
    if filters.country is not None:
        table, where = f"{dataset}_by_country", f"country = '{filters.country}'"
    else:
        table, where = f"{dataset}_by_device", "true"
        if filters.device_type is not None:
            label = _DEVICE_LABELS.get(filters.device_type.value)
            where = f"device = '{label}'" if label else "device IS NULL"
    stamp = ", ".join(
        f"{'NULL' if v is None else repr(v)}::VARCHAR AS {k}" for k, v in filters.as_columns().items()
    )
    key = PartitionKey.aggregate(dataset, month, filters, "month")
    target = site / key.relpath / PART_FILE
    target.parent.mkdir(parents=True)
    con.execute(
        f"COPY (SELECT {cube.window}, NULL::VARCHAR AS extra, DATE '{month}' AS window_start, "
        f"DATE '{key.end}' AS window_end, {stamp}, TIMESTAMPTZ '{fetched}' AS fetched_at "
        f"FROM {table} WHERE month = DATE '{month}' AND {where} GROUP BY {cube.group} ORDER BY {cube.group}) "
        f"TO '{target}' (FORMAT parquet, COMPRESSION zstd)"
    )


def make_lake(
    data_dir: Path, n: int, days: int, *, chunk_rows: int = CHUNK_ROWS, memory: str = "1GB", say: bool = True
) -> int:
    """Write the bench site's lake of `n` transactions over `days` days into `data_dir` (its site
    folder replaced), about `chunk_rows` versions at a time; return how many versions it holds."""
    site = site_root(data_dir, SITE)
    if site.exists():
        shutil.rmtree(site)
    spill = Path(data_dir) / ".make-lake-spill"
    spill.mkdir(parents=True, exist_ok=True)
    fetched = FIRST_DAY + timedelta(days=days)  # every window fetched the day after the last one
    started = time.perf_counter()
    versions = 0
    con = _connect(spill, memory)
    try:
        for d0, d1 in _chunks(n, days, chunk_rows):
            con.execute(f"INSERT INTO chunk {_versions_sql(n, days, d0, d1)}")
            versions += _write_days(con, site, d0, d1)
            _add_to_cubes(con)
            con.execute("DELETE FROM chunk")
            # a click month is whole once no later transaction can have been clicked in it
            _write_months(con, site, fetched, FIRST_DAY + timedelta(days=d1 - MAX_CLICK_LAG))
            if say:
                elapsed = time.perf_counter() - started
                print(f"  update days {d0 + 1}-{d1} of {days}: {versions:,} versions, {elapsed:.0f} s")
        _write_months(con, site, fetched, None)
    finally:
        con.close()
        shutil.rmtree(spill, ignore_errors=True)
    _check_schema(site)
    # the site's manifest, from its files as the lake rebuilds one (a file no entry vouches for is never read)
    rebuild(Path(data_dir), SITE, _SETTLED, why="of a generated lake", trusted=True)
    if say:
        print(f"lake ready at {data_dir}: {versions:,} versions in {time.perf_counter() - started:.1f} s")
    return versions


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
    parser.add_argument("--memory", default="1GB", help="DuckDB's memory limit, past which it spills")
    args = parser.parse_args()
    make_lake(args.data_dir, args.transactions, args.days, memory=args.memory)


if __name__ == "__main__":
    main()
