"""A month of daily syncs against the sandbox, with revisions: requests per site and day, the plan
against what was made, and every final window against the service.

    .venv/bin/python bench/daily_syncs_bench.py [--days 30] [--warm-up 60] [--transactions 200]

One site, the default slices (unfiltered and per device type; merchandise unfiltered), a sync at
06:00 UTC on each day of the sandbox's clock, at the documented pace of 60 s per endpoint kept on a
virtual clock per lane (as `sync_bench.py`: the lanes run side by side, so a sync takes its slowest
lane). The sandbox serves late commissions (up to 10 days after the click) and returns (up to 30
days after the commission), so every month changes for weeks after it ended.

After a first sync of 90 days and `--warm-up` daily syncs, `--days` daily syncs are counted: the
requests each made (what the sandbox served), what `sync --plan` announced before it (requests and
the time at the pace), and the age of every revisable window's copy. The baseline, in the same run,
is the policy of round 3 on a copy of the lake as the counted month begins: every window the ledger
shows changed asked again each day, a week at most between two copies, nothing budgeted
(`SettlePolicy(revision_lag=0.01, revision_max_age=7 days, revision_budget=10**6)`).

Asserted (issue 31): at most 11 requests per site and day on average over the counted days and 13 on
any day; the plan within 10% of the requests made and of the time at the pace, every day; every
final window's stored rows equal to the service's answer now, to the cent; no window left due for
longer than the policy's slack after a sync.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script or loaded by a test
from sync_bench import PACE, LaneClock  # virtual time per lane, as sync_bench keeps it


class Day(NamedTuple):
    moment: datetime
    made: int
    planned: int
    eta: float  # seconds at the pace, as the plan announced them
    took: float  # seconds at the pace, as the lanes' virtual clocks counted them
    reasons: Counter[str]
    lanes: Counter[str]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--warm-up", type=int, default=60)
    parser.add_argument("--transactions", type=int, default=200, help="transactions a day in the sandbox")
    args = parser.parse_args()
    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="daily-syncs-cache-")  # pace and cost state
    from commerce_reports.sandbox import SandboxConfig, run_sandbox

    start = datetime(2026, 1, 1, 6, tzinfo=UTC)
    config = SandboxConfig(
        now=start, first_day=date(2025, 8, 1), pace=0.0, transactions_per_day=args.transactions
    )
    with tempfile.TemporaryDirectory() as folder, run_sandbox(config) as running:
        lake, fork = Path(folder) / "lake", Path(folder) / "fork"
        started, cpu = time.perf_counter(), time.process_time()
        _sync(running, lake, first=True)
        for number in range(args.warm_up):
            running.sandbox.advance(timedelta(days=1))
            _sync(running, lake)
            print(f"warm-up: {number + 1}/{args.warm_up} daily syncs", file=sys.stderr, flush=True)
        shutil.copytree(lake, fork)
        counted: list[Day] = []
        lags: dict[int, float] = {}
        for _ in range(args.days):
            running.sandbox.advance(timedelta(days=1))
            counted.append(_sync(running, lake))
            for weeks, lag in _lags(running, lake).items():
                lags[weeks] = max(lags.get(weeks, 0.0), lag)
            print(f"counted: {len(counted)}/{args.days} daily syncs", file=sys.stderr, flush=True)
        final = _final_windows_equal_the_service(running, lake)
        seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
        running.sandbox.advance(timedelta(days=-args.days))
        from commerce_reports.syncing import SettlePolicy

        old = SettlePolicy(revision_lag=0.01, revision_max_age=timedelta(days=7), revision_budget=10**6)
        os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="daily-syncs-baseline-")  # its own pace
        baseline = []
        for _ in range(args.days):
            running.sandbox.advance(timedelta(days=1))
            baseline.append(_sync(running, fork, policy=old))
            print(f"baseline: {len(baseline)}/{args.days} daily syncs", file=sys.stderr, flush=True)
    _report(counted, baseline, final, lags, seconds, cpu_seconds, args)


def _sync(running: object, lake: Path, *, first: bool = False, policy: object = None) -> Day:
    """One daily sync of the site `alpha` (first: 90 days of ledger), with its plan beforehand."""
    from commerce_reports.api import SyncOptions, plan_sync, sync
    from commerce_reports.embedded import sandbox_sites
    from commerce_reports.lake import Manifest
    from commerce_reports.syncing import SettlePolicy
    from commerce_reports.syncing.revisions import LedgerSignal

    sandbox = running.sandbox  # type: ignore[attr-defined]
    moment = sandbox.now
    site = sandbox_sites(running)[0]  # type: ignore[arg-type]
    clock = LaneClock(moment.timestamp())
    chosen = policy if isinstance(policy, SettlePolicy) else SettlePolicy()
    options = SyncOptions(
        policy=chosen, now=lambda: sandbox.now, clock=clock, pace=PACE, progress=False, say=lambda _: None
    )
    start = moment.date() - timedelta(days=89) if first else None
    plan = plan_sync(start, sites=[site], data_dir=lake, options=options)
    before = len(sandbox.request_log)
    result = sync(start, sites=[site], data_dir=lake, options=options)
    if not result.ok:
        raise SystemExit(f"the sync of {moment} failed: {result.summary()}")
    made = len(sandbox.request_log) - before
    took = max(clock.finished.values(), default=clock.start) - clock.start
    manifest = Manifest.load(lake, site.name)
    ledger = LedgerSignal.of(manifest)
    mine = chosen.with_horizon(site.revision_days)
    late = [
        e.key.describe()
        for e in manifest
        if e.key.dataset != "transactions" and (due := mine.due(e, moment, ledger)) is not None and due.forced
    ]
    if late:
        raise SystemExit(f"{moment}: windows left due beyond the slack: {late}")
    return Day(
        moment,
        made,
        len(plan.requests),
        plan.fetch_seconds,
        took,
        Counter(r.reason for r in result.plan.requests),
        Counter(r.key.dataset for r in result.plan.requests),
    )


def _final_windows_equal_the_service(running: object, lake: Path) -> int:
    """Every final window's stored rows, slice by slice, against the service's answer now."""
    import polars as pl

    from commerce_reports.client import ReportsClient
    from commerce_reports.contract import PartitionKey
    from commerce_reports.embedded import sandbox_sites
    from commerce_reports.lake import Manifest
    from commerce_reports.params import Filters

    site = sandbox_sites(running)[0]  # type: ignore[arg-type]
    client = ReportsClient(site.secret_key, site.base_url, pace=0)
    keys = {"networks": ["network_name"], "merchandise": ["product_name", "merchant_group_id"]}
    checked = 0
    with client:
        for window in Manifest.load(lake, site.name).windows():
            if not window.final:
                continue
            filters = Filters.from_canonical(window.slice)
            key = PartitionKey.aggregate(window.dataset, window.start, filters, "month")  # type: ignore[arg-type]
            fetch = client.networks if window.dataset == "networks" else client.merchandise
            served = pl.from_arrow(fetch(window.start, window.end, filters))
            stored = pl.read_parquet(lake / "lake" / f"site={site.name}" / key.relpath / "part.parquet")
            columns = [*keys[window.dataset], "revenue", "sales", "actions"]
            ours = stored.select(columns).sort(keys[window.dataset])
            theirs = served.select(columns).sort(keys[window.dataset])  # type: ignore[union-attr]
            if not ours.equals(theirs):
                raise SystemExit(f"final window {window.dataset} [{window.slice}] {window.start} differs")
            checked += 1
    return checked


def _lags(running: object, lake: Path) -> dict[int, float]:
    """The oldest copy (days) among the revisable windows, by whole weeks since the window ended."""
    from commerce_reports.lake import Manifest

    now = running.sandbox.now  # type: ignore[attr-defined]
    found: dict[int, float] = {}
    for window in Manifest.load(lake, "alpha").windows():
        age = now - datetime.combine(window.end, datetime.min.time(), UTC)
        if window.final or age < timedelta(0):
            continue
        weeks = age.days // 7
        found[weeks] = max(found.get(weeks, 0.0), (now - window.fetched_at).total_seconds() / 86400)
    return found


def _report(
    counted: list[Day],
    baseline: list[Day],
    final: int,
    lags: dict[int, float],
    seconds: float,
    cpu_seconds: float,
    args: argparse.Namespace,
) -> None:
    print(
        f"one site, default slices (5 networks, 1 merchandise), {args.transactions} transactions a day; "
        f"daily syncs at 06:00 UTC; {args.warm_up} days of warm-up, then {args.days} days counted"
    )
    print(f"{'day':<11} {'made':>4} {'plan':>4} {'ETA':>6} {'took':>6}  requests by dataset; why")
    for day in counted:
        lanes = ", ".join(f"{n} {d}" for d, n in sorted(day.lanes.items()))
        why = ", ".join(f"{n} {r}" for r, n in day.reasons.most_common())
        print(
            f"{day.moment:%Y-%m-%d} {day.made:>4} {day.planned:>4} "
            f"{day.eta / 60:>5.1f}m {day.took / 60:>5.1f}m  {lanes}; {why}"
        )
    made = [d.made for d in counted]
    old = [d.made for d in baseline]
    print(
        f"requests per site and day: mean {statistics.mean(made):.2f}, max {max(made)}, min {min(made)} "
        f"(baseline, round 3's policy on the same days: mean {statistics.mean(old):.2f}, max {max(old)})"
    )
    took = [d.took for d in counted]
    print(
        f"time at the pace per sync: mean {statistics.mean(took) / 60:.1f} min, max {max(took) / 60:.1f} min "
        f"(baseline: mean {statistics.mean(d.took for d in baseline) / 60:.1f} min)"
    )
    worst_requests = max(abs(d.planned - d.made) / d.made for d in counted)
    worst_time = max(abs(d.eta - d.took) / d.took for d in counted if d.took)
    print(
        f"plan against what was made: requests within {worst_requests:.1%}, "
        f"time at the pace within {worst_time:.1%}"
    )
    oldest = ", ".join(f"{7 * w}-{7 * w + 6} days: {lag:.1f}" for w, lag in sorted(lags.items()))
    print(f"oldest copy of a revisable window after a sync, by days since the window ended: {oldest}")
    print(f"final windows equal to the service, to the cent: {final} of {final}")
    print(f"the counted run took {seconds:.0f} s ({cpu_seconds:.0f} s of CPU)")
    verdicts = [
        ("mean <= 11", statistics.mean(made) <= 11),
        ("max <= 13", max(made) <= 13),
        ("plan within 10%", worst_requests <= 0.10 and worst_time <= 0.10),
    ]
    print(" ".join(f"{name}: {'yes' if ok else 'NO'}" for name, ok in verdicts))
    if not all(ok for _, ok in verdicts):
        sys.exit(1)


if __name__ == "__main__":
    main()
