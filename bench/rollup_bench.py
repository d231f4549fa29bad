"""The rollups and catalog on the bench lake: a full rebuild, then a sync that adds one update day.

    .venv/bin/python bench/make_lake.py                 # once: 10 M transactions, 365 days
    .venv/bin/python bench/rollup_bench.py [DATA_DIR]

Targets (issue 14): the one-day refresh (rollups and catalog together) under 3 s and 1 GB peak RSS;
the full rebuild no slower than the rollups of before (48 s, 3.2 GB unloaded on 2 cores).

1. full rebuild: every rollup of the site rebuilt from the lake as the sync before the measured
   one left it (what that sync stores held back, see 2.), then the catalog written. The day it adds
   is then first seen since the last full build, as each new day of a daily loop is: a file of its
   own. (A lake rebuilt with the day, by `commerce-reports rollups --rebuild` say, holds it in its
   month's file: the measured refresh then patches it there, a dearer path that no daily sync
   takes: at 100 M, 3.3 s where the day of its own took 2.9–3.3 s.)
2. What a daily sync stores is held back (moved aside): the last update day, and the aggregate
   month windows of its month (a daily sync fetches the current month's again); the rollups are
   refreshed without them. Then they are put back, and the refresh a sync would run after storing
   them is measured: "one-day refresh".

Each measured step runs alone in a fresh process, started by a small runner process whose only
child it is, so its peak RSS (the runner's RUSAGE_CHILDREN) is its own. Seconds are the step's own
wall time (from inside: no interpreter start-up); CPU seconds are printed too, since on a shared
machine they say more than wall time. A run interrupted while the day is held back puts it back on
the next run.

The one-day refresh is also split into its parts, wall and CPU seconds each (`PHASES`): the survey
(listing the lake by digest, the rollups' state and files, the plan), reading the change (of which
the index read finding the ledger files that hold a changed id), writing the rollups, hashing the
rollup files written, and the fixed costs after it: the snapshot, the generation's links, the
saved digests, the seal, and the catalog (its macros only, when the views' SQL stays the same).
Their sum beside the whole says what is left for the rest.

    .venv/bin/python bench/rollup_bench.py DATA_DIR --baseline /work/main/src --pairs 3

times the one-day refresh of this working copy beside the code in `--baseline` (another checkout's
`src`), taking turns on the same lake (each side's held-back refresh is its own too), and prints
each pair and each part, old beside new: the fixed costs of a refresh hardly move with the size of
the change, so a ratio measured in one run says what a change to them bought. Both sides must
keep the same rollup layout (else each turn rebuilds the rollups whole), or the baseline takes its
turns on a copy of the lake of its own:

    cp -a DATA_DIR OLD_DIR
    .venv/bin/python bench/rollup_bench.py DATA_DIR --baseline /work/main/src --baseline-lake OLD_DIR

(each side's first turn then rebuilds its lake's rollups whole, in the held-back refresh that is
not measured).

    .venv/bin/python bench/rollup_bench.py DATA_DIR --refetched 2 [--baseline ...]

measures the refresh after a daily sync as the service is really asked: besides the new update
day, the sync fetches the `--refetched` days before it again (they have not settled), and each
comes back with more rows than the copy it replaces. For the held-back refresh each of those days
is stored with 90% of its rows, fetched a day earlier (as the sync before saw it); the measured
refresh then finds the new day and those days changed, every id in them dirty.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

import commerce_reports.db.catalog as catalog
from commerce_reports.contract import PART_FILE, PartitionKey, site_root
from commerce_reports.db import rebuild_rollups, refresh_rollups
from commerce_reports.lake.digests import DIGESTS_FILE
from commerce_reports.lake.manifest import store_partition

SITE = "bench"
_HELD = ".bench-held"
_FULL = ".bench-full"  # the refetched days' full copies, stored again after the held-back refresh
_LATE = 10  # one row in this many of a refetched day came after the copy the sync before made
_RUNNER = (
    "import json, resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "sys.stderr.write(done.stderr)\n"
    "if done.returncode: sys.exit(done.returncode)\n"
    "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "result = json.loads(done.stdout.strip().splitlines()[-1])\n"
    "result.update(mb=usage.ru_maxrss / 1024, cpu=usage.ru_utime + usage.ru_stime)\n"
    "print(json.dumps(result))\n"
)


# The parts of a refresh timed one by one: (module, name, label). None calls another.
PHASES = (
    ("commerce_reports.db.rollups", "_survey", "survey: listing by digest, state, rollup files, plan"),
    ("commerce_reports.db.build", "SiteBuild.read_change", "read the change"),
    ("commerce_reports.db.build", "SiteBuild._holding", "  of which the index read"),
    ("commerce_reports.db.build", "SiteBuild.write", "write the rollups"),
    ("commerce_reports.db.rollups", "rollup_files", "digests of the rollup files"),
    ("commerce_reports.db.published", "take_snapshot", "snapshot"),
    ("commerce_reports.db.published", "_fill", "generation links"),
    ("commerce_reports.db.published", "_save_digests", "saved digests"),
    ("commerce_reports.db.published", "_seal", "record and seal"),
    ("commerce_reports.db.catalog", "write_catalog", "catalog"),
)


def _timed(phases: dict[str, list[float]]) -> None:
    """Wrap each part of `PHASES` so that its wall and CPU seconds add up in `phases[label]` (a
    part the code does not have, in a baseline, is left out)."""
    for module_name, name, label in PHASES:
        module = importlib.import_module(module_name)
        owner_name, _, attribute = name.rpartition(".")
        owner = getattr(module, owner_name) if owner_name else module
        real = getattr(owner, attribute, None)
        if real is None:
            continue
        phases[label] = [0.0, 0.0]

        def timed(*args: object, _real: Any = real, _label: str = label, **kwargs: object) -> object:
            wall, cpu = time.perf_counter(), time.process_time()
            try:
                return _real(*args, **kwargs)
            finally:
                phases[_label][0] += time.perf_counter() - wall
                phases[_label][1] += time.process_time() - cpu

        setattr(owner, attribute, timed)


def _step(step: str, data_dir: Path, refetched: int) -> None:
    """Run one measured step in this process and print its wall time (and its parts') as JSON
    (`hold`: the refresh without the last day, which the `day` step then measures adding)."""
    if step == "hold":
        _hold_back(data_dir, refetched)
        print(json.dumps({}))
        return
    phases: dict[str, list[float]] = {}
    if step == "day":
        _timed(phases)
    if step == "build":  # from no rollups at all: the lake's files hashed too, when no digest is kept
        shutil.rmtree(data_dir / "rollups", ignore_errors=True)
        shutil.rmtree(data_dir / "views", ignore_errors=True)
        (site_root(data_dir, SITE) / DIGESTS_FILE).unlink(missing_ok=True)
    started = time.perf_counter()
    if step in ("build", "full"):
        _hold(data_dir, _daily_sync(data_dir, _last_day(data_dir)))
        try:
            rebuild_rollups(data_dir, [SITE])
        finally:
            _restore(data_dir)
    else:
        refresh_rollups(data_dir, {SITE: _sync_days(data_dir, refetched)})
    catalog.write_catalog(data_dir, published=True)  # as a sync does: the refresh published the lake
    print(json.dumps({"seconds": time.perf_counter() - started, "phases": phases}))


def measure(step: str, data_dir: Path, src: Path | None = None, refetched: int = 0) -> dict[str, Any]:
    """Run `step` (`build`: from no rollups; `full`: a rebuild; `hold`: the refresh without the last
    day; `day`: the refresh of the last day) in a process of its own (with the package of `src`,
    another checkout's, when given): its seconds, peak MB, CPU seconds (and for `day`, its parts)."""
    command = [sys.executable, "-c", _RUNNER, sys.executable, __file__, "--step", step, str(data_dir)]
    command += ["--refetched", str(refetched)]
    env = None if src is None else {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode:  # the step's own error, not a CalledProcessError naming the runner
        said = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()
        raise SystemExit(
            f"the step {step!r} on {data_dir} failed (exit {done.returncode}):\n" + "\n".join(said[-30:])
        )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _last_day(data_dir: Path) -> PartitionKey:
    return _sync_days(data_dir, 0)[-1]


def _sync_days(data_dir: Path, refetched: int) -> list[PartitionKey]:
    """The update days a daily sync fetches: the `refetched` days before the last one, and it."""
    folders = sorted((site_root(data_dir, SITE) / "transactions/by=updateDate").glob("day=*"))
    if len(folders) <= refetched:
        raise SystemExit(f"{len(folders)} update days in {data_dir}: run bench/make_lake.py first")
    return [
        PartitionKey.from_relpath(f"transactions/by=updateDate/{f.name}") for f in folders[-1 - refetched :]
    ]


def _daily_sync(data_dir: Path, day: PartitionKey) -> list[str]:
    """The partition folders a daily sync stores: the update day, its month's aggregate windows."""
    root = site_root(data_dir, SITE)
    month = f"grain=month/start={day.start.replace(day=1)}"
    windows = [*root.glob(f"networks/slice=*/{month}"), *root.glob(f"merchandise/slice=*/{month}")]
    return [day.relpath, *(str(w.relative_to(root)) for w in sorted(windows))]


def _hold(data_dir: Path, relpaths: list[str]) -> None:
    for relpath in relpaths:
        held = data_dir / _HELD / relpath
        held.parent.mkdir(parents=True, exist_ok=True)
        (site_root(data_dir, SITE) / relpath).rename(held)


def _restore(data_dir: Path) -> None:
    """Put back what a run held back, and store the refetched days' full copies again (also after
    an interrupted run)."""
    held = data_dir / _HELD
    for part in sorted(held.rglob("part.parquet")):
        folder = part.parent
        target = site_root(data_dir, SITE) / folder.relative_to(held)
        target.parent.mkdir(parents=True, exist_ok=True)
        folder.rename(target)
    shutil.rmtree(held, ignore_errors=True)
    full = data_dir / _FULL
    for part in sorted(full.rglob("part.parquet")):
        key = PartitionKey.from_relpath(str(part.parent.relative_to(full)))
        table = pq.read_table(part)
        store_partition(data_dir, SITE, key, table, _fetched_at(table))
        part.unlink()
    shutil.rmtree(full, ignore_errors=True)


def _store_earlier_copies(data_dir: Path, days: list[PartitionKey]) -> None:
    """Store each of `days` as the sync before saw it (all but its late rows, fetched a day
    earlier), its full copy kept aside for `_restore`."""
    for key in days:
        part = site_root(data_dir, SITE) / key.relpath / PART_FILE
        kept = data_dir / _FULL / key.relpath / PART_FILE
        kept.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(part, kept)
        table = pq.read_table(part)
        early = pa.array([row % _LATE != 0 for row in range(table.num_rows)])
        store_partition(data_dir, SITE, key, table.filter(early), _fetched_at(table) - timedelta(days=1))


def _fetched_at(table: pa.Table) -> datetime:
    """When a stored copy of a partition was fetched (each of its rows says; now, for no row)."""
    return table.column("fetched_at")[0].as_py() if table.num_rows else datetime.now(UTC)


def _hold_back(data_dir: Path, refetched: int) -> None:
    """Refresh the rollups without what a daily sync of the last update day stores (held back,
    then put back), with the `refetched` days before it as the sync before stored them."""
    _restore(data_dir)
    *earlier, day = _sync_days(data_dir, refetched)
    _store_earlier_copies(data_dir, earlier)
    stored = _daily_sync(data_dir, day)
    _hold(data_dir, stored)
    try:
        refresh_rollups(data_dir, {SITE: [*earlier, day]})
    finally:
        _restore(data_dir)


def measure_day(
    data_dir: Path, src: Path | None = None, refetched: int = 0
) -> tuple[PartitionKey, list[str], dict[str, Any]]:
    """The one-day refresh: the last update day (and its month's windows) held back, the rollups
    refreshed without them (and with the `refetched` days before it as the sync before stored
    them), put back, and the refresh a sync would run then measured (both in processes of their
    own, with the package of `src` when given)."""
    measure("hold", data_dir, src, refetched)
    day = _last_day(data_dir)
    return day, _daily_sync(data_dir, day), measure("day", data_dir, src, refetched)


def _paired(lakes: tuple[Path, Path], baseline: Path, pairs: int, refetched: int) -> None:
    """Print `pairs` one-day refreshes of the `baseline` code and of this copy's, taking turns on
    `lakes` (the baseline's, this copy's: the same lake, or copies): each pair's wall and CPU
    seconds, then each part's median, old beside new."""
    runs: dict[str, list[dict[str, Any]]] = {"old": [], "new": []}
    for number in range(pairs):
        for side, src, data_dir in (("old", baseline, lakes[0]), ("new", None, lakes[1])):
            day, stored, one = measure_day(data_dir, src, refetched)
            runs[side].append(one)
        old, new = runs["old"][-1], runs["new"][-1]
        print(
            f"pair {number + 1}: old {old['seconds']:.3f} s wall, {old['cpu']:.3f} s CPU; "
            f"new {new['seconds']:.3f} s wall, {new['cpu']:.3f} s CPU "
            f"(new/old wall {new['seconds'] / old['seconds']:.2f}, CPU {new['cpu'] / old['cpu']:.2f})"
        )
    print(
        f"day added: {day.start}, with {len(stored) - 1} aggregate month windows and {refetched} update "
        f"days before it fetched again; baseline: {baseline}"
        + ("" if lakes[0] == lakes[1] else f", on its own copy of the lake: {lakes[0]}")
    )
    print(f"median of {pairs} ({'old wall':>9} {'new wall':>9} {'old CPU':>8} {'new CPU':>8}):")
    labels = [label for _, _, label in PHASES]
    for label in labels:
        cells = []
        for index in (0, 1):
            for side in ("old", "new"):
                values = [run["phases"][label][index] for run in runs[side] if label in run["phases"]]
                cells.append(f"{statistics.median(values):.3f}" if values else "-")
        print(f"  {label:<54} {cells[0]:>9} {cells[1]:>9} {cells[2]:>8} {cells[3]:>8}")
    whole = [f"{statistics.median(run['seconds'] for run in runs[side]):.3f}" for side in ("old", "new")] + [
        f"{statistics.median(run['cpu'] for run in runs[side]):.3f}" for side in ("old", "new")
    ]
    print(
        f"  {'the whole refresh and catalog (CPU: the process)':<54} {whole[0]:>9} {whole[1]:>9} "
        f"{whole[2]:>8} {whole[3]:>8}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", nargs="?", type=Path, default=Path("data/bench-lake"))
    parser.add_argument("--step", choices=("build", "full", "day", "hold"), help=argparse.SUPPRESS)
    parser.add_argument(
        "--baseline", type=Path, help="another checkout's src: time the one-day refresh old beside new"
    )
    parser.add_argument("--pairs", type=int, default=3, help="old/new pairs with --baseline (default 3)")
    parser.add_argument(
        "--baseline-lake",
        type=Path,
        help="a copy of the lake for the baseline's turns (when the two keep different rollup layouts)",
    )
    parser.add_argument(
        "--refetched",
        type=int,
        default=0,
        choices=range(0, 8),
        metavar="N",
        help="the update days before the new one that the sync fetches again, changed (default 0)",
    )
    args = parser.parse_args()
    data_dir = args.data_dir.resolve()
    if args.step:
        _step(args.step, data_dir, args.refetched)
        return
    if args.baseline_lake is not None and args.baseline is None:
        parser.error("--baseline-lake goes with --baseline")
    if args.baseline is not None:
        old_dir = data_dir if args.baseline_lake is None else args.baseline_lake.resolve()
        _paired((old_dir, data_dir), args.baseline.resolve(), args.pairs, args.refetched)
        return
    _restore(data_dir)
    full = measure("full", data_dir)
    day, stored, one = measure_day(data_dir, refetched=args.refetched)
    print(f"full rebuild: {full['seconds']:.1f} s, {full['mb']:.0f} MB")
    print(f"one-day refresh: {one['seconds']:.1f} s, {one['mb']:.0f} MB")
    print(f"ratio: the one-day refresh takes {one['seconds'] / full['seconds']:.3f} of a full rebuild's time")
    print(
        f"(CPU seconds: full rebuild {full['cpu']:.1f}, one-day refresh {one['cpu']:.1f}; "
        f"day added: {day.start}, with {len(stored) - 1} aggregate month windows and {args.refetched} "
        "update days before it fetched again)"
    )
    print(f"the one-day refresh, part by part ({'wall s':>8} {'CPU s':>7}):")
    for label, (wall, cpu) in one["phases"].items():
        print(f"  {label:<54} {wall:>8.3f} {cpu:>7.3f}")
    rest = one["seconds"] - sum(wall for label, (wall, _) in one["phases"].items() if label[0] != " ")
    print(f"  {'the rest (locks, state, schemas, the catalog file, ...)':<54} {rest:>8.3f}")


if __name__ == "__main__":
    main()
