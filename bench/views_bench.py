"""Each performance view for a 30-day window, warm, beside the same question hand-written against
the raw Parquet files of the lake.

    .venv/bin/python bench/make_lake.py                 # once: 10 M transactions, 365 days
    .venv/bin/python bench/views_bench.py [DATA_DIR] [--start 2025-06-01] [--repeat 5] [--no-baseline]

Targets: every view under 20 ms warm (at any size: 100 M transactions included), and at most 1.3x
the raw query's time. The raw queries
answer the same question from the lake files alone: the latest version of each transaction (update
days from the window's start on: a version is never dated before its commission), then the sums.
Rollups are refreshed first if stale (that time is printed too: it is paid once per sync). Then what
opening `connect()` costs (its views installed, each bound where a query reads it), beside a plain
in-memory `duckdb.connect()`.
`--no-baseline` times the views alone, against the 20 ms target: at 100 M transactions each raw
query reads every version of the window's transactions, about 90 s a question.
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import date, timedelta
from pathlib import Path

import duckdb

from commerce_reports.db import connect, refresh_rollups

TARGET = 0.020  # seconds: every view, warm
_LAKE = "read_parquet('{root}/site=*/transactions/by=*/day=*/part.parquet', hive_partitioning = true)"
_AGG = "read_parquet('{root}/site=*/networks/slice=*/grain=*/start=*/part.parquet', hive_partitioning = true)"


def _raw_current(root: Path, start: date) -> str:
    return (
        f"(SELECT * FROM {_LAKE.format(root=root)} WHERE day >= DATE '{start}' "
        "QUALIFY row_number() OVER (PARTITION BY site, commission_id ORDER BY update_date DESC, fetched_at "
        "DESC) = 1)"
    )


def _questions(root: Path, start: date, end: date) -> dict[str, tuple[str, str]]:
    """view -> (query on the view, the same question on the raw files)."""
    days = f"BETWEEN DATE '{start}' AND DATE '{end}'"
    current = _raw_current(root, start)
    month = start.replace(day=1)
    measures = "sum(publisher_net_revenue) AS revenue, count(*) AS transactions"
    aggregate = _AGG.format(root=root)
    return {
        "link_performance": (
            "SELECT link_url, sum(revenue) AS revenue, sum(transactions) AS transactions FROM "
            "link_performance "
            f"WHERE day {days} GROUP BY link_url ORDER BY revenue DESC LIMIT 50",
            f"SELECT link_url, {measures} FROM {current} WHERE commission_date {days} "
            "GROUP BY link_url ORDER BY revenue DESC LIMIT 50",
        ),
        "daily_performance": (
            f"SELECT day, revenue, transactions, returns FROM daily_performance WHERE day {days} ORDER BY "
            "day",
            f"SELECT commission_date, {measures}, count(*) FILTER (WHERE publisher_net_revenue < 0) "
            f"FROM {current} WHERE commission_date {days} GROUP BY 1 ORDER BY 1",
        ),
        "device_performance": (
            "SELECT device, revenue, clicks, epc FROM device_performance WHERE window_start = DATE "
            f"'{month}'",
            f"SELECT coalesce(device, 'Unknown') AS device, {measures} FROM {current} "
            f"WHERE date_trunc('month', commission_date) = DATE '{month}' GROUP BY 1",
        ),
        "country_performance": (
            "SELECT country, revenue, clicks, epc FROM country_performance WHERE window_start = DATE "
            f"'{month}'",
            f"SELECT upper(country), {measures} FROM {current} "
            f"WHERE date_trunc('month', commission_date) = DATE '{month}' GROUP BY 1",
        ),
        "network_performance": (
            f"SELECT network, revenue, aggregate_revenue, revenue_gap, epc FROM network_performance "
            f"WHERE window_start = DATE '{month}'",
            f"WITH t AS (SELECT network, {measures} FROM {current} "
            f"WHERE date_trunc('month', commission_date) = DATE '{month}' GROUP BY 1), "
            "a AS (SELECT network_name AS network, sum(revenue) AS agg, sum(clicks) AS clicks FROM "
            f"{aggregate} "
            f"WHERE start = DATE '{month}' AND slice = 'all' AND grain = 'month' GROUP BY 1) "
            "SELECT network, revenue, agg, agg - revenue, agg / clicks FROM t FULL JOIN a USING (network)",
        ),
        "merchandise_performance": (
            "SELECT product_name, merchant_group_id, revenue, aggregate_revenue FROM "
            "merchandise_performance "
            f"WHERE window_start = DATE '{month}' ORDER BY revenue DESC LIMIT 50",
            "SELECT p.product_name, merchant_group_id, sum(publisher_net_revenue / len(products)) AS "
            "revenue "
            f"FROM (SELECT *, unnest(products) AS p FROM {current} "
            f"WHERE date_trunc('month', commission_date) = DATE '{month}') GROUP BY ALL ORDER BY revenue "
            "DESC LIMIT 50",
        ),
        "site_performance": (
            "SELECT revenue, transactions, clicks, epc FROM site_performance WHERE window_start = DATE "
            f"'{month}'",
            f"SELECT {measures} FROM {current} WHERE date_trunc('month', commission_date) = DATE '{month}'",
        ),
    }


def _warm(con: duckdb.DuckDBPyConnection, sql: str, repeat: int) -> float:
    con.execute(sql).fetchall()  # warm: file metadata and OS cache
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        con.execute(sql).fetchall()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def opening_time(data_dir: Path, repeat: int) -> tuple[float, float]:
    """Median seconds to open `connect(data_dir)` and close it (the views it installs are bound
    where a query reads them), beside a plain in-memory `duckdb.connect()`."""
    times: dict[str, list[float]] = {"views": [], "plain": []}
    for _ in range(repeat):
        for side, opener in (("views", lambda: connect(data_dir)), ("plain", duckdb.connect)):
            started = time.perf_counter()
            opener().close()
            times[side].append(time.perf_counter() - started)
    return statistics.median(times["views"]), statistics.median(times["plain"])


def view_times(con: duckdb.DuckDBPyConnection, root: Path, start: date, repeat: int) -> dict[str, float]:
    """Each view's question over the 30 days from `start`, warm median seconds (`bench/growth_bench.py`
    reads these at every size)."""
    end = start + timedelta(days=29)
    return {
        name: _warm(con, view_sql, repeat) for name, (view_sql, _) in _questions(root, start, end).items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", nargs="?", type=Path, default=Path("data/bench-lake"))
    parser.add_argument("--start", type=date.fromisoformat, default=date(2025, 6, 1))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--baseline",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="time the raw query of each question too (--no-baseline: the views alone)",
    )
    args = parser.parse_args()
    started = time.perf_counter()
    refreshed = [result.site for result in refresh_rollups(args.data_dir)]
    print(
        f"rollups: {'refreshed ' + ', '.join(refreshed) if refreshed else 'fresh'} "
        f"({time.perf_counter() - started:.1f} s)"
    )
    end = args.start + timedelta(days=29)
    root = (args.data_dir / "lake").resolve()
    opened, plain = opening_time(args.data_dir, args.repeat)
    print(f"connect(): {opened * 1000:.1f} ms to open and close (duckdb.connect(): {plain * 1000:.1f} ms)")
    con = connect(args.data_dir)
    raw = duckdb.connect()
    print(
        f"30-day window {args.start}..{end} (month views: {args.start.replace(day=1)}), warm median of "
        f"{args.repeat}"
    )
    print(f"{'view':<26}{'view ms':>10}{'raw ms':>10}{'ratio':>8}  verdict")
    failures = 0
    for name, view_s in view_times(con, root, args.start, args.repeat).items():
        raw_s = _warm(raw, _questions(root, args.start, end)[name][1], args.repeat) if args.baseline else None
        ok = view_s < TARGET and (raw_s is None or view_s <= 1.3 * raw_s)
        failures += not ok
        compared = f"{'-':>10}{'-':>8}" if raw_s is None else f"{raw_s * 1000:>10.1f}{view_s / raw_s:>8.3f}"
        print(f"{name:<26}{view_s * 1000:>10.1f}{compared}  {'ok' if ok else 'MISSED'}")
    raise SystemExit(1 if failures else 0)


if __name__ == "__main__":
    main()
