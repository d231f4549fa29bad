"""A wait longer than a few seconds is said before it starts, with its reason, by whichever process
waits: a Retry-After or a turn recorded by another process in the shared pace state, and a lock
another process holds (its request in flight, its sync of a site)."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from commerce_reports import files
from commerce_reports.lake import writing_sites
from commerce_reports.pace import Pacer
from tests.conftest import FakeClock
from tests.waiting import wait_for

SCOPE = "https://svc.example|shared-key-0123456789"

_OTHER_PROCESS = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from commerce_reports.pace import Pacer

    state, action = Path(sys.argv[1]), sys.argv[2]
    pacer = Pacer({"transactions": 120}, sys.argv[3], state_dir=state)  # the real clock
    if action == "defer":
        pacer.defer("transactions", 240)  # what a 429 with Retry-After: 240 makes the client do
    else:
        with pacer.slot("transactions"):
            pass
    """
)


def _other_process(tmp_path: Path, action: str) -> None:
    """Another process sharing the key acts on the pace state, then exits."""
    subprocess.run(
        [sys.executable, "-c", _OTHER_PROCESS, str(tmp_path / "pace"), action, SCOPE], check=True, timeout=60
    )


@pytest.mark.parametrize(
    ("action", "said"),
    [
        (
            "defer",
            r"waiting 2[34]\d s before the next transactions request: the service asked to slow down "
            r"\(Retry-After, told to another process \(.+-\d+\) sharing this key\)",
        ),
        (
            "slot",
            r"waiting 1[12]\d s before the next transactions request: another process \(.+-\d+\) "
            r"sharing this key asked last",
        ),
    ],
    ids=["retry-after", "pace"],
)
def test_a_wait_inherited_from_another_process_is_a_warning_with_its_reason(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, action: str, said: str
) -> None:
    _other_process(tmp_path, action)
    clock = FakeClock(start=time.time())  # the state holds real times; this process's waits are fake
    pacer = Pacer({"transactions": 60}, SCOPE, state_dir=tmp_path / "pace", clock=clock)
    caplog.set_level(logging.INFO)
    with pacer.slot("transactions"):
        pass
    assert clock.sleeps and clock.sleeps[0] > 100  # it did wait what the other process left
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and re.fullmatch(said, warnings[0]), warnings


@pytest.mark.parametrize(("quiet", "level"), [(False, logging.WARNING), (True, logging.INFO)])
def test_a_wait_for_this_process_own_pace_is_said_unless_its_caller_says_it(
    tmp_path: Path, clock: FakeClock, caplog: pytest.LogCaptureFixture, quiet: bool, level: int
) -> None:
    """A notebook's direct requests waited a minute each with no word (an INFO line, which no
    notebook shows); a sync, whose plan and progress say its lanes' waits, keeps it a log line."""
    pacer = Pacer(
        {"transactions": 60, "networks": 1.5}, SCOPE, state_dir=tmp_path, clock=clock, quiet_pace=quiet
    )
    caplog.set_level(logging.INFO)
    for endpoint in ("transactions", "transactions", "networks", "networks"):
        with pacer.slot(endpoint):
            pass
    lines = [(r.levelno, r.getMessage()) for r in caplog.records]
    # a wait of 2 s or less (networks: 1.55 s with the margin) is not said; a longer one is
    assert lines == [(level, "waiting 60 s before the next transactions request: the pace is 60 s")]


def test_a_wait_the_service_asked_this_process_for_is_a_warning(
    tmp_path: Path, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    pacer = Pacer({"networks": 1}, SCOPE, state_dir=tmp_path, clock=clock)
    pacer.defer("networks", 90)
    with pacer.slot("networks"):
        pass
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [
        "waiting 90 s before the next networks request: the service asked to slow down (Retry-After)"
    ]


_HOLDER = textwrap.dedent(
    """
    import sys
    from filelock import FileLock

    lock = FileLock(sys.argv[1])
    lock.acquire()
    print("held", flush=True)
    sys.stdin.read()  # until the test closes our stdin
    """
)


Taker = Callable[[], AbstractContextManager[object]]


def _pace_lock(tmp_path: Path) -> tuple[Path, Taker, str]:
    pacer = Pacer({"transactions": 0}, SCOPE, state_dir=tmp_path / "pace")
    with pacer.slot("transactions"):  # makes its lock file
        pass
    lock = next((tmp_path / "pace").glob("*-transactions.lock"))
    return lock, lambda: pacer.slot("transactions"), "waiting for another process's transactions request"


def _site_lock(tmp_path: Path) -> tuple[Path, Taker, str]:
    lock = tmp_path / "data" / "lake" / "site=alpha" / ".sync.lock"
    return (
        lock,
        lambda: writing_sites(tmp_path / "data", ["alpha"]),
        "waiting for another sync or repair of site alpha",
    )


@pytest.mark.parametrize("which", [_pace_lock, _site_lock], ids=["pace turn", "site writer"])
def test_a_lock_another_process_holds_is_said_before_waiting_on(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    which: Callable[[Path], tuple[Path, Taker, str]],
) -> None:
    lock, take, said = which(tmp_path)
    lock.parent.mkdir(parents=True, exist_ok=True)
    monkeypatch.setattr(files, "LOCK_PATIENCE", 0.1)  # the lock's patience is real time: keep it short
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        taken = threading.Event()

        def waiter() -> None:
            with take():
                taken.set()

        thread = threading.Thread(target=waiter)
        thread.start()
        wait_for(lambda: any(said in r.getMessage() for r in caplog.records), "the wait to be said")
        assert not taken.is_set()  # said while still waiting
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=60)
    thread.join(timeout=60)
    assert taken.is_set()
    record = next(r for r in caplog.records if said in r.getMessage())
    assert record.levelno == logging.WARNING and str(lock) in record.getMessage()
