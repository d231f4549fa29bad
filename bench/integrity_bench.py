"""What proving the lake's contents costs a daily sync, against the stat checks it replaced.

    .venv/bin/python bench/integrity_bench.py [--days 365] [--rows 5000]

A lake of `--days` stored days of `--rows` transactions each (one sandbox day's answer, stored
under each day as a sync stores it: file, then manifest entry) is published once, as a sync's end
does. Then, in this process, each step of a daily sync that looks at the lake is timed in CPU
seconds, best of three, beside what it did before content was the identity (the baseline, run in
the same process):

- the check at the start of a sync: before, a stat of every file against its entry's size and
  mtime; now, `reconcile` (a stat of every file, its stamp vouching for a known sha256);
- the listing the rollups and the views decide from: before, a stat per file; now, a stat per file
  and a digest looked up;
- storing a day: the new file is hashed as it is written (it was before too) and its intent said;
- a copied or restored lake (every stamp new): every file read once, in MB/s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from commerce_reports.client import ReportsClient
from commerce_reports.contract import PART_FILE, PartitionKey, site_root
from commerce_reports.db import refresh_rollups
from commerce_reports.db.listing import site_listing
from commerce_reports.lake import Manifest, reconcile
from commerce_reports.lake import digests as digest_cache
from commerce_reports.lake.manifest import store_partition
from commerce_reports.sandbox import SandboxConfig, run_sandbox

NOW = datetime(2026, 11, 21, 12, tzinfo=UTC)


def cpu(step: Callable[[], object], rounds: int = 3) -> float:
    """CPU seconds of `step`, the best of `rounds`."""
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        step()
        best = min(best, time.process_time() - started)
    return best


def one_day(rows: int) -> pa.Table:
    config = SandboxConfig(now=NOW, first_day=NOW.date() - timedelta(40), pace=0.0, transactions_per_day=rows)
    with run_sandbox(config) as running:
        site = running.sandbox.config.sites[0]
        with ReportsClient(site.secret_key, running.base_url, pace=0) as client:
            return client.transactions(update_date=NOW.date() - timedelta(3))


def as_day(table: pa.Table, day: datetime) -> pa.Table:
    """The answer as if it were `day`'s (its rows carry that update date)."""
    index = table.schema.get_field_index("update_date")
    dates = pa.array([day.date()] * table.num_rows, table.schema.field(index).type)
    ids = pc.binary_join_element_wise(table["commission_id"], pa.scalar(f"-{day:%Y%m%d}"), "")
    table = table.set_column(index, table.schema.field(index), dates)
    return table.set_column(table.schema.get_field_index("commission_id"), "commission_id", ids)


def stat_check(data_dir: Path) -> None:
    """The check a sync made before: each entry's size and mtime against its file's stat."""
    root = site_root(data_dir, "bench")
    for entry in Manifest.load(data_dir, "bench"):
        stat = os.stat(root / entry.relpath / PART_FILE)
        _ = (stat.st_size, stat.st_mtime_ns) == (entry.size, entry.mtime_ns)


def stat_listing(data_dir: Path) -> None:
    """The listing before: a stat per file."""
    root = site_root(data_dir, "bench")
    for path in root.rglob(PART_FILE):
        os.stat(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--rows", type=int, default=5000)
    args = parser.parse_args()
    table = one_day(args.rows)
    with tempfile.TemporaryDirectory(dir="/tmp") as folder:
        data_dir = Path(folder) / "data"
        first = NOW - timedelta(days=args.days + 3)
        started = time.perf_counter()
        for n in range(args.days):
            day = first + timedelta(days=n)
            store_partition(
                data_dir,
                "bench",
                PartitionKey.transactions(day.date()),
                as_day(table, day),
                NOW,
                settled=True,
            )
        refresh_rollups(data_dir)  # builds the rollups and publishes: the digests are saved
        size = sum(p.stat().st_size for p in (data_dir / "lake").rglob(PART_FILE))
        print(
            f"lake: {args.days} days x {table.num_rows:,} transactions ({size / 1e6:.0f} MB), "
            f"made in {time.perf_counter() - started:.0f} s"
        )

        for step, before, after in (
            ("check at a sync's start", lambda: stat_check(data_dir), lambda: reconcile(data_dir, "bench")),
            (
                "listing (rollups, views)",
                lambda: stat_listing(data_dir),
                lambda: site_listing(data_dir, "bench"),
            ),
        ):
            old, new = cpu(before), cpu(after)
            print(
                f"{step + ':':26} stat (before) {old * 1e3:7.1f} ms   by content (now) {new * 1e3:7.1f} ms"
                f"   {new / old:5.1f}x"
            )

        day = NOW - timedelta(days=2)
        key = PartitionKey.transactions(day.date())
        write = cpu(lambda: store_partition(data_dir, "bench", key, as_day(table, day), NOW))
        print(f"storing a day (hashed as written, intent said): {write * 1e3:.1f} ms a partition")

        copy = Path(folder) / "copy"
        shutil.copytree(data_dir, copy)  # new inodes and change times: every stamp is new
        digest_cache._known.clear()
        started = time.process_time()
        reconcile(copy, "bench")
        cold = time.process_time() - started
        print(
            f"a copied lake, first check: {cold:.2f} s CPU, every file read ({size / 1e6 / cold:.0f} MB/s); "
            f"then {cpu(lambda: reconcile(copy, 'bench')) * 1e3:.1f} ms"
        )


if __name__ == "__main__":
    main()
