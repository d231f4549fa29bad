"""What storing a partition costs once the process knows its keys, against the same writes before.

    .venv/bin/python bench/store_bench.py [--days 30] [--per-day 400]

Every stored table is searched for the keys the process knows, in disguise too (`scrub_table`):
a sync knows its sites' keys, so its writes pay for that search. The bench fetches `--days` days
of transactions from the sandbox over loopback, then writes each day's table into a fresh lake
twice, timed: first with no key known (the baseline), then with the sandbox's two keys known, as
in a sync. Measured here: 4.8 ms a 10-row day without keys, 4.9 ms with them (7.1 and 7.2 ms for
520-row days). Before the search was one pattern over every string column at once (it was three
searches per column, each compiling its pattern), the same bench gave 11.5 and 16.2 ms (15.3 and
18.9 ms).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa

from commerce_reports.client import ReportsClient
from commerce_reports.contract import PartitionKey
from commerce_reports.lake.store import write_partition
from commerce_reports.redaction import register_secret
from commerce_reports.sandbox import SandboxConfig, run_sandbox


def _write_all(folder: Path, tables: list[tuple[PartitionKey, pa.Table]], now: datetime) -> float:
    """Seconds per partition written, the best of three rounds."""
    rounds = []
    for attempt in range(3):
        started = time.perf_counter()
        for key, table in tables:
            write_partition(folder / str(attempt), "alpha", key, table, now)
        rounds.append((time.perf_counter() - started) / len(tables))
    return min(rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--per-day", type=int, default=400)
    args = parser.parse_args()
    now = datetime(2026, 11, 21, 12, tzinfo=UTC)
    first = now.date() - timedelta(days=args.days)
    config = SandboxConfig(
        now=now, first_day=first - timedelta(40), pace=0.0, transactions_per_day=args.per_day
    )
    with run_sandbox(config) as running, tempfile.TemporaryDirectory() as folder:
        site = running.sandbox.config.sites[0]
        with ReportsClient(site.secret_key, running.base_url, pace=0) as client:
            days = [first + timedelta(n) for n in range(args.days)]
            tables = [(PartitionKey.transactions(day), client.transactions(update_date=day)) for day in days]
        rows = sum(table.num_rows for _, table in tables)
        unknown = _write_all(Path(folder) / "unknown", tables, now)
        for known in running.sandbox.config.sites:
            register_secret(known.secret_key)
        known = _write_all(Path(folder) / "known", tables, now)
    print(f"{len(tables)} partitions, {rows / len(tables):.0f} rows each on average")
    print(f"  no key known (baseline): {unknown * 1000:6.1f} ms a partition")
    print(f"  two keys known (a sync): {known * 1000:6.1f} ms a partition  ({known / unknown:.2f}x)")


if __name__ == "__main__":
    main()
