"""The `commerce-reports` command: a thin shell over the package's public functions.

Each subcommand lives in a module with a `register(subparsers)` that declares it once through
`parser.add_command` (summary, description, examples, exit codes, the function adding its
arguments, its handler). A command line that names a command loads its module alone; a command's
arguments are added only when it runs or shows its help, and each handler checks what it was
given before it imports the stack it needs: `--help` starts at once, a mistake is said in a
second, and a Ctrl-C during start-up exits 130 quietly.

Exit codes: 0 done, 1 a failure while running, 2 a usage error (an unknown command, option, site
or value, a setting that cannot be used: nothing ran), 130 interrupted (Ctrl-C, SIGTERM or SIGHUP:
the same clean stop); a command may declare more
(`sync`: 3 when a site could not be reached; `alerts`: 3 when there are alerts). `--help` ends with
each command's; `docs/cli.md` has the whole table.
"""

from __future__ import annotations

import atexit
import gc
import importlib
import io
import os
import sys

from .._lazy import defer_logging
from .._version import __version__
from .parser import USAGE, CommandParser

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without loading typing: `--help` starts at once
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["EXIT_UNREACHABLE", "HOMES", "MODULES", "build_parser", "main"]

EXIT_UNREACHABLE = 3  # a service's address could not be reached: nothing more was asked of it
EXIT_SIGPIPE = 141  # 128 + SIGPIPE: the output's reader stopped reading, as a shell reports it

# The modules declaring the commands, in the order `--help` lists them, and the module of each
# command (tests/test_cli_guidance.py holds it to what the modules declare).
MODULES = ("reports", "sql", "alerts", "export", "serve", "sandbox", "deals", "config", "schedule")
HOMES = {
    **dict.fromkeys(("init", "demo", "sync", "status", "verify", "check", "invalidate"), "reports"),
    **dict.fromkeys(("catalog", "rollups", "sql"), "sql"),
    **{name: name for name in MODULES[2:]},
}


def build_parser(command: str | None = None) -> CommandParser:
    """The parser of `commerce-reports` and every subcommand (their arguments added on first use);
    with `command`, one of `HOMES`, the subcommands its module declares only (`main` parses a
    command line that names a command so: the other modules are not loaded)."""
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
    for name in (HOMES[command],) if command in HOMES else MODULES:
        importlib.import_module(f".{name}", __name__).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit status. No traceback reaches the user: a usage error (argparse's,
    an unknown site, a value or setting the toolkit refuses) is one line and exit 2; the toolkit's
    other errors and the operating system's refusals (a standard output closed too) one `error:`
    line and exit 1 (3 when a site could not be reached); anything else one line too (its
    traceback goes to the log, with -vv).

    The cyclic garbage collector is off while the command starts: loading its modules makes tens
    of thousands of objects that live as long as the process and next to no garbage, and the
    collector's passes over them cost `status` a twentieth of its CPU. It is back on when the
    command runs, but for a light one: a short run of plain Python (which turns it on again itself
    before a long part, as `status --verify` does). A light run that stayed so freezes what the
    process holds at its exit: the interpreter's shutdown otherwise collects every object three
    times over, a tenth of `status`'s CPU, and such a run leaves nothing that needs finalizing."""
    collecting = gc.isenabled()
    gc.disable()
    _refuse_writes_to_a_closed_stdout()
    try:
        words = sys.argv[1:] if argv is None else list(argv)
        args = build_parser(_command_named(words)).parse_args(words)
        # after parsing: `--help` and a usage error never need logging; a command that loads no
        # library of its own (`light`) loads it with its first log line, if it writes one
        light = getattr(args, "light", False)
        if light and not args.verbose:
            defer_logging(lambda: _log_lines(args.verbose))
        else:
            _log_lines(args.verbose)
        if collecting and not light:
            gc.enable()
        from ..interrupts import watching_ctrl_c

        with watching_ctrl_c():  # Ctrl-C stops a DuckDB query at once, wherever DuckDB runs it
            code = int(args.handler(args))
        if light and not gc.isenabled():
            atexit.register(gc.freeze)
        return code
    except BrokenPipeError as error:
        if isinstance(error, _StdoutClosedError) or not _reader_gone():
            return _failed(error)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return EXIT_SIGPIPE  # its reader stopped reading (`| head`): said as a shell says it, quietly
    except (KeyboardInterrupt, Exception) as error:
        return _failed(error)
    except BaseException as error:  # a Rust library's panic (polars, pyo3) is no Exception
        if type(error).__name__ != "PanicException":
            raise  # SystemExit and GeneratorExit are Python's own
        return _failed(error)
    finally:  # as the caller had it, whatever the command did
        if collecting:
            gc.enable()
        else:
            gc.disable()


class _StdoutClosedError(BrokenPipeError):
    """A write to a standard output the shell closed: a reader gone from the start, so that what
    worker threads say stops there as for `| head` (`activity.while_read`), and `main` says it in
    one line, exit 1 (the output is lost, not cut short by a reader that had enough)."""


class _ClosedStdout(io.TextIOBase):
    """`sys.stdout` in place of None when the shell closed it: every write is refused."""

    def write(self, text: str) -> int:
        import errno

        raise _StdoutClosedError(errno.EBADF, "standard output is closed: nothing can be printed")


def _refuse_writes_to_a_closed_stdout() -> None:
    """A standard output the shell closed (`>&-`: Python leaves `sys.stdout` None, and `print`
    drops every line unsaid) made one that refuses each write, so that the command fails saying so."""
    if sys.stdout is None:
        sys.stdout = _ClosedStdout()


def _reader_gone() -> bool:
    """Whether the standard output is a pipe whose reader has closed it."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(event & select.POLLERR for _, event in poller.poll(0))
    except (OSError, ValueError, AttributeError):  # no file descriptor (a notebook's, a test's)
        return False


def _command_named(words: Sequence[str]) -> str | None:
    """The command `words` name: their first word, after -v, -vv or --verbose only (None when there
    is none, or another option comes first: every command is declared then, as for `--help`)."""
    for word in words:
        if word != "--verbose" and not (word.startswith("-v") and word.strip("v") == "-"):
            return None if word.startswith("-") else word
    return None


def _failed(error: BaseException) -> int:
    """Say `error` in one line; the exit status of its kind (130 for Ctrl-C, also when DuckDB took it)."""
    from ..errors import (
        CommerceReportsError,
        ConfigurationError,
        UnreachableError,
        ValidationError,
        is_ctrl_c,
    )

    if is_ctrl_c(error):  # (a SIGTERM or SIGHUP too: `interrupts.watching_ctrl_c` makes them one)
        why = str(error) if type(error) is KeyboardInterrupt else ""
        _say(f"interrupted ({why})" if why else "interrupted")
        return 130
    if isinstance(error, CommerceReportsError):
        _say(f"error: {error}")
        if isinstance(error, ValidationError | ConfigurationError):
            return USAGE  # what the user gave (an option, a setting) cannot be used: nothing ran
        return EXIT_UNREACHABLE if isinstance(error, UnreachableError) else 1
    if isinstance(error, OSError):  # a folder or file the command could not use, wherever it was met
        from ..files import describe_os_error

        _say(f"error: {describe_os_error(error)}")
        return 1
    import logging

    from ..redaction import redact

    logging.getLogger(__name__).debug("unexpected error", exc_info=True)
    _say(f"error: unexpected {type(error).__name__}: {redact(str(error))} (run with -vv for details)")
    return 1


def _say(line: str) -> None:
    """Print `line` on standard error, a name that is not UTF-8 in it (the file system's, read as
    lone surrogates) written as its escapes: a stream that takes UTF-8 only cannot write them."""
    print(line.encode("utf-8", "backslashreplace").decode("utf-8"), file=sys.stderr)


def _log_lines(verbose: int) -> None:
    from .log_lines import log_to_stderr  # (logging: loaded only by a command that logs)

    log_to_stderr(verbose)
