"""`commerce-reports catalog`, `rollups` and `sql`: the lake's views from the shell. `sql` writes
through the output formats' registry (`commerce_reports.export.formats.OUTPUT_FORMATS`), as
`cr.export` does, or prints a table."""

from __future__ import annotations

import argparse
import sys

from .parser import add_command

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without loading typing: `--help` starts at once
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    import polars as pl

    from ..db import SiteRefresh
    from ..db.readonly import Connection
    from .parser import CommandParser

__all__ = ["register", "write_query"]

_TABLE_ROWS = 40  # rows a table shows unless --max-rows says


def register(subparsers: Any) -> None:
    """Add the `catalog`, `rollups` and `sql` subcommands to the `commerce-reports` parser."""
    add_command(
        subparsers,
        "catalog",
        help="refresh the rollups and write data/commerce.duckdb (the views, for any DuckDB client)",
        description="Bring the rollups up to date, then write <data-dir>/commerce.duckdb, a small "
        "DuckDB file holding the views: open it with `duckdb -readonly data/commerce.duckdb` "
        "(the CLI: `pip install duckdb-cli`). Also repairs a catalog whose data folder was moved.",
        examples=["commerce-reports catalog", "commerce-reports catalog --data-dir /mnt/share/data"],
        define=_folder_only,
        handler=run_catalog,
    )
    add_command(
        subparsers,
        "rollups",
        help="bring the rollups up to date (only what changed), --rebuild them whole, or show the --plan",
        description="Refresh the rollups that keep the performance views fast: only the months "
        "that changed since they were built. --rebuild recomputes them whole from the lake files. "
        "--plan prints what a refresh would do and why, writing nothing: per site, whole, update or "
        "nothing (and the lake files that changed), then per rollup and month whole (written again), "
        "delta (updated by the changed transactions alone), patch or nothing, each with its reason.",
        examples=[
            "commerce-reports rollups",
            "commerce-reports rollups --plan",
            "commerce-reports rollups --rebuild --site alpha",
        ],
        define=_rollups_arguments,
        handler=run_rollups,
    )
    add_command(
        subparsers,
        "sql",
        help="run SQL over the lake's views and print the result",
        description="Run one SQL query over the views (see --views) and print a table, or write "
        "it in an output format. Rows are fetched and written in batches, so a result of any size "
        "streams in bounded memory. Queries only read: one SELECT (or WITH, FROM, DESCRIBE, SHOW, "
        "SUMMARIZE) over the data folder; COPY, ATTACH, INSTALL, SET, PRAGMA and the like are "
        "refused before they run.",
        examples=[
            'commerce-reports sql "SELECT * FROM site_performance ORDER BY window_start DESC"',
            'commerce-reports sql "FROM transactions" --output transactions.xlsx',
            'commerce-reports sql "FROM daily_performance" --format csv > daily.csv',
            "commerce-reports sql --views",
        ],
        define=_sql_arguments,
        handler=run_sql,
    )


def _folder_only(parser: CommandParser) -> None:
    from .options import add_data_dir

    add_data_dir(parser)


def _rollups_arguments(parser: CommandParser) -> None:
    from .options import add_sites

    what = parser.add_mutually_exclusive_group()
    what.add_argument("--rebuild", action="store_true", help="recompute every rollup from the lake")
    what.add_argument(
        "--plan", action="store_true", help="print what a refresh would do and why; write nothing"
    )
    add_sites(parser, "only this site (repeatable)")
    _folder_only(parser)


def _sql_arguments(parser: CommandParser) -> None:
    from pathlib import Path

    from ..export.formats import OUTPUT_FORMATS
    from .options import count

    formats = "; ".join(f"{f.name}: {f.about}" for f in OUTPUT_FORMATS.values())
    parser.add_argument("query", nargs="?", help='the SQL, e.g. "SELECT * FROM site_performance"')
    parser.add_argument("--views", action="store_true", help="list the views and what one row of each is")
    parser.add_argument(
        "--format",
        choices=("table", *OUTPUT_FORMATS),
        help=f"table (the default on a terminal, the first rows) or {formats}. Default with "
        "--output: its suffix's format",
    )
    parser.add_argument(
        "--output", type=Path, metavar="FILE", help="write to FILE (its folder must exist), e.g. sites.xlsx"
    )
    parser.add_argument(
        "--max-rows",
        type=count(0),
        metavar="N",
        help="at most N rows: the query itself stops there (default: 40 for a table, all otherwise)",
    )
    _folder_only(parser)


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
    from .options import existing_lake

    data_dir = existing_lake("catalog", args.data_dir)
    from ..activity import Step
    from ..db import refresh_rollups, write_catalog

    with Step("bringing the rollups up to date"):
        done = refresh_rollups(data_dir)
    _report(done)
    print(f"wrote {write_catalog(data_dir, force=True)}")
    return 0


def run_rollups(args: argparse.Namespace) -> int:
    from .options import existing_lake, known_sites

    data_dir = existing_lake("rollups", args.data_dir)
    known_sites("rollups", args.sites, data_dir, stored=True)
    from ..activity import Step
    from ..db import plan_rollups, rebuild_rollups, refresh_rollups, write_catalog

    if args.plan:
        with Step("working out what a refresh would do"):
            plans = plan_rollups(data_dir, args.sites)
        print("\n".join(line for plan in plans for line in plan.describe()))
        return 0
    with Step("rebuilding the rollups" if args.rebuild else "bringing the rollups up to date"):
        if args.rebuild:
            done = rebuild_rollups(data_dir, args.sites)
        else:
            done = refresh_rollups(data_dir, {site: [] for site in args.sites} if args.sites else None)
    _report(done)
    write_catalog(data_dir, published=True)  # the refresh or rebuild published the lake
    return 0


def _form(args: argparse.Namespace) -> str:
    """The output's format: --format, else the suffix of --output, else a table; checked (with
    the output's folder) before the lake is opened."""
    from ..errors import ValidationError
    from ..export.formats import OUTPUT_FORMATS, format_of
    from .options import UsageError, writable_file

    if not args.query:
        raise UsageError(
            "sql", "give a query, or --views", 'e.g. commerce-reports sql "FROM site_performance"'
        )
    if args.output is not None:
        args.output = writable_file("--output", args.output)
    try:
        form: str = args.format or (format_of(args.output).name if args.output is not None else "table")
    except ValidationError as error:  # (the library's words say format=; a command line, --format)
        allowed = error.allowed.replace("format=", "--format csv")
        raise UsageError("--output", error.problem, allowed) from None
    if form != "table" and OUTPUT_FORMATS[form].binary and args.output is None:
        raise UsageError(
            "--format", f"{form} is not text: it needs --output FILE", "e.g. --output result.xlsx"
        )
    return form


def run_sql(args: argparse.Namespace) -> int:
    if args.views:
        from ..db import VIEWS

        width = max(map(len, VIEWS))
        for name, comment in VIEWS.items():
            print(f"{name:<{width}}  {comment}")
        return 0
    form = _form(args)
    from .options import existing_lake

    data_dir = existing_lake("sql", args.data_dir)
    from ..db.guard import read_only_statement

    read_only_statement(args.query)  # refused by DuckDB's parser alone, before the views' stack loads
    from ..db import connect, ensure_catalog, ensure_lake

    ensure_lake(data_dir)
    ensure_catalog(data_dir)  # a moved data folder: the DuckDB CLI's catalog is repaired here too
    with connect(data_dir) as con:
        write_query(con, args.query, form, args.output, args.max_rows)
    return 0


def write_query(con: Connection, sql: str, form: str, output: Path | None, max_rows: int | None) -> None:
    """Run `sql` on `con` and write its rows as `form` ("table" or an output format's name) to
    `output` (default: standard output), a batch at a time; `max_rows` limits the query itself."""
    from ..db import stream
    from ..export.formats import OUTPUT_FORMATS, save_frames, write_frames

    if form == "table":
        shown = _TABLE_ROWS if max_rows is None else max_rows
        _text(_table(list(stream(con, sql, limit=shown + 1)), shown), output)  # one more: are there more?
        return
    from ..config import current_settings

    output_format = OUTPUT_FORMATS[form]
    frames = stream(con, sql, limit=max_rows, flat=output_format.flat)
    money = current_settings().currency
    if output is not None:
        save_frames(frames, output, output_format, money)
        return
    write_frames(frames, output_format, sys.stdout, money)  # (`| head`: 141, as `main` says it)
    sys.stdout.flush()


def _table(frames: list[pl.DataFrame], shown: int) -> str:
    import polars as pl

    from ..export.formats import check_writable

    frame = pl.concat(frames) if frames else pl.DataFrame()
    check_writable(frame, "a table")
    with pl.Config(tbl_rows=shown, tbl_cols=-1, fmt_str_lengths=60, tbl_width_chars=200):
        text = str(frame.head(shown))
    if frame.height > shown:
        text += f"\nthe first {shown} rows; --max-rows N shows more, --output FILE writes all"
    return text + "\n"


def _text(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text)
        return
    from ..files import save_atomic

    save_atomic(output, text)
