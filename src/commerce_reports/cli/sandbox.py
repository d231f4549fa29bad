"""`commerce-reports sandbox`: serve the reports sandbox (with --deals, the deals one)."""

from __future__ import annotations

import argparse
import sys

from .parser import add_command

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without loading typing: `--help` starts at once
if TYPE_CHECKING:
    from typing import Any

    from ..sandbox import Incident, Site
    from .parser import CommandParser

__all__ = ["register"]


def _site(text: str) -> Site:
    from ..sandbox import Site

    name, sep, key = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected NAME=KEY, like alpha=my-key (got {text!r})")
    try:
        return Site(name, key)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds >= 0 (got {text!r})")
    return value


def _port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a TCP port: give 0 to 65535")
    return int(text)


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1 (got {text!r})")
    return int(text)


def _faults(text: str) -> tuple[frozenset[str], float]:
    """`0.2` (every transport kind at that rate) or `500,drop,huge_number:0.3` (those kinds at that
    rate; hostile data only so)."""
    from ..sandbox import DATA_KINDS, FAULT_KINDS

    kinds_text, sep, rate_text = text.rpartition(":")
    kinds = frozenset(kinds_text.split(",")) if sep else FAULT_KINDS
    try:
        rate = float(rate_text)
    except ValueError:
        rate = -1.0
    unknown = sorted(kinds - FAULT_KINDS - DATA_KINDS)
    if unknown or not 0 <= rate <= 1:
        raise argparse.ArgumentTypeError(
            f"expected RATE or KIND,KIND:RATE with a rate from 0 to 1 and kinds among"
            f" {','.join(sorted(FAULT_KINDS | DATA_KINDS))} (got {text!r})"
        )
    return kinds, rate


def _incident(text: str) -> Incident:
    from ..errors import ValidationError
    from ..sandbox import Incident

    try:
        return Incident.parse(text)
    except ValidationError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


_INCIDENT_HELP = (
    "stage an incident in the world (repeatable): comma-separated KEY=VALUE pairs: a scope (site=NAME,"
    " network=NAME, merchant=NAME|ID, link=URL, device=Mobile|Desktop|Tablet|Unknown, country=CC; none:"
    " everything), from=YYYY-MM-DD (the first click day changed; required), until=YYYY-MM-DD (the last,"
    " included; default: ongoing) and changes as percentages: epc=-50%% (each order pays half: revenue"
    " and EPC fall, clicks and conversion stay), conversion=-50%% (half the orders are lost: revenue, EPC"
    " and conversion fall; merchant=...,conversion=-100%% is a merchant that stops paying), revenue=-50%%"
    " (half the clicks are lost, with their orders: EPC and conversion stay), clicks=+100%% (as many"
    " clicks again that never earn: EPC and conversion halve), returns=+300%% (four times as many"
    " returns, within 3 days); e.g. --incident 'network=Foxglove Network,from=2026-11-10,epc=-80%%'"
)


def register(subparsers: Any) -> None:
    """Add the `sandbox` subcommand to the `commerce-reports` parser."""
    add_command(
        subparsers,
        "sandbox",
        help="serve the offline reports sandbox on loopback",
        description="Serve a deterministic offline copy of the three reporting endpoints (with "
        "--deals, the deal-request interface) until Ctrl-C.",
        examples=[
            "commerce-reports sandbox --fast",
            "commerce-reports sandbox --today 2026-11-25 --site shop=my-key --faults 500,drop:0.2",
            "commerce-reports sandbox --fast --incident 'network=Foxglove Network,from=2026-11-10,epc=-80%'",
            "commerce-reports sandbox --deals --write-key write-key-000000001 --read-key read-key-00000001",
        ],
        define=_arguments,
        handler=run,
    )


def _arguments(parser: CommandParser) -> None:
    from ..sandbox import FAST_PACE
    from ..sandbox.config import DATE_STYLES, DIALECTS
    from .options import DATE_FORMAT, day

    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=_port, default=8765, help="port to listen on (default 8765; 0: any free)"
    )
    parser.add_argument(
        "--site",
        dest="sites",
        type=_site,
        action="append",
        metavar="NAME=KEY",
        help="a site and its secret key (repeatable; default the two demo sites)",
    )
    parser.add_argument(
        "--pace",
        type=_seconds,
        default=60.0,
        metavar="SECONDS",
        help="minimum seconds between requests per key and endpoint (default 60)",
    )
    parser.add_argument("--fast", action="store_true", help=f"pace {FAST_PACE} s instead")
    parser.add_argument(
        "--today",
        type=day,
        metavar=DATE_FORMAT,
        help="freeze the clock at noon UTC of that day (default: the real clock)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the synthetic history (default 0)")
    parser.add_argument(
        "--first-day",
        type=day,
        metavar=DATE_FORMAT,
        help="first day of the history (default 400 days before today)",
    )
    parser.add_argument(
        "--faults",
        type=_faults,
        metavar="SPEC",
        help="fault injection: RATE (every transport fault) or KIND,KIND:RATE, e.g. 500,drop:0.2 or "
        "duplicate,foreign_day,huge_number,negative_infinity,echo_key:0.1 (hostile data)",
    )
    parser.add_argument(
        "--dialect",
        choices=DIALECTS,
        default="contract",
        help="the wire: contract (service-contract.md) or published (the vendor's OpenAPI file);"
        " default contract",
    )
    parser.add_argument(
        "--shape",
        choices=("nested", "flat"),
        default="nested",
        help="shape of transactions in the contract dialect (default nested)",
    )
    parser.add_argument(
        "--date-style",
        choices=DATE_STYLES,
        default="iso",
        help="how the published dialect writes transaction dates: iso (yyyy-mm-dd, default),"
        " datetime, slashes (yyyy/mm/dd), us (MM/DD/YYYY), epoch-ms, or mixed (all of them)",
    )
    parser.add_argument(
        "--transactions-per-day",
        type=_positive,
        default=400,
        metavar="N",
        help="mean transactions per site per day (default 400)",
    )
    parser.add_argument(
        "--incident", type=_incident, action="append", default=[], metavar="SPEC", help=_INCIDENT_HELP
    )
    deals = parser.add_argument_group("deals sandbox")
    deals.add_argument("--deals", action="store_true", help="serve the deal-request sandbox instead")
    deals.add_argument("--write-key", metavar="KEY", help="API key allowed to write deals")
    deals.add_argument("--read-key", metavar="KEY", help="read-only API key")
    deals.add_argument("--disabled-key", metavar="KEY", help="API key of an account not enabled")


def _loopback(host: str) -> bool:
    import ipaddress

    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name: it may resolve to any interface


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted; 2 when the options do not make a valid sandbox. An address other
    than loopback is served with a warning: every machine that reaches it may use the sandbox."""
    if not _loopback(args.host):
        print(
            f"warning: --host {args.host} serves the sandbox beyond this machine: anyone who can reach "
            "it can use it with its keys, and the demo sites' keys are public. Use 127.0.0.1 (the "
            "default) unless other machines must reach it.",
            file=sys.stderr,
        )
    if args.deals:
        from ..deals.sandbox import serve_deals_forever

        serve_deals_forever(
            host=args.host,
            port=args.port,
            write_key=args.write_key,
            read_key=args.read_key,
            disabled_key=args.disabled_key,
            announce=print,
        )
        return 0
    from datetime import UTC, datetime, time

    from ..sandbox import (
        DEMO_SITES,
        FAST_PACE,
        FAULT_KINDS,
        FaultConfig,
        SandboxConfig,
        serve_sandbox_forever,
    )

    kinds, rate = args.faults or (FAULT_KINDS, 0.0)
    try:
        config = SandboxConfig(
            sites=tuple(args.sites or DEMO_SITES),
            seed=args.seed,
            now=datetime.combine(args.today, time(12), tzinfo=UTC) if args.today else None,
            first_day=args.first_day,
            pace=FAST_PACE if args.fast else args.pace,
            shape=args.shape,
            dialect=args.dialect,
            date_style=args.date_style,
            faults=FaultConfig(rate=rate, kinds=kinds, seed=args.seed),
            transactions_per_day=args.transactions_per_day,
            incidents=tuple(args.incident),
        )
    except ValueError as exc:
        print(f"commerce-reports sandbox: error: {exc}", file=sys.stderr)
        return 2
    serve_sandbox_forever(config, host=args.host, port=args.port, announce=print)
    return 0
