"""A file is what its sha256 says; its stat is only a cache of that (as git's index is).

Partitions and rollup files are known by the sha256 of their bytes: a manifest entry records the
digest of the partition a sync checked, a rollup state the digests of the files its refresh wrote.
Hashing every file at every step would cost a read of the whole lake, so a digest is kept with
the file's *stamp*: its size, modification time, change time, inode and device. A stamp that has
not changed vouches for the digest; any other is hashed again:

- a file rewritten in place with its modification time put back has a new change time (only the
  kernel sets it), so it is read, and found changed;
- a copy, a move or a restore (`cp -a`, `cp -r`, `rsync`, `tar`) has new inodes and change times:
  it is read once, found the same, and its new stamps vouch for it from then on.

Each process keeps the digests it computed or wrote. A publisher (`db/published.py`) saves, per
site, the digests of the files it published beside the site's manifest (`digests.json`), so the
next process trusts an unchanged file without reading it. Hard-linking a file (a generation of the
published lake) or removing one of its links changes its change time: the publisher saves the
files' digests for their stamps after it has linked and pruned (`save(..., relinked=True)`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from collections.abc import Iterable
from pathlib import Path

from .._lazy import LazyLogger
from ..contract import site_root
from ..files import save_atomic, sha256_of

__all__ = [
    "DIGESTS_FILE",
    "SiteDigests",
    "Stamp",
    "intend",
    "intended",
    "stamp_of",
]

log = LazyLogger(__name__)

DIGESTS_FILE = "digests.json"
_INTENTS = ".intents"  # below a site's folder: the digest of each partition being written
_KNOWN_MAX = 500_000  # digests kept per process (a long-lived process forgets, then hashes again)

# (size, modification time in ns, change time in ns, inode, device)
Stamp = tuple[int, int, int, int, int]

_lock = threading.Lock()
# absolute path -> (stamp, sha256): what this process hashed, wrote or read from a saved record
_known: dict[str, tuple[Stamp, str]] = {}
# saved records read by this process, by their path: (the record file's stamp, its digests)
_records: dict[str, tuple[Stamp, dict[str, tuple[Stamp, str]]]] = {}


def stamp_of(stat: os.stat_result) -> Stamp:
    """What identifies one version of a file cheaply (a changed stamp means: hash it again)."""
    return (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino, stat.st_dev)


class SiteDigests:
    """The digests of one site's files (partitions below `<data_dir>/lake/site=<site>/`, rollups
    below `<data_dir>/rollups/site=<site>/`), by content, with the stamps that vouch for them."""

    def __init__(self, data_dir: Path, site: str) -> None:
        self.data_dir = Path(data_dir)
        self.site = site
        self.record = site_root(self.data_dir, site) / DIGESTS_FILE
        self._prefix = os.path.join(str(self.data_dir), "")  # (paths below it are keyed relative to it)
        self.hashed = 0  # files read to know their digest (none when every stamp vouched)
        self.hashed_bytes = 0

    def of(self, path: Path | str, stat: os.stat_result | None = None) -> str:
        """The sha256 of the file at `path`: from an unchanged stamp when one vouches for it, else
        by reading it. Raises OSError when the file cannot be read."""
        vouched = self.vouched(path, stat)
        return vouched if vouched is not None else self.read(path)

    def vouched(self, path: Path | str, stat: os.stat_result | None = None) -> str | None:
        """The digest an unchanged stamp vouches for (this process's, or the site's record), or
        None: the file must be read to know it. Raises OSError when there is no file."""
        stamp = stamp_of(stat if stat is not None else os.stat(path))
        key = os.fspath(path)
        with _lock:
            known = _known.get(key)
        if known is not None and known[0] == stamp:
            return known[1]
        saved = self._saved().get(self._relative(path))
        if saved is not None and saved[0] == stamp:
            _remember(key, *saved)
            return saved[1]
        return None

    def read(self, path: Path | str) -> str:
        """The sha256 of the file at `path`, read in full whatever its stamp (`verify` does this)."""
        before = os.stat(path)
        digest = sha256_of(path)
        after = os.stat(path)
        self.hashed += 1
        self.hashed_bytes += after.st_size
        if stamp_of(before) == stamp_of(after):  # not changed while it was read
            _remember(os.fspath(path), stamp_of(after), digest)
        return digest

    def note(self, path: Path, digest: str) -> None:
        """Remember that the file at `path`, as it is now, holds `digest` (a writer that has just
        hashed what it wrote, or a publisher whose links changed the file's change time)."""
        _remember(str(path), stamp_of(os.stat(path)), digest)

    def save(self, paths: Iterable[Path | str], *, relinked: bool = False) -> None:
        """Save the digests this process knows of `paths` (those still vouched for by their
        stamp) as the site's record, for the next process (a `stat` each). `relinked`: the files
        got or lost a hard link since (a generation published or pruned), which moved their change
        time and nothing else: a digest known by their size, modification time, inode and device
        (this process's, or the record's) is kept for their stamp now; nothing is forgotten."""
        entries: dict[str, list[object]] = {}
        for path in paths:
            key = os.fspath(path)
            try:
                stamp = stamp_of(os.stat(key))
            except OSError:
                continue
            with _lock:
                known = _known.get(key)
            if relinked and (known is None or known[0] != stamp):
                before = known or self._saved().get(self._relative(key))
                if before is not None and _same_file(before[0], stamp):
                    known = (stamp, before[1])
                    _remember(key, *known)
            if known is not None and known[0] == stamp:
                entries[self._relative(key)] = [*stamp, known[1]]
        text = json.dumps({"files": entries}, separators=(",", ":"), sort_keys=True)
        save_atomic(self.record, text, durable=False)  # a cache: lost in a crash, its files are hashed again

    def save_published(self, paths: Iterable[Path | str], partitions: dict[str, str]) -> None:
        """Save the digests of a publication's files (`save(..., relinked=True)`), and forget the
        intents they now vouch for: `partitions`, the digest of each published partition by its
        relpath (an intent of other content, a file written since, stays)."""
        self.save(paths, relinked=True)
        folder = self.record.parent / _INTENTS  # (the site folder, beside its record)
        try:
            names = os.listdir(folder)
        except OSError:
            return
        for name in names:
            intent = _intent_at(folder / name)
            if intent is not None and partitions.get(intent[0]) == intent[1]:
                with contextlib.suppress(OSError):
                    (folder / name).unlink()

    def saved_digest(self, path: Path) -> str | None:
        """The digest the site's record gives `path`, whatever its stamp now (what was last
        published of it), or None."""
        saved = self._saved().get(self._relative(path))
        return None if saved is None else saved[1]

    def _relative(self, path: Path | str) -> str:
        text, prefix = os.fspath(path), self._prefix
        return text[len(prefix) :].replace(os.sep, "/") if text.startswith(prefix) else text

    def _saved(self) -> dict[str, tuple[Stamp, str]]:
        """The site's saved record, read once per version of its file (empty when there is none,
        or it cannot be read: every file is then hashed, which is slower, never wrong)."""
        key = str(self.record)
        try:
            stamp = stamp_of(os.stat(self.record))
        except OSError:
            return {}
        with _lock:
            cached = _records.get(key)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        try:
            files = json.loads(self.record.read_text())["files"]
            record = {
                str(relpath): (
                    (int(v[0]), int(v[1]), int(v[2]), int(v[3]), int(v[4])),
                    str(v[5]),
                )
                for relpath, v in files.items()
            }
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError) as error:
            log.debug("the digests of site %s are not readable (%s): hashing its files", self.site, error)
            record = {}
        with _lock:
            _records[key] = (stamp, record)
        return record


def _same_file(before: Stamp, now: Stamp) -> bool:
    """The same file, bar its change time (size, modification time, inode, device)."""
    return before[:2] == now[:2] and before[3:] == now[3:]


def _remember(key: str, stamp: Stamp, digest: str) -> None:
    with _lock:
        if len(_known) >= _KNOWN_MAX:
            _known.clear()
        _known[key] = (stamp, digest)


def _intent_path(data_dir: Path, site: str, relpath: str) -> Path:
    name = hashlib.sha256(relpath.encode()).hexdigest()[:32]
    return site_root(data_dir, site) / _INTENTS / f"{name}.json"


def intend(data_dir: Path, site: str, relpath: str, digest: str) -> None:
    """Say, before a partition's file is replaced, the digest of what replaces it: a sync killed
    between the file and its manifest entry leaves the file vouched for by this record alone, so
    the next sync adopts the file a sync checked, and quarantines any other. The record stays until
    a publication saves the file's digest (`SiteDigests.save_published`): until then it is what a
    manifest rebuilt from the files trusts (a sync whose rollups failed publishes nothing)."""
    record = {"relpath": relpath, "sha256": digest}
    save_atomic(_intent_path(data_dir, site, relpath), json.dumps(record), durable=False)


def intended(data_dir: Path, site: str, relpath: str) -> str | None:
    """The digest a sync said it was writing at `relpath` and not yet published, or None."""
    intent = _intent_at(_intent_path(data_dir, site, relpath))
    return intent[1] if intent is not None and intent[0] == relpath else None


def _intent_at(path: Path) -> tuple[str, str] | None:
    """The (relpath, sha256) an intent file records, or None (none there, or not one)."""
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict):
        return None
    relpath, digest = record.get("relpath"), record.get("sha256")
    return (relpath, digest) if isinstance(relpath, str) and isinstance(digest, str) else None
