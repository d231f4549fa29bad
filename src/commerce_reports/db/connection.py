"""Open the lake in DuckDB: the views installed on a connection, queries with clear errors.

Two schemas. `live` computes every view from the lake's Parquet files at each query. `main` (the
default search path) is what users query: the same views, except that those kept as rollups read
the rollup files of every site whose rollups are fresh, and `live` for the others.

A connection is in memory and only reads files: opening it takes no lock on anything a sync writes.
Which files exist is looked at when it opens: a dataset with no file yet reads as typed and empty
until the next `connect`, while files replaced or added in partitions already present are read as
they are at each query.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl

from .. import locate
from ..config import Settings
from ..contract import DATASETS, lake_root
from ..errors import LakeError
from .rollups import fresh_rollups, refresh_rollups, rollup_path
from .sources import has_files, lake_sites, quote, source_sql
from .views import VIEW_LIST, VIEWS, View, render

__all__ = ["connect", "ensure_lake", "install_views", "lake_is_empty", "query", "resolve_data_dir"]


def resolve_data_dir(data_dir: Path | str | None) -> Path:
    """`data_dir`, or the configured one (see `commerce_reports.locate`)."""
    return Settings.from_env().data_dir if data_dir is None else locate.data_dir(data_dir)


def lake_is_empty(data_dir: Path | str | None = None) -> bool:
    """True when the lake holds no partition of any dataset."""
    folder = resolve_data_dir(data_dir)
    return not any(has_files(folder, dataset) for dataset in DATASETS)


def ensure_lake(data_dir: Path | str | None = None) -> Path:
    """The data folder, or a LakeError saying how to fill it when its lake is empty."""
    folder = resolve_data_dir(data_dir)
    if lake_is_empty(folder):
        raise LakeError(f"the lake at {lake_root(folder)} is empty: run `commerce-reports sync` first")
    return folder


def _main_sql(view: View, data_dir: Path, fresh: list[str], stale: list[str], sources: dict[str, str]) -> str:
    if not view.rollup:
        return render(view, "main", sources)
    if not fresh:
        return f"SELECT * FROM live.{view.name}"
    files = ", ".join(quote(str(rollup_path(data_dir, site, view.name).resolve())) for site in fresh)
    sql = f"SELECT * FROM read_parquet([{files}])"
    if stale:
        sites = ", ".join(quote(site) for site in stale)
        sql += f" UNION ALL BY NAME SELECT * FROM live.{view.name} WHERE site IN ({sites})"
    return sql


def install_views(con: duckdb.DuckDBPyConnection, data_dir: Path) -> list[str]:
    """Create the `live` and `main` views over the lake in `data_dir`; return the sites on rollups."""
    sources: dict[str, str] = {dataset: source_sql(data_dir, dataset) for dataset in DATASETS}
    fresh = fresh_rollups(data_dir)
    stale = [site for site in lake_sites(data_dir) if site not in fresh]
    con.execute("SET enable_progress_bar = false")
    con.execute("CREATE SCHEMA IF NOT EXISTS live")
    for view in VIEW_LIST:
        live_comment = f"{view.comment} Computed from the lake files at every query."
        con.execute(f"CREATE OR REPLACE VIEW live.{view.name} AS {render(view, 'live', sources)}")
        con.execute(f"COMMENT ON VIEW live.{view.name} IS {quote(live_comment)}")
        con.execute(
            f"CREATE OR REPLACE VIEW main.{view.name} AS {_main_sql(view, data_dir, fresh, stale, sources)}"
        )
        con.execute(f"COMMENT ON VIEW main.{view.name} IS {quote(view.comment)}")
    return fresh


def connect(data_dir: Path | str | None = None, *, read_only: bool = True) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with the views over the lake (`VIEWS` lists them).

    Results come back as you like: `con.sql(q).pl()`, `.arrow()`, `.df()`. With
    `read_only=False` stale rollups are first rewritten (a write to `<data_dir>/rollups`), so the
    views answer fast; by default nothing is written and stale sites are read from the lake files.
    """
    folder = resolve_data_dir(data_dir)
    if not read_only:
        refresh_rollups(folder)
    con = duckdb.connect()
    try:
        install_views(con, folder)
    except duckdb.Error as error:
        con.close()
        raise LakeError(f"the lake at {lake_root(folder)} could not be opened: {error}") from None
    return con


def query(con: duckdb.DuckDBPyConnection, sql: str) -> pl.DataFrame:
    """The result of `sql` as polars, or a LakeError saying what is wrong (and, for an unknown
    name, which views exist)."""
    try:
        relation = con.sql(sql)
        frame: pl.DataFrame = relation.pl() if relation is not None else pl.DataFrame()
        return frame
    except duckdb.CatalogException as error:
        raise LakeError(
            f"{error}\nthe views are: {', '.join(VIEWS)} (`commerce-reports sql --views` describes them)"
        ) from None
    except duckdb.Error as error:
        raise LakeError(f"the query failed: {error}") from None
