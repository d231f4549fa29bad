"""`commerce-reports catalog`, `rollups` and `sql`: the lake's views from the shell."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..errors import LakeError
from .options import add_data_dir, existing_lake, known_sites

if TYPE_CHECKING:
    from ..db.readonly import Connection

if TYPE_CHECKING:  # the handlers import DuckDB and polars when they run: `--help` stays instant
    import polars as pl

    from ..db import SiteRefresh

__all__ = ["register", "write_query"]

_FORMATS = ("table", "csv", "json", "parquet", "xlsx")
_BINARY = ("parquet", "xlsx")
_TABLE_ROWS = 40  # rows a table shows unless --max-rows says
_XLSX_ROWS = 1_048_576  # Excel's rows per worksheet
_MONEY = re.compile(r"revenue|order_value|sales|price")  # money columns: a float one goes out in cents
_DIGITS = 12  # other decimals: enough digits to keep every figure, none of the float noise


def register(subparsers: Any) -> None:
    """Add the `catalog`, `rollups` and `sql` subcommands to the `commerce-reports` parser."""
    catalog = subparsers.add_parser(
        "catalog",
        help="refresh the rollups and write data/commerce.duckdb (the views, for any DuckDB client)",
        description="Bring the rollups up to date, then write <data-dir>/commerce.duckdb, a small "
        "DuckDB file holding the views: open it with `duckdb -readonly data/commerce.duckdb` "
        "(the CLI: `pip install duckdb-cli`). Also repairs a catalog whose data folder was moved.",
    )
    add_data_dir(catalog)
    catalog.set_defaults(handler=run_catalog)

    rollups = subparsers.add_parser(
        "rollups",
        help="bring the rollups up to date (only what changed), or --rebuild them whole",
        description="Refresh the rollups that keep the performance views fast: only the months "
        "that changed since they were built. --rebuild recomputes them whole from the lake files.",
    )
    rollups.add_argument("--rebuild", action="store_true", help="recompute every rollup from the lake")
    rollups.add_argument("--site", action="append", dest="sites", help="only this site (repeatable)")
    add_data_dir(rollups)
    rollups.set_defaults(handler=run_rollups)

    sql = subparsers.add_parser(
        "sql",
        help="run SQL over the lake's views and print the result",
        description="Run one SQL query over the views (see --views) and print a table, or write "
        "CSV, JSON, Parquet or an Excel workbook. Rows are fetched and written in batches, so a result "
        "of any size streams in bounded memory. Queries only read: one SELECT (or WITH, FROM, "
        "DESCRIBE, SHOW, SUMMARIZE) over the data folder; COPY, ATTACH, INSTALL, SET, PRAGMA and the "
        "like are refused before they run.",
    )
    sql.add_argument("query", nargs="?", help='the SQL, e.g. "SELECT * FROM site_performance"')
    sql.add_argument("--views", action="store_true", help="list the views and what one row of each is")
    sql.add_argument("--format", choices=_FORMATS, default="table", help="output format (default table)")
    sql.add_argument("--output", type=Path, metavar="FILE", help="write to FILE instead of standard output")
    sql.add_argument(
        "--max-rows",
        type=int,
        metavar="N",
        help="at most N rows: the query itself stops there (default: 40 for a table, all otherwise)",
    )
    add_data_dir(sql)
    sql.set_defaults(handler=run_sql)


def _report(done: list[SiteRefresh]) -> None:
    for result in done:
        what = "rebuilt" if result.full else f"months {', '.join(result.months) or 'none'} refreshed"
        print(f"rollups of {result.site}: {what} in {result.seconds:.1f} s")
        for relpath, reason in result.skipped.items():
            print(
                f"  left out {relpath}: {reason} (`commerce-reports verify` quarantines it for a refetch)",
                file=sys.stderr,
            )
    if not done:
        print("rollups: all current")


def run_catalog(args: argparse.Namespace) -> int:
    from ..db import refresh_rollups, write_catalog

    data_dir = existing_lake("catalog", args.data_dir)
    _report(refresh_rollups(data_dir))
    print(f"wrote {write_catalog(data_dir, force=True)}")
    return 0


def run_rollups(args: argparse.Namespace) -> int:
    from ..db import rebuild_rollups, refresh_rollups, write_catalog

    data_dir = existing_lake("rollups", args.data_dir)
    known_sites("rollups", args.sites, data_dir, stored=True)
    if args.rebuild:
        done = rebuild_rollups(data_dir, args.sites)
    else:
        done = refresh_rollups(data_dir, {site: [] for site in args.sites} if args.sites else None)
    _report(done)
    write_catalog(data_dir)
    return 0


def run_sql(args: argparse.Namespace) -> int:
    from ..db import VIEWS, connect, ensure_catalog, ensure_lake
    from ..db.guard import read_only_statement

    if args.views:
        width = max(map(len, VIEWS))
        for name, comment in VIEWS.items():
            print(f"{name:<{width}}  {comment}")
        return 0
    if not args.query:
        print("commerce-reports sql: error: give a query, or --views", file=sys.stderr)
        return 2
    if args.format in _BINARY and args.output is None:
        print(f"commerce-reports sql: error: --format {args.format} needs --output FILE", file=sys.stderr)
        return 2
    if args.max_rows is not None and args.max_rows < 0:
        print("commerce-reports sql: error: --max-rows must be 0 or more", file=sys.stderr)
        return 2
    read_only_statement(args.query)  # refused before the lake is even opened
    data_dir = ensure_lake(existing_lake("sql", args.data_dir))
    ensure_catalog(data_dir)  # a moved data folder: the DuckDB CLI's catalog is repaired here too
    with connect(data_dir) as con:
        write_query(con, args.query, args.format, args.output, args.max_rows)
    return 0


def write_query(con: Connection, sql: str, form: str, output: Path | None, max_rows: int | None) -> None:
    """Run `sql` on `con` and write its rows as `form` (one of `_FORMATS`) to `output` (default:
    standard output), a batch at a time; `max_rows` limits the query itself."""
    from ..db import stream

    if form == "table":
        shown = _TABLE_ROWS if max_rows is None else max_rows
        _text(_table(list(stream(con, sql, limit=shown + 1)), shown), output)  # one more: are there more?
        return
    frames = stream(con, sql, limit=max_rows, flat=form in ("csv", "xlsx"))
    write = _WRITERS[form]
    if output is not None:
        _save(output, lambda temp: _to_file(temp, write, frames))
        return
    try:
        write(frames, sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader stopped (`| head`): what it read was written
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit


def _rounded(frame: pl.DataFrame) -> pl.DataFrame:
    """Floats a query computed: money columns to the cent, others to 12 significant digits, so what
    a sum of floats leaves (299902.75000000006) does not reach a file. The views' money is DECIMAL
    and goes out exact, as it is (JSON writes it as a string of its digits)."""
    import polars as pl

    money = [n for n, t in frame.schema.items() if _MONEY.search(n) and t.is_float()]
    other = [n for n, t in frame.schema.items() if t.is_float() and n not in money]
    return frame.with_columns(
        *(pl.col(n).round(2) for n in money), *(pl.col(n).round_sig_figs(_DIGITS) for n in other)
    )


def _table(frames: list[pl.DataFrame], shown: int) -> str:
    import polars as pl

    frame = pl.concat(frames) if frames else pl.DataFrame()
    with pl.Config(tbl_rows=shown, tbl_cols=-1, fmt_str_lengths=60, tbl_width_chars=200):
        text = str(frame.head(shown))
    if frame.height > shown:
        text += (
            f"\nthe first {shown} rows; --max-rows N shows more, --format csv/json/parquet/xlsx writes all"
        )
    return text + "\n"


def _csv(frames: Iterator[pl.DataFrame], out: IO[Any]) -> None:
    """CSV, a batch at a time: the header once, nested values as JSON (`stream(flat=True)`)."""
    for number, frame in enumerate(frames):
        out.write(_rounded(frame).write_csv(include_header=number == 0))


def _json(frames: Iterator[pl.DataFrame], out: IO[Any]) -> None:
    """One JSON array of row objects, written a batch at a time (DECIMAL money exact, as text)."""
    out.write("[")
    first = True
    for frame in frames:
        if frame.height == 0:
            continue
        rows = _rounded(frame).write_json()
        out.write(("" if first else ",") + rows[1:-1])  # the batch's objects without its brackets
        first = False
    out.write("]\n")


def _parquet(frames: Iterator[pl.DataFrame], out: IO[Any]) -> None:
    """Parquet, a row group per batch (the first batch's schema for all)."""
    import pyarrow.parquet as pq

    writer: pq.ParquetWriter | None = None
    try:
        for frame in frames:
            table = frame.to_arrow()
            if writer is None:
                writer = pq.ParquetWriter(out, table.schema)
            writer.write_table(table.cast(writer.schema))
    finally:
        if writer is not None:
            writer.close()


def _xlsx(frames: Iterator[pl.DataFrame], out: IO[Any]) -> None:
    """An Excel workbook (xlsxwriter, a row at a time): numbers as numbers, money with two
    decimals, dates and times as Excel dates (UTC), nested values as JSON text."""
    import xlsxwriter

    book = xlsxwriter.Workbook(
        out, {"constant_memory": True, "nan_inf_to_errors": True, "remove_timezone": True}
    )
    sheet = book.add_worksheet("result")
    formats = {
        "money": book.add_format({"num_format": "#,##0.00"}),
        "date": book.add_format({"num_format": "yyyy-mm-dd"}),
        "time": book.add_format({"num_format": "yyyy-mm-dd hh:mm:ss"}),
    }
    header = book.add_format({"bold": True})
    row = 0
    for frame in frames:
        if row == 0:
            sheet.write_row(0, 0, frame.columns, header)
            sheet.freeze_panes(1, 0)
            kinds = [_cell_kind(name, dtype) for name, dtype in frame.schema.items()]
            row = 1
        if row + frame.height > _XLSX_ROWS:
            raise LakeError(
                f"a worksheet holds at most {_XLSX_ROWS:,} rows and the result has more: "
                "use --max-rows, or --format csv or parquet"
            )
        for values in frame.iter_rows():
            for column, (value, kind) in enumerate(zip(values, kinds, strict=True)):
                if value is None:
                    continue
                if kind in ("date", "time"):
                    sheet.write_datetime(row, column, value, formats[kind])
                elif kind == "number":
                    sheet.write_number(row, column, float(value))
                elif kind == "money":
                    sheet.write_number(row, column, float(value), formats["money"])
                else:
                    sheet.write_string(row, column, str(value))
            row += 1
    if row == 0:
        sheet.write_string(0, 0, "(no columns)")
    book.close()


def _cell_kind(name: str, dtype: pl.DataType) -> str:
    if dtype.is_temporal():
        return "date" if str(dtype) == "Date" else "time" if str(dtype).startswith("Datetime") else "text"
    if dtype.is_numeric():
        return "money" if _MONEY.search(name) and not dtype.is_integer() else "number"
    return "text"


_WRITERS: dict[str, Callable[[Iterator[pl.DataFrame], IO[Any]], None]] = {
    "csv": _csv,
    "json": _json,
    "parquet": _parquet,
    "xlsx": _xlsx,
}


def _to_file(
    path: Path, write: Callable[[Iterator[pl.DataFrame], IO[Any]], None], frames: Iterator[pl.DataFrame]
) -> None:
    binary = write in (_parquet, _xlsx)
    with path.open(
        "wb" if binary else "w", encoding=None if binary else "utf-8", newline="" if not binary else None
    ) as out:
        write(frames, out)


def _save(output: Path, writer: Callable[[Path], None]) -> None:
    """Write `output` through the one writer of files: a failed query leaves no half file."""
    from ..files import save_atomic

    try:
        save_atomic(output, writer)
    except OSError as error:
        raise LakeError(f"could not write {output}: {error.strerror}") from None


def _text(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text)
    else:
        _save(output, lambda temp: _write_text(temp, text))


def _write_text(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
