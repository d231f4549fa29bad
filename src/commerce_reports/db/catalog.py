"""`commerce.duckdb`: a small DuckDB file holding the views, for the DuckDB CLI or any client.

It holds no data, only the view definitions, over the state of the lake last published (see
`published.py`), with every path relative to the folder the file is in: a copied or moved data
folder's catalog reads its own folder's files, never those of the folder it was written in, and
opens from a read-only share (`duckdb -readonly /path/to/data/commerce.duckdb`, from any working
folder). DuckDB resolves relative paths against the working folder, so the views find their folder
from the database's own temporary folder (`<file>.tmp`, DuckDB's default beside the file); a
catalog attached to another session, or opened with another `temp_directory`, fails with a message
saying how to open it instead. It is written in the storage format of DuckDB 1.2, which every
DuckDB since then reads (the Python package may be newer than the CLI a user has).

What moves with every sync, the published generation the views read and the coverage behind their
`complete` and `final` columns, is named by macros (`commerce_generation()`, `commerce_complete_day`,
...). When only those move, the last catalog is copied and its macros defined again, not its views.
It is written whole when its views' SQL changes (which sites, rollups and files they read): after a
sync or a rebuild, by `commerce-reports catalog`, or by the next `commerce-reports sql`. Its views
are bound where a query reads them (DuckDB 2), not as they are made: binding reads a Parquet footer
per glob.
`catalog_problem` says what is wrong, for `status`. It is written beside, then renamed over the old
one: a reader that has it open keeps the old file.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ..contract import PartitionKey, lake_root
from ..errors import LakeError
from ..files import save_atomic, sha256_of
from ..params import as_bool
from .connection import current_reading, install_views
from .coverage import status_macros
from .published import publish
from .rollups import refresh_rollups
from .sandbox_sites import drop_sandbox_sites
from .snapshot import Reading, view_sql
from .sources import data_folder, quote, resolve_data_dir
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
_TEMP_DIRECTORY = f"{CATALOG_FILE}.tmp"  # DuckDB's temporary folder of the catalog, beside it
_GENERATION = "commerce_generation"  # the macro naming the published generation the views read
# The folder holding the catalog, as SQL that DuckDB folds to a constant when a view binds.
ROOT = (
    f"(CASE WHEN parse_filename(current_setting('temp_directory')) = '{_TEMP_DIRECTORY}' "
    "THEN coalesce(nullif(parse_dirpath(current_setting('temp_directory')), ''), '.') "
    "ELSE error('commerce.duckdb reads the folder it is in: open it as the main database, "
    "e.g. duckdb -readonly <data folder>/commerce.duckdb, with DuckDB''s default temp_directory; "
    "if its views fail, run: commerce-reports catalog --data-dir <data folder>') END)"
)


def relative_sql(sql: str, folder: Path, generation: Path | None = None) -> str:
    """`sql` with every path literal below `folder` made relative to the catalog's own folder, and
    those below `generation` (a published generation in it) to the one `commerce_generation()`
    names."""
    if generation is not None:
        below = re.escape(str(generation).replace("'", "''"))
        sql = re.sub(
            rf"'{below}((?:/(?:[^']|'')*)?)'", lambda m: f"({ROOT} || {_GENERATION}() || '{m.group(1)}')", sql
        )
    prefix = re.escape(str(folder).replace("'", "''"))
    return re.sub(rf"'{prefix}((?:/(?:[^']|'')*)?)'", lambda m: f"({ROOT} || '{m.group(1)}')", sql)


@dataclass(frozen=True)
class _Catalog:
    """What the catalog holds for a reading: each view's SELECT (by its qualified name), the same
    from one published generation to the next while the sites, rollups and sources stay; and the
    statements of the macros naming what moves with each (the generation, the coverage)."""

    views: dict[str, str]
    macros: list[str]

    @property
    def digest(self) -> str:
        """The views' SQL, with the storage format and the DuckDB that binds them: another DuckDB
        may type a column otherwise, and a view keeps the types it was bound with."""
        text = "\n".join(f"{name}\n{sql}" for name, sql in self.views.items())
        return hashlib.sha256(f"{STORAGE_VERSION}\n{duckdb.__version__}\n{text}".encode()).hexdigest()

    @property
    def values(self) -> str:
        return hashlib.sha256("\n".join(self.macros).encode()).hexdigest()


def _catalog(reading: Reading, folder: Path) -> _Catalog:
    """What the catalog of `folder` holds for `reading` (a published generation in it, or the
    folder itself: then `commerce_generation()` names no folder)."""
    published = reading.root != folder and reading.root.is_relative_to(folder)
    generation = "/" + reading.root.relative_to(folder).as_posix() if published else ""
    views = {
        f"{schema}.{view.name}": relative_sql(
            view_sql(reading, schema, view, macros=True), folder, reading.root if published else None
        )
        for view in VIEW_LIST
        for schema in ("live", "main")
    }
    macros = [
        f"CREATE OR REPLACE MACRO {_GENERATION}() AS {quote(generation)}",
        *status_macros(reading.coverage),
    ]
    return _Catalog(views, macros)


def _record(folder: Path) -> dict[str, object]:
    try:
        data = json.loads((rollups_root(folder) / _RECORD).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _stamp(path: Path) -> str | None:
    """The catalog file's content hash: a copy of the folder keeps it, a file written by anything
    else does not."""
    try:
        return sha256_of(path)
    except OSError:
        return None


def write_catalog(
    data_dir: Path | str | None = None, *, force: bool = False, published: bool = False
) -> Path:
    """Publish the lake's state for the views if it changed, then write `<data_dir>/commerce.duckdb`
    with the views of `connect()`, atomically, when its SQL changed (or `force`); return its path.
    Call it after `refresh_rollups`; `published=True` says the caller has just published the lake
    (a refresh does), so it is not listed again to find out."""
    as_bool(published, "published")
    as_bool(force, "force")  # ("no" is true: the catalog written whole every time)
    folder = data_folder(data_dir)
    if not published:
        publish(folder)
    catalog = _catalog(current_reading(folder), folder)
    target = folder / CATALOG_FILE
    record = _record(folder)
    ours = not force and record.get("stamp") == _stamp(target)  # as this package last wrote it
    if ours and record.get("digest") == catalog.digest and record.get("values") == catalog.values:
        return target
    same_views = ours and record.get("digest") == catalog.digest

    def write(temp: Path) -> None:
        if same_views:  # only the macros move: the views are made once, when their SQL changes
            shutil.copyfile(target, temp)
        with duckdb.connect() as con:
            # DuckDB 1 binds the views as they are made: in this session, the catalog's folder is this one.
            con.execute(f"SET temp_directory = {quote(str(folder / _TEMP_DIRECTORY))}")
            con.execute(f"ATTACH {quote(str(temp))} AS catalog (STORAGE_VERSION '{STORAGE_VERSION}')")
            con.execute("USE catalog")
            con.execute("BEGIN")  # one commit for all: each statement committed alone writes the file
            for statement in catalog.macros:
                con.execute(statement)
            if not same_views:
                install_views(con, catalog.views)
            con.execute("COMMIT")
            con.execute("USE memory")
            con.execute("DETACH catalog")

    try:
        save_atomic(target, write)
    except duckdb.Error as error:
        raise LakeError(f"could not write the catalog {target}: {error}") from None
    _save_record(folder, {"digest": catalog.digest, "values": catalog.values, "stamp": _stamp(target)})
    return target


def _save_record(folder: Path, record: dict[str, object]) -> None:
    """What the catalog was written from: lost in a crash (or left behind by one), its stamp no
    longer matches the catalog, which is then written whole again: no flush needed."""
    save_atomic(rollups_root(folder) / _RECORD, json.dumps(record), durable=False)


def catalog_problem(data_dir: Path | str | None = None) -> str | None:
    """What is wrong with `<data_dir>/commerce.duckdb` and how to repair it, or None when it is
    current (or when the lake is empty and there is nothing to catalog yet)."""
    folder = resolve_data_dir(data_dir)
    reading = current_reading(folder)
    target = folder / CATALOG_FILE
    repair = "`commerce-reports catalog` rewrites it (so does the next sync or `commerce-reports sql`)"
    if not target.exists():
        if not reading.fresh_sites and not reading.stale_sites:
            return None
        return f"there is no catalog at {target} yet: {repair}"
    record = _record(folder)
    if record.get("stamp") != _stamp(target):
        return f"the catalog {target} was not written by this version of commerce-reports: {repair}"
    catalog = _catalog(reading, folder)
    if (record.get("digest"), record.get("values")) != (catalog.digest, catalog.values):
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
    """Keep the DuckDB side current at the cost of what a sync changed: the built-in sandbox's
    sites gone once a service's is synced (`sandbox_sites.py`), the rollups of the partitions it
    stored (and of nothing else), then the published state and the catalog, rewritten only when
    its views changed."""
    if not lake_root(data_dir).is_dir():  # nothing was ever stored: nothing to catalog
        return
    drop_sandbox_sites(data_dir, changed)  # once a service's site is synced into the lake
    if changed:
        refresh_rollups(data_dir, changed)  # publishes what it changed
    write_catalog(data_dir, published=bool(changed))
