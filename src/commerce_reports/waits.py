"""Waits that end: a bound on every wait, and a signal that wakes every thread waiting on it.

Python's timed lock waits (`Event.wait(t)`, `Thread.join(t)`, `Lock.acquire(timeout=t)`,
`threading.Timer`) hand the C library an absolute deadline on the monotonic clock. Under a faked
clock (libfaketime, as a daily-sync simulation runs the command line) that deadline is the fake
time plus `t`, which the real clock reaches years later: a sync under `faketime` hung with every
thread waiting on a pace turn of 50 ms and no connection open (issue 31). A `Signal` waits with
`select()` on a socket pair instead: the kernel counts the timeout down relative to now, so no
faked clock can stretch it, and `set` wakes every waiter at once (and any later wait returns at
once). Waits on threads (`join`) are waits on a signal their end sets.
"""

from __future__ import annotations

import contextlib
import select
import threading
from collections.abc import Callable

__all__ = ["Signal", "start_thread"]


class Signal:
    """A flag threads wait on, each wait bounded; `set` wakes them all (like `threading.Event`,
    whose timed waits a faked monotonic clock turns into endless ones)."""

    def __init__(self) -> None:
        import socket  # a millisecond of set-up: paid by a process that waits, not by every import

        self._receive, self._send = socket.socketpair()
        self._receive.setblocking(False)
        self._lock = threading.Lock()
        self._set = False
        self._closed = False

    def __repr__(self) -> str:
        return f"Signal({'set' if self._set else 'clear'})"

    def set(self) -> None:
        """Raise the flag and wake every thread waiting on it (now and later)."""
        with self._lock:
            if self._set or self._closed:
                self._set = True
                return
            self._set = True
            self._send.send(b"!")  # never read: the socket stays readable, every select() returns

    def is_set(self) -> bool:
        return self._set

    def wait(self, seconds: float) -> bool:
        """Wait until the flag is raised, `seconds` at most; whether it is raised. A signal in the
        main thread (Ctrl-C) interrupts the wait as it interrupts `time.sleep`."""
        if self._set or seconds <= 0:
            return self._set
        with contextlib.suppress(ValueError, OSError):  # closed meanwhile: the flag says the rest
            select.select([self._receive], [], [], seconds)
        return self._set

    def close(self) -> None:
        """Let go of the socket pair once nobody waits any more (the flag keeps its state)."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._receive.close()
                self._send.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()


def start_thread(target: Callable[[], object], name: str, *, daemon: bool = True) -> Signal:
    """Run `target` in a thread, a daemon unless told otherwise; the returned signal is set when it
    ends, however it ends (what `Thread.join(timeout)` would wait on, without its clock).

    A thread that runs native code (DuckDB, pyarrow) must not be a daemon: CPython ends a daemon
    thread that wakes during the interpreter's exit with `pthread_exit`, and in C++ code that aborts
    the process. The interpreter waits for every other thread before it exits (an untimed wait: no
    faked clock stretches it), its teardown included, which the signal does not cover."""
    ended = Signal()

    def run() -> None:
        try:
            target()
        finally:
            ended.set()

    threading.Thread(target=run, name=name, daemon=daemon).start()
    return ended
