"""`commerce-reports alerts`: what changed that matters, and whether the lake is healthy; exit 3
when there is an alert, 0 when there is none (for cron: `... alerts || mail ...`)."""

from __future__ import annotations

import argparse
from datetime import date
from typing import Any

from .options import add_data_dir, existing_lake, known_sites

__all__ = ["register"]


def _days(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 3660:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of days from 1 to 3660")
    return int(text)


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date YYYY-MM-DD (got {text!r})") from None


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "alerts",
        help="changes that matter (revenue, EPC, conversion, return rate) and lake health; exit 3 on alerts",
        description="Judge each series (per site, network, device and country) against the same weekdays "
        "of its own trailing weeks, on the lake as it is (nothing is fetched), and check that every site "
        "was synced recently and that no partition keeps failing. Prints one line per alert (what, where, "
        "how big, since when, against what baseline) and what could not be checked. Thresholds: the "
        "[alerts] table of commerce-reports.toml. Exit codes: 0 no alert, 3 alerts, 2 an unknown site or "
        "data folder, 1 another error.",
    )
    parser.add_argument("--site", action="append", dest="sites", help="only this site (repeatable)")
    parser.add_argument(
        "--days",
        type=_days,
        default=7,
        help="judge each of the last N complete days (default 7: anything that changed this week)",
    )
    parser.add_argument(
        "--as-of", type=_day, help="the last day judged (default: each site's last complete day)"
    )
    add_data_dir(parser)
    parser.set_defaults(handler=_alerts)


def _alerts(args: argparse.Namespace) -> int:
    from ..alerting import alerts

    data_dir = existing_lake("alerts", args.data_dir)  # a mistyped folder: exit 2, nothing created
    known_sites("alerts", args.sites, data_dir, stored=True)
    report = alerts(site=args.sites, days=args.days, as_of=args.as_of, data_dir=data_dir)
    print(report.describe())
    return report.exit_code
