"""`commerce-reports catalog`, `rollups` and `sql`: the lake's views from the shell."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import LakeError

if TYPE_CHECKING:  # the handlers import DuckDB and polars when they run: `--help` stays instant
    import polars as pl

    from ..db import SiteRefresh

__all__ = ["register"]

_FORMATS = ("table", "csv", "json", "parquet")
_MONEY = re.compile(r"revenue|order_value|sales|price")  # money columns: a float one goes out in cents
_DIGITS = 12  # other decimals: enough digits to keep every figure, none of the float noise
_DATA_DIR = "data folder (default: COMMERCE_REPORTS_DATA_DIR or data)"


def register(subparsers: Any) -> None:
    """Add the `catalog`, `rollups` and `sql` subcommands to the `commerce-reports` parser."""
    catalog = subparsers.add_parser(
        "catalog",
        help="refresh the rollups and write data/commerce.duckdb (the views, for any DuckDB client)",
        description="Bring the rollups up to date, then write <data-dir>/commerce.duckdb, a small "
        "DuckDB file holding the views: open it with `duckdb -readonly data/commerce.duckdb` "
        "(the CLI: `pip install duckdb-cli`). Also repairs a catalog whose data folder was moved.",
    )
    catalog.add_argument("--data-dir", type=Path, help=_DATA_DIR)
    catalog.set_defaults(handler=run_catalog)

    rollups = subparsers.add_parser(
        "rollups",
        help="bring the rollups up to date (only what changed), or --rebuild them whole",
        description="Refresh the rollups that keep the performance views fast: only the months "
        "that changed since they were built. --rebuild recomputes them whole from the lake files.",
    )
    rollups.add_argument("--rebuild", action="store_true", help="recompute every rollup from the lake")
    rollups.add_argument("--site", action="append", dest="sites", help="only this site (repeatable)")
    rollups.add_argument("--data-dir", type=Path, help=_DATA_DIR)
    rollups.set_defaults(handler=run_rollups)

    sql = subparsers.add_parser(
        "sql",
        help="run SQL over the lake's views and print the result",
        description="Run one SQL query over the views (see --views) and print a table, or write "
        "CSV, JSON or Parquet. Queries read only the data folder.",
    )
    sql.add_argument("query", nargs="?", help='the SQL, e.g. "SELECT * FROM site_performance"')
    sql.add_argument("--views", action="store_true", help="list the views and what one row of each is")
    sql.add_argument("--format", choices=_FORMATS, default="table", help="output format (default table)")
    sql.add_argument("--output", type=Path, metavar="FILE", help="write to FILE instead of standard output")
    sql.add_argument("--max-rows", type=int, default=40, metavar="N", help="rows a table shows (default 40)")
    sql.add_argument("--data-dir", type=Path, help=_DATA_DIR)
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

    _report(refresh_rollups(args.data_dir))
    print(f"wrote {write_catalog(args.data_dir, force=True)}")
    return 0


def run_rollups(args: argparse.Namespace) -> int:
    from ..db import rebuild_rollups, refresh_rollups, write_catalog

    if args.rebuild:
        done = rebuild_rollups(args.data_dir, args.sites)
    else:
        done = refresh_rollups(args.data_dir, {site: [] for site in args.sites} if args.sites else None)
    _report(done)
    write_catalog(args.data_dir)
    return 0


def run_sql(args: argparse.Namespace) -> int:
    from ..db import VIEWS, connect, ensure_catalog, ensure_lake, query

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
    ensure_catalog(data_dir)  # a moved data folder: the DuckDB CLI's catalog is repaired here too
    with connect(data_dir) as con:
        frame = query(con, args.query)
    _write(frame, args)
    return 0


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


def _write(frame: pl.DataFrame, args: argparse.Namespace) -> None:
    import polars as pl

    output: Path | None = args.output
    try:
        if args.format == "table":
            with pl.Config(tbl_rows=args.max_rows, tbl_cols=-1, fmt_str_lengths=60, tbl_width_chars=200):
                text = str(frame)
            _text(text + "\n", output)
        elif args.format == "parquet":
            frame.write_parquet(output)  # type: ignore[arg-type]  # checked by run_sql
        elif args.format == "csv":
            _text(_rounded(frame).write_csv(), output)
        else:
            _text(_rounded(frame).write_json() + "\n", output)
    except OSError as error:
        raise LakeError(f"could not write {output}: {error.strerror}") from None


def _text(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text)
