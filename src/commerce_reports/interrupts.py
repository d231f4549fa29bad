"""Ctrl-C stops a DuckDB query at once, not when the statement ends.

DuckDB looks for a pending signal only when the thread that asked for a query (Python's main one)
comes back from a task of it. When another of its threads holds the only task (a scan that is not
parallel, a rebuild's long write), the main one waits and sees the signal only once that task
ends: a Ctrl-C during a rebuild at 10 M transactions took up to 4 s to stop it. So a command
(`cli.main`) runs inside `watching_ctrl_c`: the signal is also written to a pipe
(`signal.set_wakeup_fd`, from C, whatever the main thread is doing), and a thread of its own reads
it and interrupts every connection that the main thread registered with `on_ctrl_c`. DuckDB then
ends the query (`InterruptException`, or its "Query interrupted"), and Python's own KeyboardInterrupt
follows as for any Ctrl-C (`errors.is_ctrl_c` knows both). A lane's connection is not registered: a
lane finishes the partition it stores.

A SIGTERM or SIGHUP (a service manager stopping the job, `kill`, a closed terminal) stops a command
the same way, where nothing else took them (`nohup`'s ignored SIGHUP stays ignored): the process
would otherwise die where it stands, leaving what it was writing outside the data folder (an
export's temporary file) and a lane's partition half sent.
"""

from __future__ import annotations

import os
import signal
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Protocol

__all__ = ["on_ctrl_c", "watching_ctrl_c"]

_STOPS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # the signals that stop a command cleanly


class Interruptible(Protocol):
    """What Ctrl-C stops: a DuckDB connection (`interrupt` ends the query it runs, if any)."""

    def interrupt(self) -> None: ...


_registered: weakref.WeakSet[Interruptible] = weakref.WeakSet()
_lock = threading.Lock()


def on_ctrl_c(con: Interruptible) -> None:
    """Have Ctrl-C interrupt `con`'s queries while a command watches for it, if the main thread
    opened it (a lane's is left to finish); it is forgotten once it is gone."""
    if threading.current_thread() is threading.main_thread():
        with _lock:
            _registered.add(con)


@contextmanager
def watching_ctrl_c() -> Iterator[None]:
    """Within the block, Ctrl-C also interrupts the queries of the connections registered with
    `on_ctrl_c` (Python's KeyboardInterrupt is raised as always). Only the main thread can watch
    for signals; elsewhere, where the platform refuses a pipe, or when the process has a wakeup fd
    already (an event loop's, or an outer watcher's), this does nothing."""
    pipe = _wakeup_pipe() if threading.current_thread() is threading.main_thread() else None
    if pipe is None:  # no watcher of ours: DuckDB's own check, as before
        yield
        return
    read, write = pipe
    threading.Thread(target=_interrupting, args=(read,), name="ctrl-c", daemon=True).start()
    kept = {n: signal.signal(n, _stop) for n in _STOPS[1:] if signal.getsignal(n) == signal.SIG_DFL}
    try:
        yield
    finally:
        for number, handler in kept.items():
            signal.signal(number, handler)
        signal.set_wakeup_fd(-1)
        os.close(write)  # the watcher reads the end of the pipe and stops


def _stop(number: int, _frame: object) -> None:
    """A SIGTERM or SIGHUP, taken as Ctrl-C: the KeyboardInterrupt every clean stop knows."""
    raise KeyboardInterrupt(f"stopped by {signal.Signals(number).name}")


def _wakeup_pipe() -> tuple[int, int] | None:
    """A pipe that the process's signals are now written to (read end, write end), or None where
    the platform refuses one or another wakeup fd is set (it stays)."""
    read, write = os.pipe()
    os.set_blocking(write, False)  # the C handler must never block on it
    try:
        previous = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    except (ValueError, OSError):  # a platform whose wakeup fd must be a socket: none was set
        previous = None
    if previous == -1:
        return read, write
    if previous is not None:  # another's (an event loop's, an outer watcher's)
        signal.set_wakeup_fd(previous)
    os.close(read)
    os.close(write)
    return None


def _interrupting(read: int) -> None:
    """Read the signals written to the pipe `read` until it ends; interrupt the registered
    connections at each signal that stops a command."""
    try:
        while received := os.read(read, 64):
            if any(number in received for number in _STOPS):
                with _lock:
                    connections = list(_registered)
                for con in connections:
                    with suppress(Exception):  # (closed since: nothing to stop)
                        con.interrupt()
    finally:
        os.close(read)
