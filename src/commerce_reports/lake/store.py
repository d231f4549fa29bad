"""Parquet partitions on disk: written atomically, read back typed.

A partition is written to a temporary file in its own folder, flushed to disk, then renamed over
`part.parquet` with `os.replace`: a reader (or a crash) sees the old file or the new one, never
half of one. Temporary files carry their writer's pid, so a later run can tell the debris of a
killed writer from the work of a live one.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ..parse import AGGREGATE_SCHEMAS, TRANSACTION_SCHEMA
from .layout import PART_FILE, PartitionKey, site_root

__all__ = [
    "FETCHED_AT",
    "SCHEMA_VERSION",
    "WrittenPartition",
    "dataset_schema",
    "remove_stray_files",
    "write_partition",
]

SCHEMA_VERSION = 1  # bump when the stored columns change; older files stay readable (union by name)
FETCHED_AT = pa.field("fetched_at", pa.timestamp("us", tz="UTC"))
# Every writer of the data folder names its temporary files .<what>.<pid>.<random hex>.tmp
_TEMP = re.compile(r"^\..+\.(\d+)\.[0-9a-f]+\.tmp$")


def dataset_schema(dataset: str) -> pa.Schema:
    """The columns a stored partition of `dataset` holds (the hive keys come from its path)."""
    base = TRANSACTION_SCHEMA if dataset == "transactions" else AGGREGATE_SCHEMAS[dataset]
    return pa.schema([*base.remove_metadata(), FETCHED_AT])


@dataclass(frozen=True)
class WrittenPartition:
    path: Path
    rows: int
    sha256: str


def write_partition(
    data_dir: Path, site: str, key: PartitionKey, table: pa.Table, fetched_at: datetime
) -> WrittenPartition:
    """Store one fetched table as the partition `key` of `site`, atomically; a zero-row table too."""
    folder = site_root(data_dir, site) / key.relpath
    folder.mkdir(parents=True, exist_ok=True)
    schema = dataset_schema(key.dataset)
    stamp = pa.array([fetched_at.astimezone(UTC)] * table.num_rows, FETCHED_AT.type)
    table = table.select([f.name for f in schema if f.name != FETCHED_AT.name])
    table = table.append_column(FETCHED_AT, stamp).cast(schema)
    temp = folder / f".part.{os.getpid()}.{secrets.token_hex(6)}.tmp"
    try:
        with temp.open("wb") as sink:
            pq.write_table(table, sink, compression="zstd")
            sink.flush()
            os.fsync(sink.fileno())
        digest = file_sha256(temp)
        os.replace(temp, folder / PART_FILE)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
    _fsync_dir(folder)
    return WrittenPartition(folder / PART_FILE, table.num_rows, digest)


def remove_stray_files(data_dir: Path) -> list[Path]:
    """Delete temporary files (lake, rollups, catalog) left by writers that no longer run."""
    root = Path(data_dir)
    removed: list[Path] = []
    if not root.is_dir():
        return removed
    for temp in root.rglob(".*.tmp"):
        match = _TEMP.match(temp.name)
        if match and not _alive(int(match.group(1))):
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()
                removed.append(temp)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as source:
        for block in iter(lambda: source.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _fsync_dir(folder: Path) -> None:
    """Make the rename itself durable (a power cut must not undo it)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
