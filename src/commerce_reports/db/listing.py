"""What the lake holds right now: every partition file of a site, by the sha256 of its content.

The rollups and the views decide from a listing whether a rollup still matches the lake, and which
partitions changed since it was built. A file is what its hash says, and its stat vouches for a
digest already known (`lake/digests.py`): a `stat` per file (a year of days lists in a few
milliseconds), a read only of a file changed since it was last hashed. A copied or restored lake
lists the same as the original.

Some files are left out of every view and rollup, each with a warning saying why and how to repair
it: a file whose Parquet frame is broken (cut short, overwritten, not Parquet: found by reading its
first and last bytes, once per version), and a file no manifest entry vouches for (its content
differs from the entry's digest, or it has no entry): nothing a sync did not check is read. One
whose frame is whole but whose content cannot be decoded is found when a rollup build over it fails.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from stat import S_ISLNK

import pyarrow as pa
import pyarrow.parquet as pq

from ..contract import DATASETS, PART_FILE
from ..errors import LakeError
from ..lake.digests import SiteDigests, stamp_of
from ..lake.manifest import Entry, Manifest

__all__ = [
    "Digest",
    "Listing",
    "dataset_of",
    "left_out_files",
    "listing_digest",
    "manifest_entries",
    "site_listing",
    "undecodable_files",
]

log = logging.getLogger(__name__)

# relpath of a partition file below its site folder -> the sha256 of its content (a file that
# cannot be read: `unreadable:<stamp>`, which equals no digest).
Digest = str
Listing = dict[str, Digest]

# Folder levels below each dataset folder (by/day; slice/grain/start).
_DEPTH = {"transactions": 2, "networks": 3, "merchandise": 3}
_MAGIC = b"PAR1"
_problems: dict[tuple[str, str], str | None] = {}
_warned: set[tuple[str, str]] = set()
_UNREADABLE = "unreadable:"  # a listed file's digest when it cannot be read (with its stamp)
_LINK = "link:"  # a listed file's digest when it is a symbolic link (with its stamp)


def _leaf_folders(folder: str, depth: int) -> list[str]:
    """Folders `depth` levels below `folder` whose names are hive keys (`name=value`)."""
    level = [folder]
    for _ in range(depth):
        below: list[str] = []
        for parent in level:
            try:
                with os.scandir(parent) as entries:
                    below.extend(e.path for e in entries if "=" in e.name and _is_folder(e))
            except (FileNotFoundError, NotADirectoryError):
                continue
        level = below
    return level


def _is_folder(entry: os.DirEntry[str]) -> bool:
    """Whether `entry` is a folder; a link that loops or leads nowhere readable is none (a stray
    one made every query of the lake fail: "Too many levels of symbolic links")."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def site_listing(site_folder: Path, digests: SiteDigests) -> Listing:
    """Every partition file of a site (relpath below its lake folder, `site_folder`) with the
    digest of its content (`digests`, the site's: read only where no unchanged stamp vouches for
    one)."""
    root = str(site_folder)
    below_root = len(os.path.join(root, ""))  # (strings, not Paths: a year of days is 365 files)
    listing: Listing = {}
    for dataset in DATASETS:
        for folder in _leaf_folders(os.path.join(root, dataset), _DEPTH[dataset]):
            path = os.path.join(folder, PART_FILE)
            try:
                stat = os.lstat(path)
            except (FileNotFoundError, NotADirectoryError):
                continue
            relpath = path[below_root:].replace(os.sep, "/")
            if S_ISLNK(stat.st_mode):  # never a sync's: it may point anywhere
                listing[relpath] = f"{_LINK}{stamp_of(stat)}"
                continue
            try:
                listing[relpath] = digests.of(path, stat)
            except FileNotFoundError:
                continue
            except OSError:
                listing[relpath] = f"{_UNREADABLE}{stamp_of(stat)}"
    return listing


def dataset_of(relpath: str) -> str:
    """The dataset a listed relpath belongs to (its first folder)."""
    return relpath.split("/", 1)[0]


def listing_digest(listing: Mapping[str, Digest]) -> str:
    """A digest of a listing: equal listings, equal digests."""
    digest = hashlib.sha256()
    for relpath in sorted(listing):
        digest.update(f"{relpath}|{listing[relpath]}\n".encode())
    return digest.hexdigest()


def left_out_files(
    site_folder: Path,
    listing: Listing,
    entries: Mapping[str, Entry] | None,
    known: Listing,
    skipped: Mapping[str, str],
) -> dict[str, str]:
    """The files of `listing` (below `site_folder`) that the views and rollups must not read,
    each with why, and a warning for each: those no manifest entry vouches for (`entries`, the
    site's manifest entries by partition relpath; None: the manifest is damaged, and vouches for
    nothing until a sync rebuilds it), and those whose Parquet frame is broken (checked once per
    version: those in `known` at the same digest keep what was found then, `skipped`)."""
    found: dict[str, str] = {}
    for relpath, digest in listing.items():
        entry = None if entries is None else entries.get(relpath.rsplit("/", 1)[0])
        if entry is None or entry.sha256 != digest:
            found[relpath] = _distrust(entries, entry, digest)
            continue
        if known.get(relpath) == digest:
            if relpath in skipped:
                found[relpath] = skipped[relpath]
            continue
        problem = _frame_problem(site_folder / relpath, digest)
        if problem is not None:
            found[relpath] = problem
    if entries is not None:  # (a damaged manifest is said once, by `manifest_entries`)
        for relpath, reason in found.items():
            _warn_left_out(site_folder / relpath, reason, listing[relpath])
    return found


def manifest_entries(data_dir: Path, site: str) -> Mapping[str, Entry] | None:
    """The entries of a site's manifest by partition relpath, what vouches for its files (None:
    the manifest is damaged, or another site's, said once per version of it: a line per file
    said the same thing a lake's worth of times; no manifest at all vouches for nothing either)."""
    try:
        return Manifest.load(data_dir, site).entries
    except LakeError as error:
        key = (site, str(error))
        if key not in _warned:
            _warned.add(key)
            log.warning("%s", error)
        return None


def _distrust(entries: Mapping[str, Entry] | None, entry: Entry | None, digest: Digest) -> str:
    if digest.startswith(_LINK):
        return "it is a symbolic link, where a sync writes a file (it may point outside the data folder)"
    if digest.startswith(_UNREADABLE):
        return "it cannot be read (this user's permissions on it, or the disk): its content is unknown"
    if entries is None:
        return "its site's manifest is damaged, so nothing vouches for its content"
    if entry is None:
        return "no manifest entry vouches for it (not stored by a sync)"
    return "its content is not what the sync stored (its sha256 differs from its manifest entry's)"


def undecodable_files(site_folder: Path, listing: Listing, skipped: Mapping[str, str]) -> dict[str, str]:
    """The files of `listing` not in `skipped` whose content cannot be decoded, each with why
    (read in full: only after a build over them failed)."""
    found: dict[str, str] = {}
    for relpath, digest in listing.items():
        if relpath in skipped:
            continue
        try:
            pq.read_table(site_folder / relpath)
        except FileNotFoundError:
            continue
        except (pa.ArrowException, OSError, ValueError) as error:
            found[relpath] = f"cannot be decoded ({' '.join(str(error).split())[:200]})"
            _warn_left_out(site_folder / relpath, found[relpath], digest)
    return found


def _frame_problem(path: Path, digest: Digest) -> str | None:
    """Why the file at `path` cannot be a whole Parquet file (None when its frame is whole).

    Checks the leading and trailing magic bytes and the footer length: a file cut short, or
    overwritten by something else, fails; a whole file passes without being parsed. Remembered per
    version of the file (its `digest`), so each is read once per process.
    """
    key = (str(path), digest)
    if key not in _problems:
        if len(_problems) > 200_000:
            _problems.clear()
        _problems[key] = _check_frame(path)
    return _problems[key]


def _check_frame(path: Path) -> str | None:
    try:
        with path.open("rb") as source:
            size = os.fstat(source.fileno()).st_size
            if size < 12:
                return f"only {size} bytes: too short to be a Parquet file"
            head = source.read(4)
            source.seek(size - 8)
            tail = source.read(8)
    except FileNotFoundError:
        return None  # gone since it was listed: the next listing no longer has it
    except OSError as error:
        return f"cannot be read ({error.strerror or error})"
    if head != _MAGIC or tail[4:] != _MAGIC:
        return "not a whole Parquet file (cut short or overwritten)"
    if int.from_bytes(tail[:4], "little") + 12 > size:
        return "its Parquet footer is cut short"
    return None


def _warn_left_out(path: Path, reason: str, digest: Digest) -> None:
    """Log, once per version of the file, that it is left out and how to repair it."""
    key = (str(path), digest)
    if key in _warned:
        return
    _warned.add(key)
    log.warning(
        "%s is left out of the views and rollups (%s) until it is repaired: the next sync, or "
        "`commerce-reports verify`, quarantines it and fetches it again",
        path,
        reason,
    )
