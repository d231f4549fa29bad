"""Locks of a site, across threads and processes: the manifest lock and the writer lock.

The manifest lock is held for the moment of a manifest read-modify-write. The writer lock is held
by a sync (or a repair) for its whole run: one writer per site; readers never take it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from ..contract import site_root
from ..files import remove_stray_files

__all__ = ["site_lock", "writing_sites"]

log = logging.getLogger(__name__)
_thread_locks: dict[str, threading.RLock] = {}
_guard = threading.Lock()


@contextmanager
def site_lock(data_dir: Path, site: str, name: str = ".manifest.lock") -> Iterator[None]:
    """Hold the lock `name` of a site, across threads and processes (re-entrant in one thread)."""
    from filelock import FileLock  # with the first write: reading a manifest takes no lock

    root = site_root(data_dir, site)
    root.mkdir(parents=True, exist_ok=True)
    path = str(root / name)
    with _guard:
        thread_lock = _thread_locks.setdefault(path, threading.RLock())
    with thread_lock, FileLock(path, is_singleton=True):
        yield


@contextmanager
def writing_sites(data_dir: Path, sites: list[str]) -> Iterator[None]:
    """Be the only writer of these sites (waiting for another sync if need be), clean its debris."""
    with ExitStack() as stack:
        for site in sorted(sites):  # one order for everyone: no deadlock between two syncs
            stack.enter_context(site_lock(data_dir, site, ".sync.lock"))
        for stray in remove_stray_files(data_dir):
            log.info("removed %s, left by an interrupted writer", stray)
        yield
