"""Syncs as separate processes: killed at random instants, or two at once on one site."""

from __future__ import annotations

import glob
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO

import pytest

from commerce_reports.lake.manifest import Manifest
from commerce_reports.sandbox import SandboxConfig, run_sandbox
from commerce_reports.sandbox.faults import FaultConfig
from commerce_reports.sandbox.runner import RunningSandbox
from tests.lake.conftest import assert_matches_ground_truth
from tests.waiting import stored_partitions, wait_for


@pytest.fixture(params=["contract", "published"])
def frozen(request: pytest.FixtureRequest) -> Iterator[RunningSandbox]:
    """A sandbox whose clock stands at this instant: processes with the real clock agree with it."""
    now = datetime.now(UTC).replace(microsecond=0)
    config = SandboxConfig(
        now=now,
        first_day=now.date() - timedelta(days=60),
        pace=0.0,
        transactions_per_day=30,
        dialect=request.param,
    )
    with run_sandbox(config) as running:
        yield running


def sync_command(
    running: RunningSandbox, data_dir: Path, start: str, pace: float
) -> tuple[list[str], dict[str, str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMMERCE_REPORTS_")}
    env.update(
        {
            "COMMERCE_REPORTS_SECRET_KEY_ALPHA": "sandbox-alpha-key",
            "COMMERCE_REPORTS_BASE_URL": running.base_url,
            "COMMERCE_REPORTS_DATA_DIR": str(data_dir),
            "COMMERCE_REPORTS_PACE": str(pace),
            "COMMERCE_REPORTS_DIALECT": running.sandbox.config.dialect,
        }
    )
    command = [sys.executable, "-m", "commerce_reports", "sync", "--start", start, "--no-progress"]
    return command, env


def test_a_sync_killed_at_random_instants_resumes_to_the_same_totals(
    frozen: RunningSandbox, tmp_path: Path
) -> None:
    start = (frozen.sandbox.now.date() - timedelta(days=24)).isoformat()
    command, env = sync_command(frozen, tmp_path, start, pace=0)
    rng = random.Random(20261121)
    for _ in range(3):
        before = stored_partitions(tmp_path, "alpha")
        target = before + rng.randint(1, 6)  # killed at a random point of its progress, not of the clock
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(
            lambda target=target, process=process: (  # type: ignore[misc]
                stored_partitions(tmp_path, "alpha") >= target or process.poll() is not None
            ),
            f"the sync to store partition {target}",
        )
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    killed_progress = len(Manifest.load(tmp_path, "alpha"))
    final = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert final.returncode == 0, final.stdout + final.stderr  # the summary says what failed
    assert killed_progress > 0  # the killed runs did store some partitions, which were kept
    assert not list(tmp_path.rglob("*.tmp")), list(tmp_path.rglob("*.tmp"))
    manifest = Manifest.load(tmp_path, "alpha")
    files = sorted(
        p.parent.relative_to(tmp_path / "lake" / "site=alpha").as_posix()
        for p in (tmp_path / "lake" / "site=alpha").rglob("part.parquet")
    )
    assert sorted(e.relpath for e in manifest) == files
    assert_matches_ground_truth(frozen, tmp_path, "alpha", frozen.sandbox.now.date() - timedelta(days=24))
    requests = len(frozen.sandbox.request_log)
    assert subprocess.run(command, env=env, capture_output=True, timeout=120).returncode == 0
    assert len(frozen.sandbox.request_log) == requests  # and now there is nothing left to fetch


def test_two_syncs_at_once_keep_the_pace_and_the_lake_whole(tmp_path: Path) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    config = SandboxConfig(
        now=now, first_day=now.date() - timedelta(days=60), pace=0.5, transactions_per_day=30
    )
    with run_sandbox(config) as running:
        start = (now.date() - timedelta(days=8)).isoformat()
        command, env = sync_command(running, tmp_path, start, pace=0.5)
        both = [
            subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)
        ]
        outputs = [p.communicate(timeout=120) for p in both]
        assert [p.returncode for p in both] == [0, 0], outputs
        log = running.sandbox.request_log
        assert [r for r in log if r.status == 429] == []  # never faster than the sandbox allows
        distinct = {(r.endpoint, tuple(sorted(r.params.items()))) for r in log}
        assert len(distinct) == len(log) - 1  # nothing twice, but for the one check of the address
        assert any("nothing to fetch" in out for out, _ in outputs)  # the second waited, then had no work
        assert_matches_ground_truth(running, tmp_path, "alpha", now.date() - timedelta(days=8))


class Process:
    """A command run as a child process, its output lines collected as they come (unbuffered)."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.lines: list[str] = []
        self.times: list[float] = []  # when each line came (time.monotonic())
        self.process = subprocess.Popen(
            command,
            env={**env, "PYTHONUNBUFFERED": "1", "PYTHONFAULTHANDLER": "1"},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert self.process.stdout is not None
        self._reader = threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True)
        self._reader.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self.times.append(time.monotonic())
            self.lines.append(line.rstrip("\n"))

    def said(self, text: str) -> bool:
        return any(text in line for line in self.lines)

    def interrupted(self, number: signal.Signals = signal.SIGINT) -> tuple[int, float]:
        """Send Ctrl-C (SIGINT), or the signal `number`; the exit status, and the seconds until the
        sync said it stopped (its summary, or the command's `interrupted`: nothing is asked or stored
        after it; the interpreter's own exit, which a loaded machine can stretch, is not the sync's)."""
        sent = time.monotonic()
        self.process.send_signal(number)
        try:
            wait_for(
                lambda: self.process.poll() is not None, f"the sync to end after {number.name}", timeout=60
            )
        except AssertionError as hung:  # where each thread waits (PYTHONFAULTHANDLER prints it at SIGABRT)
            self.process.send_signal(signal.SIGABRT)
            self.process.wait(10)
            self._reader.join(10)
            raise AssertionError("\n".join([str(hung), *self.lines[-80:]])) from None
        self._reader.join(10)
        said = [
            t
            for t, line in zip(self.times, self.lines, strict=True)
            if _STOPPED.fullmatch(line) and t >= sent
        ]
        assert said, f"the sync never said it stopped: {self.lines[-5:]}"
        return self.process.returncode, said[0] - sent


# The lines a sync says it stopped with: its summary when the lanes stopped, else the command's word.
_STOPPED = re.compile(
    r"stored \d+ partitions .*; interrupted: the next sync resumes from here"
    r"|interrupted( \(stopped by \w+\))?"
)


def _slow_networks(running: RunningSandbox) -> None:
    running.sandbox.inject("slow", 1, "networks")  # the first networks answer comes 60 s late


def _stopped_world(now: datetime) -> SandboxConfig:
    """Sixty days of a small world, answered at once but for the slow faults staged (60 s late)."""
    return SandboxConfig(
        now=now,
        first_day=now.date() - timedelta(days=60),
        pace=0,
        transactions_per_day=30,
        faults=FaultConfig(slow_seconds=60),
    )


# Where a Ctrl-C lands: what the sync is doing then (how its pace and the sandbox are set), and the
# event that says it is there. Each: the exit status and time, `verify` clean, the next sync whole.
POINTS = {
    "waiting for its turn": (30.0, None, lambda r, lake, p: stored_partitions(lake, "alpha") >= 2),
    "a request in flight": (
        0.0,
        _slow_networks,
        lambda r, lake, p: (
            stored_partitions(lake, "alpha") >= 2
            and any(x.endpoint == "networks" for x in r.sandbox.request_log)
        ),
    ),
    "refreshing the rollups": (0.0, None, lambda r, lake, p: p.said("refreshing the rollups")),
}


@pytest.mark.parametrize(
    ("point", "number"),
    [(point, signal.SIGINT) for point in sorted(POINTS)]
    # a service manager's stop (systemd, `schedule run` passing it on): the process died mid-request
    + [("a request in flight", signal.SIGTERM)],
    ids=[*sorted(POINTS), "SIGTERM, a request in flight"],
)
def test_ctrl_c_stops_a_sync_within_two_seconds_wherever_it_is(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, point: str, number: signal.Signals
) -> None:
    pace, prepare, there = POINTS[point]
    now = datetime.now(UTC).replace(microsecond=0)
    with run_sandbox(_stopped_world(now)) as running:
        if prepare is not None:
            prepare(running)
        start = (now.date() - timedelta(days=20)).isoformat()
        command, env = sync_command(running, tmp_path, start, pace=pace)
        sync = Process(command, env)
        wait_for(lambda: there(running, tmp_path, sync) or sync.process.poll() is not None, point)
        status, took = sync.interrupted(number)
        assert status == 130, sync.lines
        assert took < 2.0, f"{point}: {took:.1f} s from Ctrl-C to the end"
        assert sync.said("interrupted")
        assert not list(tmp_path.rglob("*.tmp"))
        verify = subprocess.run(
            [sys.executable, "-m", "commerce_reports", "verify"], env=env, capture_output=True, text=True
        )
        assert verify.returncode == 0, verify.stdout + verify.stderr  # nothing to repair
        command, env = sync_command(running, tmp_path, start, pace=0)
        # The pace's turns are kept per user (XDG_CACHE_HOME): a resumed sync honours the turn the
        # interrupted one took (30 s at the first point). The sandbox keeps no pace, so the
        # resumption waits on nothing in a cache of its own.
        env["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("resumed-cache"))
        resumed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert_matches_ground_truth(running, tmp_path, "alpha", now.date() - timedelta(days=20))


def test_a_stop_signal_stops_the_sync_even_when_its_keyboard_interrupt_is_lost(tmp_path: Path) -> None:
    """Python may lose the KeyboardInterrupt a signal raises (within a finalizer it is printed and
    dropped), and a SIGTERM once left a sync waiting on a request of 60 s. The signal watcher stops
    the lanes itself: here the main thread is never told at all (SIGTERM's handler does nothing)."""
    now = datetime.now(UTC).replace(microsecond=0)
    with run_sandbox(_stopped_world(now)) as running:
        _slow_networks(running)
        command, env = sync_command(running, tmp_path, (now.date() - timedelta(days=20)).isoformat(), pace=0)
        deaf = (
            "import signal, sys; signal.signal(signal.SIGTERM, lambda *_: None); "
            "from commerce_reports.cli import main; sys.exit(main(sys.argv[1:]))"
        )
        sync = Process([sys.executable, "-c", deaf, *command[3:]], env)
        there = POINTS["a request in flight"][2]
        wait_for(
            lambda: there(running, tmp_path, sync) or sync.process.poll() is not None, "a request in flight"
        )
        status, took = sync.interrupted(signal.SIGTERM)
        assert (status, took < 2.0) == (130, True), (took, sync.lines)
        assert sync.said("interrupted: the next sync resumes from here")


def _last_fetched(data_dir: Path) -> datetime:
    """When alpha's latest stored partition was fetched (the epoch while its manifest is being replaced)."""
    try:
        return max(e.fetched_at for e in Manifest.load(data_dir, "alpha"))
    except Exception:  # a manifest read while the sync replaces it, or none yet: the next poll reads it
        return datetime.min.replace(tzinfo=UTC)


def _faked_clock(moment: datetime) -> dict[str, str]:
    """What `faketime` sets for a process whose clock starts at `moment` (the wrapper itself would
    take the signals meant for the sync: it forks it and waits)."""
    found = glob.glob("/usr/lib/*/faketime/libfaketime.so.1") + glob.glob(
        "/usr/lib/faketime/libfaketime.so.1"
    )
    if not found:
        pytest.skip("Debian's faketime is not installed (.ci/run installs it)")
    return {"LD_PRELOAD": found[0], "FAKETIME": f"@{moment:%Y-%m-%d %H:%M:%S}", "TZ": "UTC"}


def test_a_sync_under_a_faked_clock_never_waits_on_nothing(tmp_path: Path) -> None:
    """libfaketime fakes the monotonic clock that Python's timed lock waits count on: a sync under
    `faketime` hung at its first wait for the pace (issue 31). It ends, and Ctrl-C stops it."""
    now = datetime.now(UTC).replace(microsecond=0) - timedelta(days=40)
    config = SandboxConfig(now=now, first_day=now.date() - timedelta(days=30), pace=0, transactions_per_day=9)
    with run_sandbox(config) as running:
        start = (now.date() - timedelta(days=2)).isoformat()
        command, env = sync_command(running, tmp_path, start, pace=0.05)
        whole = Process(command, env | _faked_clock(now))
        wait_for(lambda: whole.process.poll() is not None, "the sync under faketime to end", timeout=300)
        assert whole.process.returncode == 0, whole.lines
        assert whole.said("stored ") and not whole.said("failed")
        first = _last_fetched(tmp_path)
        running.sandbox.advance(timedelta(days=1))
        command, env = sync_command(running, tmp_path, start, pace=30)  # then every lane waits its turn
        waiting = Process(command, env | _faked_clock(running.sandbox.now))
        # a lane's first answer stored: every lane has asked once and waits 30 s for its next turn
        wait_for(lambda: _last_fetched(tmp_path) > first, "the next day's first request stored")
        status, took = waiting.interrupted()
        assert (status, took < 2.0) == (130, True), (took, waiting.lines)
