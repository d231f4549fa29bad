"""Rollups: the expensive views of one site, computed once per sync and stored as Parquet.

The current state of 10 million transactions needs the latest version of each commission id over
every stored day: seconds, not milliseconds. `refresh_rollups` (the sync calls it at its end) writes
each view marked `rollup` to `<data_dir>/rollups/site=<site>/<view>.parquet`, sorted by its date
column so that a date filter skips most row groups, then `state.json` last with a fingerprint of
the lake files it read (path, size, mtime of every partition) and of the views' SQL.

A rollup counts only while its fingerprint matches the lake: `fresh_rollups` recomputes the
fingerprints (a directory walk: milliseconds), and a stale or missing site is read live from the
lake files instead (correct, slower). Files are replaced atomically; an open connection reading a
rollup sees the old file or the new one.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

import duckdb

from .. import locate
from ..contract import DATASETS, PART_FILE, dataset_schema, site_root
from ..files import save_atomic
from .sources import lake_sites, quote, source_sql
from .views import VIEW_LIST, View, render

__all__ = ["STATE_FILE", "fresh_rollups", "refresh_rollups", "rollup_path", "rollups_root"]

STATE_FILE = "state.json"
_CODE = hashlib.sha256(
    "\n".join(
        [*(v.sql + v.order_by for v in VIEW_LIST), *(str(dataset_schema(d)) for d in DATASETS)]
    ).encode()
).hexdigest()  # a change to any view or stored schema makes every rollup stale


# A scheduled sync must not take the machine's memory: past this, DuckDB spills to disk.
_ROLLUP_LIMITS: dict[str, str | bool | int | float | list[str]] = {
    "memory_limit": "3GB",
    "preserve_insertion_order": False,
}


def rollups_root(data_dir: Path) -> Path:
    return Path(data_dir) / "rollups"


def rollup_path(data_dir: Path, site: str, view: str) -> Path:
    return rollups_root(data_dir) / f"site={site}" / f"{view}.parquet"


def _fingerprint(data_dir: Path, site: str) -> str:
    """A digest of every partition file of `site` (path, size, mtime) and of the views' code."""
    digest = hashlib.sha256(_CODE.encode())
    root = site_root(data_dir, site)
    files = []
    for folder, _, names in os.walk(root):
        if PART_FILE in names:
            stat = os.stat(os.path.join(folder, PART_FILE))
            files.append(f"{os.path.relpath(folder, root)}|{stat.st_size}|{stat.st_mtime_ns}")
    for line in sorted(files):
        digest.update(line.encode() + b"\n")
    return digest.hexdigest()


def _stored_fingerprint(data_dir: Path, site: str) -> str | None:
    try:
        state = json.loads((rollups_root(data_dir) / f"site={site}" / STATE_FILE).read_text())
    except (OSError, ValueError):
        return None
    value = state.get("fingerprint") if isinstance(state, dict) else None
    return value if isinstance(value, str) else None


def fresh_rollups(data_dir: Path) -> list[str]:
    """The sites of the lake whose rollups match their files exactly."""
    return [
        site
        for site in lake_sites(data_dir)
        if _stored_fingerprint(data_dir, site) == _fingerprint(data_dir, site)
    ]


def _replace_atomically(con: duckdb.DuckDBPyConnection, select: str, target: Path) -> None:
    def copy(temp: Path) -> None:
        con.execute(
            f"COPY ({select}) TO {quote(str(temp))} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 100000)"
        )

    save_atomic(target, copy)


def _build_view(
    con: duckdb.DuckDBPyConnection, view: View, data_dir: Path, site: str, sources: dict[str, str]
) -> None:
    """Define `build.<view>` for one site: from its new rollup file, or over the build schema."""
    if view.rollup:
        target = rollup_path(data_dir, site, view.name)
        select = f"SELECT * FROM ({render(view, 'build', sources)}) ORDER BY {view.order_by}"
        _replace_atomically(con, select, target)
        body = f"SELECT * FROM read_parquet({quote(str(target.resolve()))})"
    elif "{src}" in view.sql:
        body = render(view, "build", sources)
    else:  # reads the lake itself: only this site's partitions (the filter prunes the others)
        body = f"SELECT * FROM ({render(view, 'build', sources)}) WHERE site = {quote(site)}"
    con.execute(f"CREATE OR REPLACE VIEW build.{view.name} AS {body}")


def refresh_rollups(
    data_dir: Path | str | None = None, sites: Iterable[str] | None = None, *, force: bool = False
) -> list[str]:
    """Rewrite the rollups of `sites` (default: every site of the lake) that are stale; return them.

    Safe beside readers: each file is replaced atomically and `state.json` is written last. The
    fingerprint is taken before reading, so a sync writing meanwhile leaves the rollup stale, not wrong.
    """
    data_dir = locate.data_dir(data_dir)
    chosen = list(sites) if sites is not None else lake_sites(data_dir)
    refreshed = []
    for site in chosen:
        fingerprint = _fingerprint(data_dir, site)
        if not force and _stored_fingerprint(data_dir, site) == fingerprint:
            continue
        folder = rollups_root(data_dir) / f"site={site}"
        folder.mkdir(parents=True, exist_ok=True)
        sources: dict[str, str] = {d: source_sql(data_dir, d) for d in DATASETS}
        with duckdb.connect(config=_ROLLUP_LIMITS | {"temp_directory": str(folder / ".spill")}) as con:
            con.execute("SET enable_progress_bar = false")
            con.execute("CREATE SCHEMA build")
            for view in VIEW_LIST:
                _build_view(con, view, data_dir, site, sources)
        save_atomic(folder / STATE_FILE, json.dumps({"fingerprint": fingerprint}))
        refreshed.append(site)
    return refreshed
