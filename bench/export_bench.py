"""Writing a large view: every output format against CSV (the baseline), measured in the same run.

    .venv/bin/python bench/export_bench.py [--rows 1000000]
    .venv/bin/python bench/export_bench.py --lake DATA_DIR

The table has the shape of the `transactions` view (text, ids, DECIMAL(18,4) money, dates, a
timestamp with its zone, booleans, a nested column) and goes through `cr.export` as a polars frame,
so each figure is the whole path a notebook or `sql --output` takes. `--lake` exports a lake's own
`transactions` view instead (41 columns; the bench lake of `make_lake.py` holds 1 M rows at
`--transactions 1000000`), as SQL read from the lake, the path `sql --output` takes. Target (issue:
nothing slow without a word): xlsx within 3x the time of CSV. CPU seconds of this process and wall
seconds are both printed, each against CSV's, with the load average: quote the ratios.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import polars as pl

import commerce_reports as cr
from commerce_reports.export import OUTPUT_FORMATS


def _view(rows: int) -> pl.DataFrame:
    """A `transactions`-shaped frame of `rows` rows (deterministic)."""
    ids = pl.int_range(0, rows, eager=True)
    return pl.DataFrame(
        {
            "site": pl.Series(["alpha", "beta"] * (rows // 2) + ["alpha"] * (rows % 2)),
            "commission_id": ids * 7919,
            "merchant_name": pl.Series([f"Merchant {n % 977}" for n in range(rows)]),
            "order_value": pl.Series(
                [Decimal(n % 100_000) / 100 for n in range(rows)], dtype=pl.Decimal(18, 4)
            ),
            "publisher_net_revenue": pl.Series(
                [Decimal(n % 9_000) / 100 for n in range(rows)], dtype=pl.Decimal(18, 4)
            ),
            "commission_date": pl.Series([date(2026, 1, 1) + timedelta(days=n % 330) for n in range(rows)]),
            "fetched_at": pl.Series(
                [datetime(2026, 11, 27, 6, 0, tzinfo=UTC) + timedelta(seconds=n % 3600) for n in range(rows)]
            ),
            "returned": (ids % 13 == 0),
            "device_type": pl.Series(["Mobile", "Desktop", "Tablet"] * (rows // 3) + ["Mobile"] * (rows % 3)),
            "products": pl.Series([[{"sku": f"S{n % 50}", "quantity": 1 + n % 3}] for n in range(rows)]),
        }
    )


def _timed(data: pl.DataFrame | str, path: Path, lake: Path | None) -> tuple[float, float]:
    began_cpu, began = time.process_time(), time.perf_counter()
    cr.export(data, path, data_dir=lake, progress=False)  # (None: the configured lake, unread for a frame)
    return time.process_time() - began_cpu, time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the view (default 1,000,000)")
    parser.add_argument("--lake", type=Path, help="export this data folder's transactions view instead")
    args = parser.parse_args()
    data: pl.DataFrame | str
    if args.lake is None:
        data = _view(args.rows)
        shape = f"{args.rows:,} rows x {data.width} columns"
    else:
        data = "SELECT * FROM transactions"
        shape = f"the transactions view of {args.lake}"
    load = " ".join(f"{n:.2f}" for n in os.getloadavg())
    print(f"load average {load}; {shape}")
    with tempfile.TemporaryDirectory(prefix="export-bench-") as folder:
        baseline: tuple[float, float] | None = None
        for name in ("csv", *(f for f in OUTPUT_FORMATS if f != "csv")):
            path = Path(folder) / f"view.{OUTPUT_FORMATS[name].suffixes[0].lstrip('.')}"
            cpu, wall = _timed(data, path, args.lake)
            base_cpu, base_wall = baseline = baseline or (cpu, wall)
            target = (
                "  (target < 3x csv: " + ("met)" if max(cpu / base_cpu, wall / base_wall) < 3 else "MISSED)")
                if name == "xlsx"
                else ""
            )
            print(
                f"{name:<8} CPU {cpu:7.2f} s  {cpu / base_cpu:5.2f}x csv  wall {wall:7.2f} s  "
                f"{wall / base_wall:5.2f}x csv  {path.stat().st_size / 2**20:8.1f} MiB{target}"
            )
            path.unlink()  # (a lake's view is large: one file at a time)


if __name__ == "__main__":
    main()
