"""A command's Ctrl-C watcher (`interrupts.py`): a SIGINT interrupts the connections the main thread
registered, and the process's signal set-up is as it was once the command ends. The whole path,
on a real query that DuckDB alone would run to its end, is in `test_ctrl_c.py`."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator

import pytest

from commerce_reports.interrupts import on_ctrl_c, watching_ctrl_c


class _Query:
    """A stand-in for a connection: says when it was interrupted."""

    def __init__(self) -> None:
        self.interrupted = threading.Event()

    def interrupt(self) -> None:
        self.interrupted.set()


@pytest.fixture
def default_ctrl_c() -> Iterator[None]:
    """Python's own SIGINT handler (a test worker's process may have another), and no wakeup fd."""
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    wakeup = signal.set_wakeup_fd(-1)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, handler)
        signal.set_wakeup_fd(wakeup)


def _watchers() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == "ctrl-c"}


def _watcher(before: set[threading.Thread] | None = None) -> threading.Thread | None:
    """The watcher thread a block started: none of those alive `before` it (an earlier block's
    watcher ends once it reads its pipe's end, which a loaded machine may not have scheduled yet)."""
    return next(iter(_watchers() - (before or set())), None)


@pytest.mark.usefixtures("default_ctrl_c")
def test_ctrl_c_interrupts_the_main_thread_s_connections_and_not_a_lane_s() -> None:
    ours, lanes = _Query(), _Query()
    on_ctrl_c(ours)
    lane = threading.Thread(target=on_ctrl_c, args=(lanes,))
    lane.start()
    lane.join()
    with watching_ctrl_c(), pytest.raises(KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)  # Python's KeyboardInterrupt is raised as always
    assert ours.interrupted.wait(timeout=30)
    assert not lanes.interrupted.is_set()


@pytest.mark.usefixtures("default_ctrl_c")
def test_the_watcher_leaves_the_process_as_it_found_it() -> None:
    before = _watchers()
    with watching_ctrl_c():
        watcher = _watcher(before)
        assert watcher is not None
        pipe = signal.set_wakeup_fd(-1)
        assert pipe != -1
        signal.set_wakeup_fd(pipe)
    assert signal.set_wakeup_fd(-1) == -1
    watcher.join(timeout=30)  # it reads the end of its pipe
    assert not watcher.is_alive()


@pytest.mark.usefixtures("default_ctrl_c")
def test_an_event_loop_s_wakeup_fd_is_left_alone() -> None:
    read, write = os.pipe()
    os.set_blocking(write, False)
    try:
        signal.set_wakeup_fd(write)
        before = _watchers()
        with watching_ctrl_c():
            assert _watcher(before) is None
        assert signal.set_wakeup_fd(-1) == write
    finally:
        os.close(read)
        os.close(write)


@pytest.mark.usefixtures("default_ctrl_c")
def test_a_platform_that_refuses_a_pipe_runs_the_command_without_a_watcher(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refused(fd: int, *, warn_on_full_buffer: bool = True) -> int:
        raise ValueError("the fd must be in non-blocking mode")  # (a socket, elsewhere)

    opened = len(os.listdir("/proc/self/fd"))
    ran = []
    before = _watchers()
    with monkeypatch.context() as patched:
        patched.setattr(signal, "set_wakeup_fd", refused)
        with watching_ctrl_c():
            ran.append(True)
            assert _watcher(before) is None
    assert ran == [True]
    assert len(os.listdir("/proc/self/fd")) == opened  # the pipe closed
