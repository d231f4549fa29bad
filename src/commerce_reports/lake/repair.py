"""Damage found and repaired: manifests rebuilt from the files, stale entries reconciled, bad files
quarantined.

- `rebuild` recreates a site's manifest from its Parquet files (`load_or_rebuild` does it on its
  own when the manifest is missing or damaged but files are there: no refetch of a whole lake).
- `reconcile` (a sync runs it first, as the writer) compares each entry with its file's size and
  modification time; a file replaced after its entry was written (a kill between the two) gets
  its entry rewritten from the file, a vanished file loses its entry, an unreadable one is
  quarantined.
- `verify` checks every file's sha256 against the manifest and that it reads as Parquet.

A quarantined file moves to `<data_dir>/quarantine/site=<s>/<relpath>/part.<UTC time>.parquet`,
outside the lake (readers' globs never see it), and its entry is dropped: the next sync fetches it.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from ..contract import (
    AGGREGATES,
    PART_FILE,
    SCHEMA_VERSION,
    PartitionKey,
    check_site_name,
    lake_root,
    site_root,
)
from ..errors import LakeError, ValidationError
from ..files import make_folder
from .horizon import revisable_until
from .locks import site_lock, writing_sites
from .manifest import Entry, Manifest

if TYPE_CHECKING:
    from .store import StoredFile

__all__ = [
    "QUARANTINE",
    "Finality",
    "Repair",
    "VerifyReport",
    "load_or_rebuild",
    "quarantine",
    "rebuild",
    "reconcile",
    "verify",
]

log = logging.getLogger(__name__)
QUARANTINE = "quarantine"
Action = Literal["rebuilt", "reconciled", "dropped", "quarantined", "ignored"]


@runtime_checkable
class Finality(Protocol):
    """What the lake needs of a sync's settle policy (`syncing.SettlePolicy` is one) to write an
    entry from a file: whether a partition fetched at a moment has settled, and the site's
    revision horizon in days (an aggregate window's entry records when its horizon ends)."""

    @property
    def revision_days(self) -> int: ...

    def is_settled(self, key: PartitionKey, fetched_at: datetime) -> bool: ...


def _finality(policy: Finality | None) -> Finality | None:
    if policy is not None and not isinstance(policy, Finality):
        raise ValidationError(
            "policy", f"{policy!r:.80} is not a settle policy", "pass a syncing.SettlePolicy, or None"
        )
    return policy


@dataclass(frozen=True)
class Repair:
    """One thing found wrong in a site and what was done about it."""

    site: str
    action: Action
    detail: str

    def __str__(self) -> str:
        return f"{self.site}: {self.detail}"


@dataclass
class VerifyReport:
    """What `verify` checked and repaired: partitions, and (`rollups`) the sites whose rollup files
    were changed after they were built, rebuilt."""

    checked: int = 0
    repairs: list[Repair] = field(default_factory=list)
    rollups: list[str] = field(default_factory=list)

    @property
    def quarantined(self) -> list[Repair]:
        return [r for r in self.repairs if r.action == "quarantined"]

    @property
    def ok(self) -> bool:
        """True when everything was intact (nothing had to be repaired)."""
        return not self.repairs and not self.rollups

    def summary(self) -> str:
        text = f"verified {self.checked} partitions"
        if self.ok:
            return text + ": all intact"
        lines = [f"{text}: {len(self.quarantined)} quarantined, the next sync fetches them again"]
        lines += [f"  {r}" for r in self.repairs]
        lines += [f"  rollups of {line}" for line in self.rollups]
        return "\n".join(lines)


def _files(data_dir: Path, site: str) -> dict[str, Path]:
    root = site_root(data_dir, site)
    return {p.parent.relative_to(root).as_posix(): p for p in sorted(root.rglob(PART_FILE))}


def _entry(relpath: str, stored: StoredFile, policy: Finality | None, revision_days: int | None) -> Entry:
    """The entry of a file read back: what a sync would have recorded when it wrote it (without a
    policy nothing counts as settled; without a horizon no window records one)."""
    key = PartitionKey.from_relpath(relpath, stored.params)
    horizon = None
    if key.dataset in AGGREGATES and revision_days is not None:
        horizon = revisable_until(key, revision_days)
    doubtful = stored.untyped + stored.foreign
    return Entry(
        relpath=key.relpath,
        params=key.params(),
        fetched_at=stored.fetched_at,
        rows=stored.rows,
        sha256=stored.sha256,
        schema_version=SCHEMA_VERSION,
        settled=bool(policy and not doubtful and policy.is_settled(key, stored.fetched_at)),
        untyped=stored.untyped,
        foreign=stored.foreign,
        size=stored.size,
        mtime_ns=stored.mtime_ns,
        touched=stored.touched if key.by == "updateDate" else None,
        revisable_until=horizon,
    )


def quarantine(data_dir: Path, site: str, relpath: str, reason: str) -> Repair:
    """Move a partition's file out of the lake, to the quarantine folder (its entry is the caller's)."""
    source = site_root(data_dir, site) / relpath / PART_FILE
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = Path(data_dir) / QUARANTINE / f"site={site}" / relpath / f"part.{stamp}.parquet"
    make_folder(target.parent)
    shutil.move(source, target)
    with contextlib.suppress(OSError):
        source.parent.rmdir()  # only when empty
    repair = Repair(site, "quarantined", f"{relpath}: {reason}; moved to {target}, it will be fetched again")
    log.warning("%s", repair)
    return repair


def rebuild(
    data_dir: Path, site: str, policy: Finality | None = None, why: str = ""
) -> tuple[Manifest, list[Repair]]:
    """Recreate a site's manifest from its Parquet files; unreadable files are quarantined.

    `policy` marks what has settled and gives the site's revision horizon (None: nothing settled
    and no horizon recorded: the next sync decides again). What each updateDate day touched is
    read from its file's click dates.
    """
    repairs: list[Repair] = []
    policy = _finality(policy)
    with site_lock(data_dir, site):
        manifest = Manifest(data_dir, site)
        manifest.revision_days = None if policy is None else policy.revision_days
        for relpath, path in _files(data_dir, site).items():
            try:
                stored = _inspect(path, relpath)
            except LakeError:
                repairs.append(quarantine(data_dir, site, relpath, "not readable Parquet"))
                continue
            try:
                entry = _entry(relpath, stored, policy, manifest.revision_days)
            except (LakeError, ValidationError) as error:
                repairs.append(
                    Repair(site, "ignored", f"{relpath}: not a partition of this lake ({error}); left as is")
                )
                continue
            manifest.entries[entry.relpath] = entry
        manifest.save()
    repairs.insert(
        0,
        Repair(
            site,
            "rebuilt",
            f"the manifest{' ' + why if why else ''}: rebuilt from {len(manifest)} partition files",
        ),
    )
    log.warning("%s", repairs[0])
    return manifest, repairs


def load_or_rebuild(
    data_dir: Path, site: str, policy: Finality | None = None
) -> tuple[Manifest, list[Repair]]:
    """A site's manifest; a damaged one, or a missing one while partition files exist, is rebuilt
    from the files at once (and the returned repairs say so)."""
    try:
        manifest = Manifest.load(data_dir, site)
    except LakeError as error:
        log.warning("%s", error)
        return rebuild(data_dir, site, policy, "was damaged")
    if manifest.exists() or not _files(data_dir, site):
        return manifest, []
    return rebuild(data_dir, site, policy, "was missing")


def reconcile(data_dir: Path, site: str, policy: Finality | None = None) -> list[Repair]:
    """Make a site's entries describe its files (for the writer, before it plans; cheap: one stat
    per file, a read only where a file changed since its entry was written)."""
    policy = _finality(policy)
    repairs: list[Repair] = []
    with site_lock(data_dir, site):
        manifest = Manifest.load(data_dir, site)
        files = _files(data_dir, site)
        unrecorded = files.keys() - manifest.entries.keys()
        changed = False
        for relpath, entry in list(manifest.entries.items()):
            path = files.get(relpath)
            if path is None:
                del manifest.entries[relpath]
                repairs.append(
                    Repair(site, "dropped", f"{relpath}: its file is gone; it will be fetched again")
                )
                changed = True
                continue
            stat = path.stat()
            if (stat.st_size, stat.st_mtime_ns) == (entry.size, entry.mtime_ns):
                continue
            changed = True
            try:
                stored = _inspect(path, relpath)
            except LakeError:
                del manifest.entries[relpath]
                repairs.append(quarantine(data_dir, site, relpath, "not readable Parquet"))
                continue
            if stored.sha256 == entry.sha256:  # the same bytes (an older entry, or a copied lake)
                manifest.entries[relpath] = replace(entry, size=stored.size, mtime_ns=stored.mtime_ns)
                continue
            manifest.entries[relpath] = _entry(relpath, stored, policy, manifest.revision_days)
            repairs.append(
                Repair(
                    site,
                    "reconciled",
                    f"{relpath}: the file was replaced after its entry was written; "
                    f"entry rewritten from the file ({stored.rows} rows)",
                )
            )
        for relpath in sorted(unrecorded):  # an unrecorded file must not break readers either
            try:
                _inspect(files[relpath], relpath)
            except LakeError:
                repairs.append(quarantine(data_dir, site, relpath, "not readable Parquet"))
        if changed:
            manifest.save()
    for repair in repairs:
        if repair.action != "quarantined":  # quarantine logs its own line
            log.warning("%s", repair)
    return repairs


def _inspect(path: Path, relpath: str) -> StoredFile:
    """Read a partition file back in full, as a partition of the dataset its path names. The store
    (and pyarrow) load here, at the first file read: reading manifests stays light."""
    from .store import inspect_partition

    return inspect_partition(path, relpath.split("/", 1)[0])


def verify(data_dir: str | Path, sites: Iterable[str] | None = None) -> VerifyReport:
    """Check every partition of the lake (or of `sites`): its sha256 against the manifest, and
    that it reads as Parquet. A partition that fails is quarantined and its entry dropped, so the
    next sync fetches it again; every other partition stays readable. Waits for a running sync."""
    folder = Path(data_dir)
    names = _site_names(folder) if sites is None else [check_site_name(s) for s in _listed(sites)]
    report = VerifyReport()
    for site in names:
        with writing_sites(folder, [site]):
            _, repairs = load_or_rebuild(folder, site)
            report.repairs += repairs
            with site_lock(folder, site):
                manifest = Manifest.load(folder, site)
                files = _files(folder, site)
                before = len(report.repairs)
                for relpath, path in files.items():
                    report.checked += 1
                    entry = manifest.entries.get(relpath)
                    try:
                        stored = _inspect(path, relpath)
                    except LakeError:
                        manifest.entries.pop(relpath, None)
                        report.repairs.append(quarantine(folder, site, relpath, "not readable Parquet"))
                        continue
                    if entry is not None and stored.sha256 != entry.sha256:
                        del manifest.entries[relpath]
                        report.repairs.append(
                            quarantine(folder, site, relpath, "its sha256 differs from the manifest's")
                        )
                for relpath in manifest.entries.keys() - files.keys():
                    del manifest.entries[relpath]
                    report.repairs.append(
                        Repair(site, "dropped", f"{relpath}: its file is gone; it will be fetched again")
                    )
                if len(report.repairs) > before:
                    manifest.save()
    return report


def _listed(sites: Iterable[str]) -> list[str]:
    if isinstance(sites, str):
        return [sites]
    if not isinstance(sites, Iterable):
        raise ValidationError("sites", f"{sites!r} is not a list of site names", "give names like ['alpha']")
    return list(sites)


def _site_names(data_dir: Path) -> list[str]:
    root = lake_root(data_dir)
    if not root.is_dir():
        return []
    return sorted(p.name.removeprefix("site=") for p in root.glob("site=*") if p.is_dir())
