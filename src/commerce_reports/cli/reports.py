"""Reporting subcommands: demo, sync, status, check, verify, invalidate. Each is a thin shell over the
public functions of `commerce_reports.api`; `status` and `sync --plan`
read manifests without loading the data stack (the api imports it only when a function needs it)."""

from __future__ import annotations

import argparse
import sys
from datetime import date
from pathlib import Path
from typing import Any

from . import EXIT_UNREACHABLE
from .options import add_data_dir, existing_lake, known_sites


def _date(text: str) -> date:
    from ..params import as_date

    try:
        return as_date(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _common(parser: argparse.ArgumentParser) -> None:
    add_data_dir(parser)
    parser.add_argument(
        "--site", action="append", dest="sites", help="only this site (repeatable; default: all)"
    )


def register(subparsers: Any) -> None:
    init = subparsers.add_parser(
        "init",
        help="lay out a project folder: marker, .env template, .gitignore, the notebooks",
        description="Create FOLDER (or complete it) as a commerce-reports project: "
        "commerce-reports.toml (every command and notebook below it uses FOLDER/data), a .env "
        "template for keys and settings (readable by you only, listed in .gitignore) and the "
        "notebooks. Files already there are kept as they are.",
    )
    init.add_argument("folder", type=Path, help="the project folder, e.g. my-reports")
    init.set_defaults(handler=_init)

    demo = subparsers.add_parser(
        "demo",
        help="the whole tour against the sandbox, in one command",
        description="Start the built-in sandbox (two sites), sync --days of both into the "
        "project's lake (a demo-data folder beside it when real sites are configured), write the "
        "DuckDB catalog, show two views and export the report notebook as HTML into reports/.",
    )
    demo.add_argument("--days", type=int, default=90, help="days of reports to sync (default 90)")
    demo.add_argument("--data-dir", type=Path, help="the demo's lake (default: the project's lake)")
    demo.add_argument(
        "--dialect", choices=("contract", "published"), default="contract", help="the sandbox's wire dialect"
    )
    demo.add_argument("--reports", type=Path, help="where the report goes (default: <data dir>/reports)")
    demo.set_defaults(handler=_demo)

    run = subparsers.add_parser(
        "sync",
        help="bring the lake up to date (ledger of updateDate days plus aggregate slices)",
        description="Fetch what the lake lacks or what has not settled, at the service's pace. "
        "Prints the plan first; a second sync right after the first makes no request. Exits 1 when "
        f"a partition was not stored, {EXIT_UNREACHABLE} when a site's address could not be reached "
        "(refused, DNS, TLS, or no answer several times in a row: nothing more was asked of it), "
        "130 when interrupted.",
    )
    run.add_argument("--start", type=_date, help="first day (default: 90 days before --end)")
    run.add_argument("--end", type=_date, help="last day, included (default: today)")
    run.add_argument(
        "--country", action="append", default=[], help="also keep a networks slice for this country"
    )
    run.add_argument(
        "--grain", choices=("month", "day"), default="month", help="aggregate windows (default month)"
    )
    run.add_argument(
        "--refresh", action="store_true", help="refetch every partition in range, settled or not"
    )
    run.add_argument("--plan", action="store_true", help="print the requests and their ETA, fetch nothing")
    run.add_argument("--no-progress", action="store_true", help="log lines instead of progress bars")
    run.add_argument(
        "--yes", action="store_true", help="go ahead with a range over 5 years (thousands of requests)"
    )
    _common(run)
    run.set_defaults(handler=_sync)

    state = subparsers.add_parser(
        "status",
        help="what the lake holds, what is unsettled, what a sync would fetch",
        description="Say which lake is used and why, then per site and dataset what it holds "
        "(partitions, rows, days, unsettled partitions, last fetch) and what a sync would request, "
        "with its ETA. Reads only the manifests; fetches nothing.",
    )
    _common(state)
    state.add_argument(
        "--rebuild", action="store_true", help="recreate the manifests from the Parquet files first"
    )
    state.add_argument("--verify", action="store_true", help="check every partition first (as `verify` does)")
    state.add_argument(
        "--windows",
        action="store_true",
        help="also a line per aggregate window: when fetched, until when the service may revise it, final",
    )
    state.set_defaults(handler=_status)

    check = subparsers.add_parser(
        "verify",
        help="check every partition and rollup by content (sha256); quarantine or rebuild what differs",
        description="Read every stored partition: its sha256 against the manifest's, and that it decodes "
        "as Parquet; and every rollup file against the sha256 its refresh recorded. A partition that "
        "fails moves to <data dir>/quarantine/ and is fetched again by the next sync (the rest of the "
        "lake stays readable); rollups that differ are rebuilt. A copied or restored lake verifies "
        "clean. Exits 1 when something was repaired.",
    )
    _common(check)
    check.add_argument(
        "--fast",
        action="store_true",
        help="trust files whose size, times and inode are unchanged since they were last hashed",
    )
    check.set_defaults(handler=_verify)

    doctor = subparsers.add_parser(
        "check",
        help="is everything set up right? each site's address, key, dialect and pace; where the lake is",
        description="For each configured site (the embedded sandbox's when no key is configured): whether "
        "its address answers as the reporting API, whether its key is accepted, which dialect it speaks "
        "and what the pace is; and where the lake is and why. Asks each site one transactions request at "
        "most, in its turn of the pace shared with every process using the key. Exits 1 when something is "
        "wrong.",
    )
    _common(doctor)
    doctor.add_argument(
        "--wait", action="store_true", help="wait for the pace's turn however long (default: at most 10 s)"
    )
    doctor.set_defaults(handler=_check)

    forget = subparsers.add_parser(
        "invalidate",
        help="make the next sync refetch a range of days",
        description="Forget the stored partitions that overlap START..END (both included, "
        "YYYY-MM-DD), so the next sync fetches them again; the files stay readable until then.",
    )
    forget.add_argument("start", type=_date, help="first day, YYYY-MM-DD")
    forget.add_argument("end", type=_date, help="last day, included")
    forget.add_argument(
        "--dataset",
        action="append",
        choices=("transactions", "networks", "merchandise"),
        help="default: all three",
    )
    _common(forget)
    forget.set_defaults(handler=_invalidate)


def _init(args: argparse.Namespace) -> int:
    from ..project import init_project

    done = init_project(args.folder)
    for path in done.written:
        print(f"wrote {path.relative_to(done.folder)}")
    for path in done.kept:
        print(f"kept  {path.relative_to(done.folder)} (already there)")
    print(f"project ready: cd {args.folder} && commerce-reports demo  (then: jupyter lab notebooks/)")
    return 0


def _demo(args: argparse.Namespace) -> int:
    if args.days < 1:
        raise SystemExit("error: --days must be at least 1")
    from ..demo import run_demo

    run_demo(days=args.days, data_dir=args.data_dir, reports=args.reports, dialect=args.dialect)
    return 0


def _sync(args: argparse.Namespace) -> int:
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
    from ..api import SyncOptions, lake_location, sync

    print(f"lake: {lake_location(args.data_dir)}")
    options = SyncOptions(progress=False if args.no_progress else None, say=print)
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
    from ..api import plan_sync, status_rows, window_rows
    from ..config import current_settings
    from ..syncing.status import describe_status, describe_windows

    known_sites("status", args.sites, args.data_dir, stored=False)
    print(f"lake: {current_settings().location(args.data_dir)}")
    code = _verify(args) if args.verify else 0
    print(describe_status(status_rows(sites=args.sites, data_dir=args.data_dir, rebuild=args.rebuild)))
    if args.windows:
        print(describe_windows(window_rows(sites=args.sites, data_dir=args.data_dir)))
    print(plan_sync(sites=args.sites, data_dir=args.data_dir).describe())
    return code


def _verify(args: argparse.Namespace) -> int:
    from ..api import verify

    data_dir = existing_lake(args.command, args.data_dir)
    known_sites(args.command, args.sites, args.data_dir, stored=False)
    report = verify(sites=args.sites, data_dir=data_dir, fast=getattr(args, "fast", False))
    print(report.summary())
    return 0 if report.ok else 1


def _check(args: argparse.Namespace) -> int:
    from ..checkup import DEFAULT_MAX_WAIT, check

    known_sites("check", args.sites, args.data_dir, stored=False)
    report = check(args.sites, data_dir=args.data_dir, max_wait=None if args.wait else DEFAULT_MAX_WAIT)
    print(report.describe())
    return 0 if report.ok else 1


def _invalidate(args: argparse.Namespace) -> int:
    from ..api import invalidate

    existing_lake("invalidate", args.data_dir)
    known_sites("invalidate", args.sites, args.data_dir, stored=False)
    chosen = {"datasets": args.dataset} if args.dataset else {}  # default: all three
    count = invalidate(args.start, args.end, sites=args.sites, data_dir=args.data_dir, **chosen)
    print(f"forgot {count} partitions: the next sync fetches them again", file=sys.stderr)
    return 0
