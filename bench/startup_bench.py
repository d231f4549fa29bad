"""Start-up cost: the median CPU time (user + system) of 10 fresh processes for each command,
beside `python -c pass` measured in the same run (the commands take turns), and the wall time.

    .venv/bin/python bench/startup_bench.py [--runs 10]

Targets, as CPU against `python -c pass` (a ratio holds on a busy machine; wall time does not):
`commerce-reports --help` under 4x, `commerce-reports status` on a small lake under 8x. The
commands run as users run them, through the installed `commerce-reports` script, with the package's
bytecode compiled first as installing a wheel compiles it (under PYTHONDONTWRITEBYTECODE an editable
install would otherwise compile every module at every start). The small lake is synced from the
sandbox into a temporary folder first (not timed). Each line also gives how many
modules the command imports (`-X importtime`), and the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGETS = {"commerce-reports --help": 4.0, "commerce-reports status": 8.0}  # CPU, x python -c pass


def _median_seconds(
    commands: dict[str, list[str]], env: dict[str, str], runs: int
) -> dict[str, tuple[float, float]]:
    """The median CPU seconds (user + system) and wall seconds of `runs` fresh processes of each
    command, the commands taking turns (a change of the machine's load between two commands would
    otherwise move their ratio)."""
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    wall: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, command in commands.items():
            before, began = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
            subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            wall[name].append(time.perf_counter() - began)
            cpu[name].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return {name: (statistics.median(cpu[name]), statistics.median(wall[name])) for name in commands}


def _modules(command: list[str], env: dict[str, str]) -> int:
    """How many modules a fresh process of `command` imports (beyond the interpreter's own start)."""
    traced = {**env, "PYTHONPROFILEIMPORTTIME": "1"}
    done = subprocess.run(command, env=traced, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return sum(1 for line in done.stderr.splitlines() if line.startswith("import time:")) - 1  # the header


def _load() -> str:
    return "load average " + " ".join(f"{n:.2f}" for n in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    python = sys.executable
    cli = [str(Path(python).with_name("commerce-reports"))]  # the installed script, as users run it
    package = importlib.util.find_spec("commerce_reports")
    assert package is not None and package.submodule_search_locations is not None
    compileall.compile_dir(package.submodule_search_locations[0], quiet=1)
    with tempfile.TemporaryDirectory(prefix="startup-bench-") as folder:
        env = {k: v for k, v in os.environ.items() if not k.startswith("COMMERCE_REPORTS_")}
        env["COMMERCE_REPORTS_DATA_DIR"] = str(Path(folder) / "data")
        subprocess.run(
            [*cli, "sync", "--no-progress", "--start", _days_ago(7)],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        commands = {
            "python -c pass": [python, "-c", "pass"],
            "import commerce_reports": [python, "-c", "import commerce_reports"],
            "commerce-reports --help": [*cli, "--help"],
            "commerce-reports status": [*cli, "status"],
        }
        print(f"{_load()} (before)")
        medians = _median_seconds(commands, env, args.runs)
        baseline = medians["python -c pass"][0]
        for name, command in commands.items():
            cpu, wall = medians[name]
            ratio = cpu / baseline
            target = TARGETS.get(name)
            verdict = (
                "" if target is None else f"  (target < {target:g}x: {'met' if ratio < target else 'MISSED'})"
            )
            print(
                f"{name:<26} CPU {cpu:6.3f} s  {ratio:5.1f}x python -c pass  wall {wall:6.3f} s"
                f"  {_modules(command, env):4d} modules{verdict}"
            )
        print(f"{_load()} (after)")


def _days_ago(days: int) -> str:
    from datetime import date, timedelta

    return (date.today() - timedelta(days=days)).isoformat()


if __name__ == "__main__":
    main()
