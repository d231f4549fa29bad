"""What the lake holds right now, found cheaply: every partition file of a site, its size and mtime.

The rollups and the views decide from a listing whether a rollup still matches the lake, and which
partitions changed since it was built: a `stat` per file (a year of days lists in a few
milliseconds), no reading. A file whose Parquet frame is broken (cut short, overwritten, not
Parquet) is found by reading its first and last bytes, once per size and mtime: such a file is left
out of every view with a warning saying how to repair it, instead of failing every query. One whose
frame is whole but whose content cannot be decoded is found only when a rollup build over it fails.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Mapping
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ..contract import DATASETS, PART_FILE

__all__ = [
    "Listing",
    "Stat",
    "dataset_of",
    "listing_digest",
    "site_listing",
    "undecodable_files",
    "unreadable_files",
]

log = logging.getLogger(__name__)

# relpath of a partition file below its site folder -> its version: (size in bytes, mtime in ns,
# inode). The inode tells apart two writes within one tick of the file system's clock: every write
# of the lake replaces the file (a new inode); a file changed in place changes size or mtime.
Stat = tuple[int, int, int]
Listing = dict[str, Stat]

# Folder levels below each dataset folder (by/day; slice/grain/start).
_DEPTH = {"transactions": 2, "networks": 3, "merchandise": 3}
_MAGIC = b"PAR1"
_problems: dict[tuple[str, int, int, int], str | None] = {}
_warned: set[tuple[str, int, int, int]] = set()


def _leaf_folders(folder: str, depth: int) -> list[str]:
    """Folders `depth` levels below `folder` whose names are hive keys (`name=value`)."""
    level = [folder]
    for _ in range(depth):
        below: list[str] = []
        for parent in level:
            try:
                with os.scandir(parent) as entries:
                    below.extend(e.path for e in entries if "=" in e.name and e.is_dir())
            except (FileNotFoundError, NotADirectoryError):
                continue
        level = below
    return level


def site_listing(site_folder: Path) -> Listing:
    """Every partition file of a site (relpath below its lake folder) with its size and mtime."""
    root = str(site_folder)
    listing: Listing = {}
    for dataset in DATASETS:
        for folder in _leaf_folders(os.path.join(root, dataset), _DEPTH[dataset]):
            try:
                stat = os.stat(os.path.join(folder, PART_FILE))
            except (FileNotFoundError, NotADirectoryError):
                continue
            relpath = os.path.relpath(folder, root) + "/" + PART_FILE
            listing[relpath] = (stat.st_size, stat.st_mtime_ns, stat.st_ino)
    return listing


def dataset_of(relpath: str) -> str:
    """The dataset a listed relpath belongs to (its first folder)."""
    return relpath.split("/", 1)[0]


def listing_digest(listing: Mapping[str, Stat]) -> str:
    """A digest of a listing: equal listings, equal digests."""
    digest = hashlib.sha256()
    for relpath in sorted(listing):
        digest.update(f"{relpath}|{listing[relpath]}\n".encode())
    return digest.hexdigest()


def unreadable_files(
    site_folder: Path, listing: Listing, known: Listing, skipped: Mapping[str, str]
) -> dict[str, str]:
    """The files of `listing` (below `site_folder`) that cannot be read, each with why, and a
    warning for each: the Parquet frame of every file is checked, but those in `known` at the same
    version keep what was found then (`skipped`: why each unreadable one was left out)."""
    found: dict[str, str] = {}
    for relpath, stat in listing.items():
        if known.get(relpath) == stat:
            if relpath in skipped:
                found[relpath] = skipped[relpath]
            continue
        problem = _frame_problem(site_folder / relpath, stat)
        if problem is not None:
            found[relpath] = problem
    for relpath, reason in found.items():
        _warn_unreadable(site_folder / relpath, reason, listing[relpath])
    return found


def undecodable_files(site_folder: Path, listing: Listing, skipped: Mapping[str, str]) -> dict[str, str]:
    """The files of `listing` not in `skipped` whose content cannot be decoded, each with why
    (read in full: only after a build over them failed)."""
    found: dict[str, str] = {}
    for relpath, stat in listing.items():
        if relpath in skipped:
            continue
        try:
            pq.read_table(site_folder / relpath)
        except FileNotFoundError:
            continue
        except (pa.ArrowException, OSError, ValueError) as error:
            found[relpath] = f"cannot be decoded ({' '.join(str(error).split())[:200]})"
            _warn_unreadable(site_folder / relpath, found[relpath], stat)
    return found


def _frame_problem(path: Path, stat: Stat) -> str | None:
    """Why the file at `path` cannot be a whole Parquet file (None when its frame is whole).

    Checks the leading and trailing magic bytes and the footer length: a file cut short, or
    overwritten by something else, fails; a whole file passes without being parsed. Remembered per
    version of the file (`stat`), so each is read once per process.
    """
    key = (str(path), *stat)
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


def _warn_unreadable(path: Path, reason: str, stat: Stat) -> None:
    """Log, once per version of the file, that it is left out and how to repair it."""
    key = (str(path), *stat)
    if key in _warned:
        return
    _warned.add(key)
    log.warning(
        "%s is unreadable (%s): left out of the views and rollups until it is repaired; "
        "run `commerce-reports verify` to quarantine it and let the next sync fetch it again",
        path,
        reason,
    )
