"""The state of the lake the views read: published once a writer is done, swapped atomically.

A sync replaces partition files one after another, and a refresh replaces rollup files: a
statement reading the files themselves while that happens could count one state in one view and
another in the next. So readers read a *generation* instead: a folder of hard links to the lake
and rollup files as they were when a writer finished (a sync, a loader's fetch, a rebuild, a
repair), and a record of what the views need to know of them.

    <data_dir>/views/current.json                    the generation readers use (written last)
    <data_dir>/views/<id>/lake/site=<site>/...       links to the readable partition files
    <data_dir>/views/<id>/rollups/site=<site>/...    links to the rollup files of fresh sites
    <data_dir>/views/<id>/reading.json               fresh sites, sources' shapes, coverage
    <data_dir>/views/<id>/sealed.json                each linked file's stamp and sha256, and
                                                     the digest of the lake's state it holds

A link is the file's own data (no copy): a file a sync replaces later keeps its old content in the
generation until the generation is pruned. Every statement binds its views to one generation, so
it sees one state whatever a writer does meanwhile. A file system without hard links (some
network shares) gets no generation: then the views read the lake files directly, as before.

Generations are pruned by the next publisher: all but the newest two, once a day old (a DuckDB
CLI session left open keeps reading its generation through the day).

A generation holds only files checked by content (`listing.py`), and its *seal* records each
one's stamp and sha256. A link shares its file's bytes, so a file rewritten in place after it was
published (an editor, a Parquet writer, a forger who puts the times back) would change what the
generation reads: readers check the seal (a `stat` per file, at most every `_CHECK_EVERY`
seconds per process; a file whose stamp moved is read and its digest compared), and a generation
whose content is no longer what was checked is read by no view: the views read the lake as it is
(what no manifest or rollup state vouches for left out) until a writer publishes again. So is one
holding a file its seal does not list (the views' globs would read it), one whose seal is missing
or cannot be read, and one the pointer names for another state of the lake than its seal's.
`verify` says which (`published_problems`) before it publishes again.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import posixpath
import secrets
import shutil
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ..contract import GENERATIONS_FOLDER, lake_root
from ..files import held, make_folders, save_atomic, sha256_of
from ..lake.digests import SiteDigests, Stamp, stamp_of
from .coverage import SiteCoverage
from .listing import Digest
from .snapshot import Reading, Snapshot, reading_of, take_snapshot
from .state import rollups_root

__all__ = [
    "VIEWS_FOLDER",
    "generation_files",
    "publish",
    "published_problems",
    "published_reading",
    "views_root",
]

log = logging.getLogger(__name__)

VIEWS_FOLDER = GENERATIONS_FOLDER
_CURRENT = "current.json"
_READING = "reading.json"
_SEAL = "sealed.json"
_CHECK_EVERY = 2.0  # seconds between a reader's checks of its generation's seal
_KEEP = 2  # the newest generations, whatever their age
_KEEP_FOR = timedelta(days=1)


def views_root(data_dir: Path) -> Path:
    return Path(data_dir) / VIEWS_FOLDER


@dataclass(frozen=True)
class _Record:
    """What a generation's `reading.json` holds (its paths are the generation's own)."""

    fresh: tuple[str, ...]
    stale: tuple[str, ...]
    shapes: dict[str, str]  # dataset -> "same" or MIXED, for the datasets that have files
    coverage: tuple[SiteCoverage, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "fresh": list(self.fresh),
            "stale": list(self.stale),
            "shapes": self.shapes,
            "coverage": [c.to_json() for c in self.coverage],
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> _Record:
        fresh, stale, shapes, coverage = data["fresh"], data["stale"], data["shapes"], data["coverage"]
        if not (
            isinstance(fresh, list)
            and isinstance(stale, list)
            and isinstance(shapes, dict)
            and isinstance(coverage, list)
        ):
            raise ValueError("a generation record of another shape")
        return cls(
            tuple(map(str, fresh)),
            tuple(map(str, stale)),
            {str(k): str(v) for k, v in shapes.items()},
            tuple(SiteCoverage.from_json(c) for c in coverage),
        )


def _current(root: Path) -> dict[str, str]:
    try:
        data = json.loads((root / _CURRENT).read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def publish(data_dir: Path) -> Path | None:
    """Publish the lake as it is now for the views, unless the current generation already holds
    it; return the generation's folder (None when the folder cannot hold links or cannot be
    written: then readers read the lake itself, and a warning says so)."""
    root = views_root(data_dir)
    try:
        with held(root / ".publish.lock", "waiting for another process to finish publishing the lake"):
            return _publish(Path(data_dir), root)
    except OSError as error:
        log.warning(
            "could not publish the lake for the views in %s (%s): they read the lake files "
            "directly, and a statement running during a sync may see two states of it",
            root,
            error.strerror or error,
        )
        with contextlib.suppress(OSError):
            (root / _CURRENT).unlink()
        return None


def _publish(data_dir: Path, root: Path) -> Path:
    snapshot = take_snapshot(data_dir)
    digest = snapshot.digest()
    sites = _site_files(snapshot)
    current = _current(root)
    folder = root / current.get("generation", "-")
    if (
        current.get("digest") != digest
        or _seal_of(folder).get("digest") != digest
        or not (folder / _READING).exists()
    ):
        record = _Record(
            tuple(snapshot.fresh_sites), tuple(snapshot.stale_sites), snapshot.shapes(), snapshot.coverage
        )
        folder = _generation(data_dir, root, record, sites, digest, pointed=folder.name)
    _save_digests(data_dir, sites)  # what this process read, linked and pruned: the next one trusts it
    return folder


def _generation(
    data_dir: Path, root: Path, record: _Record, sites: list[_SiteFiles], digest: str, pointed: str
) -> Path:
    """A new generation in `root` of a snapshot (its `record`, its files `sites`): the old
    generations pruned (never `pointed`, the one readers follow until this one is made), its links
    (each folder made once: the generation is new), its record and seal (after the pruning and the
    links that moved its files' change times), then the pointer readers follow, last: a reader
    never meets a generation without its seal."""
    folder = root / f"{datetime.now(UTC):%Y%m%dT%H%M%S}-{secrets.token_hex(4)}"
    try:
        _prune(root, folder.name, pointed)
        _fill(data_dir, sites, folder)
        _seal(sites, record, folder, digest)
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    save_atomic(root / _CURRENT, json.dumps({"generation": folder.name, "digest": digest}))
    _checks[str(folder)] = (time.monotonic(), True)  # its seal holds: this process just took its stamps
    return folder


@dataclass(frozen=True)
class _SiteFiles:
    """The files of one site that a generation holds, each by its relpath below the data folder
    (a generation mirrors its layout) with its sha256, as the snapshot found them: `linked`, its
    readable partitions and the rollup files the views read of a fresh site; `kept`, a fresh site's
    index files (the refresh's own: their digests are saved, no view reads them)."""

    digests: SiteDigests
    linked: dict[str, Digest]
    kept: dict[str, Digest]
    partitions: dict[str, Digest]  # the partitions among `linked`, by their own relpath (their intents')


def _site_files(snapshot: Snapshot) -> list[_SiteFiles]:
    """What a generation of `snapshot` holds, per site: worked out once, for its links, its seal and
    the digests saved."""
    found = []
    for site in snapshot.sites:
        places = (site.places.lake, site.places.folder)
        lake, rollups = (place.relative_to(snapshot.data_dir).as_posix() for place in places)
        readable = {r: d for r, d in sorted(site.listing.items()) if r not in site.unreadable}
        linked = {f"{lake}/{r}": d for r, d in readable.items()}
        partitions = {posixpath.dirname(r): d for r, d in readable.items()}  # (a partition's own relpath)
        kept: dict[str, Digest] = {}
        if site.fresh and site.rollups is not None:
            for r, digest in sorted(site.rollups.items()):
                (linked if _read(r) else kept)[f"{rollups}/{r}"] = digest
        found.append(_SiteFiles(site.places.digests, linked, kept, partitions))
    return found


def _fill(data_dir: Path, sites: list[_SiteFiles], folder: Path) -> None:
    """Make the new generation `folder`, with every folder its links need made once, and hard-link
    the files of `sites` (below `data_dir`) into it."""
    relpaths = [relpath for site in sites for relpath in site.linked]
    make_folders(folder, {posixpath.dirname(relpath) for relpath in relpaths})
    source, target = str(data_dir), str(folder)
    for relpath in relpaths:
        os.link(os.path.join(source, relpath), os.path.join(target, relpath))


def _read(rollup: str) -> bool:
    """Whether the views read a rollup file (the index files are the refresh's own)."""
    return not rollup.startswith("index/")


def _save_digests(data_dir: Path, sites: list[_SiteFiles]) -> None:
    """Keep the digests of the files just published (linking and pruning moved their change times,
    not their content, which was checked when the snapshot was taken) and save them per site, so
    the next process trusts them without reading them (see `lake/digests.py`). A cache: a folder
    that cannot hold it costs reads later, nothing else."""
    folder = str(data_dir)
    for site in sites:
        files = [os.path.join(folder, relpath) for relpath in (*site.linked, *site.kept)]
        try:
            site.digests.save_published(files, site.partitions)
        except OSError as error:
            log.debug("could not save the digests of site %s: %s", site.digests.site, error)


def _seal(sites: list[_SiteFiles], record: _Record, folder: Path, digest: str) -> None:
    """Write the generation `folder`'s `record`, and its seal: for readers, the stamp and sha256 of
    every file it links, and the `digest` of the lake's state it holds (the pointer's)."""
    files: dict[str, list[object]] = {}
    for site in sites:
        for relpath, content in site.linked.items():
            with contextlib.suppress(OSError):
                files[relpath] = [*stamp_of(os.stat(os.path.join(folder, relpath))), content]
    texts = {
        _READING: json.dumps(record.to_json()),
        _SEAL: json.dumps({"digest": digest, "files": files}, separators=(",", ":")),
    }
    for name, text in texts.items():
        save_atomic(folder / name, text)


def _prune(root: Path, new: str, pointed: str) -> None:
    """Delete the generations past the newest `_KEEP` once a day old (`new`, the one about to be
    made, counted among them), but `pointed` (the one readers follow until `new` is made)."""
    names = sorted({p.name for p in root.iterdir() if p.is_dir()} | {new}, reverse=True)
    cutoff = f"{datetime.now(UTC) - _KEEP_FOR:%Y%m%dT%H%M%S}"
    for name in names[_KEEP:]:
        if name != pointed and name < cutoff:
            shutil.rmtree(root / name, ignore_errors=True)


_cache: dict[str, tuple[tuple[int, int, int], Reading | None, str]] = {}  # by pointer: its generation


def published_reading(data_dir: Path) -> Reading | None:
    """What the views read in the current generation (None: none was published, or it is gone:
    then the caller reads the lake itself). Parsed once per version of `current.json`."""
    pointer = views_root(data_dir) / _CURRENT
    try:
        stat = pointer.stat()
    except OSError:
        return None
    stamp = (stat.st_size, stat.st_mtime_ns, stat.st_ino)
    cached = _cache.get(str(pointer))
    if cached is None or cached[0] != stamp:
        reading: Reading | None
        digest = ""
        try:
            current = json.loads(pointer.read_text())
            folder = views_root(data_dir) / str(current["generation"])
            digest = str(current["digest"])
            record = _Record.from_json(json.loads((folder / _READING).read_text()))
            reading = reading_of(folder, record.fresh, record.stale, record.shapes, record.coverage)
        except (OSError, ValueError, KeyError, TypeError):
            reading = None
        cached = _cache[str(pointer)] = (stamp, reading, digest)
    _, reading, digest = cached
    return reading if reading is not None and _still_sealed(reading.root, digest) else None


# generation folder -> (monotonic time of its last check, whether its seal held)
_checks: dict[str, tuple[float, bool]] = {}
# (path, stamp) -> sha256 of a file this process read again because its stamp moved
_reread: dict[tuple[str, Stamp], str] = {}


def _still_sealed(folder: Path, digest: str) -> bool:
    """Whether the generation `folder`, which the pointer names for the lake's state `digest`,
    still holds what its seal says (checked at most every `_CHECK_EVERY` seconds per process)."""
    now = time.monotonic()
    last = _checks.get(str(folder))
    if last is not None and now - last[0] < _CHECK_EVERY:
        return last[1]
    changed = _unsealed(folder, digest)
    if changed and (last is None or last[1]):
        log.warning(
            "the published lake is no longer what was checked (%s%s): the views read the lake files "
            "instead, leaving out what no manifest or rollup state vouches for, until the next sync "
            "or `commerce-reports verify` publishes it again",
            "; ".join(changed[:3]),
            f"; and {len(changed) - 3} more" if len(changed) > 3 else "",
        )
    _checks[str(folder)] = (now, not changed)
    return not changed


def published_problems(data_dir: Path) -> list[str]:
    """What makes the generation the views read no longer what was checked (see the module's
    docstring), a line each; empty when it holds, or when none is published."""
    current = _current(views_root(data_dir))
    if "generation" not in current:
        return []
    return _unsealed(views_root(data_dir) / current["generation"], current.get("digest", ""))


def _seal_of(folder: Path) -> dict[str, Any]:
    """The seal of the generation `folder` (empty when it has none, or it cannot be read)."""
    try:
        seal = json.loads((folder / _SEAL).read_text())
    except (OSError, ValueError):
        return {}
    return seal if isinstance(seal, dict) and isinstance(seal.get("files"), dict) else {}


def _unsealed(folder: Path, digest: str) -> list[str]:
    """What in the generation `folder` is not what its seal records, a line each: its files whose
    content changed, those it holds that the seal does not list, a seal missing or unreadable, or
    one of another state of the lake than `digest` (the pointer's)."""
    seal = _seal_of(folder)
    if not seal:
        return [f"{folder.name}/{_SEAL}: missing or unreadable"]
    if seal.get("digest", digest) != digest:  # (a seal without one is an older version's: its word)
        return [f"{_CURRENT}: it names {folder.name}, sealed for another state of the lake"]
    changed = [
        f"{relpath}: not listed in the seal" for relpath in generation_files(folder) - seal["files"].keys()
    ]
    root = str(folder)
    for relpath, recorded in seal["files"].items():
        path = os.path.join(root, relpath)  # (strings, not Paths: a lake's worth of files)
        try:
            stamp = stamp_of(os.stat(path))
            if list(stamp) == recorded[:5]:
                continue
            key = (path, stamp)
            if key not in _reread:
                if len(_reread) > 100_000:
                    _reread.clear()
                _reread[key] = sha256_of(path)
            if _reread[key] == recorded[5]:
                continue
        except (OSError, IndexError, TypeError):
            pass
        changed.append(f"{relpath}: not what was published")
    return changed


def generation_files(folder: Path) -> set[str]:
    """Every file below the generation `folder`'s data folders (what the views' globs can read,
    and Spark reads), by its relpath in the generation."""
    found: set[str] = set()
    root = os.path.join(str(folder), "")
    for top in (lake_root(folder), rollups_root(folder)):  # (a generation mirrors the data folder)
        for parent, _, names in os.walk(top):
            relative = parent[len(root) :].replace(os.sep, "/")
            found.update(f"{relative}/{name}" for name in names)
    return found
