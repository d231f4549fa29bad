"""The manifest of a site: what each partition holds, when it was fetched, whether it has settled.

One JSON file per site, rewritten atomically under a lock after each partition's Parquet file is
in place (manifest last). Each entry also records its file's size and modification time, so a
file replaced without its entry being rewritten (a kill between the two) is noticed cheaply; see
`repair.py`, which also rebuilds a lost or damaged manifest from the files.

Revisions. The manifest holds the site's revision horizon (`revision_days`: how long after a
window ends the service may still revise its aggregates), each aggregate window's
`revisable_until` (its end plus the horizon, UTC) and whether it is `final` (fetched after that
moment: the service no longer changes it). Each `updateDate` day records what its rows `touched`:
the click days they belong to, so a sync knows which windows changed since they were fetched.
`Manifest.windows()` gives the windows' state as the manifest records it, without any setting
(`status --windows` says it under each site's horizon as configured now, as a plan does).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, fields, replace
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from .._version import __version__
from ..config import DEFAULT_REVISION_DAYS, check_revision_days
from ..contract import AGGREGATES, PART_FILE, PartitionKey, site_root
from ..errors import CommerceReportsError, LakeError
from ..files import remove_folder, save_atomic
from .horizon import Touched, WindowState, revisable_until
from .locks import site_lock

if TYPE_CHECKING:
    import pyarrow as pa

    from .store import WrittenPartition

__all__ = [
    "EMBEDDED_SANDBOX",
    "MANIFEST",
    "Entry",
    "ForeignManifest",
    "Manifest",
    "NewerManifest",
    "Touched",
    "WindowState",
    "from_embedded_sandbox",
    "part_files",
    "remove_partitions",
    "revisable_until",
    "store_partition",
]

MANIFEST = "manifest.json"
# The manifest's format, written in it: a later one (a newer release's lake, opened after a
# downgrade) is refused, never rewritten, rebuilt or quarantined from (an older release read one it
# did not know as damaged and moved every partition out of the lake). 0: none written (before it).
FORMAT = 1
# The service a site's manifest names when its partitions came from the built-in sandbox (the one
# every command runs against while no key is configured): named, not addressed (its port is the day's).
EMBEDDED_SANDBOX = {"sandbox": "embedded"}


@dataclass(frozen=True)
class Entry:
    """What the lake knows of one stored partition."""

    relpath: str
    params: dict[str, str]
    fetched_at: datetime
    rows: int
    sha256: str
    settled: bool
    untyped: int = 0  # rows holding values the parser could not type: the partition stays due
    size: int | None = None  # the file's size and modification time when recorded
    mtime_ns: int | None = None
    foreign: int = 0  # rows whose date is not the partition's day: the partition stays due
    collapsed: int = 0  # duplicate rows of a commission the answer held, collapsed into one each
    touched: Touched | None = None  # an updateDate day: the click days its rows belong to
    revisable_until: datetime | None = None  # an aggregate window: the end of its horizon
    invalidated: bool = False  # `invalidate` asked for it again: the next sync fetches it, whatever its range

    @property
    def doubtful(self) -> int:
        """Rows the partition cannot vouch for (untyped values, rows of another day): while there
        are any it is not settled, and a sync asks for it again once its copy is stale."""
        return self.untyped + self.foreign

    @cached_property
    def key(self) -> PartitionKey:
        return PartitionKey.from_relpath(self.relpath, self.params)

    @property
    def final(self) -> bool:
        """An aggregate window fetched after its horizon had passed, nothing in it in doubt."""
        return (
            self.revisable_until is not None
            and self.settled
            and not self.doubtful
            and not self.invalidated
            and self.fetched_at >= self.revisable_until
        )

    def to_json(self) -> dict[str, Any]:
        return dict(self._json)

    @cached_property
    def json_text(self) -> str:
        """`to_json()` as the manifest's file holds it (`json.dumps`, sorted keys), encoded once:
        a sync writes the whole manifest after each partition, and encoding every entry again
        each time was a seventh of the CPU of a sync of 720 partitions."""
        return json.dumps(self._json, sort_keys=True)

    @cached_property
    def _json(self) -> dict[str, Any]:
        # Made once per entry, shallow (dataclasses.asdict deep-copies): a sync writes the whole
        # manifest after each partition.
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _WHERE_THEY_APPLY}
        data["params"] = dict(self.params)
        data["fetched_at"] = self.fetched_at.isoformat()
        if self.touched is not None:
            data["touched"] = self.touched.to_json()
        if self.revisable_until is not None:
            data["revisable_until"] = self.revisable_until.isoformat()
            data["final"] = self.final
        if self.invalidated:
            data["invalidated"] = True
        return data

    @classmethod
    def from_json(cls, data: Any) -> Entry:
        """An entry from its JSON form; anything of another shape is a LakeError."""
        try:
            fetched_at = datetime.fromisoformat(data["fetched_at"])
            entry = cls(
                relpath=_text(data["relpath"]),
                params={_text(k): _text(v) for k, v in data["params"].items()},
                fetched_at=fetched_at if fetched_at.tzinfo else fetched_at.replace(tzinfo=UTC),
                rows=_count(data["rows"]),
                sha256=_text(data["sha256"]),
                settled=data["settled"] is True,
                untyped=_count(data.get("untyped", 0)),
                size=None if data.get("size") is None else _count(data["size"]),
                mtime_ns=None if data.get("mtime_ns") is None else _count(data["mtime_ns"]),
                foreign=_count(data.get("foreign", 0)),
                collapsed=_count(data.get("collapsed", 0)),
                touched=None if data.get("touched") is None else Touched.from_json(data["touched"]),
                revisable_until=_moment(data.get("revisable_until")),
                invalidated=data.get("invalidated", False) is True,
            )
            entry.key  # noqa: B018  (the path must name a partition)
        except (KeyError, TypeError, ValueError, AttributeError, LakeError) as error:
            raise LakeError(
                f"a manifest entry has the wrong shape ({type(error).__name__}: {error})"
            ) from None
        return entry


class _State(NamedTuple):
    """What a manifest held when last read or written."""

    entries: dict[str, Entry]
    service: dict[str, Any]
    revision_days: int | None


# The manifests this process last read or wrote, by path: their file's identity and what they held.
_known: dict[Path, tuple[tuple[int, int, int], _State]] = {}


def _seen(path: Path) -> tuple[int, int, int]:
    """A file's identity as far as a reader can tell: inode, size, modification time."""
    stat = os.stat(path)
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


# written only where set: other entries keep their shape
_WHERE_THEY_APPLY = ("touched", "revisable_until", "invalidated")


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{value!r} is not text")
    return value


def _moment(value: Any) -> datetime | None:
    """A stored UTC moment (None stays None)."""
    if value is None:
        return None
    moment = datetime.fromisoformat(_text(value))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TypeError(f"{value!r} is not a count")
    return value


def from_embedded_sandbox(data_dir: Path, site: str) -> bool:
    """Whether a site's manifest says its partitions came from the built-in sandbox (False for a
    damaged one: where they came from is not known)."""
    try:
        return Manifest.load(data_dir, site).from_embedded_sandbox
    except LakeError:
        return False


def remove_partitions(data_dir: Path, site: str) -> None:
    """Remove every partition of a site and its records, for its writer (its lock files stay): the
    data folders first, the manifest last, so that until it goes it still says where the site's
    files came from (a kill midway leaves a site the next writer removes again)."""
    root = site_root(data_dir, site)
    children = sorted(root.iterdir(), key=lambda p: (p.name == MANIFEST, not p.is_dir(), p.name))
    for child in children:
        if child.is_dir():
            remove_folder(child)
        elif not child.name.endswith(".lock"):
            child.unlink()


def part_files(data_dir: Path, site: str) -> dict[str, Path]:
    """The partition files of a site on disk, by partition path (what its manifest describes). A
    folder of the site that cannot be listed is a LakeError naming it: its files would otherwise
    look gone (`Path.rglob` passes such a folder over without a word), their entries dropped."""
    root = site_root(data_dir, site)
    found: dict[str, Path] = {}

    def unlisted(error: OSError) -> None:
        if isinstance(error, FileNotFoundError | NotADirectoryError):
            return  # (no site folder yet, or one removed while the walk went: no files there indeed)
        raise LakeError(
            f"the folder {error.filename} of site {site!r} cannot be listed ({error.strerror or error}): "
            "the partitions in it cannot be checked; give this user read access to it (chmod u+rx) and "
            "run again"
        ) from None

    for folder, _, names in os.walk(root, onerror=unlisted):
        if PART_FILE in names:
            found[Path(folder).relative_to(root).as_posix()] = Path(folder, PART_FILE)
    return dict(sorted(found.items()))


class ForeignManifest(LakeError):
    """A site folder's manifest is another site's: the site folders were renamed or swapped. Its
    files are that site's: never rebuilt nor read as this one's (that relabelled one site's figures
    as another's), until the folder is put back. Or it is of a later format (`NewerManifest`)."""


class NewerManifest(ForeignManifest):
    """A site's manifest written by a newer release (a later `FORMAT`): this one leaves the site's
    files as they are, reading and writing none of them, until it is upgraded."""


class Manifest:
    """Entries of one site, keyed by partition path."""

    def __init__(self, data_dir: Path, site: str, entries: dict[str, Entry] | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.site = site
        self.entries: dict[str, Entry] = entries or {}
        # Which service the site's partitions came from: base_url, dialect, and whether that
        # address was checked to answer as the reporting API (`verified`).
        self.service: dict[str, Any] = {}
        # The site's revision horizon in days (None: no sync has set it yet).
        self.revision_days: int | None = None

    @property
    def path(self) -> Path:
        return site_root(self.data_dir, self.site) / MANIFEST

    def exists(self) -> bool:
        return self.path.exists()

    @property
    def from_embedded_sandbox(self) -> bool:
        """Whether the site's partitions came from the built-in sandbox (synthetic figures)."""
        return self.service.get("sandbox") == EMBEDDED_SANDBOX["sandbox"]

    @property
    def from_a_service(self) -> bool:
        """Whether the site's partitions came from a service at an address (a real one, say)."""
        return "base_url" in self.service

    @classmethod
    def load(cls, data_dir: Path, site: str) -> Manifest:
        """The site's manifest (empty when there is none); a damaged one is a LakeError.

        A file this process last read or wrote, unchanged since (the same inode, size and
        modification time), is not parsed again: a sync loads it after every partition."""
        manifest = cls(data_dir, site)
        try:
            seen = _seen(manifest.path)
            known = _known.get(manifest.path)
            if known is not None and known[0] == seen:
                manifest._restore(known[1])
                return manifest
            data = json.loads(manifest.path.read_text())
        except FileNotFoundError:
            return manifest
        except (OSError, ValueError) as error:
            raise manifest.damaged(f"unreadable: {error}") from None
        partitions = data.get("partitions") if isinstance(data, dict) else None
        if not isinstance(partitions, dict):
            raise manifest.damaged("no 'partitions' object")
        written = data.get("format", 0)
        if not isinstance(written, int) or written > FORMAT:
            raise NewerManifest(
                f"the manifest {manifest.path} is of format {written!r}, which a newer release of "
                f"commerce-reports wrote (this one, {__version__}, reads format {FORMAT} and earlier): "
                "upgrade commerce-reports to use this lake (nothing in it is read or changed meanwhile)"
            )
        named = data.get("site")
        if isinstance(named, str) and named != site:
            raise ForeignManifest(
                f"the manifest {manifest.path} is site {named}'s, not {site}'s: the site folders were "
                f"renamed or swapped; put the folder back as site={named} (nothing in it is read as "
                f"{site}'s meanwhile)"
            )
        service = data.get("service", {})
        manifest.service = dict(service) if isinstance(service, dict) else {}
        try:
            days = data.get("revision_days")
            manifest.revision_days = None if days is None else check_revision_days(days, "revision_days")
            for item in partitions.values():
                entry = Entry.from_json(item)
                manifest.entries[entry.relpath] = entry
        except CommerceReportsError as error:  # an entry of the wrong shape, a horizon not in days
            raise manifest.damaged(str(error)) from None
        _known[manifest.path] = (seen, manifest._state())
        return manifest

    def _state(self) -> _State:
        """What the manifest holds, to be restored into another (entries are immutable: shared)."""
        return _State(dict(self.entries), dict(self.service), self.revision_days)

    def _restore(self, state: _State) -> None:
        self.entries, self.service = dict(state.entries), dict(state.service)
        self.revision_days = state.revision_days

    def damaged(self, why: str) -> LakeError:
        return LakeError(
            f"the manifest {self.path} is damaged ({why}); the next sync rebuilds it from the Parquet "
            f"files, or run `commerce-reports status --rebuild --site {self.site}`"
        )

    def get(self, key: PartitionKey) -> Entry | None:
        return self.entries.get(key.relpath)

    def __iter__(self) -> Iterator[Entry]:
        return iter(sorted(self.entries.values(), key=lambda e: e.relpath))

    def __len__(self) -> int:
        return len(self.entries)

    def windows(self) -> list[WindowState]:
        """Every stored aggregate window: when fetched, until when revisable, whether final.

        An entry written before revisions were recorded gets its horizon from the manifest's
        `revision_days` (or the default, when no sync has set one yet)."""
        days = DEFAULT_REVISION_DAYS if self.revision_days is None else self.revision_days
        states: list[WindowState] = []
        for entry in self:
            key = entry.key
            if key.dataset not in AGGREGATES:
                continue
            if entry.revisable_until is None:  # written before revisions were recorded: by time
                until = revisable_until(key, days)
                final = not entry.doubtful and entry.fetched_at >= until
            else:
                until, final = entry.revisable_until, entry.final
            states.append(
                WindowState(
                    dataset=key.dataset,
                    slice=str(key.slice),
                    grain=str(key.grain),
                    start=key.start,
                    end=key.end,
                    fetched_at=entry.fetched_at,
                    revisable_until=until,
                    final=final,
                )
            )
        return states

    def horizon_of(self, key: PartitionKey) -> datetime | None:
        """`revisable_until` of an aggregate window under this manifest's horizon (None otherwise)."""
        if key.dataset not in AGGREGATES or self.revision_days is None:
            return None
        return revisable_until(key, self.revision_days)

    def save(self) -> None:
        """Write the whole manifest atomically (temporary file, then rename)."""
        payload: dict[str, Any] = {"format": FORMAT, "site": self.site, "service": self.service}
        if self.revision_days is not None:
            payload["revision_days"] = self.revision_days
        # The text `json.dumps(payload | {"partitions": ...}, sort_keys=True)` writes, byte for byte
        # (compact: an indented dump takes the pure-Python encoder, ~10x slower), with each entry's
        # text encoded once (`Entry.json_text`) rather than at every save.
        partitions = ", ".join(f"{json.dumps(e.relpath)}: {e.json_text}" for e in self)
        texts = {name: json.dumps(value, sort_keys=True) for name, value in payload.items()}
        texts["partitions"] = "{" + partitions + "}"
        save_atomic(self.path, "{" + ", ".join(f"{json.dumps(n)}: {texts[n]}" for n in sorted(texts)) + "}")
        _known[self.path] = (_seen(self.path), self._state())  # writers hold the site lock: still ours

    @staticmethod
    def record(
        data_dir: Path,
        site: str,
        key: PartitionKey,
        written: WrittenPartition,
        fetched_at: datetime,
        settled: bool,
    ) -> Entry:
        """Add or replace the entry of a partition just written (re-reading under the site lock,
        so concurrent writers never lose each other's entries). An aggregate window gets the end
        of its horizon under the site's `revision_days`; an updateDate day what its rows touched."""
        with site_lock(data_dir, site):
            manifest = Manifest.load(data_dir, site)
            entry = Entry(
                relpath=key.relpath,
                params=key.params(),
                fetched_at=fetched_at.astimezone(UTC),
                rows=written.rows,
                sha256=written.sha256,
                settled=settled,
                untyped=written.untyped,
                size=written.size,
                mtime_ns=written.mtime_ns,
                foreign=written.foreign,
                collapsed=written.collapsed,
                touched=written.touched if key.by == "updateDate" else None,
                revisable_until=manifest.horizon_of(key),
            )
            manifest.entries[entry.relpath] = entry
            manifest.save()  # (its intent stays until the file is published: see `digests.intend`)
        return entry

    @staticmethod
    def record_horizon(data_dir: Path, site: str, revision_days: int) -> int:
        """Set the site's revision horizon, and each aggregate window's `revisable_until` (and
        whether it is final) under it. Returns how many entries changed (none when it was set)."""
        days = check_revision_days(revision_days, "revision_days")
        with site_lock(data_dir, site):
            manifest = Manifest.load(data_dir, site)
            changed = 0
            for relpath, entry in manifest.entries.items():
                until = revisable_until(entry.key, days) if entry.key.dataset in AGGREGATES else None
                if until is None or until == entry.revisable_until:
                    continue
                manifest.entries[relpath] = replace(
                    entry, revisable_until=until, settled=not entry.doubtful and entry.fetched_at >= until
                )
                changed += 1
            if changed or manifest.revision_days != days:
                manifest.revision_days = days
                manifest.save()
        return changed

    @staticmethod
    def record_service(data_dir: Path, site: str, service: dict[str, Any]) -> None:
        """Say which service (address, dialect, verified or not) the site's partitions come from."""
        with site_lock(data_dir, site):
            manifest = Manifest.load(data_dir, site)
            manifest.service = dict(service)
            manifest.save()

    @staticmethod
    def invalidate(data_dir: Path, site: str, keys: list[PartitionKey]) -> int:
        """Mark entries for the next sync to fetch again, whatever its range and slices; their
        files stay vouched for, and read, until their partitions are replaced. Returns how many."""
        with site_lock(data_dir, site):
            manifest = Manifest.load(data_dir, site)
            marked = [manifest.entries[k.relpath] for k in keys if k.relpath in manifest.entries]
            for entry in marked:
                manifest.entries[entry.relpath] = replace(entry, invalidated=True)
            manifest.save()
        return len(marked)


def store_partition(
    data_dir: Path,
    site: str,
    key: PartitionKey,
    table: pa.Table,
    fetched_at: datetime,
    *,
    settled: bool = False,
) -> WrittenPartition:
    """Store `table` as a sync stores a partition: its file, then its manifest entry (the entry
    vouches for the file: a file without one is read by no view). `settled`: whether the
    partition is final for the sync (never when the file holds rows in doubt). For tools that
    make a lake without the service: a bench lake, a test's."""
    from .store import write_partition  # pyarrow, at the first file written

    written = write_partition(data_dir, site, key, table, fetched_at)
    clean = settled and not written.untyped and not written.foreign
    Manifest.record(data_dir, site, key, written, fetched_at, clean)
    return written
