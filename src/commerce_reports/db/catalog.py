"""`commerce.duckdb`: a small DuckDB file holding the views, for the DuckDB CLI or any client.

It holds no data, only the view definitions, with absolute paths to the lake and rollup files, so
that it opens from any working folder (`duckdb -readonly /path/to/data/commerce.duckdb`). It is
written in the storage format of DuckDB 1.2, which every DuckDB since then reads (the Python
package may be newer than the CLI a user has).

It is rewritten only when its SQL changes: which sites read rollups, which datasets have files,
which files are left out as unreadable, or where the data folder is. A folder that was moved is
noticed by the next sync, `commerce-reports sql` or `commerce-reports catalog`, which rewrite it;
`catalog_problem` says what is wrong, for `status`. It is written beside, then renamed over the old
one: a reader that has it open keeps the old file.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Mapping
from pathlib import Path

import duckdb

from ..contract import PartitionKey
from ..errors import LakeError
from ..files import save_atomic
from .connection import install_views
from .rollups import refresh_rollups
from .snapshot import Snapshot, take_snapshot, view_sql
from .sources import quote, resolve_data_dir
from .state import rollups_root
from .views import VIEW_LIST

__all__ = [
    "CATALOG_FILE",
    "STORAGE_VERSION",
    "after_sync",
    "catalog_problem",
    "ensure_catalog",
    "write_catalog",
]

log = logging.getLogger(__name__)

CATALOG_FILE = "commerce.duckdb"
STORAGE_VERSION = "v1.2.0"  # the oldest DuckDB whose files the current CLI and Python both read
_RECORD = "catalog.json"  # beside the rollups: what the catalog was written from


def _digest(snapshot: Snapshot) -> str:
    text = "\n".join(view_sql(snapshot, schema, view) for view in VIEW_LIST for schema in ("live", "main"))
    return hashlib.sha256(f"{STORAGE_VERSION}\n{text}".encode()).hexdigest()


def _record(folder: Path) -> dict[str, object]:
    try:
        data = json.loads((rollups_root(folder) / _RECORD).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _stamp(path: Path) -> list[int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return [stat.st_size, stat.st_mtime_ns, stat.st_ino]


def write_catalog(data_dir: Path | str | None = None, *, force: bool = False) -> Path:
    """Write `<data_dir>/commerce.duckdb` with the views of `connect()`, atomically, when its SQL
    changed (or `force`); return its path. Call it after `refresh_rollups`."""
    folder = resolve_data_dir(data_dir)
    snapshot = take_snapshot(folder)
    target = folder / CATALOG_FILE
    digest = _digest(snapshot)
    record = _record(folder)
    if not force and record.get("digest") == digest and record.get("stamp") == _stamp(target):
        return target

    def write(temp: Path) -> None:
        with duckdb.connect() as con:
            con.execute(f"ATTACH {quote(str(temp))} AS catalog (STORAGE_VERSION '{STORAGE_VERSION}')")
            con.execute("USE catalog")
            install_views(con, snapshot)
            con.execute("USE memory")
            con.execute("DETACH catalog")

    try:
        save_atomic(target, write)
    except duckdb.Error as error:
        raise LakeError(f"could not write the catalog {target}: {error}") from None
    _save_record(folder, {"digest": digest, "root": str(folder), "stamp": _stamp(target)})
    return target


def _save_record(folder: Path, record: dict[str, object]) -> None:
    save_atomic(rollups_root(folder) / _RECORD, json.dumps(record))


def catalog_problem(data_dir: Path | str | None = None) -> str | None:
    """What is wrong with `<data_dir>/commerce.duckdb` and how to repair it, or None when it is
    current (or when the lake is empty and there is nothing to catalog yet)."""
    folder = resolve_data_dir(data_dir)
    snapshot = take_snapshot(folder)
    target = folder / CATALOG_FILE
    repair = "`commerce-reports catalog` rewrites it (so does the next sync or `commerce-reports sql`)"
    if not target.exists():
        if not any(site.listing for site in snapshot.sites):
            return None
        return f"there is no catalog at {target} yet: {repair}"
    record = _record(folder)
    if record.get("stamp") != _stamp(target):
        return f"the catalog {target} was not written by this version of commerce-reports: {repair}"
    if record.get("root") != str(folder):
        return (
            f"the catalog {target} still points at {record.get('root')} (the data folder was moved): {repair}"
        )
    if record.get("digest") != _digest(snapshot):
        return f"the catalog {target} is behind the lake (its sites, rollups or files changed): {repair}"
    return None


def ensure_catalog(data_dir: Path | str | None = None) -> Path | None:
    """Rewrite the catalog when `catalog_problem` finds one; return its path (None: the lake is
    empty, or the folder cannot be written: then a warning says so)."""
    folder = resolve_data_dir(data_dir)
    if catalog_problem(folder) is None:
        target = folder / CATALOG_FILE
        return target if target.exists() else None
    try:
        return write_catalog(folder)
    except (OSError, LakeError) as error:
        log.warning("could not repair the catalog in %s: %s", folder, error)
        return None


def after_sync(data_dir: Path, changed: Mapping[str, Iterable[PartitionKey]]) -> None:
    """Keep the DuckDB side current at the cost of what a sync changed: the rollups of the
    partitions it stored (and of nothing else), then the catalog, rewritten only when its views
    changed."""
    if changed:
        refresh_rollups(data_dir, changed)
    write_catalog(data_dir)
