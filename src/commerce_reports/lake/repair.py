"""Damage found and repaired: manifests rebuilt from the files, stale entries reconciled, bad files
quarantined. Nothing here runs while a lake is read as it should be: `loading.load_or_rebuild` loads
this module only for a manifest to rebuild, and `checks.verify` runs `check_site` on demand.

A partition is what its sha256 says: the manifest entry records the digest of the file a sync
checked, and nothing else ever takes its place (see `digests.py` for how a stat caches a digest).

- `rebuild` recreates a site's manifest from its Parquet files (`load_or_rebuild` does it on its
  own when the manifest is missing or damaged but files are there: no refetch of a whole lake); a
  file is taken in only when a record vouches for its content (what was last published of it, or
  what a stopped sync said it was writing): any other, one whose content differs or one nobody
  checked (copied in, forged, in a site folder no sync made), is quarantined, not adopted.
- `reconcile` (a sync runs it first, as the writer) compares each file with its entry by content;
  a file of other content, or one no entry vouches for, is quarantined and fetched again (unless a
  sync stopped between the file and its entry said it was writing exactly that content); a
  vanished file loses its entry; an entry is never rewritten from a file nobody checked.
- `check_site` compares every file of a site with its entry (`reconcile` trusting unchanged
  stamps, `checks.verify` reading every file: its sha256, and that it decodes as Parquet).

A quarantined file moves to `<data_dir>/quarantine/site=<s>/<relpath>/part.<UTC time>.parquet`,
outside the lake (readers' globs never see it), and its entry is dropped: the next sync fetches it.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from .._lazy import LazyLogger
from ..contract import AGGREGATES, PART_FILE, PartitionKey, site_root
from ..errors import LakeError, NotAPartition, ValidationError
from ..files import describe_os_error, make_folder
from .digests import SiteDigests, intended
from .horizon import revisable_until
from .locks import site_lock
from .manifest import Entry, Manifest, part_files

if TYPE_CHECKING:
    from .store import StoredFile

__all__ = ["QUARANTINE", "Finality", "Repair", "check_site", "quarantine", "rebuild", "reconcile"]

log = LazyLogger(__name__)
QUARANTINE = "quarantine"
_LINKED = "a symbolic link where a sync writes a file (it may point outside the data folder)"
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
    key: PartitionKey | None = None  # the partition to fetch again (quarantined or dropped), when known

    def __str__(self) -> str:
        return f"{self.site}: {self.detail}"


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
        settled=bool(policy and not doubtful and policy.is_settled(key, stored.fetched_at)),
        untyped=stored.untyped,
        foreign=stored.foreign,
        size=stored.size,
        mtime_ns=stored.mtime_ns,
        touched=stored.touched if key.by == "updateDate" else None,
        revisable_until=horizon,
    )


def quarantine(
    data_dir: Path, site: str, relpath: str, reason: str, key: PartitionKey | None = None
) -> Repair:
    """Move a partition's file out of the lake, to the quarantine folder (its entry, the partition
    `key` when it had one, is the caller's)."""
    source = site_root(data_dir, site) / relpath / PART_FILE
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = Path(data_dir) / QUARANTINE / f"site={site}" / relpath / f"part.{stamp}.parquet"
    make_folder(target.parent)
    import shutil  # with bz2 and lzma: only a quarantine pays for them

    shutil.move(source, target)
    with contextlib.suppress(OSError):
        source.parent.rmdir()  # only when empty
    repair = Repair(
        site, "quarantined", f"{relpath}: {reason}; moved to {target}, it will be fetched again", key
    )
    log.warning("%s", repair)
    return repair


def rebuild(
    data_dir: Path, site: str, policy: Finality | None = None, why: str = "", *, trusted: bool = False
) -> tuple[Manifest, list[Repair]]:
    """Recreate a site's manifest from its Parquet files; unreadable files are quarantined, and so
    is any file no record vouches for (see the module's docstring), unless `trusted`: the caller
    wrote every file itself (the bench's generator of lakes).

    `policy` marks what has settled and gives the site's revision horizon (None: nothing settled
    and no horizon recorded: the next sync decides again). What each updateDate day touched is
    read from its file's click dates.
    """
    repairs: list[Repair] = []
    policy = _finality(policy)
    with site_lock(data_dir, site):
        try:  # what only the manifest knows, kept when it still reads (`status --rebuild`)
            before = Manifest.load(data_dir, site)
        except LakeError:  # damaged: what it said is lost with it
            before = Manifest(data_dir, site)
        marked = {entry.relpath for entry in before if entry.invalidated}
        manifest = Manifest(data_dir, site)
        manifest.service = dict(before.service)
        manifest.revision_days = None if policy is None else policy.revision_days
        digests = SiteDigests(data_dir, site)
        for relpath, path in part_files(data_dir, site).items():
            if path.is_symlink():
                repairs.append(quarantine(data_dir, site, relpath, _LINKED))
                continue
            try:
                stored = _inspect(path, relpath)
            except LakeError as error:
                repairs.append(quarantine(data_dir, site, relpath, _unreadable(error)))
                continue
            published = digests.saved_digest(path)
            vouched = trusted or stored.sha256 == published  # (an intent is read only where it must be)
            if not vouched and stored.sha256 != intended(data_dir, site, relpath):
                doubt = (
                    "no record vouches for it (it was never published, and no sync was writing it)"
                    if published is None
                    else f"its content is not what was last published of it (sha256 {published[:12]}...)"
                )
                repairs.append(quarantine(data_dir, site, relpath, doubt))
                continue
            try:
                entry = _entry(relpath, stored, policy, manifest.revision_days)
            except (LakeError, ValidationError) as error:
                repairs.append(
                    Repair(site, "ignored", f"{relpath}: not a partition of this lake ({error}); left as is")
                )
                continue
            manifest.entries[entry.relpath] = replace(entry, invalidated=entry.relpath in marked)
        manifest.save()
    repairs.insert(
        0,
        Repair(
            site,
            "rebuilt",
            f"the manifest{' ' + why + ':' if why else ''} rebuilt from {len(manifest)} partition files",
        ),
    )
    log.warning("%s", repairs[0])
    return manifest, repairs


def reconcile(data_dir: Path, site: str, policy: Finality | None = None) -> list[Repair]:
    """Make a site's entries describe its files, by content (the writer runs it before it plans).

    Each file's sha256 is compared with its entry's (read only when its stamp changed since it
    was last hashed: see `digests.py`). The same content (a copied or restored lake) keeps its
    entry; other content, or a file no entry vouches for, is quarantined and fetched again, unless
    it is the file a sync said it was writing when it was stopped before recording it (adopted).
    A vanished file loses its entry. An entry is never rewritten from a file nobody checked."""
    return check_site(data_dir, site, _finality(policy), read_all=False).repairs


@dataclass
class _Checked:
    checked: int = 0
    read: int = 0
    read_bytes: int = 0
    repairs: list[Repair] = field(default_factory=list)


def check_site(data_dir: Path, site: str, policy: Finality | None, *, read_all: bool) -> _Checked:
    """Compare every file of a site with its entry by content (`read_all`: read every file, and
    check it decodes; else trust unchanged stamps), under the manifest lock; repair what differs."""
    digests = SiteDigests(data_dir, site)
    found = _Checked()
    with site_lock(data_dir, site):
        manifest = Manifest.load(data_dir, site)
        files = part_files(data_dir, site)
        _say_reading(site, files, digests, read_all)
        changed = False
        for relpath in sorted(manifest.entries.keys() | files.keys()):
            path = files.get(relpath)
            if path is not None:
                found.checked += 1
            repair, touched = _check_one(
                manifest, relpath, path, digests, policy, found if read_all else None
            )
            found.repairs += [repair] if repair is not None else []
            changed = changed or touched
        if changed:
            try:
                manifest.save()
            except OSError as error:  # a full disk, say: what was found stands, said
                why = f"the manifest could not record this ({describe_os_error(error)})"
                found.repairs.append(
                    Repair(site, "ignored", f"{why}: the next sync or verify finds it again")
                )
    found.read, found.read_bytes = found.read + digests.hashed, found.read_bytes + digests.hashed_bytes
    for repair in found.repairs:
        if repair.action != "quarantined":  # quarantine logs its own line
            log.warning("%s", repair)
    return found


def _check_one(
    manifest: Manifest,
    relpath: str,
    path: Path | None,
    digests: SiteDigests,
    policy: Finality | None,
    reading: _Checked | None,
) -> tuple[Repair | None, bool]:
    """Check one partition (`path`: its file, None when gone) against its entry in `manifest`, by
    content (`reading`: read it whole, counted there; else trust an unchanged stamp); mend the
    entry; what was repaired (None: nothing), and whether the manifest changed."""
    data_dir, site = manifest.data_dir, manifest.site
    entry = manifest.entries.get(relpath)
    if path is None:
        del manifest.entries[relpath]
        return Repair(
            site, "dropped", f"{relpath}: its file is gone; it will be fetched again", _key(entry)
        ), True
    if path.is_symlink():  # never a sync's: it may point outside the data folder
        manifest.entries.pop(relpath, None)
        return quarantine(data_dir, site, relpath, _LINKED, _key(entry) or _key_of(relpath)), True
    try:
        digest = _read_digest(path, relpath, digests, reading)
    except (OSError, LakeError) as error:
        manifest.entries.pop(relpath, None)
        return quarantine(data_dir, site, relpath, _unreadable(error), _key(entry)), True
    if entry is not None and digest == entry.sha256:
        stat = path.stat()
        if (stat.st_size, stat.st_mtime_ns) == (entry.size, entry.mtime_ns):
            return None, False
        manifest.entries[relpath] = replace(entry, size=stat.st_size, mtime_ns=stat.st_mtime_ns)  # a copy
        return None, True
    adopted = _adopt(data_dir, site, relpath, path, digest, policy, manifest)
    if adopted is not None:
        return adopted, True
    manifest.entries.pop(relpath, None)
    why = (
        f"its content (sha256 {digest[:12]}...) is not what the sync stored ({entry.sha256[:12]}...)"
        if entry is not None
        else "no manifest entry vouches for it"
    )
    return quarantine(data_dir, site, relpath, why, _key(entry) or _key_of(relpath)), True


def _read_digest(path: Path, relpath: str, digests: SiteDigests, reading: _Checked | None) -> str:
    """The sha256 of a partition's file: with `reading`, read whole (it decodes, page checksums
    included; counted there), else from an unchanged stamp when one vouches for it."""
    if reading is None:
        return digests.of(path)
    stored = _inspect(path, relpath)
    digests.note(path, stored.sha256)
    reading.read, reading.read_bytes = reading.read + 1, reading.read_bytes + stored.size
    return stored.sha256


def _unreadable(error: OSError | LakeError) -> str:
    """Why a partition's file could not be checked, for its quarantine's line."""
    if isinstance(error, PermissionError):  # (its content may be whole: this user may not read it)
        return f"not readable by this user ({error.strerror}: mend its permissions)"
    if isinstance(error, NotAPartition):
        return error.reason
    return "not readable Parquet" if isinstance(error, LakeError) else f"not readable ({error})"


def _key(entry: Entry | None) -> PartitionKey | None:
    """The partition an entry stood for (None without one, or when it no longer parses)."""
    try:
        return None if entry is None else entry.key
    except (LakeError, ValidationError):
        return None


def _key_of(relpath: str) -> PartitionKey | None:
    """The partition a file no entry vouches for stands at (None: a path that names none, or a cut
    slice name, whose filters only an entry knows): so that the sync fetches it again."""
    try:
        return PartitionKey.from_relpath(relpath)
    except (LakeError, ValidationError):
        return None


def _adopt(
    data_dir: Path,
    site: str,
    relpath: str,
    path: Path,
    digest: str,
    policy: Finality | None,
    manifest: Manifest,
) -> Repair | None:
    """The entry of a file a sync wrote and was stopped before recording (its intent names this
    very content), put in `manifest`; None for any other file."""
    if intended(data_dir, site, relpath) != digest:
        return None
    try:
        stored = _inspect(path, relpath)
    except LakeError:
        return None
    if stored.sha256 != digest:  # replaced again meanwhile
        return None
    manifest.entries[relpath] = _entry(relpath, stored, policy, manifest.revision_days)
    return Repair(
        site,
        "reconciled",
        f"{relpath}: a sync was stopped between storing this file and recording it; its entry is "
        f"written from the file that sync had checked ({stored.rows} rows)",
    )


_SAY_READING = 256 << 20  # bytes to read before a check says so (a few seconds of hashing)


def _say_reading(site: str, files: dict[str, Path], digests: SiteDigests, read_all: bool) -> None:
    """Say, before a long read, how much of the site must be read to check it."""
    size = 0
    for path in files.values():
        with contextlib.suppress(OSError):
            stat = path.stat()
            if read_all or digests.vouched(path, stat) is None:
                size += stat.st_size
    if size >= _SAY_READING:
        log.warning(
            "checking the content of site %s: reading %.0f MB (files not checked since they were "
            "last written, copied or restored)",
            site,
            size / 1e6,
        )


def _inspect(path: Path, relpath: str) -> StoredFile:
    """Read a partition file back in full, as a partition of the dataset its path names. The store
    (and pyarrow) load here, at the first file read: reading manifests stays light."""
    from .store import inspect_partition

    return inspect_partition(path, relpath.split("/", 1)[0])
