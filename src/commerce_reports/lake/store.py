"""Parquet partitions on disk: written atomically (`files.save_atomic`), read back typed."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ..contract import FETCHED_AT, PART_FILE, PartitionKey, dataset_schema, site_root
from ..files import save_atomic, sha256_of

__all__ = ["WrittenPartition", "write_partition"]


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
    schema = dataset_schema(key.dataset)
    stamp = pa.array([fetched_at.astimezone(UTC)] * table.num_rows, FETCHED_AT.type)
    table = table.select([f.name for f in schema if f.name != FETCHED_AT.name])
    table = table.append_column(FETCHED_AT, stamp).cast(schema)
    digest: list[str] = []

    def write(temp: Path) -> None:
        pq.write_table(table, temp, compression="zstd")
        digest.append(sha256_of(temp))

    target = save_atomic(folder / PART_FILE, write)
    return WrittenPartition(target, table.num_rows, digest[0])
