"""A sync's plan against the minimum possible, and its wall time against the pace floor.

    .venv/bin/python bench/sync_bench.py [--days 365] [--sites 2] [--countries US,GB,DE]

Runs a real sync over loopback against the sandbox (which enforces no pace here) while the client
keeps the documented 60 s pace on a simulated clock: every lane has its own virtual time, so the
simulated wall time of the sync is that of its slowest lane. Targets (issue 3): planned requests
equal to the minimum; simulated wall time within 2% of the pace floor; a second sync plans zero
(issue 3); the plan's requests and time at the pace within 10% of what the sync made (issue 31).
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from commerce_reports.api import SyncOptions, plan_sync, sync
from commerce_reports.embedded import sandbox_sites
from commerce_reports.sandbox import SandboxConfig, run_sandbox
from commerce_reports.syncing.plan import DEFAULT_MERCHANDISE_SLICES, DEFAULT_NETWORK_SLICES

PACE = 60.0


class LaneClock:
    """Virtual time per thread: a lane's waits move only its own clock, as parallel lanes do."""

    def __init__(self, start: float) -> None:
        self.start = start
        self.local = threading.local()
        self.finished: dict[str, float] = {}
        self.lock = threading.Lock()

    def time(self) -> float:
        return getattr(self.local, "now", self.start)

    def sleep(self, seconds: float) -> None:
        self.local.now = self.time() + max(0.0, seconds)
        with self.lock:
            self.finished[threading.current_thread().name] = self.local.now


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--countries", default="US,GB,DE")
    args = parser.parse_args()
    now = datetime(2026, 11, 21, 12, tzinfo=UTC)
    countries = [c for c in args.countries.split(",") if c]
    config = SandboxConfig(
        now=now, first_day=now.date() - timedelta(days=args.days + 40), pace=0.0, transactions_per_day=20
    )
    with run_sandbox(config) as running, tempfile.TemporaryDirectory() as folder:
        sites = sandbox_sites(running)
        start = now.date() - timedelta(days=args.days - 1)
        clock = LaneClock(now.timestamp())
        options = SyncOptions(now=lambda: running.sandbox.now, clock=clock, pace=PACE, progress=False)
        kwargs = {"sites": sites, "data_dir": Path(folder), "countries": countries, "options": options}
        plan = plan_sync(start, **kwargs)  # type: ignore[arg-type]
        months = len({(start + timedelta(days=n)).replace(day=1) for n in range(args.days)})
        slices = len(DEFAULT_NETWORK_SLICES) + len(countries) + len(DEFAULT_MERCHANDISE_SLICES)
        minimum = len(sites) * (args.days + months * slices)
        print(
            f"range {start} .. {now.date()} ({args.days} days, {months} months), {len(sites)} sites, "
            f"{slices} aggregate slices"
        )
        print(
            f"planned requests {len(plan.requests)}, minimum possible {minimum}: "
            f"{'EQUAL' if len(plan.requests) == minimum else 'DIFFERENT'}"
        )
        started = time.perf_counter()
        result = sync(start, **kwargs)  # type: ignore[arg-type]
        real = time.perf_counter() - started
        served = len(running.sandbox.request_log)
        simulated = max(clock.finished.values()) - now.timestamp()
        longest = max(len(lane) for lane in plan.lanes.values())
        floor = (longest - 1) * PACE
        print(f"requests served {served} (failed {len(result.failed)}), real time {real:.1f} s")
        print(
            f"simulated wall time {simulated / 3600:.2f} h; pace floor of the longest lane "
            f"({longest} requests x {PACE:g} s) {floor / 3600:.2f} h; ratio {simulated / floor:.4f} "
            f"({'within 2%' if simulated <= floor * 1.02 else 'OVER 2%'})"
        )
        off_requests = abs(len(plan.requests) - served) / served
        off_time = abs(plan.fetch_seconds - simulated) / simulated
        print(
            f"the plan announced {len(plan.requests)} requests and {plan.fetch_seconds / 3600:.2f} h at the "
            f"pace, for {served} made in {simulated / 3600:.2f} h: {off_requests:.1%} and {off_time:.1%} off "
            "(target: within 10%, issue 31)"
        )
        serial = sum(len(lane) - 1 for lane in plan.lanes.values()) * PACE
        print(f"the same requests one after another would take {serial / 3600:.1f} h")
        second = plan_sync(start, **kwargs)  # type: ignore[arg-type]
        print(f"second sync plans {len(second.requests)} requests")


if __name__ == "__main__":
    main()
