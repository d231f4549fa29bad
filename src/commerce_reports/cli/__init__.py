"""The `commerce-reports` command: a thin shell over the package's public functions.

Each subcommand lives in a module with a `register(subparsers)` that declares it once through
`parser.add_command` (summary, description, examples, exit codes, the function adding its
arguments, its handler). A command's arguments are added only when it runs or shows its help, and
each handler checks what it was given before it imports the stack it needs: `--help` starts at
once, a mistake is said in a second, and a Ctrl-C during start-up exits 130 quietly.

Exit codes: 0 done, 1 a failure while running, 2 a usage error (an unknown command, option, site
or value, a setting that cannot be used: nothing ran), 130 interrupted; a command may declare more
(`sync`: 3 when a site could not be reached; `alerts`: 3 when there are alerts). `--help` ends with
each command's; `docs/cli.md` has the whole table.
"""

from __future__ import annotations

import sys

from .._lazy import defer_logging
from .._version import __version__
from .parser import USAGE, CommandParser

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without loading typing: `--help` starts at once
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["EXIT_UNREACHABLE", "build_parser", "main"]

EXIT_UNREACHABLE = 3  # a service's address could not be reached: nothing more was asked of it


def build_parser() -> CommandParser:
    """The parser of `commerce-reports` and every subcommand (their arguments added on first use)."""
    parser = CommandParser(
        prog="commerce-reports",
        description="Affiliate commerce reports: local, current, correct. With no secret key "
        "configured, every command runs against the built-in sandbox.",
        epilog="examples:\n  commerce-reports demo\n  commerce-reports sync --start 2026-09-01\n"
        '  commerce-reports sql "SELECT * FROM site_performance"\n\n'
        "`commerce-reports COMMAND --help` gives a command's options, examples and exit codes.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log lines (-vv: debug)")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    from . import alerts, config, deals, export, reports, sandbox, schedule, serve, sql

    for module in (reports, sql, alerts, export, serve, sandbox, deals, config, schedule):
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit status. No traceback reaches the user: a usage error (argparse's,
    an unknown site, a value or setting the toolkit refuses) is one line and exit 2; the toolkit's
    other errors and the operating system's refusals one `error:` line and exit 1 (3 when a site
    could not be reached); anything else one line too (its traceback goes to the log, with -vv)."""
    try:
        args = build_parser().parse_args(argv)
        # after parsing: `--help` and a usage error never need logging; a command that loads no
        # library of its own (`light`) loads it with its first log line, if it writes one
        if getattr(args, "light", False) and not args.verbose:
            defer_logging(lambda: _log_to_stderr(args.verbose))
        else:
            _log_to_stderr(args.verbose)
        return int(args.handler(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as error:
        return _failed(error)


def _log_to_stderr(verbose: int) -> None:
    """Log lines on standard error: warnings, and with -v information, with -vv debug lines too."""
    import logging

    level = {0: logging.WARNING, 1: logging.INFO}.get(verbose, logging.DEBUG)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def _failed(error: Exception) -> int:
    """Say `error` in one line; the exit status of its kind."""
    from ..errors import CommerceReportsError, ConfigurationError, UnreachableError, ValidationError

    if isinstance(error, CommerceReportsError):
        print(f"error: {error}", file=sys.stderr)
        if isinstance(error, ValidationError | ConfigurationError):
            return USAGE  # what the user gave (an option, a setting) cannot be used: nothing ran
        return EXIT_UNREACHABLE if isinstance(error, UnreachableError) else 1
    if isinstance(error, OSError):  # a folder or file the command could not use, wherever it was met
        from ..files import describe_os_error

        print(f"error: {describe_os_error(error)}", file=sys.stderr)
        return 1
    import logging

    from ..redaction import redact

    logging.getLogger(__name__).debug("unexpected error", exc_info=True)
    print(
        f"error: unexpected {type(error).__name__}: {redact(str(error))} (run with -vv for details)",
        file=sys.stderr,
    )
    return 1
