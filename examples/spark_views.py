"""The toolkit's views on Apache Spark, over a data folder that `commerce-reports sync` filled.

    python examples/spark_views.py DATA_DIR                 # a local Spark on every core
    spark-submit examples/spark_views.py DATA_DIR           # or on a cluster: --master ...

Needs `pip install -e '.[spark]'` and a Java runtime (17 or later). On a cluster the data folder
must be shared storage that the driver and every executor see at the same path.
"""

from __future__ import annotations

import argparse
import sys

from commerce_reports.errors import CommerceReportsError
from commerce_reports.spark import INSTALL_HINT, register_views


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", help="the data folder holding lake/ (COMMERCE_REPORTS_DATA_DIR)")
    parser.add_argument("--rows", type=int, default=10, help="rows shown per view (default 10)")
    args = parser.parse_args(argv)
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        print(f"error: pyspark is not installed: {INSTALL_HINT}", file=sys.stderr)
        return 2

    spark = (
        SparkSession.builder.appName("commerce-reports views")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        views = register_views(spark, args.data_dir)
        print(f"{len(views)} views registered: {', '.join(views)}\n")
        print("Revenue and clicks per site and month (site_performance):")
        spark.sql(
            "SELECT site, window_start, round(revenue, 2) AS revenue, transactions, returns, clicks, "
            "round(epc, 4) AS epc FROM site_performance ORDER BY site, window_start"
        ).show(args.rows, truncate=False)
        print("Top networks of the latest month (network_performance):")
        spark.sql(
            "SELECT site, window_start, network, round(revenue, 2) AS revenue, transactions, clicks, "
            "round(revenue_gap, 2) AS revenue_gap FROM network_performance "
            "WHERE window_start = (SELECT max(window_start) FROM network_performance) "
            "ORDER BY revenue DESC NULLS LAST"
        ).show(args.rows, truncate=False)
    except CommerceReportsError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
