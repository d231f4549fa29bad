"""The lake's Parquet files as Spark DataFrames, with the columns and types DuckDB reads.

Spark infers hive keys only below the folder it reads, and a dataset's partitions sit below a
site folder and a plain `transactions/` (or `networks/`, `merchandise/`) folder: so each site's
dataset folder is read on its own (Spark decodes and types `by`, `day` / `slice`, `grain`, `start`
from the folder names; only `part.parquet` files, never a writer's hidden temporary file), `site`
is added as a literal, and the sites' frames are unioned. A filter on `site` skips whole sites,
one on `day` or `start` skips folders, as in DuckDB.

The schema is given, never inferred: files written before a column existed read it as NULL, and
a dataset with no file yet is a typed, empty frame.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

from ..db.sources import HIVE_KEYS, lake_sites, sql_type
from ..lake.layout import DATASETS, PART_FILE, lake_root
from ..lake.store import dataset_schema

__all__ = ["SOURCE_VIEWS", "read_dataset", "register_sources", "spark_type"]

SOURCE_VIEWS: dict[str, str] = {dataset: f"lake_{dataset}" for dataset in DATASETS}
_LISTING = "spark.sql.sources.parallelPartitionDiscovery.threshold"
_GLOB_SPECIAL = re.compile(r"([*?\[\]{}\\])")  # Hadoop glob syntax, escaped in the lake's own path


def spark_type(duckdb_type: str) -> str:
    """The Spark SQL type of a DuckDB type (one Arrow-to-SQL map, translated by sqlglot)."""
    from sqlglot import exp

    return exp.DataType.build(duckdb_type, dialect="duckdb").sql(dialect="spark")


def _columns(dataset: str, with_site: bool) -> dict[str, str]:
    """Column -> Spark type: the hive keys, then the stored columns."""
    keys = {k: t for k, t in HIVE_KEYS[dataset].items() if with_site or k != "site"}
    stored = {f.name: sql_type(f.type) for f in dataset_schema(dataset)}
    return {name: spark_type(duck) for name, duck in {**keys, **stored}.items()}


def _ddl(columns: dict[str, str]) -> str:
    return ", ".join(f"`{name}` {type_}" for name, type_ in columns.items())


def _folders(dataset: str) -> str:
    """The folders below `<site>/<dataset>/`: one per hive key but the site."""
    return "/".join(f"{key}=*" for key in HIVE_KEYS[dataset] if key != "site")


def _site_frame(spark: Any, base: Path, dataset: str, site: str) -> Any | None:
    """One site's partitions of `dataset`, or None when it has none."""
    from pyspark.sql import functions as F

    pattern = f"{_folders(dataset)}/{PART_FILE}"
    if next(base.glob(pattern), None) is None:
        return None
    frame = (
        spark.read.schema(_ddl(_columns(dataset, with_site=False)))
        .option("pathGlobFilter", PART_FILE)
        .parquet("file://" + _GLOB_SPECIAL.sub(r"\\\1", base.as_posix()))
    )
    return frame.withColumn("site", F.lit(site))


def read_dataset(spark: Any, data_dir: Path, dataset: str) -> Any:
    """Every stored partition of `dataset` as one DataFrame, hive keys included, typed even when empty."""
    columns = _columns(dataset, with_site=True)
    root = lake_root(data_dir).resolve()
    frames = [
        frame
        for site in lake_sites(data_dir)
        if (frame := _site_frame(spark, root / f"site={site}" / dataset, dataset, site)) is not None
    ]
    if not frames:
        return spark.createDataFrame([], schema=_ddl(columns))
    return functools.reduce(lambda a, b: a.unionByName(b), frames).select(*columns)


def register_sources(spark: Any, data_dir: Path) -> list[str]:
    """Each dataset as a temporary view (`SOURCE_VIEWS`) that the transpiled views read.

    The folders are listed by the driver while the frames are made: past a few dozen day folders
    Spark would otherwise run a listing job per site, which takes longer than the listing itself.
    """
    before = spark.conf.get(_LISTING)
    spark.conf.set(_LISTING, str(2**31 - 1))
    try:
        for dataset, name in SOURCE_VIEWS.items():
            read_dataset(spark, data_dir, dataset).createOrReplaceTempView(name)
    finally:
        spark.conf.set(_LISTING, before)
    return list(SOURCE_VIEWS.values())
