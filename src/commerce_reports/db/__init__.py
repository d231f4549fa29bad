"""DuckDB over the lake: the views analysts query, in a notebook or the DuckDB CLI.

    con = connect()                     # in memory, reads only the data folder; never blocks a sync
    con.sql("SELECT * FROM network_performance WHERE window_start = '2026-02-01'").pl()

`VIEWS` maps each view to what one row is. `refresh_rollups` and `write_catalog` run at the end of
every sync: the first keeps the expensive views fast (rewriting only what the sync changed), the
second writes `commerce.duckdb` when its views changed. `rebuild_rollups` rebuilds them whole.
"""

from __future__ import annotations

from .catalog import CATALOG_FILE, after_sync, catalog_problem, ensure_catalog, write_catalog
from .connection import connect, ensure_lake, lake_is_empty, query, stream
from .rollups import SiteRefresh, fresh_rollups, rebuild_rollups, refresh_rollups, verify_rollups
from .views import VIEWS

__all__ = [
    "CATALOG_FILE",
    "VIEWS",
    "SiteRefresh",
    "after_sync",
    "catalog_problem",
    "connect",
    "ensure_catalog",
    "ensure_lake",
    "fresh_rollups",
    "lake_is_empty",
    "query",
    "rebuild_rollups",
    "refresh_rollups",
    "stream",
    "verify_rollups",
    "write_catalog",
]
