"""Locks of a site, across threads and processes: the manifest lock and the writer lock.

The manifest lock is held for the moment of a manifest read-modify-write. The writer lock is held
by a sync (or a repair) for its whole run: one writer per site; readers never take it. Waiting
longer than a few seconds for another process's lock is said (`files.held`); a folder where no
lock can be taken (read-only, not a folder) is a LakeError naming it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from .._lazy import LazyLogger
from ..contract import GENERATIONS_FOLDER, site_root
from ..errors import LakeError
from ..files import describe_os_error, held, writing_in

__all__ = ["site_lock", "writing_sites"]

log = LazyLogger(__name__)
_thread_locks: dict[str, threading.RLock] = {}
_guard = threading.Lock()


_WAITING = {
    ".sync.lock": "waiting for another sync or repair of site {site} to finish: one writer at a time",
    ".manifest.lock": "waiting for another process to finish writing the manifest of site {site}",
}


@contextmanager
def site_lock(data_dir: Path, site: str, name: str = ".manifest.lock") -> Iterator[None]:
    """Hold the lock `name` of a site, across threads and processes (re-entrant in one thread)."""
    path = site_root(data_dir, site) / name
    with _guard:
        thread_lock = _thread_locks.setdefault(str(path), threading.RLock())
    with thread_lock, _locked(path, _WAITING[name].format(site=site)):
        yield


@contextmanager
def _locked(path: Path, waiting: str) -> Iterator[None]:
    """`held`, its failure to take the lock a LakeError naming the data folder and why."""
    stack = ExitStack()
    try:
        stack.enter_context(held(path, waiting))
    except OSError as error:
        raise LakeError(
            f"cannot write in the data folder {path.parents[2]}: {describe_os_error(error)}; "
            "this command writes there (choose another with --data-dir "
            "or COMMERCE_REPORTS_DATA_DIR)"
        ) from None
    with stack:
        yield


@contextmanager
def writing_sites(data_dir: Path, sites: list[str]) -> Iterator[None]:
    """Be the only writer of these sites (waiting for another sync if need be), clean the debris of
    writers that stopped (`files.writing_in`: the data folder's top, or all of it after a writer
    was killed)."""
    with ExitStack() as stack:
        for site in sorted(sites):  # one order for everyone: no deadlock between two syncs
            stack.enter_context(site_lock(data_dir, site, ".sync.lock"))
        # Readers keep their records in the top two levels: data/lake/site=<site>, data/views/<generation>
        for stray in stack.enter_context(writing_in(data_dir, top=2, shallow=[GENERATIONS_FOLDER])):
            log.info("removed %s, left by an interrupted writer", stray)
        yield
