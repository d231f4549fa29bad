"""DuckDB over the lake: the views analysts query, in a notebook or the DuckDB CLI.

    con = connect()                     # in memory, reads only the data folder; never blocks a sync
    con.sql("SELECT * FROM network_performance WHERE window_start = '2026-02-01'").pl()

`VIEWS` maps each view to what one row is. `refresh_rollups` and `write_catalog` run at the end of
every sync: the first keeps the expensive views fast (rewriting only what the sync changed), the
second writes `commerce.duckdb` when its views changed. `plan_rollups` says what a refresh would do
and why, writing nothing; `rebuild_rollups` rebuilds them whole.

Names load on first use (PEP 562): `db.guard`, which checks a query with DuckDB's parser before
anything runs, loads without polars and pyarrow, so `sql` says a refused statement at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .catalog import CATALOG_FILE, after_sync, catalog_problem, ensure_catalog, write_catalog
    from .connection import connect, ensure_lake, lake_is_empty, query, stream
    from .plan import SitePlan, Step
    from .rollups import (
        SiteRefresh,
        fresh_rollups,
        plan_rollups,
        rebuild_rollups,
        recompute_rollups,
        refresh_rollups,
        verify_rollups,
    )
    from .views import VIEWS

__all__ = [
    "CATALOG_FILE",
    "VIEWS",
    "SitePlan",
    "SiteRefresh",
    "Step",
    "after_sync",
    "catalog_problem",
    "connect",
    "ensure_catalog",
    "ensure_lake",
    "fresh_rollups",
    "lake_is_empty",
    "plan_rollups",
    "query",
    "rebuild_rollups",
    "recompute_rollups",
    "refresh_rollups",
    "stream",
    "verify_rollups",
    "write_catalog",
]

_HOMES = {
    "CATALOG_FILE": "catalog",
    "after_sync": "catalog",
    "catalog_problem": "catalog",
    "ensure_catalog": "catalog",
    "write_catalog": "catalog",
    "connect": "connection",
    "ensure_lake": "connection",
    "lake_is_empty": "connection",
    "query": "connection",
    "stream": "connection",
    "SitePlan": "plan",
    "Step": "plan",
    "SiteRefresh": "rollups",
    "fresh_rollups": "rollups",
    "plan_rollups": "rollups",
    "rebuild_rollups": "rollups",
    "recompute_rollups": "rollups",
    "refresh_rollups": "rollups",
    "verify_rollups": "rollups",
    "VIEWS": "views",
}
__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
