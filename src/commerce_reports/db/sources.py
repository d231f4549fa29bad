"""The lake's Parquet files as SQL: hive keys from the path, old files' missing columns as NULL.

Each dataset reads with one glob of `part.parquet` files (a writer's `.part.<pid>.<hex>.tmp` never
matches), `union_by_name` so files written before a column existed still read, and `UNION ALL BY
NAME` with a typed zero-row relation so every column exists with its type even when no file has it
yet. A dataset without any file is that typed relation alone: DuckDB refuses a glob matching
nothing, and an empty lake must still give typed, empty views.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import duckdb

from ..contract import DATASETS, HIVE_KEYS, PART_FILE, PARTITION_GLOBS, dataset_schema, lake_root, sql_type

__all__ = [
    "has_files",
    "lake_sites",
    "quote",
    "source_sql",
]


def quote(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _typed_empty(dataset: str) -> str:
    columns = {**HIVE_KEYS[dataset], **{f.name: sql_type(f.type) for f in dataset_schema(dataset)}}
    return "SELECT " + ", ".join(f'NULL::{t} AS "{c}"' for c, t in columns.items()) + " WHERE false"


def _part_files(root: Path, dataset: str) -> Iterator[Path]:
    return root.glob(f"site=*/{PARTITION_GLOBS[dataset]}/{PART_FILE}")


def has_files(data_dir: Path, dataset: str) -> bool:
    """Whether the lake holds at least one partition of `dataset`."""
    return next(_part_files(lake_root(data_dir), dataset), None) is not None


def _one_schema(glob: str) -> bool:
    """Whether every file matching `glob` has the same columns (reads the footers: milliseconds)."""
    with duckdb.connect() as con:
        row = con.execute(
            "SELECT count(DISTINCT columns) FROM (SELECT string_agg(name || ' ' || coalesce(type, ''), ',' "
            f"ORDER BY name) AS columns FROM parquet_schema({glob}) GROUP BY file_name)"
        ).fetchone()
    return row is not None and row[0] == 1


def source_sql(data_dir: Path, dataset: str) -> str:
    """A SELECT of every stored partition of `dataset` with its hive keys, typed even when empty.

    `union_by_name` only when the files' columns differ: it reads every footer when the query is
    bound and the data when it runs, so a file replaced in between by a sync can fail the query;
    without it each file is read once, from one open handle.
    """
    if dataset not in DATASETS:
        raise ValueError(f"unknown dataset {dataset!r}")
    empty = _typed_empty(dataset)
    if not has_files(data_dir, dataset):
        return empty
    root = lake_root(data_dir).resolve()
    glob = quote(f"{root}/site=*/{PARTITION_GLOBS[dataset]}/{PART_FILE}")
    types = "{" + ", ".join(f"{quote(k)}: {quote(v)}" for k, v in HIVE_KEYS[dataset].items()) + "}"
    by_name = "false" if _one_schema(glob) else "true"
    return (
        f"SELECT * FROM read_parquet({glob}, hive_partitioning = true, union_by_name = {by_name}, "
        f"hive_types = {types}) UNION ALL BY NAME {empty}"
    )


def lake_sites(data_dir: Path) -> list[str]:
    """Names of the sites with a folder in the lake, sorted."""
    root = lake_root(data_dir)
    if not root.is_dir():
        return []
    with os.scandir(root) as entries:
        return sorted(
            e.name.removeprefix("site=") for e in entries if e.is_dir() and e.name.startswith("site=")
        )
