"""Reporting subcommands: init, demo, sync, status, verify, check, invalidate. Each is a thin shell
over the public functions of `commerce_reports.api`: it checks its arguments (sites, dates,
folders) first, then imports what it runs; `status` and `sync --plan` read manifests without
loading the data stack (the api imports it only when a function needs it)."""

from __future__ import annotations

import argparse
import gc
import sys

from . import EXIT_UNREACHABLE
from .parser import add_command

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without loading typing: `--help` starts at once
if TYPE_CHECKING:
    from typing import Any

    from .parser import CommandParser

__all__ = ["register"]

_UNREACHABLE = (
    "a site's address could not be reached (refused, DNS, TLS, or no answer several times in a "
    "row): nothing more was asked of it"
)


def register(subparsers: Any) -> None:
    """Add the reporting subcommands to the `commerce-reports` parser."""
    add_command(
        subparsers,
        "init",
        help="lay out a project folder: marker, .env template, .gitignore, the notebooks",
        description="Create FOLDER (or complete it) as a commerce-reports project: "
        "commerce-reports.toml (every command and notebook below it uses FOLDER/data), a .env "
        "template for keys and settings (readable by you only, listed in .gitignore) and the "
        "notebooks. Files already there are kept as they are.",
        examples=["commerce-reports init my-reports && cd my-reports && commerce-reports demo"],
        define=_init_arguments,
        handler=_init,
    )
    add_command(
        subparsers,
        "demo",
        help="the whole tour against the sandbox, in one command",
        description="Start the built-in sandbox (two sites), sync --days of both into the "
        "project's lake (a demo-data folder beside it when real sites are configured), write the "
        "DuckDB catalog, show two views and export the report notebook as HTML into <data "
        "dir>/reports/ (data/reports/ in a project made by `init`).",
        examples=["commerce-reports demo", "commerce-reports demo --days 30 --dialect published"],
        define=_demo_arguments,
        handler=_demo,
    )
    add_command(
        subparsers,
        "sync",
        help="bring the lake up to date (ledger of updateDate days plus aggregate slices)",
        description="Fetch what the lake lacks or what has not settled, at the service's pace. "
        "Prints the plan first; a second sync right after the first makes no request.",
        examples=[
            "commerce-reports sync",
            "commerce-reports sync --start 2026-09-01 --site alpha --country US --country GB",
            "commerce-reports sync --plan",
        ],
        exits={1: "a partition was not stored (each is named on a `failed:` line)", 3: _UNREACHABLE},
        define=_sync_arguments,
        handler=_sync,
    )
    add_command(
        subparsers,
        "status",
        help="what the lake holds, what is unsettled, what a sync would fetch",
        description="Say which lake is used and why, then per site and dataset what it holds "
        "(partitions, rows, days, unsettled partitions, last fetch) and what a sync would request, "
        "with its ETA. Reads only the manifests; fetches nothing.",
        examples=["commerce-reports status", "commerce-reports status --windows --site alpha"],
        exits={1: "with --verify: something was damaged and repaired (as `verify` says)"},
        define=_status_arguments,
        handler=_status,
    )
    add_command(
        subparsers,
        "verify",
        help="check every partition and rollup by content (sha256); quarantine or rebuild what differs",
        description="Read every stored partition: its sha256 against the manifest's, and that it decodes "
        "as Parquet; and every rollup file against the sha256 its refresh recorded. A partition that "
        "fails moves to <data dir>/quarantine/ and is fetched again by the next sync (the rest of the "
        "lake stays readable); rollups that differ are rebuilt. A copied or restored lake verifies "
        "clean. --deep also computes every rollup again from the lake files and compares it row for "
        "row: a rollup forged together with its recorded sha256, or one an update computed wrong, is "
        "found and rebuilt.",
        examples=[
            "commerce-reports verify",
            "commerce-reports verify --fast --site alpha --data-dir /srv/reports/data",
            "commerce-reports verify --deep --site alpha",
        ],
        exits={1: "something was damaged and repaired: a partition quarantined or a rollup rebuilt"},
        define=_verify_arguments,
        handler=_verify,
    )
    add_command(
        subparsers,
        "check",
        help="is everything set up right? each site's address, key, dialect and pace; where the lake is",
        description="For each configured site (the embedded sandbox's when no key is configured): whether "
        "its address answers as the reporting API, whether its key is accepted, which dialect it speaks "
        "and what the pace is; and where the lake is and why. Asks each site one transactions request at "
        "most, in its turn of the pace shared with every process using the key.",
        examples=["commerce-reports check", "commerce-reports check --site alpha --wait"],
        exits={1: "something is not set up right (the report says what, per site)"},
        define=_check_arguments,
        handler=_check,
    )
    add_command(
        subparsers,
        "invalidate",
        help="make the next sync refetch a range of days",
        description="Forget the stored partitions that overlap START..END (both included), so the "
        "next sync fetches them again; the files stay readable until then.",
        examples=[
            "commerce-reports invalidate 2026-11-01 2026-11-07",
            "commerce-reports invalidate 2026-10-01 2026-10-31 --dataset networks --site alpha",
        ],
        define=_invalidate_arguments,
        handler=_invalidate,
    )


def _site_and_folder(parser: CommandParser) -> None:
    from .options import add_data_dir, add_sites

    add_data_dir(parser)
    add_sites(parser)


def _init_arguments(parser: CommandParser) -> None:
    from .options import folder_path

    parser.add_argument("folder", type=folder_path, help="the project folder, e.g. my-reports")
    parser.add_argument(
        "--notebooks",
        action="store_true",
        help="beside each notebook of the project that differs from this release's, write this "
        "release's as <name>.new.ipynb (yours is kept as it is)",
    )


def _demo_arguments(parser: CommandParser) -> None:
    from pathlib import Path

    from .options import count

    parser.add_argument(
        "--days", type=count(1, 3660), default=90, help="days of reports to sync (default 90)"
    )
    parser.add_argument(
        "--data-dir", type=Path, metavar="FOLDER", help="the demo's lake (default: the project's lake)"
    )
    parser.add_argument(
        "--dialect", choices=("contract", "published"), default="contract", help="the sandbox's wire dialect"
    )
    parser.add_argument(
        "--reports", type=Path, metavar="FOLDER", help="where the report goes (default: <data dir>/reports)"
    )


def _country(text: str) -> str:
    """An argparse type: a two-letter ISO 3166 country code (checked as a filter is)."""
    from ..errors import ValidationError
    from ..params import Filters

    try:
        return str(Filters(country=text).country)
    except ValidationError as error:
        raise argparse.ArgumentTypeError(f"{error.problem}; {error.allowed}") from None


def _sync_arguments(parser: CommandParser) -> None:
    from .options import DATE_FORMAT, day

    parser.add_argument(
        "--start", type=day, metavar=DATE_FORMAT, help="first day (default: 90 days before --end)"
    )
    parser.add_argument("--end", type=day, metavar=DATE_FORMAT, help="last day, included (default: today)")
    parser.add_argument(
        "--country",
        type=_country,
        action="append",
        default=[],
        metavar="CC",
        help="also keep a networks slice for this country, e.g. US (repeatable)",
    )
    parser.add_argument(
        "--grain", choices=("month", "day"), default="month", help="aggregate windows (default month)"
    )
    parser.add_argument(
        "--refresh", action="store_true", help="refetch every partition in range, settled or not"
    )
    parser.add_argument("--plan", action="store_true", help="print the requests and their ETA, fetch nothing")
    parser.add_argument("--no-progress", action="store_true", help="log lines instead of progress bars")
    parser.add_argument(
        "--yes", action="store_true", help="go ahead with a range over 5 years (thousands of requests)"
    )
    _site_and_folder(parser)


def _verify_arguments(parser: CommandParser) -> None:
    _site_and_folder(parser)
    parser.add_argument(
        "--fast",
        action="store_true",
        help="trust files whose size, times and inode are unchanged since they were last hashed",
    )
    parser.add_argument(
        "--deep",
        action="store_true",
        help="also compute every rollup again from the lake and compare it row for row (a full build "
        "and a comparison of each site: tens of seconds per million transactions)",
    )


def _status_arguments(parser: CommandParser) -> None:
    # reads manifests with plain Python: logging loads when it logs, the garbage collector stays off
    parser.set_defaults(light=True)
    _site_and_folder(parser)
    parser.add_argument(
        "--rebuild", action="store_true", help="recreate the manifests from the Parquet files first"
    )
    parser.add_argument(
        "--verify", action="store_true", help="check every partition first (as `verify` does)"
    )
    parser.add_argument(
        "--windows",
        action="store_true",
        help="also a line per aggregate window: when fetched, until when the service may revise it, final",
    )


def _check_arguments(parser: CommandParser) -> None:
    _site_and_folder(parser)
    parser.add_argument(
        "--wait", action="store_true", help="wait for the pace's turn however long (default: at most 10 s)"
    )


def _invalidate_arguments(parser: CommandParser) -> None:
    from ..contract import DATASETS
    from .options import DATE_FORMAT, day

    parser.add_argument("start", type=day, metavar="START", help=f"first day, {DATE_FORMAT}")
    parser.add_argument("end", type=day, metavar="END", help=f"last day, included, {DATE_FORMAT}")
    parser.add_argument(
        "--dataset", action="append", choices=DATASETS, help=f"default: all of {', '.join(DATASETS)}"
    )
    _site_and_folder(parser)


def _init(args: argparse.Namespace) -> int:
    from ..project import init_project

    done = init_project(args.folder, notebooks=args.notebooks)
    for path in done.written:
        print(f"wrote {path.relative_to(done.folder)}")
    for path in done.kept:
        print(f"kept  {path.relative_to(done.folder)} (already there)")
    import shlex

    if done.outdated and not args.notebooks:
        names = ", ".join(path.name for path in done.outdated)
        again = f"commerce-reports init {shlex.quote(str(args.folder))} --notebooks"
        print(f"this release's {names} differ from yours: `{again}` writes each beside yours, to compare")
    from importlib.util import find_spec

    folder = shlex.quote(str(args.folder))
    lab = "jupyter lab notebooks/"
    lab = lab if find_spec("jupyterlab") else f"pip install jupyterlab && {lab}"  # (the core has none)
    print(f"project ready: cd {folder} && commerce-reports demo  (then: {lab})")
    return 0


def _demo(args: argparse.Namespace) -> int:
    from ..config import current_settings
    from .options import output_folder

    current_settings()  # a setting that cannot be used is said before the sandbox and the stack load
    data_dir = output_folder("--data-dir", args.data_dir) if args.data_dir is not None else None
    reports = output_folder("--reports", args.reports) if args.reports is not None else None
    from ..demo import run_demo

    run_demo(days=args.days, data_dir=data_dir, reports=reports, dialect=args.dialect)
    return 0


def _in_order(args: argparse.Namespace, start: str = "--start", end: str = "--end") -> None:
    """The days asked, the last not before the first, as the command line names them (`start`,
    `end`: its options, or `invalidate`'s START and END)."""
    from .options import UsageError

    if args.start is not None and args.end is not None and args.end < args.start:
        raise UsageError(
            end, f"{args.end} is before {start} {args.start}", "give an end on or after the start"
        )


def _sync(args: argparse.Namespace) -> int:
    from .options import known_sites

    _in_order(args)
    known_sites("sync", args.sites, args.data_dir, stored=False)
    kwargs: dict[str, Any] = {
        "sites": args.sites,
        "countries": args.country,
        "grain": args.grain,
        "data_dir": args.data_dir,
        "refresh": args.refresh,
        "allow_large": args.yes,
    }
    if args.plan:
        from ..api import plan_sync  # plain Python over manifests and dates

        print(plan_sync(args.start, args.end, **kwargs).describe())
        return 0
    from ..activity import to_stdout
    from ..api import SyncOptions, lake_location, sync

    print(f"lake: {lake_location(args.data_dir)}")
    options = SyncOptions(progress=False if args.no_progress else None, say=to_stdout)
    result = sync(args.start, args.end, options=options, **kwargs)
    print(result.summary())
    for line in result.failure_lines():
        print(f"failed: {line}", file=sys.stderr)
    if result.interrupted:
        return 130
    if result.unreachable:
        return EXIT_UNREACHABLE
    return 1 if result.failed or result.unfinished else 0


def _status(args: argparse.Namespace) -> int:
    # The manifests, read and printed with plain Python: no polars, pyarrow or DuckDB at start-up.
    from .options import existing_lake, known_sites

    data_dir = existing_lake("status", args.data_dir)  # a mistyped folder is not an empty lake
    known_sites("status", args.sites, data_dir, stored=False)
    from ..api import lake_location, plan_sync, status_rows, window_rows
    from ..config import current_settings
    from ..embedded import available_sites
    from ..syncing.status import describe_status, describe_windows, unlisted_sites

    print(f"lake: {lake_location(args.data_dir)}")
    if args.verify or args.rebuild:  # every file read: no longer the short run `light` promised
        gc.enable()
    code = _verify(args) if args.verify else 0
    rows = status_rows(sites=args.sites, data_dir=data_dir, rebuild=args.rebuild)
    unlisted = (
        [] if args.sites else unlisted_sites(data_dir, available_sites(current_settings(), start=False))
    )
    if rows or not unlisted:
        print(describe_status(rows))
    else:  # the lake holds sites, just none of the settings'
        print("no site of the settings is in the lake yet: run `commerce-reports sync` first")
    for line in unlisted:
        print(line)
    if args.windows:
        print(describe_windows(window_rows(sites=args.sites, data_dir=data_dir)))
    print(plan_sync(sites=args.sites, data_dir=data_dir).describe())
    return code


def _verify(args: argparse.Namespace) -> int:
    from .options import existing_lake, known_sites

    data_dir = existing_lake(args.command, args.data_dir)
    known_sites(args.command, args.sites, args.data_dir, stored=False)
    from ..api import verify
    from ..lake import VerifyUnfinished

    fast, deep = getattr(args, "fast", False), getattr(args, "deep", False)  # (`status --verify`: neither)
    try:
        report = verify(sites=args.sites, data_dir=data_dir, fast=fast, deep=deep)
    except VerifyUnfinished as error:  # the verdict, then what could not be done (one error line)
        print(error.report.summary())
        raise
    print(report.summary())
    return 0 if report.ok else 1


def _check(args: argparse.Namespace) -> int:
    from .options import known_sites

    known_sites("check", args.sites, args.data_dir, stored=False)
    from ..checkup import DEFAULT_MAX_WAIT, check

    report = check(args.sites, data_dir=args.data_dir, max_wait=None if args.wait else DEFAULT_MAX_WAIT)
    print(report.describe())
    return 0 if report.ok else 1


def _invalidate(args: argparse.Namespace) -> int:
    from .options import existing_lake, known_sites

    _in_order(args, "START", "END")
    existing_lake("invalidate", args.data_dir)
    known_sites("invalidate", args.sites, args.data_dir, stored=False)
    from ..api import invalidate

    chosen = {"datasets": args.dataset} if args.dataset else {}  # default: all three
    count = invalidate(args.start, args.end, sites=args.sites, data_dir=args.data_dir, **chosen)
    if count:
        print(f"marked {count} partitions: the next sync fetches them again (they are read until then)")
    else:
        print(f"nothing stored overlaps {args.start}..{args.end}: nothing marked")
    return 0
