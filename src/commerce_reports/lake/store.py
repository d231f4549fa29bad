"""Parquet partitions on disk: written atomically (`files.save_atomic`), read back and checked.

What is written never holds a secret: every string the service sent (the `extra` JSON above all,
where a key echoed in a body would land) is scrubbed of every key the process knows. Each file
carries its request's params in its metadata, so a lost manifest can be rebuilt from the files,
and page checksums, so damage inside a file is an error when it is read back, never wrong data.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..contract import (
    FETCHED_AT,
    PART_FILE,
    PartitionKey,
    dataset_schema,
    readable_type,
    site_root,
    untyped_rows,
)
from ..errors import LakeError
from ..files import save_atomic, sha256_of
from ..secret import known_secrets, scrub

__all__ = [
    "PARAMS_METADATA",
    "StoredFile",
    "WrittenPartition",
    "inspect_partition",
    "write_partition",
]

PARAMS_METADATA = b"commerce_reports.params"
# Labels after which redaction masks key-shaped tokens (see secret.py): rows holding one are scrubbed.
_KEY_LABELS = r"(?i)(authorization|x-api-key|secret\s|bearer\s|[?&](key|api_key|apikey|token|secret)=)"


@dataclass(frozen=True)
class WrittenPartition:
    """A partition just stored: where, how many rows (and how many the parser could not type),
    and the file's identity (hash, size, modification time) for the manifest."""

    path: Path
    rows: int
    sha256: str
    untyped: int = 0
    size: int = 0
    mtime_ns: int = 0


@dataclass(frozen=True)
class StoredFile:
    """What a partition file on disk holds, read back in full."""

    rows: int
    fetched_at: datetime
    sha256: str
    untyped: int
    size: int
    mtime_ns: int
    params: dict[str, str] | None  # the request's params from the file's metadata (None: older file)


def write_partition(
    data_dir: Path, site: str, key: PartitionKey, table: pa.Table, fetched_at: datetime
) -> WrittenPartition:
    """Store one fetched table as the partition `key` of `site`, atomically; a zero-row table too."""
    folder = site_root(data_dir, site) / key.relpath
    schema = dataset_schema(key.dataset)
    stamp = pa.array([fetched_at.astimezone(UTC)] * table.num_rows, FETCHED_AT.type)
    table = scrub_table(table.select([f.name for f in schema if f.name != FETCHED_AT.name]))
    table = table.append_column(FETCHED_AT, stamp).cast(schema)
    table = table.replace_schema_metadata({PARAMS_METADATA: json.dumps(key.params()).encode()})
    digest: list[str] = []

    def write(temp: Path) -> None:
        pq.write_table(table, temp, compression="zstd", write_page_checksum=True)
        digest.append(sha256_of(temp))

    target = save_atomic(folder / PART_FILE, write)
    stat = os.stat(target)
    return WrittenPartition(
        target, table.num_rows, digest[0], untyped_rows(table), stat.st_size, stat.st_mtime_ns
    )


def scrub_table(table: pa.Table) -> pa.Table:
    """`table` with every known secret value (and key-shaped token after a key's label) masked in
    every string, nested ones included. Columns without a suspect string are left untouched."""
    secrets = sorted(known_secrets())
    for index, field in enumerate(table.schema):
        column = table.column(index)
        if any(_suspect(leaf, secrets) for leaf in _string_leaves(column)):
            cleaned = pa.array(scrub(column.to_pylist()), type=field.type)
            table = table.set_column(index, field, cleaned)
    return table


def _string_leaves(column: pa.ChunkedArray | pa.Array) -> list[pa.Array]:
    """Every string array inside a column (through lists and structs)."""
    arrays = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    leaves: list[pa.Array] = []
    for array in arrays:
        kind = array.type
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            leaves.append(array)
        elif pa.types.is_list(kind) or pa.types.is_large_list(kind):
            leaves += _string_leaves(pc.list_flatten(array))
        elif pa.types.is_struct(kind):
            for child in array.flatten():
                leaves += _string_leaves(child)
    return leaves


def _suspect(strings: pa.Array, secrets: list[str]) -> bool:
    if not len(strings) or strings.null_count == len(strings):
        return False
    hits = pc.match_substring_regex(strings, _KEY_LABELS)
    for secret in secrets:
        hits = pc.or_kleene(hits, pc.match_substring(strings, secret))
    return bool(pc.any(hits).as_py())


def inspect_partition(path: Path, dataset: str) -> StoredFile:
    """Read a partition file of `dataset` in full: its rows, when it was fetched, its hash, metadata.

    A file that is not readable Parquet of the dataset's columns (truncated, garbled, a flipped bit
    in its data or its footer) is a LakeError naming it: damage never passes for data.
    """
    try:
        expected = dataset_schema(dataset)
        stat = os.stat(path)
        table = pq.read_table(path, page_checksum_verification=True)  # a flipped bit in a page fails here
        sha256 = sha256_of(path)
        strange = [
            f.name
            for f in table.schema
            if f.name not in expected.names or not readable_type(f.name, f.type, expected.field(f.name).type)
        ]
        if strange or FETCHED_AT.name not in table.column_names:
            raise ValueError(f"columns not of a {dataset} partition: {', '.join(strange) or 'no fetched_at'}")
        stamps = table.column(FETCHED_AT.name)
        latest = pc.max(stamps).as_py() if len(stamps) else None
        untyped = untyped_rows(table)
        params = _params(table.schema.metadata)
    except Exception as error:  # corrupt input reaches pyarrow in many ways: any of them means damage
        raise LakeError(f"{path} is not readable Parquet ({type(error).__name__}: {error})") from None
    fetched_at = latest or datetime.fromtimestamp(stat.st_mtime, UTC)  # a zero-row day: its file's time
    return StoredFile(table.num_rows, fetched_at, sha256, untyped, stat.st_size, stat.st_mtime_ns, params)


def _params(metadata: dict[bytes, bytes] | None) -> dict[str, str] | None:
    """The request's params kept in a file's metadata (None when absent or unreadable)."""
    raw = (metadata or {}).get(PARAMS_METADATA)
    try:
        params = json.loads(raw) if raw else None
    except ValueError:
        return None
    if not isinstance(params, dict) or not all(isinstance(v, str) for v in params.values()):
        return None
    return params
