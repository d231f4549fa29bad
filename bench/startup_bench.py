"""Start-up time: the median of 10 fresh processes for each command, beside `python -c pass`.

    .venv/bin/python bench/startup_bench.py [--runs 10]

Targets (issue: every command starts at once): `import commerce_reports` < 0.3 s,
`commerce-reports --help` < 0.4 s, `commerce-reports status` on a small lake < 1 s. The small lake
is synced from the sandbox into a temporary folder first (not timed). Each line also gives how many
modules the command imports (`-X importtime`), which a busy machine does not change, and the load
average is printed before and after: quote the figures with it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGETS = {"import commerce_reports": 0.3, "commerce-reports --help": 0.4, "commerce-reports status": 1.0}


def _median_seconds(command: list[str], env: dict[str, str], runs: int) -> float:
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def _modules(command: list[str], env: dict[str, str]) -> int:
    """How many modules a fresh process of `command` imports (beyond the interpreter's own start)."""
    python, *rest = command
    traced = [python, "-X", "importtime", *rest]
    done = subprocess.run(traced, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return sum(1 for line in done.stderr.splitlines() if line.startswith("import time:")) - 1  # the header


def _load() -> str:
    return "load average " + " ".join(f"{n:.2f}" for n in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    python = sys.executable
    cli = [python, "-m", "commerce_reports"]
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
        baseline = None
        for name, command in commands.items():
            seconds = _median_seconds(command, env, args.runs)
            baseline = seconds if baseline is None else baseline
            target = TARGETS.get(name)
            verdict = (
                ""
                if target is None
                else f"  (target < {target} s: {'met' if seconds < target else 'MISSED'})"
            )
            print(
                f"{name:<26} median {seconds:6.3f} s   {seconds / baseline:5.1f}x python -c pass"
                f"   {_modules(command, env):4d} modules{verdict}"
            )
        print(f"{_load()} (after)")


def _days_ago(days: int) -> str:
    from datetime import date, timedelta

    return (date.today() - timedelta(days=days)).isoformat()


if __name__ == "__main__":
    main()
