"""`commerce-reports alerts`: what changed that matters, and whether the lake is healthy; exit 3
when there is an alert, 0 when there is none (for cron: `... alerts || mail ...`)."""

from __future__ import annotations

import argparse

from .parser import add_command

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without loading typing: `--help` starts at once
if TYPE_CHECKING:
    from datetime import date
    from typing import Any

    from .parser import CommandParser

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the `alerts` subcommand to the `commerce-reports` parser."""
    add_command(
        subparsers,
        "alerts",
        help="changes that matter, and why (revenue, orders, clicks, EPC, conversion, returns; merchants "
        "and links) and lake health; exit 3 on alerts",
        description="Judge each series (per site, network, device, country, merchant and link) against the "
        "same weekdays of its own trailing weeks, on the lake as it is (nothing is fetched), by the rules "
        "of commerce-reports.toml's [alerts] table, and check that every site was synced recently and "
        "that no partition keeps failing. Prints each cause first (what, where, how big, over which days, "
        "against what baseline), why (the factor that moved it and its share of the broader change) and "
        "the alerts it explains, then the days each measure could not be judged and why (clicks count "
        "once their day's window is fetched after it ended).",
        examples=[
            "commerce-reports alerts",
            "commerce-reports alerts --site alpha --days 14 --as-of 2026-11-23",
            "commerce-reports alerts > alerts.txt || mail -s 'commerce alerts' me@example.org < alerts.txt",
        ],
        exits={3: "there are alerts (for cron: `alerts || mail ...`)"},
        define=_arguments,
        handler=_alerts,
    )


def _arguments(parser: CommandParser) -> None:
    from .options import DATE_FORMAT, add_data_dir, add_sites, count, day

    add_sites(parser, "only this site (repeatable)")
    parser.add_argument(
        "--days",
        type=count(1, 3660),
        default=7,
        help="judge each of the N days up to --as-of (default 7: anything that changed this week); "
        "a day a measure's data does not hold yet is said, not judged",
    )
    parser.add_argument(
        "--as-of",
        type=day,
        metavar=DATE_FORMAT,
        help="the last day judged, not after today (default: each site's last complete day)",
    )
    add_data_dir(parser)


def _alerts(args: argparse.Namespace) -> int:
    from .options import existing_lake, known_sites

    _not_after_today(args.as_of)
    data_dir = existing_lake("alerts", args.data_dir)  # a mistyped folder: exit 2, nothing created
    known_sites("alerts", args.sites, data_dir, stored=True)  # checked before the data stack loads
    from ..alerting import alerts

    report = alerts(site=args.sites, days=args.days, as_of=args.as_of, data_dir=data_dir)  # says its step
    print(report.describe())
    return report.exit_code


def _not_after_today(as_of: date | None) -> None:
    """A future --as-of is a usage error (exit 2): judged on no day, its report would read as all
    clear to `alerts || mail`. The one rule of days (`params.as_days`), before the data stack loads."""
    from datetime import UTC, datetime

    from ..errors import ValidationError
    from ..params import as_days
    from .options import UsageError

    try:
        as_days(None, as_of, datetime.now(UTC).date())
    except ValidationError as error:
        raise UsageError.of(error, "--as-of") from None
