"""Parquet partitions on disk: written atomically (`files.save_atomic`), read back and checked.

What a day's answer cannot hold is settled here, once, for every writer. One version per commission
per transactions partition: an answer holding a commission id twice keeps its last row (the
service lists a day's changes in the order they happened, so the last is the latest; identical
rows are one version), and the number collapsed is counted. Rows whose date is not the day asked
(an `updateDate` of another day in an `updateDate` answer) are kept, for inspection, and counted:
such a partition is not settled, so the next sync asks again.

What is written never holds a secret: every string the service sent (the `extra` JSON above all,
where a key echoed in a body would land) is scrubbed of every key the process knows. Each file
carries its request's params in its metadata, so a lost manifest can be rebuilt from the files,
and page checksums, so damage inside a file is an error when it is read back, never wrong data.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..contract import (
    DATE_COLUMNS,
    FETCHED_AT,
    PART_FILE,
    PartitionKey,
    dataset_schema,
    readable_type,
    site_root,
    untyped_rows,
)
from ..errors import NotAPartition
from ..files import save_atomic, sha256_of
from ..redaction import known_secrets, screen_pattern, scrub, written_forms
from .digests import SiteDigests, intend
from .horizon import Touched

__all__ = [
    "PARAMS_METADATA",
    "StoredFile",
    "WrittenPartition",
    "foreign_rows",
    "inspect_partition",
    "one_version_per_commission",
    "touched_by",
    "write_partition",
]

PARAMS_METADATA = b"commerce_reports.params"


@dataclass(frozen=True)
class WrittenPartition:
    """A partition just stored: where, how many rows (how many the parser could not type, how many
    belong to another day, how many duplicates of a commission were collapsed), the file's identity
    (hash, size, modification time) for the manifest, and for a transactions day the click days its
    rows belong to."""

    path: Path
    rows: int
    sha256: str
    untyped: int = 0
    size: int = 0
    mtime_ns: int = 0
    foreign: int = 0
    collapsed: int = 0
    touched: Touched | None = None


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
    foreign: int = 0  # rows whose date is not the partition's day (0 when the params are unknown)
    touched: Touched | None = None  # a transactions day: the click days its rows belong to


def write_partition(
    data_dir: Path, site: str, key: PartitionKey, table: pa.Table, fetched_at: datetime
) -> WrittenPartition:
    """Store one fetched table as the partition `key` of `site`, atomically; a zero-row table too."""
    folder = site_root(data_dir, site) / key.relpath
    schema = dataset_schema(key.dataset)
    collapsed = 0
    if key.dataset == "transactions":
        table, collapsed = one_version_per_commission(table)
    stamp = pa.array([fetched_at.astimezone(UTC)] * table.num_rows, FETCHED_AT.type)
    table = scrub_table(table.select([f.name for f in schema if f.name != FETCHED_AT.name]))
    table = table.append_column(FETCHED_AT, stamp).cast(schema)
    table = table.replace_schema_metadata({PARAMS_METADATA: json.dumps(key.params()).encode()})
    digest: list[str] = []

    def write(temp: Path) -> None:
        pq.write_table(table, temp, compression="zstd", write_page_checksum=True)
        digest.append(sha256_of(temp))
        intend(data_dir, site, key.relpath, digest[0])  # before the file is replaced: see digests.py

    target = save_atomic(folder / PART_FILE, write)
    SiteDigests(data_dir, site).note(target, digest[0])
    stat = os.stat(target)
    touched = touched_by(table, key.start) if key.dataset == "transactions" else None
    return WrittenPartition(
        target,
        table.num_rows,
        digest[0],
        untyped_rows(table),
        stat.st_size,
        stat.st_mtime_ns,
        foreign_rows(table, key.params()),
        collapsed,
        touched,
    )


def one_version_per_commission(table: pa.Table) -> tuple[pa.Table, int]:
    """`table` (a transactions answer) with one row per commission id, the last of each (rows
    without an id all kept), in the answer's order; and how many rows were collapsed."""
    ids = table.column("commission_id")
    if table.num_rows - ids.null_count == pc.count_distinct(ids).as_py():
        return table, 0
    rows = pa.table({"id": ids, "row": pa.array(range(table.num_rows), pa.int64())})
    last = rows.filter(pc.is_valid(rows["id"])).group_by("id", use_threads=False).aggregate([("row", "max")])
    without_id = rows.filter(pc.is_null(rows["id"]))["row"]
    kept = pa.chunked_array([*last["row_max"].chunks, *without_id.chunks], pa.int64())
    positions = kept.take(pc.array_sort_indices(kept))  # the answer's order
    return table.take(positions), table.num_rows - len(positions)


def foreign_rows(table: pa.Table, params: dict[str, Any] | None) -> int:
    """How many rows of a transactions partition asked with `params` (`{"updateDate": day}`) carry
    another day in that date (a row without the date is not counted); 0 for an aggregate window."""
    fields = [name for name in params or {} if name in DATE_COLUMNS]
    if len(fields) != 1 or DATE_COLUMNS[fields[0]] not in table.column_names:
        return 0
    try:
        day = date.fromisoformat(str((params or {})[fields[0]]))
    except ValueError:
        return 0
    other = pc.not_equal(table.column(DATE_COLUMNS[fields[0]]), pa.scalar(day, pa.date32()))
    return int(pc.sum(pc.fill_null(other, False)).as_py() or 0)


def touched_by(table: pa.Table, day: date) -> Touched | None:
    """The click days the rows of a transactions table belong to (see `Touched`); a row without a
    click date may belong to any day up to its commission date (`day`, the partition's, without one).
    None for a table without those columns (it cannot say which: every window)."""
    if not {"click_date", "commission_date"} <= set(table.column_names):
        return None
    clicks = table.column("click_date")
    dated = pc.unique(pc.drop_null(clicks)).to_pylist()
    undated = pc.filter(table.column("commission_date"), pc.is_null(clicks))
    bounds = [pc.max(undated).as_py(), day if undated.null_count else None]
    known = [bound for bound in bounds if bound is not None]
    return Touched.of(dated, max(known) if known else None)


def scrub_table(table: pa.Table) -> pa.Table:
    """`table` with every string (nested ones included) masked as `redact` masks a log line: each
    known secret, a key-shaped token after a key's label, a URL's password. Columns without a
    suspect string are left untouched.

    The strings of every column are searched together, with one pattern (`screen_pattern`, wider
    than what `redact` masks): Arrow compiles the pattern at each search, and with keys known (a
    sync's) their disguises make it long."""
    secrets = written_forms(known_secrets())
    pattern = screen_pattern()
    leaves = [_string_leaves(table.column(index)) for index in range(table.num_columns)]
    if not _suspect([leaf for column in leaves for leaf in column], secrets, pattern):
        return table
    for index, field in enumerate(table.schema):
        if _suspect(leaves[index], secrets, pattern):
            cleaned = pa.array(scrub(table.column(index).to_pylist()), type=field.type)
            table = table.set_column(index, field, cleaned)
    return table


def _string_leaves(column: pa.ChunkedArray | pa.Array) -> list[pa.Array]:
    """Every string array inside a column (through lists and structs), as large strings."""
    arrays = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    leaves: list[pa.Array] = []
    for array in arrays:
        kind = array.type
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            leaves.append(array.cast(pa.large_string()))
        elif pa.types.is_list(kind) or pa.types.is_large_list(kind):
            leaves += _string_leaves(pc.list_flatten(array))
        elif pa.types.is_struct(kind):
            for child in array.flatten():
                leaves += _string_leaves(child)
    return leaves


def _suspect(leaves: list[pa.Array], secrets: list[str], pattern: str) -> bool:
    """Whether a string holds a known key (as it is: a plain search) or `pattern`."""
    strings = pa.concat_arrays(leaves) if leaves else pa.array([], pa.large_string())
    if not len(strings) or strings.null_count == len(strings):
        return False
    hits = pc.match_substring_regex(strings, pattern)
    for secret in secrets:
        hits = pc.or_kleene(hits, pc.match_substring(strings, secret))
    return bool(pc.any(hits).as_py())


def inspect_partition(path: Path, dataset: str) -> StoredFile:
    """Read a partition file of `dataset` in full: its rows, when it was fetched, its hash, metadata.

    A file that is not readable Parquet of the dataset's columns (truncated, garbled, a flipped bit
    in its data or its footer; or Parquet of other columns) is a NotAPartition, a LakeError naming
    it and saying how: damage never passes for data.
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
        if strange or FETCHED_AT.name not in table.column_names:  # Parquet, but of something else
            found = f"columns {', '.join(strange)}" if strange else "no fetched_at column"
            raise NotAPartition(path, f"Parquet but not a {dataset} partition", found)
        stamps = table.column(FETCHED_AT.name)
        latest = pc.max(stamps).as_py() if len(stamps) else None
        untyped = untyped_rows(table)
        params = _params(table.schema.metadata)
        touched = touched_by(table, _day_of(path)) if dataset == "transactions" else None
    except (PermissionError, UnicodeEncodeError, NotAPartition):
        raise  # (no damage: the file is there, this user may not read it or its path is not UTF-8)
    except Exception as error:  # corrupt input reaches pyarrow in many ways: any of them means damage
        raise NotAPartition(path, "not readable Parquet", f"{type(error).__name__}: {error}") from None
    fetched_at = latest or datetime.fromtimestamp(stat.st_mtime, UTC)  # a zero-row day: its file's time
    foreign = foreign_rows(table, params)
    return StoredFile(
        table.num_rows, fetched_at, sha256, untyped, stat.st_size, stat.st_mtime_ns, params, foreign, touched
    )


def _day_of(path: Path) -> date:
    """The day of a transactions partition file (`.../day=YYYY-MM-DD/part.parquet`)."""
    return date.fromisoformat(path.parent.name.removeprefix("day="))


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
