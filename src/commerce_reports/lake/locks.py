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
from ..files import describe_os_error, held, remove_stray_files, temp_path

__all__ = ["site_lock", "writing_sites"]

log = LazyLogger(__name__)
_thread_locks: dict[str, threading.RLock] = {}
_guard = threading.Lock()
_MARK = "writing"  # a writer's mark at the data folder's top: `.writing.<host>-<pid>.<hex>.tmp` (`_marked`)
_TOP_LEVELS = (
    2  # the folders a sweep always searches: data/lake/site=<site>, data/views/<generation> and above
)


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
    writers that stopped (`_sweep`), and mark the data folder as written while it is."""
    with ExitStack() as stack:
        for site in sorted(sites):  # one order for everyone: no deadlock between two syncs
            stack.enter_context(site_lock(data_dir, site, ".sync.lock"))
        for stray in _sweep(data_dir):
            log.info("removed %s, left by an interrupted writer", stray)
        stack.enter_context(_marked(data_dir))
        yield


def _sweep(data_dir: Path) -> list[Path]:
    """Remove the temporary files of this machine's writers that no longer run. Deep in the folder
    (partitions, rollups, generations) only a writer of sites writes, and it marks the data folder
    while it does (`_marked`): the whole folder is searched when the mark of a writer that was
    stopped is left, else its top levels alone (where a reader keeps its caches and records), which
    spares a sync or a refresh a walk of every folder of the lake (0.10-0.16 s on a cold cache
    for the bench lakes of 1 M to 100 M rows, their top 0.01-0.05 s)."""
    removed = remove_stray_files(data_dir, depth=_TOP_LEVELS)
    if any(path.name.startswith(f".{_MARK}.") for path in removed):
        removed += remove_stray_files(data_dir, shallow=[GENERATIONS_FOLDER])
    return removed


@contextmanager
def _marked(data_dir: Path) -> Iterator[None]:
    """A file with a temporary name of this process at the data folder's top, while it writes
    there: a writer killed leaves it, and the next writer's sweep, finding it, searches the whole
    folder. A mark that cannot be made (a full disk) is no error: this writer's debris is then
    found by the next sweep that searches the whole folder."""
    mark = temp_path(data_dir / _MARK)
    try:
        mark.touch()
    except OSError:
        log.debug("could not mark %s as being written", data_dir)
    try:
        yield
    finally:
        mark.unlink(missing_ok=True)
