"""The growth curve: the bench lake at several sizes, each step measured at each, beside the smallest.

    .venv/bin/python bench/growth_bench.py [--root /work/bench-lakes] [--sizes 1,10,30,100] [--make]

For each size N (millions of transactions) the lake is `<root>/<N>m`, made by `bench/make_lake.py`
(in a process of its own, streaming: `--make` makes it again, otherwise only when it is missing).
Then, each step in a process of its own (`bench/rollup_bench.py`): the rollups built from none (the
lake's files hashed too), built again (`rollups --rebuild`), the refresh a daily sync runs after
storing one update day, and every view's 30-day question warm (`bench/views_bench.py`). Each line
gives seconds and peak MB; the last columns divide each step's seconds per million transactions
by the smallest size's, so a step that grows with the lake reads 1.0 and one that costs what
changed falls towards 0 (the baseline is the same run's smallest lake). Below each size, the
one-day refresh part by part (`rollup_bench.PHASES`: the change, the writes, and the fixed costs).

Targets (issue 31): at 100 M, built and built again in under 10 minutes and 8 GB, a one-day refresh
under 3 s, every view under 20 ms; a one-day refresh under 0.5 s at 1 M and under 1 s at 10 M.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from commerce_reports.db import connect

HERE = Path(__file__).resolve().parent
_RUNNER = (
    "import json, resource, subprocess, sys, time\n"
    "started = time.perf_counter()\n"
    "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "sys.stderr.write(done.stderr)\n"
    "if done.returncode: sys.exit(done.returncode)\n"
    "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(json.dumps({'seconds': time.perf_counter() - started, 'mb': usage.ru_maxrss / 1024,\n"
    "                  'cpu': usage.ru_utime + usage.ru_stime}))\n"
)


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _make(lake: Path, millions: int) -> dict[str, Any]:
    """Make the lake of `millions` M transactions in a process of its own: seconds, peak MB."""
    command = [sys.executable, str(HERE / "make_lake.py"), str(lake), "--transactions", str(millions * 10**6)]
    done = subprocess.run(
        [sys.executable, "-c", _RUNNER, *command], capture_output=True, text=True, check=True
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path("/work/bench-lakes"))
    parser.add_argument("--sizes", default="1,10,30,100", help="millions of transactions, comma-separated")
    parser.add_argument("--make", action="store_true", help="make every lake again")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each view's question (the median)")
    args = parser.parse_args()
    rollups, views = _script("rollup_bench"), _script("views_bench")
    rows = []
    for millions in sorted(int(size) for size in args.sizes.split(",")):
        lake = (args.root / f"{millions}m").resolve()
        made = _make(lake, millions) if args.make or not lake.exists() else None
        built = rollups.measure("build", lake)
        again = rollups.measure("full", lake)
        _, _, day = rollups.measure_day(lake)
        with connect(lake) as con:
            times = views.view_times(con, lake / "lake", views.date(2025, 6, 1), args.repeat)
        rows.append((millions, made, built, again, day, max(times.items(), key=lambda item: item[1])))
        _print(rows)


def _print(rows: list[tuple[int, Any, Any, Any, Any, tuple[str, float]]]) -> None:
    print(
        f"\n{'size':>6} {'make s':>8} {'MB':>6} {'build s':>8} {'MB':>6} {'again s':>8} {'MB':>6} "
        f"{'day s':>7} {'MB':>5} {'slowest view':>34}   per M vs smallest: build  day"
    )
    first = rows[0]
    for millions, made, built, again, day, (view, seconds) in rows:
        make = f"{made['seconds']:>8.0f} {made['mb']:>6.0f}" if made else f"{'-':>8} {'-':>6}"
        growth_build = (built["seconds"] / millions) / (first[2]["seconds"] / first[0])
        growth_day = (day["seconds"] / millions) / (first[4]["seconds"] / first[0])
        print(
            f"{millions:>5}M {make} {built['seconds']:>8.1f} {built['mb']:>6.0f} {again['seconds']:>8.1f} "
            f"{again['mb']:>6.0f} {day['seconds']:>7.2f} {day['mb']:>5.0f} {view:>26} "
            f"{seconds * 1000:>5.1f} ms   {growth_build:>21.2f} {growth_day:>4.2f}"
        )
        print(
            f"{'':>6} CPU s: build {built['cpu']:.0f}, again {again['cpu']:.0f}, day {day['cpu']:.1f}"
            + (f", make {made['cpu']:.0f}" if made else "")
        )
        parts = ", ".join(f"{label.split(':')[0]} {wall:.2f}" for label, (wall, _) in day["phases"].items())
        rest = day["seconds"] - sum(wall for label, (wall, _) in day["phases"].items() if label[0] != " ")
        print(f"{'':>6} day, part by part (wall s): {parts}, the rest {rest:.2f}")


if __name__ == "__main__":
    main()
