"""Rollups held against the lake itself: each rollup computed again, whole, beside the stored one,
and the two compared row for row.

`verify` checks a rollup file against the digest its refresh recorded: a file changed by anything
else is found, but not one forged together with its record, nor one an update computed wrong (the
record then vouches for what was written). Only computing the rollups again from the lake files
says whether they hold what the lake does. That costs a full build and a comparison of every row
(80 s for a million transactions on a loaded 2-core machine, and the disk of a second copy of the
rollups), so `verify --deep` asks for it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import duckdb

from .buckets import staging
from .build import SiteBuild, build_connection
from .listing import Listing
from .snapshot import rollup_read_sql
from .state import NOTHING, SitePlaces, site_places
from .views import VIEW_LIST

__all__ = ["recomputed_differences", "rollup_differences"]


def recomputed_differences(places: SitePlaces, readable: Listing) -> dict[str, int]:
    """Compute the rollups of one site (`places`) again from its `readable` lake files, whole, in a
    staging folder beside the stored ones (removed after), and return the rows of each rollup
    found on one side only (empty: every rollup equals its recomputation)."""
    with staging(places.folder.parent, "recompute") as scratch:
        aside = dataclasses.replace(
            site_places(scratch, places.site), lake=places.lake, digests=places.digests
        )
        with build_connection(aside, full=True) as con:
            SiteBuild(con, aside, readable, NOTHING).full()
            return rollup_differences(con, places.data_dir, scratch, places.site)


def rollup_differences(con: duckdb.DuckDBPyConnection, left: Path, right: Path, site: str) -> dict[str, int]:
    """The rows of each rollup of `site` found in the rollups of one data folder only (`left`,
    `right`), by rollup: money exactly (DECIMAL: stored + new - old adds up to the digit), the
    ratios (DOUBLE) to 6 decimals (an update adds and subtracts what a whole build sums once)."""
    found = {}
    for view in VIEW_LIST:
        if not view.rollup:
            continue
        a, b = (rollup_read_sql(folder, [site], view) for folder in (left, right))
        doubles = [name for name, kind, *_ in con.execute(f"DESCRIBE {a}").fetchall() if kind == "DOUBLE"]
        rounded = ", ".join(f"round({c}, 6) AS {c}" for c in doubles)
        a, b = (f"SELECT * REPLACE ({rounded}) FROM ({sql})" if doubles else sql for sql in (a, b))
        ((rows,),) = con.execute(
            f"SELECT count(*) FROM ((({a}) EXCEPT ALL ({b})) UNION ALL (({b}) EXCEPT ALL ({a})))"
        ).fetchall()
        if rows:
            found[view.name] = int(rows)
    return found
