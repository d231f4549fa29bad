"""Open the lake in DuckDB: the views installed on a connection, queries with clear errors.

Two schemas. `live` computes every view from the lake's Parquet files at each query. `main` (the
default search path) is what users query: the same views, except that those kept as rollups read
the rollups of every site whose rollups match the lake, and `live` for the others.

A connection is in memory and only reads files: opening it takes no lock on anything a sync
writes, and nothing is written (the data folder may be a read-only share). Its views are resolved
again at every query, from the state of the lake its writers last published (`published.py`: hard
links swapped atomically, so a statement sees one state of the lake whatever a sync does meanwhile,
and `transactions` never contradicts `transaction_versions`); a lake never published is read from
its files, as they are when the query binds. A connection kept open in a notebook or a dashboard
follows the syncs of other processes.

By default a connection only reads, by construction: every statement passes the check of
`commerce-reports sql` (`readonly.py`: no `COPY`, `EXPORT`, `ATTACH`, `CREATE`, `SET` or second
statement, inside the lake or anywhere), the writers of DuckDB's Python API are refused, and
DuckDB itself reaches nothing outside the data folder's `lake/`, `rollups/` and `views/` (no
`read_text('/etc/...')`, no extension installs, its settings locked). `connect(read_only=False)`
gives the full engine.
"""

from __future__ import annotations

import atexit
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa

from ..contract import lake_root
from ..errors import LakeError, ValidationError
from ..interrupts import on_ctrl_c
from .guard import read_only_statement
from .published import published_reading, views_root
from .readonly import Connection, ReadOnlyConnection, ReadOnlyRelation
from .rollups import refresh_rollups
from .snapshot import Reading, take_snapshot, view_sql
from .sources import UNBOUND, data_folder, pattern, quote, resolve_data_dir
from .state import rollups_root
from .views import VIEW_LIST, VIEWS

__all__ = [
    "Connection",
    "ReadOnlyConnection",
    "connect",
    "current_reading",
    "ensure_lake",
    "install_views",
    "lake_is_empty",
    "query",
    "stream",
]

_RESOLVER = "commerce_reports_view"
_READINGS_KEPT = 64  # transactions binding views at once on one connection and its cursors
_BY_NAME = {view.name: view for view in VIEW_LIST}
_open: weakref.WeakSet[duckdb.DuckDBPyConnection] = weakref.WeakSet()


@atexit.register
def _close_open_connections() -> None:
    """Close connections still open at exit (a connection holding a Python function that is left
    to the interpreter's teardown makes DuckDB's bindings print leak warnings)."""
    for con in list(_open):
        con.close()


def lake_is_empty(data_dir: Path | str | None = None) -> bool:
    """True when the lake holds no partition of any dataset."""
    snapshot = take_snapshot(resolve_data_dir(data_dir))
    return not any(site.listing for site in snapshot.sites)


def ensure_lake(data_dir: Path | str | None = None) -> Path:
    """The data folder, or a LakeError saying how to fill it when its lake is empty."""
    folder = resolve_data_dir(data_dir)
    if lake_is_empty(folder):
        raise LakeError(f"the lake at {lake_root(folder)} is empty: run `commerce-reports sync` first")
    return folder


def current_reading(data_dir: Path) -> Reading:
    """What the views read now: the state last published, or else the lake files as they are."""
    return published_reading(data_dir) or take_snapshot(data_dir).reading()


def install_views(con: duckdb.DuckDBPyConnection, selects: Mapping[str, str]) -> None:
    """Create the `live` and `main` views with fixed SQL (the catalog file): `selects` holds the
    SELECT of each, by its qualified name (`live.transactions`, `main.transactions`, ...)."""
    _create(con, lambda schema, name: selects[f"{schema}.{name}"])


def _create(con: duckdb.DuckDBPyConnection, body: Callable[[str, str], str]) -> None:
    """Create each view in `live` and `main` with the SELECT `body(schema, name)`, and its comment.
    A view is bound where a query reads it, not here: binding reads the footer of every file below
    it, and a connection's views are worked out again at each binding anyway (`_install_following`)."""
    con.execute("CREATE SCHEMA IF NOT EXISTS live")
    for view in VIEW_LIST:
        for schema in ("live", "main"):
            sql = body(schema, view.name)
            con.execute(f"CREATE OR REPLACE VIEW {schema}.{view.name}{UNBOUND} AS {sql}")
        comment = VIEWS[view.name]
        live_comment = f"{comment} Computed from the lake files at every query."
        con.execute(f"COMMENT ON VIEW live.{view.name} IS {quote(live_comment)}")
        con.execute(f"COMMENT ON VIEW main.{view.name} IS {quote(comment)}")


def _install_following(con: duckdb.DuckDBPyConnection, data_dir: Path) -> None:
    """Create views whose SQL is worked out again each time a query binds one, from the state of
    the lake then: the same state for every view a transaction binds (a statement outside an
    explicit transaction is one), named by DuckDB's transaction id, so that a state published
    between the binding of two views of one statement is not seen by one of them only."""
    readings: dict[int, Reading] = {}
    lock = threading.Lock()

    def resolve(schema: str, name: str, transaction: int) -> str:
        with lock:
            reading = readings.get(transaction)
            if reading is None:
                if len(readings) >= _READINGS_KEPT:
                    readings.pop(next(iter(readings)))
                reading = readings[transaction] = current_reading(data_dir)
        return view_sql(reading, schema, _BY_NAME[name])

    con.create_function(_RESOLVER, resolve, ["VARCHAR", "VARCHAR", "UBIGINT"], "VARCHAR")
    _create(
        con,
        lambda schema, name: (
            f"SELECT * FROM query({_RESOLVER}({quote(schema)}, {quote(name)}, txid_current()))"
        ),
    )


def _confine(con: duckdb.DuckDBPyConnection, data_dir: Path) -> None:
    """Let the connection read and write only below the lake and rollup folders, for good."""
    readable = (lake_root(data_dir), rollups_root(data_dir), views_root(data_dir))
    # each as named, and as the views' globs name it (`pattern`: a `[` in its name escaped)
    named = dict.fromkeys(form for folder in readable for form in (f"{folder}/", pattern(folder, "")))
    folders = ", ".join(quote(form) for form in named)
    con.execute(f"SET allowed_directories = [{folders}]")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


def connect(data_dir: Path | str | None = None, *, read_only: bool = True) -> Connection:
    """A DuckDB connection with the views over the lake (`VIEWS` lists them), in memory.

    Results come back as you like: `con.sql(q).pl()`, `.arrow()`, `.df()`. By default the
    connection only reads (`ReadOnlyConnection`): it runs only statements that read, the same
    check as `commerce-reports sql`, refuses the writers of DuckDB's Python API, and reaches no file
    outside the data folder. With `read_only=False` stale rollups are first brought up to date and
    published (writes to `<data_dir>/rollups` and `<data_dir>/views`) and the connection is
    DuckDB's full engine (any file, `COPY`, `ATTACH`, extensions). A folder that does not exist, or
    holds other things but no lake, is a LakeError saying so; an empty one gives empty views.
    """
    if not isinstance(read_only, bool):
        raise ValidationError("read_only", f"{read_only!r} is not a bool", "give True or False")
    folder = data_folder(data_dir)
    if not read_only:
        refresh_rollups(folder)  # publishes what it changed
    con = duckdb.connect()
    on_ctrl_c(con)
    try:
        con.execute("SET enable_progress_bar = false")
        con.execute(f"SET VARIABLE {_FOLDER_VARIABLE} = {quote(str(folder))}")  # (`folder_of`)
        _install_following(con, folder)
        if read_only:
            _confine(con, folder)
    except duckdb.Error as error:
        con.close()
        raise LakeError(f"the lake at {lake_root(folder)} could not be opened: {error}") from None
    _open.add(con)
    return ReadOnlyConnection(con) if read_only else con


_FOLDER_VARIABLE = "commerce_reports_data_dir"


def folder_of(con: Connection) -> Path | None:
    """The data folder whose lake `connect` opened `con` over (None: a connection of another
    making), so that what is judged beside its views (the lake's health) is of the same lake."""
    try:
        ((folder,),) = con.execute(f"SELECT getvariable('{_FOLDER_VARIABLE}')").fetchall()
    except (duckdb.Error, ValueError):
        return None
    return Path(folder) if isinstance(folder, str) else None


def _integers(frame: pl.DataFrame) -> pl.DataFrame:
    """Whole-number decimals (what DuckDB's `sum` of integers gives) as Int64 when they fit."""
    for name, dtype in frame.schema.items():
        if isinstance(dtype, pl.Decimal) and dtype.scale == 0:
            try:
                frame = frame.with_columns(pl.col(name).cast(pl.Int64, strict=True))
            except pl.exceptions.InvalidOperationError:
                continue  # beyond 64 bits: stays a decimal
    return frame


def query(con: Connection, sql: str) -> pl.DataFrame:
    """The result of `sql` as polars (sums of counts as integers), or a LakeError saying what is
    wrong: an unknown name lists the views; a file outside the lake says why it is refused. Only a
    statement that reads runs (see `guard.py`): anything that would write or change a setting is a
    ValidationError before it runs."""
    sql = read_only_statement(sql)
    try:
        relation = con.sql(sql)
        return _integers(_for_polars(relation).pl()) if relation is not None else pl.DataFrame()
    except duckdb.Error as error:
        raise _failure(error) from None


def stream(
    con: Connection,
    sql: str,
    *,
    limit: int | None = None,
    flat: bool = False,
    batch_rows: int = 32_768,
) -> Iterator[pl.DataFrame]:
    """The result of `sql` (a statement that reads, as for `query`) in frames of at most
    `batch_rows` rows, fetched as they are consumed: memory stays bounded whatever the result's
    size. `limit` caps the query itself (DuckDB stops producing rows past it). `flat=True` gives
    nested values (structs, lists, maps) as JSON text and a BLOB as its text, for formats that
    hold only text and numbers (CSV, spreadsheets)."""
    sql = read_only_statement(sql)
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValidationError("limit", f"{limit!r} is not a number of rows", "give an int >= 0, or None")
    if isinstance(batch_rows, bool) or not isinstance(batch_rows, int) or batch_rows < 1:
        raise ValidationError("batch_rows", f"{batch_rows!r} is not a number of rows", "give an int >= 1")
    try:
        relation = _for_polars(con.sql(sql), flat=flat)
        if limit is not None:
            relation = relation.limit(limit)
        reader = relation.to_arrow_reader(batch_rows)
    except duckdb.Error as error:
        raise _failure(error) from None
    return _frames(reader)


_NESTED = {"struct", "list", "map", "array", "union"}
_Relation = duckdb.DuckDBPyRelation | ReadOnlyRelation
# Types polars cannot import (an interval or a union: it panics) or reads wrong (a BIT or a VARINT
# as its bytes, a UHUGEINT wrapped round to -1, a TIME WITH TIME ZONE without its offset), at any depth
_AS_TEXT = ("INTERVAL", "UNION(", "BIT", "VARINT", "BIGNUM", "UHUGEINT", "TIME WITH TIME ZONE")


def _for_polars(relation: _Relation, *, flat: bool = False) -> _Relation:
    """`relation` with every column polars can hold: an interval or a union (`now() - fetched_at`)
    as its text (`_AS_TEXT`), and with `flat`, nested values (structs, lists, maps) as JSON text
    and a BLOB as DuckDB's text of it ('x\\x00\\xFF', which `::BLOB` reads back), for formats
    that hold only text and numbers (CSV, spreadsheets)."""
    columns, changed = [], False
    for name, kind in zip(relation.columns, relation.types, strict=True):
        column = '"' + name.replace('"', '""') + '"'
        if any(word in str(kind) for word in _AS_TEXT) or (flat and kind.id == "blob"):
            column, changed = f"CAST({column} AS VARCHAR) AS {column}", True
        elif flat and kind.id in _NESTED:
            column, changed = f"to_json({column})::VARCHAR AS {column}", True
        columns.append(column)
    return relation.project(", ".join(columns)) if changed else relation


def _frames(reader: pa.RecordBatchReader) -> Iterator[pl.DataFrame]:
    """Each batch as polars, as it is read; an empty result is one empty frame with the columns."""
    with reader:
        empty = True
        while True:
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                break
            except (duckdb.Error, pa.ArrowException) as error:
                raise _failure(error) from None
            empty = False
            yield _integers(pl.DataFrame(batch))
        if empty:
            yield pl.DataFrame(reader.schema.empty_table())


def _failure(error: Exception) -> LakeError:
    """A DuckDB error as a LakeError that says what to do."""
    if isinstance(error, duckdb.CatalogException):
        return LakeError(
            f"{error}\nthe views are: {', '.join(VIEWS)} (`commerce-reports sql --views` describes them)"
        )
    if isinstance(error, duckdb.PermissionException):
        return LakeError(
            f"{error}\nqueries read only the data folder's lake and rollups: no COPY to other files, "
            "ATTACH or reads elsewhere (`connect(read_only=False)` in Python gives the full engine)"
        )
    hint = ""
    if ".parquet" in str(error):
        hint = "\na lake file may be damaged: `commerce-reports verify` checks them and quarantines bad ones"
    return LakeError(f"the query failed: {error}{hint}")
