"""The fast path: a clean transactions body of a known shape, read by DuckDB into the stored columns.

1. The `{"transactions": [...]}` wrapper is cut off the bytes. A big array is split at element
   boundaries into one part per DuckDB thread, so that the parts are read in parallel.
2. The parts go to DuckDB as in-memory files (a memfd on Linux), never to disk.
3. DuckDB reads the shape's keys with explicit types, and the census (census.py), counted beside
   the read, proves that the columns hold every value of the body.
4. The values are typed by the same rules as the tolerant path (values.py, dates.py). Money is read
   by DuckDB from its text as DECIMAL(18,4): the census proves no money text has a digit past the
   fourth place that DuckDB would round, and DuckDB refuses a value too large, which declines the
   body, as does a number that is not finite.

Any doubt declines the body (`Declined`, with the reason) and the tolerant path reads it: unknown
keys, a value of an unexpected kind, a date in no known format, another envelope.
"""

from __future__ import annotations

import functools
import os
import re
import tempfile
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from ..contract import MONEY, PRODUCT_TYPE, TRANSACTION_SCHEMA
from .census import Census, count_body, count_table
from .dates import date_array
from .fields import (
    CODE_WORDS,
    FIELDS,
    GROUPS,
    PRODUCT_ITEM,
    READ_TREES,
    Field,
    IdClass,
    Kind,
    Node,
    Path,
    Shape,
)

__all__ = ["Declined", "read_fast"]

_WRAPPER = re.compile(rb'\s*\{\s*"transactions"\s*:\s*\[')
_FIRST_KEY = re.compile(rb'\[\s*\{\s*"((?:[^"\\]|\\.)*)"')
_ID_VALUE = re.compile(rb'"revenueId"\s*:\s*(.)')
_EMPTY = re.compile(rb"\[\s*\]")
_SPACE = b" \t\r\n"
_WHOLE = 2**53  # beyond this a double no longer holds every whole number
_MEMFD = hasattr(os, "memfd_create") and os.path.isdir("/proc/self/fd")
_PART_BYTES = 4 << 20  # below this one DuckDB thread reads the whole array
_MONEY_SQL = f"DECIMAL({MONEY.precision}, {MONEY.scale})"  # exact for every text the census lets through
_local = threading.local()
_opening = threading.Lock()  # the database is opened, and cursors of it made, one at a time


class Declined(Exception):
    """The body is not exactly a known shape with typable values; the message says why."""


def _sql_type(node: Node) -> str:
    if isinstance(node, dict):
        return "STRUCT(" + ", ".join(f'"{key}" {_sql_type(child)}' for key, child in node.items()) + ")"
    if node is Kind.PRODUCTS:
        items = ", ".join(f'"{key}" {_sql_type(kind)}' for key, (_, kind) in PRODUCT_ITEM.items())
        return f"STRUCT({items})[]"
    if node is Kind.MONEY:
        return _MONEY_SQL
    return "DOUBLE" if node in (Kind.NUMBER, Kind.INTEGER) else "VARCHAR"


_COLUMNS_SQL = {
    shape: "{" + ", ".join(f"'{key}': '{_sql_type(node)}'" for key, node in tree.items()) + "}"
    for shape, tree in READ_TREES.items()
}


@functools.cache
def _database() -> tuple[duckdb.DuckDBPyConnection, int]:
    """The process's in-memory DuckDB for parsing, and its threads."""
    database = duckdb.connect()
    return database, int(database.sql("SELECT current_setting('threads')").fetchall()[0][0])


def _connection() -> tuple[duckdb.DuckDBPyConnection, int]:
    """A connection per thread (one is not shared between threads), each a cursor of the process's
    one database: opening a database takes ~13 ms, a cursor 0.3 ms, and a sync's lanes are new
    threads at every sync. Returns it with the database's threads."""
    if getattr(_local, "con", None) is None:
        with _opening:
            _local.con = _database()[0].cursor()
    con: duckdb.DuckDBPyConnection = _local.con
    return con, _database()[1]


@contextmanager
def _in_memory_file(*chunks: bytes | memoryview) -> Iterator[str]:
    """A path DuckDB can open that holds the chunks: an anonymous memfd where the system has one."""
    if _MEMFD:
        fd = os.memfd_create("commerce-reports-parse", os.MFD_CLOEXEC)
        try:
            for chunk in chunks:
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view) :]
            yield f"/proc/self/fd/{fd}"
        finally:
            os.close(fd)
        return
    fd, path = tempfile.mkstemp(prefix="commerce-reports-parse-", suffix=".json")
    try:
        with os.fdopen(fd, "wb") as file:
            for chunk in chunks:
                file.write(chunk)
        yield path
    finally:
        os.unlink(path)


def _array_span(body: bytes) -> tuple[int, int]:
    """Where the array of a body that is exactly `{"transactions": [...]}` starts and ends."""
    wrapper = _WRAPPER.match(body)
    end = len(body)
    while end and body[end - 1] in _SPACE:
        end -= 1
    close = end - 1
    while close > 0 and body[close - 1] in _SPACE:
        close -= 1
    if wrapper is None or not body.endswith(b"}", 0, end) or not body.endswith(b"]", 0, close):
        raise Declined("the body is not exactly one 'transactions' array")
    if close <= wrapper.end():
        raise Declined("the 'transactions' array is not closed")
    return wrapper.end() - 1, close


def _parts(body: bytes, start: int, end: int, count: int) -> list[tuple[int, int]]:
    """Spans of `body[start:end]` (an array) cut between elements into `count` runs of elements.

    A cut is made only where the next element opens with the first element's first key, written
    compactly (`},{"revenueId":`); when there is no such place the array stays whole. A cut in
    the wrong place (inside an element) makes the parts invalid JSON, and they are read whole.
    """
    first = _FIRST_KEY.match(body, start)
    if count < 2 or first is None or not body.startswith(b'[{"' + first.group(1) + b'":', start):
        return [(start + 1, end - 1)]
    separator = b'},{"' + first.group(1) + b'":'
    spans, begin = [], start + 1
    for part in range(1, count):
        cut = body.find(separator, max(begin, start + (end - start) * part // count), end)
        if cut < 0:
            break
        spans.append((begin, cut + 1))
        begin = cut + 2
    return [*spans, (begin, end - 1)]


def _read(body: bytes, start: int, end: int, shape: Shape) -> pa.Table:
    """DuckDB's read of the array in `body[start:end]`, in parallel parts when it is big."""
    _, threads = _connection()
    parts = _parts(body, start, end, threads if end - start >= _PART_BYTES else 1)
    try:
        return _scan(body, parts, _COLUMNS_SQL[shape])
    except (duckdb.Error, OSError) as error:
        if len(parts) == 1 or "Malformed JSON" not in str(error):
            raise Declined(_first_line(error)) from None
    try:
        return _scan(body, [(start + 1, end - 1)], _COLUMNS_SQL[shape])
    except (duckdb.Error, OSError) as error:  # OSError: no room for the in-memory file
        raise Declined(_first_line(error)) from None


def _scan(body: bytes, parts: list[tuple[int, int]], columns: str) -> pa.Table:
    view = memoryview(body)
    with ExitStack() as stack:
        paths = [stack.enter_context(_in_memory_file(b"[", view[a:b], b"]")) for a, b in parts]
        files = "[" + ", ".join(f"'{path}'" for path in paths) + "]"
        source = f"read_json({files}, format='array', columns={columns}, compression='none')"
        con, _ = _connection()
        return con.sql(f"SELECT * FROM {source}").to_arrow_table()


def _first_line(error: Exception) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__


# ------------------------------------------------------------------------ typing the columns ----


def _at(table: pa.Table, path: Path) -> pa.ChunkedArray | None:
    """The values under `path` (null where a parent object is null); None when not read."""
    if path[0] not in table.column_names:
        return None
    column = table.column(path[0])
    for key in path[1:]:
        column = pc.struct_field(column, key)
    return column


def _blank_to_null(chunk: pa.Array) -> pa.Array:
    """Empty strings become nulls ("not known"); the text itself is not copied."""
    filled = pc.fill_null(pc.not_equal(pc.binary_length(chunk), 0), False)
    if chunk.offset or filled.offset:
        return pc.if_else(filled, chunk, pa.scalar(None, chunk.type))
    return pa.Array.from_buffers(chunk.type, len(chunk), [filled.buffers()[1], *chunk.buffers()[1:]])


def _text(raw: pa.ChunkedArray) -> pa.ChunkedArray:
    return pa.chunked_array([_blank_to_null(chunk) for chunk in raw.chunks], raw.type)


def _words(kind: Kind, raw: pa.ChunkedArray) -> pa.ChunkedArray:
    words = CODE_WORDS[kind]
    text = _text(raw)
    index = pc.index_in(text, value_set=pa.array(list(words), pa.string()))
    coded = pc.take(pa.array(list(words.values()), pa.string()), index)
    return pc.if_else(pc.is_null(index), text, coded)


def _finite(column: str, raw: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    if pc.any(pc.is_inf(raw)).as_py():
        raise Declined(f"{column}: a value is not a finite number")
    return raw


def _item(kind: Kind, name: str, child: pa.Array) -> pa.Array:
    if kind is Kind.TEXT:
        return _blank_to_null(child)
    if kind is Kind.MONEY:  # read as DECIMAL(18,4) (_MONEY_SQL)
        return child
    return _finite(f"products.{name}", child)


def _items(lists: pa.ListArray) -> pa.ListArray:
    """Bought items under the stored names, their empty strings null as everywhere else."""
    children = [
        _item(kind, name, child)
        for (name, kind), child in zip(PRODUCT_ITEM.values(), lists.values.flatten(), strict=True)
    ]
    items = pa.StructArray.from_arrays(children, fields=list(PRODUCT_TYPE.value_type))
    return pa.ListArray.from_arrays(lists.offsets, items, type=PRODUCT_TYPE, mask=lists.is_null())


def _typed(field: Field, raw: pa.ChunkedArray, id_class: IdClass) -> pa.ChunkedArray:
    kind = field.kind
    if kind is Kind.MONEY:  # read as DECIMAL(18,4) (_MONEY_SQL)
        return raw
    if kind is Kind.NUMBER:
        return _finite(field.column, raw)
    if kind is Kind.INTEGER:
        return _whole(field.column, raw)
    if kind is Kind.DATE:
        return _dates(field.column, raw)
    if kind in CODE_WORDS:
        return _words(kind, raw)
    if kind is Kind.PRODUCTS:
        if pc.list_flatten(raw).null_count:
            raise Declined(f"{field.column}: an item is not an object")
        return pa.chunked_array([_items(chunk) for chunk in raw.chunks], PRODUCT_TYPE)
    if kind is Kind.ID and id_class == "number" and pc.any(pc.ends_with(raw, ".0")).as_py():
        return pc.replace_substring_regex(raw, r"^(-?[0-9]+)\.0$", r"\1")  # 12345.0 -> "12345"
    return _text(raw)


def _whole(column: str, raw: pa.ChunkedArray) -> pa.ChunkedArray:
    """Whole numbers read as doubles, as integers: a fraction, or one past what a double holds
    exactly, declines."""
    fraction = pc.not_equal(pc.trunc(raw), raw)
    if pc.any(pc.or_(fraction, pc.greater(pc.abs(raw), _WHOLE))).as_py():
        raise Declined(f"{column}: a value is not a whole number a double holds exactly")
    return raw.cast(pa.int64())


def _dates(column: str, raw: pa.ChunkedArray) -> pa.ChunkedArray:
    """Dates in any format the service sends; a text that is none declines."""
    texts = _text(raw)
    dates = date_array(texts)
    if dates.null_count != texts.null_count:
        raise Declined(f"{column}: a value is not a date in a known format")
    return dates


def _column(field: Field, raw: pa.Table, shape: Shape, id_class: IdClass) -> pa.ChunkedArray:
    """One stored column: the first present key of the field wins; two that disagree decline."""
    present = [column for path in field.paths(shape) if (column := _at(raw, path)) is not None]
    sent = [column for column in present if column.null_count < len(column)] or present[:1]
    candidates = [_typed(field, column, id_class) for column in sent]
    first = candidates[0]
    for other in candidates[1:]:
        both = pc.and_(pc.is_valid(first), pc.is_valid(other))
        clash = both if field.kind is Kind.PRODUCTS else pc.and_(both, pc.not_equal(first, other))
        if pc.any(clash).as_py():
            raise Declined(f"{field.column}: a row carries it under two keys with different values")
    return pc.coalesce(*candidates) if len(candidates) > 1 else first


def _id_class(body: bytes, start: int) -> IdClass:
    """How revenueId is sent in this body: as a JSON string (contract) or a number (published)."""
    found = _ID_VALUE.search(body, start)
    return "string" if found is None or found.group(1) == b'"' else "number"


def _shape(body: bytes, start: int) -> Shape:
    first = _FIRST_KEY.match(body, start)
    return "nested" if first is not None and first.group(1).decode(errors="replace") in GROUPS else "flat"


def read_fast(body: bytes) -> pa.Table:
    """A clean body of a known shape -> TRANSACTION_SCHEMA; raises Declined for anything else."""
    start, end = _array_span(body)
    if _EMPTY.fullmatch(body, start, end):
        return TRANSACTION_SCHEMA.empty_table()
    shape = _shape(body, start)
    counted: list[Census] = []
    census = threading.Thread(target=lambda: counted.append(count_body(body)), name="parse-census")
    census.start()  # numpy and DuckDB both let go of the GIL: the census counts beside the read
    try:
        raw = _read(body, start, end, shape)
    finally:
        census.join()
    id_class = _id_class(body, start)
    if counted[0].inexact:
        raise Declined(f"{counted[0].inexact} money values are not plain decimals of at most 4 places")
    in_body = counted[0] + Census(arrays=-1)  # the wrapper's own key
    difference = in_body.differences(count_table(raw, READ_TREES[shape], id_class))
    if difference:
        raise Declined(f"the columns do not hold every value of the body ({difference})")
    columns = [_column(field, raw, shape, id_class) for field in FIELDS]
    extra = pa.nulls(raw.num_rows, pa.string())
    return pa.Table.from_arrays([*columns, extra], schema=TRANSACTION_SCHEMA)
