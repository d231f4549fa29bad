"""Alerts measured on the sandbox: how many the ordinary world raises (false alarms), and whether a
staged incident is named.

    .venv/bin/python bench/alerts_bench.py [--days 180] [--transactions-per-day 400] [--seed 0]
        [--incident "network=Northwind Affiliates,epc=-50%"] [--data-dir DIR]

Syncs `--days` days of the two demo sites as a daily sync for alerts keeps them (the ledger, and
the networks report per day for every default slice and five countries), from a sandbox frozen at
`--today`; judges every day of that history with a baseline, on the default thresholds, and prints
the alerts (the false-alarm figure) and how long judging them took beside the judging of the last
7 days alone (the same process). Then stages the incident over the last 7 complete days (its
`from=` is filled in), syncs those days again from a sandbox whose world has it, and prints the
alerts of the last week: the incident's network should be named, its driver first. The incidents
replayed day by day, on several seeds: `bench/incidents_bench.py`.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from datetime import time as clock
from pathlib import Path

from commerce_reports.alerting import alerts
from commerce_reports.api import SyncOptions, sync
from commerce_reports.db import connect
from commerce_reports.embedded import sandbox_sites
from commerce_reports.sandbox import Incident, SandboxConfig, run_sandbox

COUNTRIES = ("US", "GB", "DE", "FR", "CA")


def _sync(folder: Path, config: SandboxConfig, first: date, refresh: bool = False) -> float:
    started = time.perf_counter()
    with run_sandbox(config) as running:
        options = SyncOptions(now=lambda: running.sandbox.now, pace=0, progress=False, say=lambda _: None)
        result = sync(
            first,
            sites=sandbox_sites(running),
            data_dir=folder,
            countries=list(COUNTRIES),
            merchandise=[],
            grain="day",
            refresh=refresh,
            options=options,
        )
    if result.failed:
        raise SystemExit(f"the sync failed: {result.failed[0]}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--days", type=int, default=180)
    parser.add_argument("--transactions-per-day", type=int, default=400)
    parser.add_argument("--today", type=date.fromisoformat, default=date(2026, 11, 24))
    parser.add_argument("--seed", type=int, default=0, help="the sandbox's world (0: the demo's)")
    parser.add_argument("--incident", default="network=Northwind Affiliates,epc=-50%")
    parser.add_argument("--data-dir", type=Path, help="default: a temporary folder")
    args = parser.parse_args()
    folder = args.data_dir or Path(tempfile.mkdtemp(prefix="alerts-bench-"))
    now = datetime.combine(args.today, clock(12), tzinfo=UTC)
    first = args.today - timedelta(days=args.days - 1)
    ordinary = SandboxConfig(
        now=now,
        first_day=first - timedelta(days=30),
        pace=0.0,
        transactions_per_day=args.transactions_per_day,
        seed=args.seed,
    )
    seconds = _sync(folder, ordinary, first)
    print(f"synced {args.days} days of alpha and beta into {folder} in {seconds:.0f} s")
    with connect(folder) as con:
        started = time.perf_counter()
        plain = alerts(con, days=args.days, data_dir=folder, now=now)
        took = time.perf_counter() - started
        started = time.perf_counter()
        alerts(con, days=7, data_dir=folder, now=now)
        week = time.perf_counter() - started
    print(f"ordinary world, every day judged ({took:.1f} s; the last 7 days alone: {week:.1f} s):")
    print(plain.describe())
    since = args.today - timedelta(days=7)
    incident = Incident.parse(f"{args.incident},from={since}")
    staged = SandboxConfig(
        now=now,
        first_day=first - timedelta(days=30),
        pace=0.0,
        transactions_per_day=args.transactions_per_day,
        seed=args.seed,
        incidents=(incident,),
    )
    _sync(folder, staged, since, refresh=True)  # the days the incident changed (and later ones)
    with connect(folder) as con:
        week = alerts(con, days=7, data_dir=folder, now=now)
    print(f"with the incident {incident}: {week.describe()}")


if __name__ == "__main__":
    main()
