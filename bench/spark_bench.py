"""Two views over the whole year on Spark `local[2]` and on DuckDB, on the same lake, in one process.

    .venv/bin/python bench/make_lake.py                 # once: 10 M transactions, 365 days
    .venv/bin/python bench/spark_bench.py [DATA_DIR] [--repeat 1] [--driver-memory 4g]

For information: the point of Spark is equal answers on lakes larger than one machine, not a race
on 2 cores. Both engines compute from the lake's files (DuckDB's `live` views, no rollups), fetch
every row, and are warmed by one read of the ledger first; the best of `--repeat` runs is printed.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from commerce_reports.db import connect
from commerce_reports.spark import register_views

VIEWS = ("daily_performance", "network_performance")


def best(run: Callable[[], int], repeat: int) -> tuple[float, int]:
    """The shortest of `repeat` runs in seconds, and the rows the last run returned."""
    times, rows = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        rows = run()
        times.append(time.perf_counter() - start)
    return min(times), rows


def spark_session(driver_memory: str) -> Any:
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("commerce-reports spark_bench")
        .config("spark.driver.memory", driver_memory)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", nargs="?", type=Path, default=Path("data/bench-lake"))
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--driver-memory", default="4g", help="Spark driver heap (local mode: all of Spark)")
    args = parser.parse_args()

    con = connect(args.data_dir)
    versions = con.execute("SELECT count(*) FROM live.transaction_versions").fetchone()
    print(f"lake {args.data_dir}: {versions[0] if versions else 0:,} transaction versions")
    spark = spark_session(args.driver_memory)
    start = time.perf_counter()
    register_views(spark, args.data_dir)
    print(f"Spark local[2] {spark.version}: views registered in {time.perf_counter() - start:.1f} s")
    spark.sql("SELECT count(*) FROM transaction_versions").collect()  # warm: JVM, file cache
    con.execute("SELECT count(*) FROM live.transaction_versions").fetchall()

    print(f"\n{'view (whole year)':<24}{'rows':>7}{'DuckDB s':>11}{'Spark s':>10}{'Spark/DuckDB':>14}")
    for view in VIEWS:
        duck, duck_rows = best(
            lambda v=view: len(con.execute(f"SELECT * FROM live.{v}").fetchall()), args.repeat
        )
        sparks, spark_rows = best(lambda v=view: len(spark.sql(f"SELECT * FROM {v}").collect()), args.repeat)
        if duck_rows != spark_rows:
            raise SystemExit(f"{view}: {duck_rows} rows on DuckDB but {spark_rows} on Spark")
        print(f"{view:<24}{duck_rows:>7}{duck:>11.2f}{sparks:>10.2f}{sparks / duck:>13.1f}x")
    spark.stop()
    con.close()


if __name__ == "__main__":
    main()
