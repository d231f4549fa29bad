"""`register_views`: the toolkit's views as temporary views of a SparkSession, over the lake's files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..contract import lake_root
from ..errors import ConfigurationError, LakeError, ValidationError

__all__ = ["INSTALL_HINT", "register_views"]

INSTALL_HINT = (
    "pip install 'commerce-reports[spark]' (pyspark and sqlglot); Spark also needs a Java runtime, "
    "17 or later (e.g. Debian's openjdk-17-jre-headless)"
)


def _session_class() -> Any:
    """pyspark's SparkSession, or a ConfigurationError saying how to install the Spark extra."""
    try:
        import sqlglot  # noqa: F401  (the views are translated by it)
        from pyspark.sql import SparkSession
    except ImportError as error:
        missing = error.name or "pyspark"
        raise ConfigurationError(
            f"the Spark views need {missing}, which is not installed: {INSTALL_HINT}"
        ) from None
    return SparkSession


def _lake_folder(data_dir: Path | str) -> Path:
    """`data_dir` as a Path, or a toolkit error when it is not a data folder holding a lake."""
    if not isinstance(data_dir, str | Path):
        raise ValidationError(
            "data_dir", f"{data_dir!r} is not a path", "give the data folder as a str or Path"
        )
    folder = Path(data_dir)
    if not folder.is_dir():
        raise LakeError(
            f"the data folder {folder} does not exist: give the folder that `commerce-reports sync` fills"
        )
    if not lake_root(folder).is_dir():
        raise LakeError(
            f"{folder} holds no lake (no {lake_root(folder).name}/ folder): give the data folder of a "
            "synced lake, or run `commerce-reports sync` with COMMERCE_REPORTS_DATA_DIR set to it"
        )
    return folder


def register_views(spark: Any, data_dir: Path | str) -> list[str]:
    """Create every view of the toolkit (`commerce_reports.db.VIEWS`) as a temporary view of
    `spark` over the lake in `data_dir`, and return their names.

    The definitions are the DuckDB ones translated by sqlglot, so both engines give the same
    answers. Rollups are a DuckDB speed-up: on Spark every view computes from the lake's files.
    The files are those the DuckDB views read now: the lake as its last writer published it (see
    `commerce_reports.spark.sources`), one whole state even during a sync, which the session keeps
    reading until this is called again: call it again after a sync to read what it stored, and
    when a query fails on a file that no longer exists (see `commerce_reports.spark`). The
    lake's datasets are also registered, as `lake_transactions`, `lake_networks` and
    `lake_merchandise`.
    """
    session = _session_class()
    folder = _lake_folder(data_dir)
    if not isinstance(spark, session):
        raise ValidationError(
            "spark",
            f"{type(spark).__name__} is not a SparkSession",
            "give a pyspark.sql.SparkSession, e.g. SparkSession.builder.getOrCreate()",
        )

    from pyspark.errors import PySparkException

    from ..db.views import VIEW_LIST
    from .sources import current_files, register_sources
    from .transpile import spark_sql

    lake = current_files(folder)
    try:
        register_sources(spark, lake)
    except PySparkException as error:
        raise LakeError(
            f"Spark could not read the lake at {lake_root(folder)}: {error}; if a sync or `verify` "
            f"moved its files meanwhile, call register_views(spark, {str(folder)!r}) again"
        ) from None
    for view in VIEW_LIST:
        try:
            spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW {view.name} AS {spark_sql(view, lake.coverage)}")
        except PySparkException as error:
            raise LakeError(f"Spark could not create the view {view.name}: {error}") from None
    return [view.name for view in VIEW_LIST]
