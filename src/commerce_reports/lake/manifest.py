"""The manifest of a site: what each partition holds, when it was fetched, whether it has settled.

One JSON file per site, rewritten atomically under a lock after each partition's Parquet file is
in place (manifest last). If it is ever lost, `rebuild` recovers it from the Parquet files.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from filelock import FileLock

from ..contract import PART_FILE, SCHEMA_VERSION, PartitionKey, site_root
from ..errors import LakeError
from ..files import save_atomic, sha256_of
from .store import WrittenPartition

__all__ = ["Entry", "Manifest", "site_lock"]

MANIFEST = "manifest.json"
_thread_locks: dict[str, threading.RLock] = {}
_guard = threading.Lock()


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

    @property
    def key(self) -> PartitionKey:
        return PartitionKey.from_relpath(self.relpath)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["fetched_at"] = self.fetched_at.isoformat()
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Entry:
        return cls(
            relpath=data["relpath"],
            params=dict(data["params"]),
            fetched_at=datetime.fromisoformat(data["fetched_at"]),
            rows=int(data["rows"]),
            sha256=str(data["sha256"]),
            schema_version=int(data["schema_version"]),
            settled=bool(data["settled"]),
        )


@contextmanager
def site_lock(data_dir: Path, site: str, name: str = ".manifest.lock") -> Iterator[None]:
    """Hold the lock `name` of a site, across threads and processes."""
    root = site_root(data_dir, site)
    root.mkdir(parents=True, exist_ok=True)
    path = str(root / name)
    with _guard:
        thread_lock = _thread_locks.setdefault(path, threading.RLock())
    with thread_lock, FileLock(path):
        yield


class Manifest:
    """Entries of one site, keyed by partition path."""

    def __init__(self, data_dir: Path, site: str, entries: dict[str, Entry] | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.site = site
        self.entries: dict[str, Entry] = entries or {}

    @property
    def path(self) -> Path:
        return site_root(self.data_dir, self.site) / MANIFEST

    @classmethod
    def load(cls, data_dir: Path, site: str) -> Manifest:
        manifest = cls(data_dir, site)
        try:
            data = json.loads(manifest.path.read_text())
        except FileNotFoundError:
            return manifest
        except (OSError, ValueError) as error:
            raise LakeError(
                f"the manifest {manifest.path} is unreadable ({error}); "
                f"rebuild it with `commerce-reports status --rebuild --site {site}`"
            ) from None
        for item in data.get("partitions", {}).values():
            entry = Entry.from_json(item)
            manifest.entries[entry.relpath] = entry
        return manifest

    def get(self, key: PartitionKey) -> Entry | None:
        return self.entries.get(key.relpath)

    def __iter__(self) -> Iterator[Entry]:
        return iter(sorted(self.entries.values(), key=lambda e: e.relpath))

    def __len__(self) -> int:
        return len(self.entries)

    def save(self) -> None:
        """Write the whole manifest atomically (temporary file, then rename)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "site": self.site,
            "schema_version": SCHEMA_VERSION,
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
        )
        with site_lock(data_dir, site):
            manifest = Manifest.load(data_dir, site)
            manifest.entries[entry.relpath] = entry
            manifest.save()
        return entry

    @staticmethod
    def forget(data_dir: Path, site: str, keys: list[PartitionKey]) -> int:
        """Drop entries (their files stay until refetched) so the next sync fetches them again."""
        with site_lock(data_dir, site):
            manifest = Manifest.load(data_dir, site)
            dropped = sum(manifest.entries.pop(k.relpath, None) is not None for k in keys)
            manifest.save()
        return dropped

    @classmethod
    def rebuild(cls, data_dir: Path, site: str, settled: Any) -> Manifest:
        """Recreate the manifest from the Parquet files (`settled(key, fetched_at) -> bool`)."""
        root = site_root(data_dir, site)
        with site_lock(data_dir, site):
            manifest = cls(data_dir, site)
            for path in sorted(root.rglob(PART_FILE)):
                key = PartitionKey.from_relpath(str(path.parent.relative_to(root)))
                table = pq.read_table(path, columns=["fetched_at"])
                stamps = table["fetched_at"].to_pylist()
                fetched_at = max(stamps) if stamps else datetime.fromtimestamp(path.stat().st_mtime, UTC)
                manifest.entries[key.relpath] = Entry(
                    key.relpath,
                    key.params(),
                    fetched_at,
                    table.num_rows,
                    sha256_of(path),
                    SCHEMA_VERSION,
                    bool(settled(key, fetched_at)),
                )
            manifest.save()
        return manifest
