"""Waits that end: a `Signal` wait is bounded, wakes every waiter when set, and keeps its bound under
a faked clock, where a `threading.Event.wait` never returns (the hang of issue 31)."""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import threading
import time

import pytest

from commerce_reports.waits import Signal, start_thread
from tests.waiting import wait_for


def test_a_wait_ends_at_its_bound_when_nobody_sets_the_signal() -> None:
    signal = Signal()
    started = time.monotonic()
    assert signal.wait(0.05) is False
    assert time.monotonic() - started >= 0.05
    assert signal.wait(0) is False and signal.wait(-1) is False  # nothing to wait for


def test_setting_the_signal_wakes_every_waiter_at_once_and_every_later_wait() -> None:
    signal = Signal()
    woken: list[bool] = []
    waiters = [threading.Thread(target=lambda: woken.append(signal.wait(600))) for _ in range(3)]
    for waiter in waiters:
        waiter.start()
    signal.set()
    wait_for(lambda: len(woken) == 3, "the three waiters to wake", timeout=30)
    assert woken == [True, True, True]
    signal.set()  # twice is once
    assert signal.wait(600) and signal.is_set()
    signal.close()
    signal.close()
    assert signal.wait(600)  # the flag outlives the socket pair
    signal.set()  # setting a closed signal raises nothing


def test_a_thread_s_end_is_a_signal_however_it_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    def fails() -> None:
        raise RuntimeError("a lane that dies")

    seen: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: seen.append(args.exc_value))
    ended = start_thread(fails, "fails")
    wait_for(lambda: ended.is_set() and bool(seen), "the thread's end", timeout=30)
    assert isinstance(seen[0], RuntimeError)  # the error is the thread's, as ever; the end is said
    gate = Signal()
    ended = start_thread(lambda: gate.wait(600), "waits")
    assert not ended.wait(0.01)
    gate.set()
    assert ended.wait(30)


def _faked_clock() -> dict[str, str]:
    found = glob.glob("/usr/lib/*/faketime/libfaketime.so.1") + glob.glob(
        "/usr/lib/faketime/libfaketime.so.1"
    )
    if not found:
        pytest.skip("Debian's faketime is not installed (.ci/run installs it)")
    return {"LD_PRELOAD": found[0], "FAKETIME": "@2026-01-01 06:00:00", "TZ": "UTC"}


def test_under_a_faked_clock_a_signal_wait_keeps_its_bound() -> None:
    """libfaketime fakes the monotonic clock; `threading.Event().wait(0.05)` then never returns."""
    wait = "from commerce_reports.waits import Signal; assert Signal().wait(0.05) is False"
    process = subprocess.run([sys.executable, "-c", wait], env={**os.environ, **_faked_clock()}, timeout=120)
    assert process.returncode == 0
