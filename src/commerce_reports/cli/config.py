"""`commerce-reports config`: every setting, its value and where it came from; one setting's
value; set one in the project's files."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from typing import Any

__all__ = ["register"]

EXAMPLES = """\
Examples:
  commerce-reports config list                       every setting, its value and its source
  commerce-reports config list --json                the same, for a script
  commerce-reports config get pace                   one value (secrets are shown masked)
  commerce-reports config set currency EUR           into commerce-reports.toml
  commerce-reports config set alerts.revenue_drop 25%
  commerce-reports config set secret_key             a secret: asked for, written into .env
  commerce-reports config set RECIPES_SECRET_KEY     a site's key, named in sites.toml

Sources, the first that sets a value wins: environment, .env, commerce-reports.toml (sites.toml per
site), default. A secret is never written into a file git does not ignore.
"""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "config",
        help="every setting, its value and where it came from; set one in the project",
        description=textwrap.fill(
            "Show the settings the toolkit resolves here (each with its value, masked when "
            "secret, and its source), one of them, or set one: a secret into the project's git-ignored "
            ".env, anything else into its commerce-reports.toml (comments and layout kept). Exits 1 when "
            "a setting does not pass its check.",
            100,
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(handler=_missing_action(parser))
    actions = parser.add_subparsers(dest="config_action", metavar="ACTION")
    listing = actions.add_parser(
        "list",
        help="every setting: value (secrets masked) and source",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    listing.add_argument("--json", action="store_true", help="one JSON object per setting, in a list")
    listing.set_defaults(handler=_list)
    get = actions.add_parser(
        "get",
        help="one setting's value (masked when secret); exit 1 when it is not set",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    get.add_argument("name", help="a setting (pace), its variable (COMMERCE_REPORTS_PACE) or alerts.<key>")
    get.set_defaults(handler=_get)
    put = actions.add_parser(
        "set",
        help="set one setting in the project (a secret into .env, the rest into commerce-reports.toml)",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    put.add_argument("name", help="a setting (currency), its variable or alerts.<key>")
    put.add_argument(
        "value",
        nargs="?",
        help="the value; left out for a secret, it is asked for without echo (or read from a pipe)",
    )
    put.set_defaults(handler=_set)


def _missing_action(parser: argparse.ArgumentParser) -> Any:
    def handler(args: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return 2

    return handler


def _list(args: argparse.Namespace) -> int:
    from ..configuration import configuration

    found = configuration()
    if args.json:
        rows = [
            {
                "name": r.name,
                "value": r.value,
                "source": r.source,
                "where": r.where,
                "problem": r.problem or None,
            }
            for r in found.rows
        ]
        print(json.dumps(rows, indent=2))
    else:
        print(found.describe())
    return 0 if found.ok else 1


def _get(args: argparse.Namespace) -> int:
    from ..configuration import configuration
    from ..errors import ValidationError
    from .options import UsageError

    try:
        row = configuration().row(args.name)
    except ValidationError as error:
        raise UsageError(error.parameter, error.problem, error.allowed) from None
    if row.problem:
        print(f"error: {row.problem}", file=sys.stderr)
        return 1
    if not row.is_set and row.value == "(not set)":
        print(f"{row.name} is not set", file=sys.stderr)
        return 1
    print(row.value)
    return 0


def _set(args: argparse.Namespace) -> int:
    from ..errors import ValidationError
    from ..project import set_secret, set_setting
    from ..settings import setting_named
    from .options import UsageError

    if args.name in _site_key_variables():  # a site's key, by the variable sites.toml names
        value = args.value if args.value is not None else _secret_input(args.name)
        try:
            done = set_secret(args.name, value)
        except ValidationError as error:
            raise UsageError(error.parameter, error.problem, error.allowed) from None
        print(f"{done.key} = {done.shown} in {done.path}")
        return 0
    try:
        setting, key = setting_named(args.name)
    except ValidationError as error:
        raise UsageError(error.parameter, error.problem, error.allowed) from None
    value = args.value
    if value is None:
        if not setting.secret:
            raise UsageError(
                "value",
                f"{key} needs a value",
                f"e.g. commerce-reports config set {key} {setting.example or '...'}",
            )
        value = _secret_input(key)
    check = None
    if key.startswith("alerts."):
        from ..alerting.thresholds import Thresholds

        def check(table: Any) -> None:
            Thresholds.from_table(table)

    try:
        done = set_setting(key, value, check_table=check)
    except ValidationError as error:  # a value or a folder the command line got wrong: exit 2
        raise UsageError(error.parameter, error.problem, error.allowed) from None
    print(f"{done.key} = {done.shown} in {done.path}")
    return 0


def _secret_input(name: str) -> str:
    """A secret typed without echo, or the first line of what is piped in."""
    import getpass

    return getpass.getpass(f"{name}: ") if sys.stdin.isatty() else sys.stdin.readline().rstrip("\n")


def _site_key_variables() -> set[str]:
    """The variables `sites.toml` names as its sites' keys."""
    from ..config import current_sources
    from ..errors import ConfigurationError
    from ..locate import where
    from ..sites import site_settings

    try:
        found = site_settings(where(env=current_sources().variables()).path)
    except ConfigurationError:
        return set()  # `config list` says what is wrong with the file
    return {str(each.value) for each in found if each.setting.name == "secret_key_env"}
