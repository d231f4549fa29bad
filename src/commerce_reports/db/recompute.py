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
from collections.abc import Sequence
from pathlib import Path

import duckdb

from .buckets import staging
from .build import SiteBuild, build_connection
from .listing import Listing
from .snapshot import rollup_read_sql
from .state import NOTHING, SitePlaces, site_places
from .views import VIEW_LIST

__all__ = ["recomputed_differences", "rollup_differences"]


def recomputed_differences(places: SitePlaces, readable: Listing) -> dict[str, str]:
    """Compute the rollups of one site (`places`) again from its `readable` lake files, whole, in a
    staging folder beside the stored ones (removed after), and return how each rollup differs
    from its recomputation (`rollup_differences`; empty: every one equals it)."""
    with staging(places.folder.parent, "recompute") as scratch:
        aside = dataclasses.replace(
            site_places(scratch, places.site), lake=places.lake, digests=places.digests
        )
        with build_connection(aside, full=True) as con:
            SiteBuild(con, aside, readable, NOTHING).full()
            return rollup_differences(con, places.data_dir, scratch, places.site)


def rollup_differences(con: duckdb.DuckDBPyConnection, left: Path, right: Path, site: str) -> dict[str, str]:
    """How the rollups of `site` in one data folder (`left`) differ from those in another (`right`),
    by rollup: the rows found on one side only, and what differs in them (keys on one side only,
    the columns whose values differ where the keys match). Money exactly (DECIMAL: stored + new -
    old adds up to the digit), the ratios (DOUBLE) to 6 decimals (an update adds and subtracts
    what a whole build sums once). Empty: every rollup the same."""
    found = {}
    for view in VIEW_LIST:
        if view.rollup is None:
            continue
        a, b = (rollup_read_sql(folder, [site], view) for folder in (left, right))
        described = con.execute(f"DESCRIBE {a}").fetchall()
        doubles = [str(name) for name, kind, *_ in described if kind == "DOUBLE"]
        rounded = ", ".join(f"round({c}, 6) AS {c}" for c in doubles)
        a, b = (f"SELECT * REPLACE ({rounded}) FROM ({sql})" if doubles else sql for sql in (a, b))
        ((rows,),) = con.execute(
            f"SELECT count(*) FROM ((({a}) EXCEPT ALL ({b})) UNION ALL (({b}) EXCEPT ALL ({a})))"
        ).fetchall()
        if rows:
            columns = [str(name) for name, *_ in described]
            what = _what_differs(con, a, b, view.rollup.keys, columns)
            found[view.name] = f"{rows} row{'s' if rows != 1 else ''}, {what}"
    return found


def _what_differs(
    con: duckdb.DuckDBPyConnection, a: str, b: str, keys: Sequence[str], columns: Sequence[str]
) -> str:
    """What differs between two versions of a rollup (`a`, `b`, SELECTs of the same columns): how
    many keys only one side holds, and the columns whose values differ where both hold a key."""
    on = " AND ".join(f"x.{k} IS NOT DISTINCT FROM y.{k}" for k in keys)
    (alone,) = con.execute(
        f"SELECT (SELECT count(*) FROM ({a}) x ANTI JOIN ({b}) y ON {on}) "
        f"+ (SELECT count(*) FROM ({b}) x ANTI JOIN ({a}) y ON {on})"
    ).fetchall()[0]
    others = [c for c in columns if c not in keys]
    counts = ", ".join(f"count(*) FILTER (WHERE x.{c} IS DISTINCT FROM y.{c})" for c in others)
    ((*differing,),) = con.execute(f"SELECT {counts} FROM ({a}) x JOIN ({b}) y ON {on}").fetchall()
    said = [f"{alone} key{'s' if alone != 1 else ''} on one side only"] if alone else []
    named = [c for c, n in zip(others, differing, strict=True) if n]
    if named:
        said.append(f"{', '.join(named)} {'differs' if len(named) == 1 else 'differ'}")
    return ", ".join(said) or "the same keys"
