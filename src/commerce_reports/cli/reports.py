"""Reporting subcommands: demo (and, as the toolkit grows, sync, status, sql, export)."""

from __future__ import annotations

import argparse
from typing import Any

from ..demo import run_demo


def register(subparsers: Any) -> None:
    demo = subparsers.add_parser("demo", help="the whole tour against the sandbox, in one command")
    demo.add_argument("--days", type=int, default=7, help="days of reports to fetch (default 7)")
    demo.set_defaults(handler=_demo)


def _demo(args: argparse.Namespace) -> int:
    if args.days < 1:
        raise SystemExit("error: --days must be at least 1")
    run_demo(days=args.days)
    return 0
