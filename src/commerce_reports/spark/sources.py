"""The lake's Parquet files as Spark DataFrames: the files DuckDB reads, with its columns and types.

Which files: those the DuckDB views read at the moment of the call (`current_files`), the
published generation of the lake (`db/published.py`): hard links to the files as a writer left them
when it finished, never rewritten in place. So a registration sees one whole state of the lake even
while a sync stores files, and a session keeps reading that state, whatever later syncs do, until
`register_views` is called again (or the generation is pruned, a day after two newer ones: then a
query fails on a missing file). With no generation to trust (none published yet, a folder that
cannot hold hard links, or one no longer what its seal says: see `published_problems`), the lake's
own files are read, as the DuckDB views read them then: those of `db.snapshot.take_snapshot`, what
no manifest vouches for and what is unreadable left out on both engines (with the same warning).

Spark infers hive keys only below the folder it reads, and a dataset's partitions sit below a
site folder and a plain `transactions/` (or `networks/`, `merchandise/`) folder: so each site's
files are read with that folder as their base (Spark decodes and types `by`, `day` / `slice`,
`grain`, `start` from the folder names), `site` is added as a literal, and the sites' frames are
unioned. A filter on `site` skips whole sites, one on `day` or `start` skips folders, as in DuckDB.

Files written by an older version may lack a column or hold an older type (clicks were integers
before schema version 2). Spark reads a file only with the types it holds, so a site's files are
grouped by the columns in their footers, each group is read with its own types, then cast to the
current schema, missing columns as NULL: what DuckDB's `union_by_name` does. A dataset with no file
yet is a typed, empty frame.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..contract import DATASETS, HIVE_KEYS, dataset_schema, site_root, sql_type
from ..db.coverage import SiteCoverage
from ..db.listing import dataset_of
from ..db.published import generation_files, published_reading
from ..db.snapshot import take_snapshot
from ..errors import CommerceReportsError, LakeError

__all__ = ["SOURCE_VIEWS", "LakeFiles", "current_files", "read_dataset", "register_sources", "spark_type"]

SOURCE_VIEWS: dict[str, str] = {dataset: f"lake_{dataset}" for dataset in DATASETS}
_LISTING = "spark.sql.sources.parallelPartitionDiscovery.threshold"
# Spark's own option (DataSource.GLOB_PATHS_KEY, its file streams' since 3.1): the paths a read is
# given are files, not Hadoop globs, whose escapes the `basePath` option does not read and whose
# globbing cannot take a `:` in a folder's name
_NO_GLOB = ("__globPaths__", "false")


def spark_type(duckdb_type: str) -> str:
    """The Spark SQL type of a DuckDB type (one Arrow-to-SQL map, translated by sqlglot)."""
    from sqlglot import exp

    return exp.DataType.build(duckdb_type, dialect="duckdb").sql(dialect="spark")


def _spark_types(schema: pa.Schema, where: Path | str) -> dict[str, str]:
    try:
        return {f.name: spark_type(sql_type(f.type)) for f in schema}
    except CommerceReportsError as error:
        raise LakeError(f"{where} holds a column the lake does not know how to read: {error}") from None


def _columns(dataset: str) -> dict[str, str]:
    """Column -> Spark type of a dataset's source: the hive keys, then the stored columns."""
    keys = {key: spark_type(duck) for key, duck in HIVE_KEYS[dataset].items()}
    return {**keys, **_spark_types(dataset_schema(dataset), "the current schema")}


def _ddl(columns: dict[str, str]) -> str:
    return ", ".join(f"`{name}` {type_}" for name, type_ in columns.items())


def _uri(path: Path) -> str:
    """`path` as a file URI, read as named: Spark reads a `basePath` so, and the files once
    `_NO_GLOB` is set."""
    return "file://" + path.as_posix()


def _file_groups(files: list[Path]) -> list[tuple[pa.Schema, list[Path]]]:
    """`files` grouped by the columns (names and types) their footers hold."""
    groups: dict[tuple[tuple[str, str], ...], tuple[pa.Schema, list[Path]]] = {}
    for path in files:
        try:
            schema = pq.read_schema(path).remove_metadata()
        except (OSError, pa.ArrowInvalid) as error:
            raise LakeError(
                f"{path} is not a readable Parquet file ({error}): run `commerce-reports verify`"
            ) from None
        signature = tuple((field.name, str(field.type)) for field in schema)
        groups.setdefault(signature, (schema, []))[1].append(path)
    return list(groups.values())


def _site_frames(
    spark: Any, site_dir: Path, dataset: str, files: list[Path], columns: dict[str, str]
) -> list[Any]:
    """One site's partition `files` of `dataset`, a frame per group of files, in the current schema."""
    from pyspark.sql import functions as F

    site = site_dir.name.removeprefix("site=")
    keys = {k: t for k, t in columns.items() if k in HIVE_KEYS[dataset] and k != "site"}
    frames = []
    for schema, group in _file_groups(files):
        held = {**keys, **_spark_types(schema, group[0])}
        frame = (
            spark.read.schema(_ddl(held))
            .option("basePath", _uri(site_dir / dataset))
            .option(*_NO_GLOB)
            .parquet(*(_uri(path) for path in group))
        )
        frames.append(
            frame.select(
                *(
                    F.lit(site).alias(name)
                    if name == "site"
                    else (F.col(f"`{name}`") if name in held else F.lit(None)).cast(type_).alias(name)
                    for name, type_ in columns.items()
                )
            )
        )
    return frames


@dataclass(frozen=True)
class LakeFiles:
    """The partition files of one state of the lake: `root` holds them in its `lake/` (a published
    generation, or the data folder itself), `sites` lists each site's by relpath below its folder;
    `coverage`, each site's periods as the DuckDB views judge them in that state (`complete`,
    `final`: a day whose file is left out is not held)."""

    root: Path
    sites: dict[str, list[str]]
    coverage: tuple[SiteCoverage, ...]


def current_files(data_dir: Path) -> LakeFiles:
    """The files the DuckDB views read now (`db.connection.current_reading`): the published
    generation's, or with none to trust, the lake's readable files (what nothing vouches for left
    out), with their coverage."""
    reading = published_reading(Path(data_dir).resolve())  # (Spark reads absolute paths only)
    if reading is None:
        snapshot = take_snapshot(data_dir)
        files = {site.site: site.readable_all() for site in snapshot.sites}
        return LakeFiles(snapshot.data_dir, files, snapshot.coverage)
    held = generation_files(reading.root)  # (its site folders hold only readable partition files)
    files = {}
    for site in (*reading.fresh_sites, *reading.stale_sites):
        prefix = f"{site_root(reading.root, site).relative_to(reading.root).as_posix()}/"
        files[site] = sorted(r.removeprefix(prefix) for r in held if r.startswith(prefix))
    return LakeFiles(reading.root, files, reading.coverage)


def read_dataset(spark: Any, lake: LakeFiles, dataset: str) -> Any:
    """The partitions of `dataset` in `lake` as one DataFrame, hive keys included, typed even when
    there are none."""
    from pyspark.sql import functions as F

    columns = _columns(dataset)
    frames = []
    for site, relpaths in lake.sites.items():
        site_dir = site_root(lake.root, site)
        files = [site_dir / relpath for relpath in relpaths if dataset_of(relpath) == dataset]
        frames += _site_frames(spark, site_dir, dataset, files, columns)
    if not frames:  # built in the JVM: no Python worker for an empty frame
        return spark.range(0).select(
            *(F.lit(None).cast(type_).alias(name) for name, type_ in columns.items())
        )
    return functools.reduce(lambda a, b: a.unionByName(b), frames)


def register_sources(spark: Any, lake: LakeFiles) -> list[str]:
    """Each dataset of `lake` as a temporary view (`SOURCE_VIEWS`) that the transpiled views read.

    The files are looked up by the driver while the frames are made: past a few dozen files Spark
    would otherwise run a listing job per read, which takes longer than the listing itself.
    """
    before = spark.conf.get(_LISTING)
    spark.conf.set(_LISTING, str(2**31 - 1))
    try:
        for dataset, name in SOURCE_VIEWS.items():
            read_dataset(spark, lake, dataset).createOrReplaceTempView(name)
    finally:
        spark.conf.set(_LISTING, before)
    return list(SOURCE_VIEWS.values())
