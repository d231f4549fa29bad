"""`commerce-reports catalog` and `commerce-reports sql`: the lake's views from the shell."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import polars as pl

from ..db import VIEWS, connect, ensure_lake, query, refresh_rollups, write_catalog
from ..errors import LakeError

__all__ = ["register"]

_FORMATS = ("table", "csv", "json", "parquet")


def register(subparsers: Any) -> None:
    """Add the `catalog` and `sql` subcommands to the `commerce-reports` parser."""
    catalog = subparsers.add_parser(
        "catalog",
        help="refresh the rollups and write data/commerce.duckdb (the views, for any DuckDB client)",
        description="Bring the rollups up to date, then write <data-dir>/commerce.duckdb, a small "
        "DuckDB file holding the views: open it with `duckdb -readonly data/commerce.duckdb`.",
    )
    catalog.add_argument(
        "--data-dir", type=Path, help="data folder (default COMMERCE_REPORTS_DATA_DIR or data)"
    )
    catalog.set_defaults(handler=run_catalog)

    sql = subparsers.add_parser(
        "sql",
        help="run SQL over the lake's views and print the result",
        description="Run one SQL query over the views (see --views) and print a table, or write "
        "CSV, JSON or Parquet.",
    )
    sql.add_argument("query", nargs="?", help='the SQL, e.g. "SELECT * FROM site_performance"')
    sql.add_argument("--views", action="store_true", help="list the views and what one row of each is")
    sql.add_argument("--format", choices=_FORMATS, default="table", help="output format (default table)")
    sql.add_argument("--output", type=Path, metavar="FILE", help="write to FILE instead of standard output")
    sql.add_argument("--max-rows", type=int, default=40, metavar="N", help="rows a table shows (default 40)")
    sql.add_argument("--data-dir", type=Path, help="data folder (default COMMERCE_REPORTS_DATA_DIR or data)")
    sql.set_defaults(handler=run_sql)


def run_catalog(args: argparse.Namespace) -> int:
    refreshed = refresh_rollups(args.data_dir)
    path = write_catalog(args.data_dir)
    print(f"rollups refreshed for: {', '.join(refreshed) or 'none (all fresh)'}")
    print(f"wrote {path}")
    return 0


def run_sql(args: argparse.Namespace) -> int:
    if args.views:
        width = max(map(len, VIEWS))
        for name, comment in VIEWS.items():
            print(f"{name:<{width}}  {comment}")
        return 0
    if not args.query:
        print("commerce-reports sql: error: give a query, or --views", file=sys.stderr)
        return 2
    if args.format == "parquet" and args.output is None:
        print("commerce-reports sql: error: --format parquet needs --output FILE", file=sys.stderr)
        return 2
    data_dir = ensure_lake(args.data_dir)
    with connect(data_dir) as con:
        frame = query(con, args.query)
    _write(frame, args)
    return 0


def _write(frame: pl.DataFrame, args: argparse.Namespace) -> None:
    output: Path | None = args.output
    try:
        if args.format == "table":
            with pl.Config(tbl_rows=args.max_rows, tbl_cols=-1, fmt_str_lengths=60, tbl_width_chars=200):
                text = str(frame)
            if output is None:
                print(text)
            else:
                output.write_text(text + "\n")
        elif args.format == "parquet":
            frame.write_parquet(output)  # type: ignore[arg-type]  # checked by run_sql
        elif args.format == "csv":
            _text(frame.write_csv(), output)
        else:
            _text(frame.write_json(), output)
    except OSError as error:
        raise LakeError(f"could not write {output}: {error.strerror}") from None


def _text(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text)
