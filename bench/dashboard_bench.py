"""Dashboard latency and chart size on a 10-million-transaction lake.

    .venv/bin/python bench/make_lake.py                  # once: data/bench-lake (10 M transactions)
    .venv/bin/python bench/dashboard_bench.py [DATA_DIR] [--small-dir DIR]

For each dashboard filter change (query in DuckDB + the chart's Vega-Lite spec) prints the warm
median time (target: under 250 ms), and the spec's size on the big lake and on a small one
(100,000 transactions, written to `data/bench-lake-small` if missing): the sizes must match, since
charts get aggregated rows, never raw ones.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import time
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path

from commerce_reports.charts import Selection
from commerce_reports.db import connect
from commerce_reports.widgets import DashboardState, render_state

TARGET_MS = 250.0
FIRST_DAY = date(2025, 1, 1)
LAST_DAY = FIRST_DAY + timedelta(days=364)
MONTH = Selection(site="bench", start=LAST_DAY - timedelta(days=29), end=LAST_DAY)
YEAR = Selection(site="bench", start=FIRST_DAY, end=LAST_DAY)

CHANGES: dict[str, DashboardState] = {
    "links, last 30 days": DashboardState(MONTH, "link"),
    "links, network filter": DashboardState(replace(MONTH, network="Network 3"), "link"),
    "devices, by EPC": DashboardState(MONTH, "device", "epc"),
    "countries, device filter": DashboardState(replace(MONTH, device="Mobile"), "country"),
    "networks, country filter": DashboardState(replace(MONTH, country="US"), "network"),
    "networks, whole year": DashboardState(YEAR, "network"),
    "products, last 30 days": DashboardState(MONTH, "product"),
    "countries, by orders, year": DashboardState(YEAR, "country", "orders"),
}


def _make_small(folder: Path) -> None:
    spec = importlib.util.spec_from_file_location("make_lake", Path(__file__).with_name("make_lake.py"))
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.make_lake(folder, 100_000, 365)


def _spec_bytes(data_dir: Path, state: DashboardState) -> int:
    con = connect(data_dir)
    try:
        return len(json.dumps(render_state(con, state).chart.to_dict()))
    finally:
        con.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", nargs="?", type=Path, default=Path("data/bench-lake"))
    parser.add_argument("--small-dir", type=Path, default=Path("data/bench-lake-small"))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if not (args.data_dir / "lake").exists():
        raise SystemExit(f"no lake at {args.data_dir}: run bench/make_lake.py first")
    if not (args.small_dir / "lake").exists():
        _make_small(args.small_dir)

    con = connect(args.data_dir)
    rows = con.sql("SELECT count(*) FROM transactions").fetchall()[0][0]
    print(f"lake {args.data_dir}: {rows:,} transactions")
    print(
        f"{'filter change':<30} {'cold ms':>8} {'warm ms':>8} {'rows':>5} "
        f"{'spec bytes':>11} {'small lake':>11}"
    )
    worst = 0.0
    for name, state in CHANGES.items():
        started = time.perf_counter()
        render_state(con, state).chart.to_dict()  # (the stored days read each time, as the dashboard does)
        cold = (time.perf_counter() - started) * 1000
        times = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            rendered = render_state(con, state)
            spec = rendered.chart.to_dict()
            times.append((time.perf_counter() - started) * 1000)
        warm = statistics.median(times)
        worst = max(worst, warm)
        size = len(json.dumps(spec))
        small = _spec_bytes(args.small_dir, state)
        print(f"{name:<30} {cold:>8.0f} {warm:>8.0f} {rendered.data.height:>5} {size:>11,} {small:>11,}")
    verdict = "OK" if worst < TARGET_MS else "OVER TARGET"
    print(f"slowest warm filter change: {worst:.0f} ms (target {TARGET_MS:.0f} ms): {verdict}")


if __name__ == "__main__":
    main()
