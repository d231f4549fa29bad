"""The lake's Parquet files as SQL: hive keys from the path, old files' missing columns as NULL.

A dataset reads with one `read_parquet` over a glob of `part.parquet` files (a writer's
`.part.<pid>.<hex>.tmp` never matches) or over an explicit list of them (when some file is left
out), and `UNION ALL BY NAME` with a typed zero-row relation, so that every column exists with its
type even when no file has it yet. A dataset without any file is that typed relation alone: DuckDB
refuses a glob matching nothing, and an empty lake must still give typed, empty views.

Files written by an older version hold some columns with an older type (money as a binary float
before schema version 3): those columns are cast to today's type (contract.FORMER_TYPES), so that
every view reads DECIMAL money whatever the files. Beside newer files, DuckDB first reads both as
DOUBLE (its common type), which keeps every amount of less than 15 digits exactly.

`union_by_name` only when the files' columns differ: it reads every footer when the query is bound
and the data when it runs, so a file replaced in between by a sync can fail the query; without it
each file is read once, from one open handle. `file_schemas` tells which case applies.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import duckdb

from ..config import current_settings
from ..contract import (
    DATASETS,
    FORMER_TYPES,
    HIVE_KEYS,
    PART_FILE,
    PARTITION_GLOBS,
    dataset_schema,
    lake_root,
    sql_type,
)
from ..errors import LakeError, ValidationError
from ..locate import check_folder_path
from .listing import Listing, dataset_of

__all__ = [
    "MIXED",
    "UNBOUND",
    "Pattern",
    "data_folder",
    "dataset_schemas",
    "file_schemas",
    "part_glob",
    "pattern",
    "quote",
    "read_sql",
    "read_stored",
    "resolve_data_dir",
    "sql_list",
    "typed_empty",
]

MIXED = "mixed"  # the schema signature of files whose columns differ
# Binding a view reads the footers of every file below it (~2.5 ms a view): DuckDB 2 can bind a view
# where it is read, not where it is made (`CREATE VIEW name{UNBOUND} AS ...`).
UNBOUND = " WITH (DEFER_BINDING)" if int(duckdb.__version__.split(".", 1)[0]) >= 2 else ""


def quote(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


class Pattern(str):
    """A DuckDB glob of files (`pattern`): where a `Path` is read as the one file it names."""


_LITERAL = str.maketrans({"[": "[[]", "*": "[*]", "?": "[?]"})


def _literal(path: Path) -> str:
    """`path` as DuckDB's readers take it for the file or folder it names: its `*`, `?` and `[`
    escaped (DuckDB reads them in any path as a pattern)."""
    return str(path).translate(_LITERAL)


def pattern(folder: Path, tail: str) -> Pattern:
    """The files below `folder` that `tail` matches (`*.parquet`, `site=*/.../part.parquet`), with
    `folder` itself read as named: a data folder named `shop?` would otherwise also read the files
    of `shop1`, and one named `a [b]` would find none."""
    return Pattern(f"{_literal(folder)}/{tail}")


def sql_list(paths: Sequence[Path | Pattern]) -> str:
    """A SQL list of files for DuckDB's readers: each `Path` read as the file it names, each
    `Pattern` as the glob it is."""
    return "[" + ", ".join(quote(p if isinstance(p, Pattern) else _literal(p)) for p in paths) + "]"


def read_stored(
    paths: Sequence[Path | Pattern], *, filename: bool = False, union_by_name: bool = False
) -> str:
    """SQL: `read_parquet` over files `paths` (or globs) as they hold their columns, nothing more:
    this package's rollup, index and staged files, or columns of partition files that need no hive
    key. DuckDB otherwise adds a column for each `key=value` folder above a file, typed by how its
    value looks, over the file's own: below `site=epoch/` a site column would read as the date
    1970-01-01, below `site=2024/` as a number. `filename`: with the column of each row's file."""
    chosen = {"filename": filename, "union_by_name": union_by_name}
    options = "".join(f", {name} = true" for name, on in chosen.items() if on)
    return f"read_parquet({sql_list(paths)}, hive_partitioning = false{options})"


def _check(dataset: str) -> None:
    if dataset not in DATASETS:
        raise ValidationError("dataset", f"{dataset!r} is not a dataset", f"use one of {', '.join(DATASETS)}")


def typed_empty(dataset: str) -> str:
    """A zero-row SELECT with every column of `dataset` (hive keys included), typed."""
    _check(dataset)
    columns = {**HIVE_KEYS[dataset], **{f.name: sql_type(f.type) for f in dataset_schema(dataset)}}
    return "SELECT " + ", ".join(f'NULL::{t} AS "{c}"' for c, t in columns.items()) + " WHERE false"


def read_sql(dataset: str, paths: Sequence[Path | Pattern], *, by_name: bool) -> str:
    """A SELECT of the partition files (or globs) `paths` of `dataset` with their hive keys, typed
    even when `paths` is empty. `by_name`: the files' columns differ (see `file_schemas`)."""
    empty = typed_empty(dataset)
    if not paths:
        return empty
    types = "{" + ", ".join(f"{quote(k)}: {quote(v)}" for k, v in HIVE_KEYS[dataset].items()) + "}"
    files = (
        f"SELECT * FROM read_parquet({sql_list(paths)}, hive_partitioning = true, "
        f"union_by_name = {'true' if by_name else 'false'}, hive_types = {types}) UNION ALL BY NAME {empty}"
    )
    return f"SELECT {_current_types(dataset)} FROM ({files})"


def _current_types(dataset: str) -> str:
    """The columns of `dataset`, those an older version stored with another type cast to today's."""
    columns = {**HIVE_KEYS[dataset], **{f.name: sql_type(f.type) for f in dataset_schema(dataset)}}
    return ", ".join(
        f'CAST("{c}" AS {t}) AS "{c}"' if c in FORMER_TYPES else f'"{c}"' for c, t in columns.items()
    )


def file_schemas(
    paths: Sequence[Path | Pattern], con: duckdb.DuckDBPyConnection | None = None
) -> dict[str, str]:
    """The schema signature of each file of `paths` (its column names and types), read from the
    footers (milliseconds per hundred files) through `con` (None: a connection of its own, which
    costs more than reading a few footers). Raises LakeError naming the problem when one cannot be
    read."""
    if not paths:
        return {}
    if con is None:
        with duckdb.connect() as own:
            return file_schemas(paths, own)
    try:
        rows = con.execute(
            "SELECT file_name, string_agg(name || ' ' || coalesce(type, ''), ',' ORDER BY name) "
            f"FROM parquet_schema({sql_list(paths)}) GROUP BY file_name"
        ).fetchall()
    except duckdb.Error as error:
        raise LakeError(f"a lake file could not be read: {error}") from None
    return {str(name): str(signature) for name, signature in rows}


def dataset_schemas(
    site_folder: Path,
    readable: Listing,
    known: Listing,
    previous: Mapping[str, str],
    con: duckdb.DuckDBPyConnection,
) -> dict[str, str]:
    """Each dataset's schema signature over the `readable` files of a site (MIXED when their
    columns differ). The footers of the files in `known` at the same version are not read again
    when their dataset had one signature then (`previous`); the others are read in one go, through
    `con` (the build's connection)."""
    to_read: dict[str, list[str]] = {}
    found: dict[str, set[str]] = {}
    for dataset in DATASETS:
        files = [r for r in readable if dataset_of(r) == dataset]
        if not files:
            continue
        before = previous.get(dataset)
        unchanged = [r for r in files if known.get(r) == readable[r]]
        if before is None or before == MIXED or not unchanged:
            to_read[dataset], found[dataset] = files, set()
        else:
            to_read[dataset], found[dataset] = [r for r in files if r not in unchanged], {before}
    signatures = file_schemas([site_folder / r for files in to_read.values() for r in files], con)
    for name, files in to_read.items():
        found[name] |= {signatures[str(site_folder / r)] for r in files}
    return {name: kinds.pop() if len(kinds) == 1 else MIXED for name, kinds in found.items()}


def part_glob(data_dir: Path, dataset: str, site: str = "*") -> Pattern:
    """The glob of every partition file of `dataset` (of one site, or of all)."""
    _check(dataset)
    return pattern(lake_root(data_dir), f"site={site}/{PARTITION_GLOBS[dataset]}/{PART_FILE}")


def resolve_data_dir(data_dir: Path | str | None) -> Path:
    """`data_dir` as an absolute path, or the configured one when None: the db's public functions
    (`connect()`, `write_catalog()`, ...) are entry points when called without a folder, and take
    it from the process's settings (`config.current_settings`, resolved once)."""
    if data_dir is None:
        data_dir = current_settings().data_dir
    if not isinstance(data_dir, str | Path) or not str(data_dir):
        raise ValidationError("data_dir", f"{data_dir!r} is not a folder path", "give a str or Path, or None")
    try:
        return check_folder_path(Path(data_dir).expanduser().resolve())
    except (ValueError, OSError) as error:  # the system refused to resolve it (a loop of links, ...)
        raise ValidationError(
            "data_dir", f"{str(data_dir)[:80]!r} cannot be used ({error})", "give a folder path"
        ) from None


def data_folder(data_dir: Path | str | None) -> Path:
    """The data folder an entry point works in (`resolve_data_dir`), once it is known to hold a
    lake, or to be an empty folder (a lake not synced yet: its views are typed and empty); else a
    LakeError saying what it is and what to give instead (a reader's views over a mistyped or
    foreign folder would look like a lake with no sales)."""
    folder = resolve_data_dir(data_dir)
    try:
        if not folder.exists():
            raise LakeError(
                f"there is no folder {folder}: give the data folder of a lake (where `commerce-reports "
                "sync` stores it; `commerce-reports status` says which one it uses), or sync first"
            )
        if not folder.is_dir():
            raise LakeError(f"{folder} is a file, not a data folder: give the folder that holds lake/")
        if not lake_root(folder).is_dir() and any(folder.iterdir()):
            raise LakeError(
                f"{folder} holds no lake (no lake/ folder in it): run `commerce-reports sync` "
                "(cr.sync() in Python) first, or give the data folder that holds one"
            )
    except OSError as error:
        raise LakeError(f"the data folder {folder} cannot be read: {error.strerror or error}") from None
    return folder
