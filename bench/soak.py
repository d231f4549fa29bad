"""Soak: kill `commerce-reports sync` at random points, under faults, hostile answers and damage to
the lake, then check the lake against the sandbox's ground truth.

    PYTHONPATH=src:. .venv/bin/python bench/soak.py --kills 50 --faults 0.2

Each round may first damage the lake (a file where a day folder belongs, a truncated or bit-flipped
partition, a lost or garbled manifest), then runs a sync as a subprocess and SIGKILLs it when its
progress reaches a random point (the manifest grew by a random count, or a partition file was
replaced and its entry not yet written). A finished run makes new work by invalidating a range.
The sandbox answers with faults at `--faults`, and a share `--hostile-rate` of its transactions
answers echo the caller's key and carry an untypable revenue. At the end the hostility stops, the
lake is synced to completion (unsettled partitions too), verified, and compared with the truth.

The last line is `kills K, faults F, lost L, leaked S, tracebacks T`: F counts faulted and hostile
answers and damage done, L the commission days differing from the truth plus partitions missing
or quarantined at the end (plus any failure a sync hid), S the secrets found in any stored file or
log, T the subprocess logs holding "Traceback". The exit code is 1 unless L, S and T are 0.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pyarrow.parquet as pq

from commerce_reports.api import SyncOptions, invalidate, plan_sync, sync
from commerce_reports.lake import Manifest, verify
from commerce_reports.sandbox import DEMO_SITES, FAULT_KINDS, FaultConfig, SandboxConfig
from commerce_reports.sandbox.http import serve
from commerce_reports.sandbox.reports import ReportsSandbox
from commerce_reports.sandbox.runner import RunningSandbox
from commerce_reports.secret import Secret
from commerce_reports.sites import SiteProfile
from commerce_reports.syncing import SettlePolicy
from tests.lake.conftest import HOSTILE_MODES, Hostile, ground_truth_differences
from tests.waiting import stored_partitions

DAMAGES = ("file-in-the-way", "truncate", "bitflip", "manifest-lost", "manifest-garbled")
SRC = Path(__file__).resolve().parents[1] / "src"


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class Soak:
    def __init__(
        self, args: argparse.Namespace, running: RunningSandbox, hostile: Hostile, data_dir: Path
    ) -> None:
        self.args = args
        self.running = running
        self.hostile = hostile
        self.data_dir = data_dir
        self.rng = random.Random(args.seed)
        self.end = running.sandbox.now.date()
        self.start = self.end - timedelta(days=args.days - 1)
        self.sites = [site.name for site in DEMO_SITES]
        self.profiles = [SiteProfile(s.name, Secret(s.secret_key), running.base_url) for s in DEMO_SITES]
        self.logs: list[str] = []
        self.kills = self.damages = self.hidden = 0
        self.blocked: list[Path] = []  # files standing where a day folder belongs, this round

    # ------------------------------------------------------------------ one round

    def command(self) -> tuple[list[str], dict[str, str]]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("COMMERCE_REPORTS_")}
        env.update({f"COMMERCE_REPORTS_SECRET_KEY_{s.name.upper()}": s.secret_key for s in DEMO_SITES})
        env.update(
            {
                "COMMERCE_REPORTS_BASE_URL": self.running.base_url,
                "COMMERCE_REPORTS_DATA_DIR": str(self.data_dir),
                "COMMERCE_REPORTS_PACE": "0",
                "PYTHONPATH": os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")]),
            }
        )
        dates = ["--start", self.start.isoformat(), "--end", self.end.isoformat()]
        return [sys.executable, "-m", "commerce_reports", "sync", "--no-progress", *dates], env

    def run_once(self, kill: bool) -> int | None:
        """One sync subprocess; with `kill`, SIGKILLed at a random point of its progress.
        Returns its exit code, or None when it was killed."""
        command, env = self.command()
        with tempfile.TemporaryFile("w+") as out:
            process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT, text=True)
            if kill:
                self.wait_for_progress(process)
            code = process.wait(timeout=600) if not kill or process.poll() is not None else None
            if code is None:
                process.send_signal(signal.SIGKILL)
                process.wait(timeout=60)
                self.kills += 1
            out.seek(0)
            self.logs.append(out.read())
        return code

    def wait_for_progress(self, process: subprocess.Popen[str]) -> None:
        """Until the manifests grew by a random count, or a partition file is newer than its
        manifest (the window between a file's replace and its entry), or the process ended."""
        if self.rng.random() < 0.5:
            target = self.stored() + self.rng.randint(1, 6)
            event = lambda: self.stored() >= target  # noqa: E731
        else:
            event = self.file_ahead_of_manifest
        deadline = time.monotonic() + 300
        while process.poll() is None and not event() and time.monotonic() < deadline:
            time.sleep(0.003)

    def stored(self) -> int:
        return sum(stored_partitions(self.data_dir, site) for site in self.sites)

    def file_ahead_of_manifest(self) -> bool:
        for site in self.sites:
            root = self.data_dir / "lake" / f"site={site}"
            try:
                recorded = (root / "manifest.json").stat().st_mtime_ns
                newest = max((p.stat().st_mtime_ns for p in root.rglob("part.parquet")), default=0)
            except OSError:
                continue
            if newest > recorded:
                return True
        return False

    # ------------------------------------------------------------------ damage

    def damage(self) -> None:
        chosen = [d for d in self.args.damage if self.rng.random() < self.args.damage_rate]
        for kind in chosen:
            site = self.rng.choice(self.sites)
            root = self.data_dir / "lake" / f"site={site}"
            parts = sorted(root.rglob("part.parquet"))
            if kind == "file-in-the-way":
                stored = {
                    e.key.start for e in _entries(self.data_dir, site) if e.key.dataset == "transactions"
                }
                free = [d for d in _days(self.start, self.end) if d not in stored]
                folder = (
                    root / "transactions" / "by=updateDate" / f"day={self.rng.choice(free)}" if free else None
                )
                if folder is None or folder.exists():
                    continue
                folder.parent.mkdir(parents=True, exist_ok=True)
                folder.write_text("a file where a folder belongs")
                self.blocked.append(folder)
            elif kind in ("truncate", "bitflip") and parts:
                path = self.rng.choice(parts)
                data = bytearray(path.read_bytes())
                if kind == "truncate":
                    data = data[: self.rng.randrange(0, len(data))]
                else:
                    data[self.rng.randrange(len(data))] ^= 0xFF
                path.write_bytes(bytes(data))
            elif kind == "manifest-lost" and (root / "manifest.json").exists():
                (root / "manifest.json").unlink()
            elif kind == "manifest-garbled" and (root / "manifest.json").exists():
                (root / "manifest.json").write_text(json.dumps({"partitions": {"x": {"relpath": 7}}}))
            else:
                continue
            self.damages += 1

    def unblock(self, code: int | None) -> None:
        """Remove this round's blocking files; a finished run that did not fail for them hid a failure."""
        if self.blocked and code == 0:
            self.hidden += 1
            say(f"a sync exited 0 although {len(self.blocked)} day folders were blocked")
        for path in self.blocked:
            path.unlink()
        self.blocked.clear()

    def make_work(self) -> None:
        first = self.rng.choice(_days(self.start, self.end))
        last = first + timedelta(days=self.rng.randint(0, 6))
        datasets = ["transactions", "networks", "merchandise"][: self.rng.randint(1, 3)]
        invalidate(first, min(last, self.end), sites=self.profiles, datasets=datasets, data_dir=self.data_dir)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ the end

    def converge(self) -> int:
        """Stop the hostility, sync to completion (unsettled partitions too); rounds it took."""
        self.hostile.modes.clear()
        for rounds in range(1, 11):
            code = self.run_once(kill=False)
            options = SyncOptions(policy=SettlePolicy(freshness=timedelta(0)), pace=0, progress=False)
            result = sync(self.start, self.end, sites=self.profiles, data_dir=self.data_dir, options=options)
            if code == 0 and result.ok and not result.untyped:
                return rounds
        return rounds

    def lost(self) -> int:
        lines: list[str] = []
        report = verify(self.data_dir)
        lines += [str(r) for r in report.repairs]
        plan = plan_sync(self.start, self.end, sites=self.profiles, data_dir=self.data_dir)
        lines += [
            f"still missing: {r.site} {r.key.describe()}" for r in plan.requests if r.reason == "missing"
        ]
        for site in self.sites:
            lines += [
                f"{site} {d}" for d in ground_truth_differences(self.running, self.data_dir, site, self.start)
            ]
        for line in lines:
            say(f"lost: {line}")
        return len(lines) + self.hidden

    def leaked(self) -> int:
        keys = [s.secret_key for s in DEMO_SITES]
        found = 0
        for path in sorted(p for p in self.data_dir.rglob("*") if p.is_file()):
            texts = [path.read_bytes().decode("utf-8", "replace")]
            if path.suffix == ".parquet":
                with contextlib.suppress(Exception):  # a damaged file: its raw bytes were searched
                    texts.append(json.dumps(pq.read_table(path).to_pylist(), default=str))
            if any(key in text for key in keys for text in texts):
                say(f"leaked: a key in {path}")
                found += 1
        found += sum(1 for log in self.logs if any(key in log for key in keys))
        return found


def _days(start: date, end: date) -> list[date]:
    return [start + timedelta(days=n) for n in range((end - start).days + 1)]


def _entries(data_dir: Path, site: str) -> list:  # type: ignore[type-arg]
    try:
        return list(Manifest.load(data_dir, site))
    except Exception:
        return []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=50)
    parser.add_argument("--faults", type=float, default=0.2, help="share of requests that fault")
    parser.add_argument(
        "--hostile-rate", type=float, default=0.2, help="share of transactions answers made hostile"
    )
    parser.add_argument("--hostile", default=",".join(HOSTILE_MODES), help="answer modes (comma list)")
    parser.add_argument("--damage", default=",".join(DAMAGES), help="lake damage modes (comma list)")
    parser.add_argument("--damage-rate", type=float, default=0.15, help="chance of each damage per round")
    parser.add_argument("--days", type=int, default=20)
    parser.add_argument("--seed", type=int, default=20261123)
    parser.add_argument("--data-dir", type=Path, help="default: a temporary folder, removed at the end")
    args = parser.parse_args()
    args.damage = [d for d in args.damage.split(",") if d]
    modes = [m for m in args.hostile.split(",") if m]
    if set(args.damage) - set(DAMAGES) or set(modes) - set(HOSTILE_MODES):
        parser.error(f"damage modes: {', '.join(DAMAGES)}; hostile modes: {', '.join(HOSTILE_MODES)}")

    now = datetime.now(UTC).replace(microsecond=0)
    faults = FaultConfig(rate=args.faults, kinds=FAULT_KINDS, seed=args.seed, slow_seconds=0.3)
    config = SandboxConfig(
        now=now,
        first_day=now.date() - timedelta(days=args.days + 30),
        pace=0.0,
        transactions_per_day=30,
        faults=faults,
    )
    sandbox = ReportsSandbox(config)
    hostile = Hostile(sandbox, modes, args.hostile_rate, args.seed)
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="soak-"))
    began = time.monotonic()
    with serve(hostile) as handle:
        soak = Soak(args, RunningSandbox(handle.base_url, sandbox), hostile, data_dir)
        rounds = 0
        while soak.kills < args.kills:
            rounds += 1
            soak.damage()
            code = soak.run_once(kill=True)
            say(
                f"round {rounds}: {'killed' if code is None else f'exited {code}'}, {soak.kills} kills so far"
            )
            soak.unblock(code)
            if code == 0:
                soak.make_work()
        converged = soak.converge()
        faulted = sum(1 for r in sandbox.request_log if r.fault)
        lost, leaked = soak.lost(), soak.leaked()
        tracebacks = sum(1 for log in soak.logs if "Traceback" in log)
        say(
            f"{rounds} rounds, {len(sandbox.request_log)} requests ({faulted} faulted, "
            f"{hostile.altered} hostile answers), {soak.damages} damages, converged in {converged} syncs, "
            f"{time.monotonic() - began:.0f} s"
        )
    if args.data_dir is None:
        shutil.rmtree(data_dir, ignore_errors=True)
    injected = faulted + hostile.altered + soak.damages
    print(f"kills {soak.kills}, faults {injected}, lost {lost}, leaked {leaked}, tracebacks {tracebacks}")
    return 0 if lost == leaked == tracebacks == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
