"""Syncs as separate processes: killed at random instants, or two at once on one site."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from commerce_reports.lake.manifest import Manifest
from commerce_reports.sandbox import SandboxConfig, run_sandbox
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
    assert final.returncode == 0, final.stderr
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


def test_ctrl_c_stops_cleanly_after_saving_what_finished(tmp_path: Path) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    config = SandboxConfig(
        now=now, first_day=now.date() - timedelta(days=60), pace=0, transactions_per_day=30
    )
    with run_sandbox(config) as running:
        start = (now.date() - timedelta(days=30)).isoformat()
        command, env = sync_command(running, tmp_path, start, pace=0.25)  # slow enough to interrupt
        process = subprocess.Popen(
            command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        wait_for(lambda: stored_partitions(tmp_path, "alpha") >= 3, "the sync to store 3 partitions")
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
        assert process.returncode == 130, err
        assert "interrupted" in out
        stored = len(Manifest.load(tmp_path, "alpha"))
        assert 0 < stored < 30 + 2 * 6
        assert not list(tmp_path.rglob("*.tmp"))
        command, env = sync_command(running, tmp_path, start, pace=0)  # the rest at once
        resumed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
        assert resumed.returncode == 0, resumed.stderr
        assert f"({stored} partitions already current)" in resumed.stdout
