"""The `commerce-reports` command: a thin shell over the package's public functions.

Each subcommand lives in its own module with a `register(subparsers)` that sets
`handler(args) -> int`; errors of the toolkit print as one line and exit non-zero. The modules
define only their arguments at import time; each handler imports the stack it needs, so
`commerce-reports --help` starts at once, and a Ctrl-C during start-up exits 130 quietly.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from .._version import __version__
from ..errors import CommerceReportsError, UnreachableError
from ..redaction import redact
from .options import UsageError

__all__ = ["EXIT_UNREACHABLE", "main"]

log = logging.getLogger(__name__)

EXIT_UNREACHABLE = 3  # a service's address could not be reached: nothing more was asked of it


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="commerce-reports",
        description="Affiliate commerce reports: local, current, correct. With no secret key "
        "configured, every command runs against the built-in sandbox.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log lines (-vv: debug)")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    from . import alerts, deals, export, reports, sandbox, sql

    for module in (reports, sql, alerts, export, sandbox, deals):
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit status. No traceback reaches the user: the toolkit's errors and
    the operating system's refusals print as one `error:` line, anything else as one line too
    (its traceback goes to the log, shown with -vv)."""
    try:
        args = build_parser().parse_args(argv)
        level = {0: logging.WARNING, 1: logging.INFO}.get(args.verbose, logging.DEBUG)
        logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        return int(args.handler(args))
    except UsageError as error:  # a wrong site or folder named on the command line: nothing ran
        print(f"error: {error}", file=sys.stderr)
        return 2
    except CommerceReportsError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_UNREACHABLE if isinstance(error, UnreachableError) else 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except OSError as error:  # a folder or file the command could not use, wherever it was met
        from ..files import describe_os_error

        print(f"error: {describe_os_error(error)}", file=sys.stderr)
        return 1
    except Exception as error:  # a fault nobody foresaw: one line, the details with -vv
        log.debug("unexpected error", exc_info=True)
        print(
            f"error: unexpected {type(error).__name__}: {redact(str(error))} (run with -vv for details)",
            file=sys.stderr,
        )
        return 1
