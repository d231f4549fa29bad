"""A DuckDB connection that only reads: what `connect()` gives by default.

DuckDB's configuration cannot make a connection read-only over files: `enable_external_access =
false` with `allowed_directories` keeps it inside the data folder, but a `COPY ... TO`, an `EXPORT
DATABASE` or an `ATTACH` aimed inside that folder would still write there (read-only protects a
database file, not the file system). So every statement a `ReadOnlyConnection` runs passes the same
check as `commerce-reports sql` (`guard.py`: one statement, of a reading kind, as DuckDB's own
parser types it; explicit transactions too, so several statements can read one state of the lake),
and the writers of DuckDB's Python API are refused: a relation's `write_parquet`, `to_csv`,
`create`, `insert_into` and the like, extension installs, appenders, file systems.

Everything that reads works as on DuckDB's own connection: `con.sql(q).pl()`, `con.execute(q,
params).fetchall()`, relations and their methods, cursors (read-only too), Python UDFs and
registered frames. `connect(read_only=False)` gives DuckDB's own connection, the full engine.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import duckdb

from ..errors import ValidationError
from .guard import read_only_statement

__all__ = ["Connection", "ReadOnlyConnection", "ReadOnlyRelation"]

_FULL_ENGINE = "`connect(read_only=False)` gives DuckDB's full engine"

# What a read-only connection passes on as it is (everything else it refuses, or checks first).
_READS = frozenset(
    {
        "begin",
        "close",
        "commit",
        "create_function",
        "description",
        "df",
        "extract_statements",
        "fetch_df",
        "fetch_df_chunk",
        "fetchall",
        "fetchdf",
        "fetchmany",
        "fetchnumpy",
        "fetchone",
        "filesystem_is_registered",
        "get_table_names",
        "interrupt",
        "list_filesystems",
        "query_progress",
        "remove_function",
        "rollback",
        "rowcount",
        "tf",
        "to_arrow_reader",
        "to_arrow_table",
        "torch",
        "unregister",
        # relations over data the caller hands in, or over files the confinement lets it read
        "from_arrow",
        "from_csv_auto",
        "from_df",
        "from_parquet",
        "read_csv",
        "read_json",
        "read_parquet",
        "table",
        "table_function",
        "values",
        "view",
        # types
        "array_type",
        "decimal_type",
        "dtype",
        "enum_type",
        "list_type",
        "map_type",
        "row_type",
        "sqltype",
        "string_type",
        "struct_type",
        "type",
        "union_type",
    }
)

# A relation's methods that write: a file, or a table or view of the connection.
_RELATION_WRITERS = frozenset(
    {
        "create",
        "create_view",
        "insert",
        "insert_into",
        "to_csv",
        "to_parquet",
        "to_table",
        "to_view",
        "update",
        "write_csv",
        "write_parquet",
    }
)


def _refused(what: str) -> ValidationError:
    return ValidationError(
        "connection",
        f"{what} is refused: this connection only reads the lake",
        f"query the views with con.sql(...) or con.execute(...); {_FULL_ENGINE}",
    )


def _wrapped(value: Any) -> Any:
    return ReadOnlyRelation(value) if isinstance(value, duckdb.DuckDBPyRelation) else value


class ReadOnlyRelation:
    """A DuckDB relation whose writers are refused; every other method is DuckDB's own (a
    relation it returns is read-only too)."""

    __slots__ = ("_relation",)

    def __init__(self, relation: duckdb.DuckDBPyRelation) -> None:
        self._relation = relation

    def query(self, virtual_table_name: str, sql_query: str) -> ReadOnlyRelation:
        """SQL over this relation (named `virtual_table_name` in it): a reading statement only."""
        relation = self._relation.query(virtual_table_name, read_only_statement(sql_query))
        return _wrapped(relation)  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name in _RELATION_WRITERS:
            raise _refused(f"the relation's {name}()")
        attribute = getattr(self._relation, name)
        if not callable(attribute):
            return attribute

        def call(*args: Any, **kwargs: Any) -> Any:
            return _wrapped(attribute(*args, **kwargs))

        return call

    def __len__(self) -> int:
        return len(self._relation)

    def __getitem__(self, key: Any) -> Any:
        return _wrapped(self._relation[key])

    def __repr__(self) -> str:
        return repr(self._relation)

    def __str__(self) -> str:
        return str(self._relation)

    def _repr_mimebundle_(self, *args: Any, **kwargs: Any) -> Any:
        show = getattr(self._relation, "_repr_mimebundle_", None)
        return show(*args, **kwargs) if show is not None else None


class ReadOnlyConnection:
    """A DuckDB connection that runs only statements that read (see the module's docstring)."""

    __slots__ = ("__weakref__", "_con")

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self._con = con

    def sql(self, query: str, *, alias: str = "", params: Any = None) -> ReadOnlyRelation:
        """A relation of `query`, which must be one statement that reads (a ValidationError
        before anything runs otherwise)."""
        statement = read_only_statement(query, transactions=True)
        relation = self._con.sql(statement, alias=alias, params=params)
        return _wrapped(relation)  # type: ignore[no-any-return]

    query = sql

    def execute(self, query: str, parameters: Any = None) -> ReadOnlyConnection:
        """Run `query` (one statement that reads, or BEGIN/COMMIT/ROLLBACK), with `parameters`;
        fetch its rows from the connection (`.fetchall()`, `.fetchone()`, ...)."""
        self._con.execute(read_only_statement(query, transactions=True), parameters)
        return self

    def executemany(self, query: str, parameters: Iterable[Any] = ()) -> ReadOnlyConnection:
        """`execute` once per set of `parameters`."""
        self._con.executemany(read_only_statement(query), parameters)
        return self

    def from_query(self, query: str, **kwargs: Any) -> ReadOnlyRelation:
        """A relation of `query` (a reading statement only)."""
        return _wrapped(self._con.from_query(read_only_statement(query), **kwargs))  # type: ignore[no-any-return]

    def cursor(self) -> ReadOnlyConnection:
        """Another connection to the same database, read-only too (one per thread)."""
        return ReadOnlyConnection(self._con.cursor())

    duplicate = cursor

    def register(self, view_name: str, python_object: object) -> ReadOnlyConnection:
        """Name a Python object (a frame, an Arrow table) for queries; the lake's views keep their
        names (a frame registered as `transactions` would hide the real one)."""
        from .views import VIEWS

        if view_name in VIEWS:
            raise ValidationError(
                "view_name", f"{view_name!r} is a view of the lake", "register the object under another name"
            )
        self._con.register(view_name, python_object)
        return self

    def __getattr__(self, name: str) -> Any:
        if name not in _READS:
            raise _refused(f"the connection's {name}")
        attribute = getattr(self._con, name)
        if not callable(attribute):
            return attribute

        def call(*args: Any, **kwargs: Any) -> Any:
            value = _wrapped(attribute(*args, **kwargs))
            return self if value is self._con else value

        return call

    def __enter__(self) -> ReadOnlyConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self._con.close()

    def __repr__(self) -> str:
        return f"<read-only commerce_reports connection to {self._con!r}>"


Connection = duckdb.DuckDBPyConnection | ReadOnlyConnection
"""What the views' readers take: `connect()`'s read-only connection, or DuckDB's own."""
