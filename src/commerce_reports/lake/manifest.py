"""The manifest of a site: what each partition holds, when it was fetched, whether it has settled.

One JSON file per site, rewritten atomically under a lock after each partition's Parquet file is
in place (manifest last). Each entry also records its file's size and modification time, so a
file replaced without its entry being rewritten (a kill between the two) is noticed cheaply; see
`repair.py`, which also rebuilds a lost or damaged manifest from the files.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..contract import SCHEMA_VERSION, PartitionKey, site_root
from ..errors import LakeError
from ..files import save_atomic
from .locks import site_lock

if TYPE_CHECKING:
    from .store import WrittenPartition

__all__ = ["MANIFEST", "Entry", "Manifest"]

MANIFEST = "manifest.json"


@dataclass(frozen=True)
class Entry:
    """What the lake knows of one stored partition."""

    relpath: str
    params: dict[str, str]
    fetched_at: datetime
    rows: int
    sha256: str
    schema_version: int
    settled: bool
    untyped: int = 0  # rows holding values the parser could not type: the partition stays due
    size: int | None = None  # the file's size and modification time when recorded
    mtime_ns: int | None = None
    foreign: int = 0  # rows whose date is not the partition's day: the partition stays due
    collapsed: int = 0  # duplicate rows of a commission the answer held, collapsed into one each

    @property
    def doubtful(self) -> int:
        """Rows the partition cannot vouch for (untyped values, rows of another day): while there
        are any it is not settled, and the next sync asks for it again."""
        return self.untyped + self.foreign

    @property
    def key(self) -> PartitionKey:
        return PartitionKey.from_relpath(self.relpath, self.params)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["fetched_at"] = self.fetched_at.isoformat()
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
                schema_version=_count(data["schema_version"]),
                settled=data["settled"] is True,
                untyped=_count(data.get("untyped", 0)),
                size=None if data.get("size") is None else _count(data["size"]),
                mtime_ns=None if data.get("mtime_ns") is None else _count(data["mtime_ns"]),
                foreign=_count(data.get("foreign", 0)),
                collapsed=_count(data.get("collapsed", 0)),
            )
            entry.key  # noqa: B018  (the path must name a partition)
        except (KeyError, TypeError, ValueError, AttributeError, LakeError) as error:
            raise LakeError(
                f"a manifest entry has the wrong shape ({type(error).__name__}: {error})"
            ) from None
        return entry


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{value!r} is not text")
    return value


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TypeError(f"{value!r} is not a count")
    return value


class Manifest:
    """Entries of one site, keyed by partition path."""

    def __init__(self, data_dir: Path, site: str, entries: dict[str, Entry] | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.site = site
        self.entries: dict[str, Entry] = entries or {}
        # Which service the site's partitions came from: base_url, dialect, and whether that
        # address was checked to answer as the reporting API (`verified`).
        self.service: dict[str, Any] = {}

    @property
    def path(self) -> Path:
        return site_root(self.data_dir, self.site) / MANIFEST

    def exists(self) -> bool:
        return self.path.exists()

    @classmethod
    def load(cls, data_dir: Path, site: str) -> Manifest:
        """The site's manifest (empty when there is none); a damaged one is a LakeError."""
        manifest = cls(data_dir, site)
        try:
            data = json.loads(manifest.path.read_text())
        except FileNotFoundError:
            return manifest
        except (OSError, ValueError) as error:
            raise manifest.damaged(f"unreadable: {error}") from None
        partitions = data.get("partitions") if isinstance(data, dict) else None
        if not isinstance(partitions, dict):
            raise manifest.damaged("no 'partitions' object")
        service = data.get("service", {})
        manifest.service = dict(service) if isinstance(service, dict) else {}
        try:
            for item in partitions.values():
                entry = Entry.from_json(item)
                manifest.entries[entry.relpath] = entry
        except LakeError as error:
            raise manifest.damaged(str(error)) from None
        return manifest

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

    def save(self) -> None:
        """Write the whole manifest atomically (temporary file, then rename)."""
        payload = {
            "site": self.site,
            "schema_version": SCHEMA_VERSION,
            "service": self.service,
            "partitions": {e.relpath: e.to_json() for e in self},
        }
        save_atomic(self.path, json.dumps(payload, indent=1, sort_keys=True))

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
        so concurrent writers never lose each other's entries)."""
        entry = Entry(
            relpath=key.relpath,
            params=key.params(),
            fetched_at=fetched_at.astimezone(UTC),
            rows=written.rows,
            sha256=written.sha256,
            schema_version=SCHEMA_VERSION,
            settled=settled,
            untyped=written.untyped,
            size=written.size,
            mtime_ns=written.mtime_ns,
            foreign=written.foreign,
            collapsed=written.collapsed,
        )
        with site_lock(data_dir, site):
            manifest = Manifest.load(data_dir, site)
            manifest.entries[entry.relpath] = entry
            manifest.save()
        return entry

    @staticmethod
    def record_service(data_dir: Path, site: str, service: dict[str, Any]) -> None:
        """Say which service (address, dialect, verified or not) the site's partitions come from."""
        with site_lock(data_dir, site):
            manifest = Manifest.load(data_dir, site)
            manifest.service = dict(service)
            manifest.save()

    @staticmethod
    def forget(data_dir: Path, site: str, keys: list[PartitionKey]) -> int:
        """Drop entries (their files stay until refetched) so the next sync fetches them again."""
        with site_lock(data_dir, site):
            manifest = Manifest.load(data_dir, site)
            dropped = sum(manifest.entries.pop(k.relpath, None) is not None for k in keys)
            manifest.save()
        return dropped
