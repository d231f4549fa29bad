"""The pace holds per endpoint, across threads and across processes sharing a key."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import textwrap
import threading
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from commerce_reports.pace import Pacer
from commerce_reports.sandbox import SandboxConfig, run_sandbox
from tests.conftest import FakeClock


def turn(pacer: Pacer, endpoint: str) -> float:
    """Take `endpoint`'s turn and end it at once (a request sent that very moment); its start."""
    with pacer.slot(endpoint) as start:
        return start


def test_second_request_waits_the_interval_and_endpoints_are_independent(
    clock: FakeClock, tmp_path: Path
) -> None:
    pacer = Pacer({"transactions": 60, "networks": 10}, "svc|key", state_dir=tmp_path, clock=clock)
    t0 = clock.now
    assert turn(pacer, "transactions") == t0
    assert turn(pacer, "networks") == t0
    assert turn(pacer, "networks") == pytest.approx(t0 + 10.1)  # 1% safety margin
    assert turn(pacer, "transactions") == pytest.approx(t0 + 60.5)  # margin at most 0.5 s
    assert clock.sleeps == pytest.approx([0.0, 0.0, 10.1, 50.4])


def test_defer_pushes_the_next_slot_and_never_pulls_it_closer(clock: FakeClock, tmp_path: Path) -> None:
    pacer = Pacer({"networks": 60}, "svc|key", state_dir=tmp_path, clock=clock)
    turn(pacer, "networks")
    pacer.defer("networks", 90)
    assert pacer.next_allowed("networks") == clock.now + 90
    pacer.defer("networks", 5)
    assert pacer.next_allowed("networks") == clock.now + 90


def test_a_turn_a_clock_set_days_ahead_is_not_waited_for(
    clock: FakeClock, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A sync run with the clock a day ahead (before NTP corrected it, or under faketime) left its
    # next turn a day away: every later sync of the key waited 86,398 s, blaming another process.
    ahead = FakeClock(clock.now + 86_400)
    turn(Pacer({"transactions": 60}, "svc|key", state_dir=tmp_path, clock=ahead), "transactions")
    pacer = Pacer({"transactions": 60}, "svc|key", state_dir=tmp_path, clock=clock)
    assert turn(pacer, "transactions") == clock.now and clock.sleeps == [0.0]
    assert "was set 1.0 days ahead (by " in caplog.text and "a clock that ran ahead set it" in caplog.text
    assert turn(pacer, "transactions") == pytest.approx(clock.now)  # then the pace again
    assert clock.sleeps == pytest.approx([0.0, 60.5])
    pacer.defer("transactions", 900)  # what the service asks for is waited, as ever
    assert turn(pacer, "transactions") == pytest.approx(clock.now) and clock.sleeps[-1] == pytest.approx(900)


def test_state_files_name_no_secret_and_keys_do_not_share_a_pace(clock: FakeClock, tmp_path: Path) -> None:
    one = Pacer({"networks": 60}, "svc|secret-one", state_dir=tmp_path, clock=clock)
    two = Pacer({"networks": 60}, "svc|secret-two", state_dir=tmp_path, clock=clock)
    turn(one, "networks")
    assert turn(two, "networks") == clock.now
    names = " ".join(p.name + p.read_text() for p in tmp_path.iterdir() if p.suffix == ".json")
    assert "secret" not in names


def test_threads_sharing_a_pacer_never_start_closer_than_the_interval(tmp_path: Path) -> None:
    clock = FakeClock()
    pacer = Pacer({"networks": 60}, "svc|key", state_dir=tmp_path, clock=clock)
    starts: list[float] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(3):
            start = turn(pacer, "networks")
            with lock:
                starts.append(start)

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    starts.sort()
    assert [b - a for a, b in itertools.pairwise(starts)] == [60.5] * 8


_WORKER = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from filelock import FileLock
    from commerce_reports.pace import Pacer

    class FileClock:
        # One fake wall clock for several processes: the time lives in a file.
        def __init__(self, path):
            self.path = Path(path)
        def time(self):
            with FileLock(str(self.path) + ".lock"):
                return float(self.path.read_text())
        def sleep(self, seconds):
            with FileLock(str(self.path) + ".lock"):
                self.path.write_text(str(float(self.path.read_text()) + max(0.0, seconds)))

    state, clock_file, out, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    clock = FileClock(clock_file)
    pacer = Pacer({"transactions": 60}, "https://svc|shared-key", state_dir=Path(state), clock=clock)
    with open(out, "w") as f:
        for _ in range(n):
            with pacer.slot("transactions") as start:
                f.write(json.dumps(start) + "\\n")
            f.flush()
    """
)


def test_two_processes_sharing_a_key_keep_the_pace_together(tmp_path: Path) -> None:
    script = tmp_path / "worker.py"
    script.write_text(_WORKER)
    clock_file = tmp_path / "clock"
    clock_file.write_text("1000.0")
    state = tmp_path / "pace"
    outs = [tmp_path / f"out{i}.txt" for i in range(2)]
    procs = [
        subprocess.Popen([sys.executable, str(script), str(state), str(clock_file), str(out), "4"])
        for out in outs
    ]
    assert all(p.wait(timeout=60) == 0 for p in procs)
    starts = sorted(json.loads(line) for out in outs for line in out.read_text().splitlines())
    assert len(starts) == 8
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert min(gaps) >= 60, gaps  # never faster than the pace, whichever process sent
    assert starts[-1] - starts[0] == 7 * 60.5  # and no slower than pace and margin: the lane stays full


def test_the_interval_counts_from_the_end_of_the_request_not_from_the_turn(
    clock: FakeClock, tmp_path: Path
) -> None:
    pacer = Pacer({"networks": 10}, "svc|key", state_dir=tmp_path, clock=clock)
    with pacer.slot("networks") as first:
        clock.sleep(3)  # the process was paused, then the request took its time
        pacer.defer("networks", 1)  # re-entrant: the client may defer or re-pace inside its turn
    with pacer.slot("networks") as second:
        pass
    assert second - first == pytest.approx(3 + 10.1)


_SENDER = textwrap.dedent(
    """
    import random, sys, time
    from pathlib import Path
    import httpx
    from commerce_reports.pace import Pacer

    base, state, day, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    pacer = Pacer({"transactions": 0.2}, base + "|sandbox-alpha-key", state_dir=Path(state))
    pause = random.Random(seed)
    with httpx.Client(base_url=base, headers={"Authorization": "secret sandbox-alpha-key"}) as http:
        for _ in range(6):
            with pacer.slot("transactions"):
                time.sleep(pause.uniform(0, 0.1))  # preempted between the turn and the send
                http.get("/v1/reports/transactions", params={"updateDate": day}).raise_for_status()
    """
)


def test_two_processes_on_a_loaded_machine_never_draw_a_429(tmp_path: Path) -> None:
    now = datetime(2026, 3, 10, 12, tzinfo=UTC)
    config = SandboxConfig(now=now, first_day=date(2026, 3, 1), pace=0.2, transactions_per_day=5)
    script = tmp_path / "sender.py"
    script.write_text(_SENDER)
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        with run_sandbox(config) as running:
            senders = [
                subprocess.Popen(
                    [
                        sys.executable,
                        str(script),
                        running.base_url,
                        str(tmp_path / "pace"),
                        "2026-03-05",
                        str(seed),
                    ],
                    stderr=subprocess.PIPE,
                    text=True,
                )
                for seed in (1, 2)
            ]
            errors = [p.communicate(timeout=120)[1] for p in senders]
            statuses = [r.status for r in running.sandbox.request_log]
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    assert [p.returncode for p in senders] == [0, 0], errors
    assert statuses == [200] * 12


def test_state_of_keys_unused_for_a_week_is_pruned(tmp_path: Path) -> None:
    import os
    import time

    from commerce_reports.pace import prune_state

    old, fresh = tmp_path / "old-networks.json", tmp_path / "new-networks.json"
    for path in (old, fresh, tmp_path / "old-networks.lock", tmp_path / "notes.txt"):
        path.write_text("{}")
    week_ago = time.time() - 8 * 24 * 3600
    for path in (old, tmp_path / "old-networks.lock", tmp_path / "notes.txt"):
        os.utime(path, (week_ago, week_ago))
    Pacer({"networks": 1}, "svc|key", state_dir=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new-networks.json", "notes.txt"]
    assert prune_state(tmp_path / "missing", time.time()) == 0
