"""Rollups stored as buckets: one Parquet file per bucket (a day, a month), each replaced atomically.

A SELECT is written once with DuckDB's partitioned COPY into a staging folder beside the target
(on both threads, spilling when memory is short), then each bucket file is moved into place with
`files.move_atomic`: a reader sees the old file or the new one. Staging folders left by a killed writer
are removed by the next writer of the site (it holds the site's lock, so nobody else writes there).
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from urllib.parse import unquote

import duckdb

from ..contract import next_month
from ..files import make_folder, move_atomic, save_atomic
from .sources import quote, sql_list
from .state import EMPTY

__all__ = [
    "NONE",
    "day_bucket",
    "in_list",
    "month_bucket",
    "remove_staging",
    "within",
    "write_buckets",
    "write_named_buckets",
]

NONE = "none"  # the bucket of rows whose date is NULL
_STAGING = ".staging"
_COPY = "FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 100000"


def day_bucket(column: str) -> str:
    """SQL: the day bucket of a date column (`YYYY-MM-DD`, or `none`)."""
    return f"coalesce(strftime({column}, '%Y-%m-%d'), '{NONE}')"


def month_bucket(column: str) -> str:
    """SQL: the month bucket of a date column (`YYYY-MM`, or `none`)."""
    return f"coalesce(strftime({column}, '%Y-%m'), '{NONE}')"


def in_list(values: Iterable[str]) -> str:
    """A SQL list for IN / NOT IN: when empty, a value no bucket has (`NULL` would make NOT IN
    match nothing)."""
    return ", ".join(quote(v) for v in sorted(values)) or "'-'"


def within(column: str, buckets: Iterable[str]) -> str:
    """SQL: the date `column` falls in one of `buckets`, months (`YYYY-MM`), days (`YYYY-MM-DD`) or
    `none` (as ranges, so that Parquet statistics skip the rest)."""
    terms = []
    for bucket in sorted(buckets):
        if bucket == NONE:
            terms.append(f"{column} IS NULL")
            continue
        if len(bucket) == len("YYYY-MM-DD"):
            terms.append(f"{column} = DATE '{bucket}'")
            continue
        first = date.fromisoformat(f"{bucket}-01")
        terms.append(f"({column} >= DATE '{first}' AND {column} < DATE '{next_month(first)}')")
    return " OR ".join(terms) or "false"


def _temp(folder: Path, name: str, suffix: str) -> Path:
    return folder / f".{name}.{os.getpid()}.{secrets.token_hex(6)}{suffix}"


@contextmanager
def _staged_buckets(
    con: duckdb.DuckDBPyConnection, select: str, bucket: str, near: Path
) -> Iterator[dict[str, Path]]:
    """Write the rows of `select` into a staging folder in `near`, one file per value of the SQL
    expression `bucket`; yield the file of each value (move them away); the folder goes at exit."""
    make_folder(near)
    staging = _temp(near, "buckets", _STAGING)
    try:
        con.execute(
            f"COPY (SELECT *, {bucket} AS _bucket FROM ({select})) TO {quote(str(staging))} "
            f"({_COPY}, PARTITION_BY (_bucket))"
        )
        files: dict[str, Path] = {}
        for sub in staging.iterdir() if staging.is_dir() else ():
            parts = sorted(sub.glob("*.parquet"))
            if len(parts) > 1:  # DuckDB may split a large bucket: keep one file per bucket
                merged = sub / "merged.parquet"
                con.execute(
                    f"COPY (SELECT * FROM read_parquet({sql_list(parts)})) TO {quote(str(merged))} ({_COPY})"
                )
                parts = [merged]
            files[unquote(sub.name.split("=", 1)[1])] = parts[0]
        yield files
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def write_buckets(
    con: duckdb.DuckDBPyConnection,
    select: str,
    bucket: str,
    folder: Path,
    *,
    only: Collection[str] | None,
    prefix: str = "",
) -> set[str]:
    """Store the rows of `select` as `folder/<prefix><bucket>.parquet`, one file per value of `bucket`.

    `only=None`: the whole rollup (every other file of `folder` is deleted; `_empty.parquet`, the
    columns and no rows, is rewritten). Otherwise just the buckets in `only` (one of them left
    without rows is deleted; rows of other buckets are not written). Returns the buckets written.
    """
    if only is not None:
        if not only:
            return set()
        select = f"SELECT * FROM ({select}) WHERE {bucket} IN ({', '.join(quote(b) for b in sorted(only))})"
    with _staged_buckets(con, select, bucket, folder.parent) as files:  # moving a file in makes `folder`
        for value, path in files.items():
            move_atomic(path, folder / f"{prefix}{value}.parquet")
        written = {prefix + value for value in files}
        if only is None:

            def no_rows(temp: Path) -> None:  # the columns alone: every glob of `folder` matches
                con.execute(f"COPY (SELECT * FROM ({select}) LIMIT 0) TO {quote(str(temp))} ({_COPY})")

            save_atomic(folder / EMPTY, no_rows)
            stale = {p.stem for p in folder.glob("*.parquet") if p.name != EMPTY} - written
        else:
            stale = {prefix + value for value in only} - written
    for name in stale:
        (folder / f"{name}.parquet").unlink(missing_ok=True)
    return set(files)


def write_named_buckets(
    con: duckdb.DuckDBPyConnection, select: str, bucket: str, targets: Mapping[str, Path], near: Path
) -> None:
    """Store the rows of `select` as one file per value of `bucket`, each at its path in `targets`
    (replaced atomically), staged in `near`."""
    with _staged_buckets(con, select, bucket, near) as files:
        for value, path in files.items():
            move_atomic(path, targets[value])


def remove_staging(folder: Path) -> None:
    """Delete staging folders left in `folder` (and below) by a writer that was killed."""
    if folder.is_dir():
        for staging in folder.rglob(f"*{_STAGING}"):
            shutil.rmtree(staging, ignore_errors=True)
