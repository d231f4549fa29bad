"""`commerce-reports config`: every setting, its value and where it came from; one setting's
value; set one in the project's files."""

from __future__ import annotations

import argparse
import re
import sys

from .parser import add_command

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without loading typing: `--help` starts at once
if TYPE_CHECKING:
    from typing import Any

    from ..config import Sources
    from .parser import CommandParser

__all__ = ["register"]

EXIT_PROBLEM = {1: "a setting does not pass its check (list: said below its row), or is not set (get)"}


def register(subparsers: Any) -> None:
    """Add the `config` command and its actions."""
    add_command(
        subparsers,
        "config",
        help="every setting, its value and where it came from; set one in the project",
        description="Show the settings the toolkit resolves here, each with its value (masked when "
        "secret) and its source (the first that sets it wins: environment, .env, commerce-reports.toml, "
        "sites.toml per site, default); one of them; or set one: a secret into the project's "
        "git-ignored .env, anything else into its commerce-reports.toml, comments and layout kept.",
        examples=[
            "commerce-reports config list",
            "commerce-reports config get pace",
            "commerce-reports config set currency EUR",
        ],
        define=_actions,
    )


def _actions(parser: CommandParser) -> None:
    parser.set_defaults(handler=_missing_action(parser))
    actions = parser.add_subparsers(dest="config_action", metavar="ACTION")
    add_command(
        actions,
        "list",
        help="every setting: its value (secrets masked) and its source",
        description="Every setting with its value (secrets masked) and its source, the files read, and "
        "below a setting that does not pass its check, why.",
        examples=["commerce-reports config list", "commerce-reports config list --json"],
        exits={1: EXIT_PROBLEM[1]},
        define=_list_arguments,
        handler=_list,
    )
    add_command(
        actions,
        "get",
        help="one setting's value (masked when secret)",
        description="Print one setting's value (masked when secret): by its name, its variable, "
        "alerts.<key> or sites.<site>.<key>.",
        examples=["commerce-reports config get pace", "commerce-reports config get COMMERCE_REPORTS_DIALECT"],
        exits={1: EXIT_PROBLEM[1]},
        define=_get_arguments,
        handler=_get,
    )
    add_command(
        actions,
        "set",
        help="set one setting in the project (a secret into .env, the rest into commerce-reports.toml)",
        description="Set one setting in the project at or above the working folder: a secret into its "
        ".env (refused unless git ignores that file), anything else into its commerce-reports.toml, "
        "keeping the file's comments and layout. The value is checked first; nothing is written when "
        "it is wrong. A secret's value left out is asked for without echo (or read from a pipe).",
        examples=[
            "commerce-reports config set currency EUR",
            "commerce-reports config set alerts.revenue_drop 25%",
            "commerce-reports config set secret_key",
            "commerce-reports config set RECIPES_SECRET_KEY",
        ],
        define=_set_arguments,
        handler=_set,
    )


def _list_arguments(listing: CommandParser) -> None:
    listing.add_argument("--json", action="store_true", help="a JSON list, one object per setting")


def _get_arguments(get: CommandParser) -> None:
    get.add_argument("name", help="a setting (pace), its variable (COMMERCE_REPORTS_PACE) or alerts.<key>")


def _set_arguments(put: CommandParser) -> None:
    put.add_argument(
        "name", help="a setting (currency), its variable, alerts.<key>, or a site's key variable"
    )
    put.add_argument("value", nargs="?", help="the value; left out for a secret, it is asked for")
    # a value such as -25% is a value, not an option to refuse (argparse knows negative numbers only)
    put._negative_number_matcher = re.compile(r"^-\.?\d[\d.]*%?$")


def _missing_action(parser: CommandParser) -> Any:
    def handler(args: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return 2

    return handler


def _list(args: argparse.Namespace) -> int:
    from ..config_list import configuration

    found = configuration()
    if args.json:
        import json  # here, not at the top: `--help` loads every command's module

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
    from ..config_list import configuration
    from ..errors import ValidationError
    from .options import UsageError

    try:
        row = configuration().row(args.name)
    except ValidationError as error:
        raise UsageError.of(error) from None
    if row.problem:
        print(f"error: {row.problem}", file=sys.stderr)
        return 1
    if not row.is_set and row.value == "(not set)":
        print(f"{row.name} is not set", file=sys.stderr)
        return 1
    print(row.value)
    return 0


def _set(args: argparse.Namespace) -> int:
    from ..config import current_sources
    from ..errors import ValidationError
    from ..project import set_secret, set_setting
    from ..redaction import redact
    from ..settings import setting_named
    from .options import UsageError

    sources = current_sources()
    site_keys = _site_key_variables(sources)
    secrets = sources.secrets(site_keys)  # registered before a word is said: every message masks them
    if args.name in site_keys:  # a site's key, by the variable sites.toml names
        value = args.value if args.value is not None else _secret_input(args.name)
        try:
            done = set_secret(args.name, value)
        except ValidationError as error:
            raise UsageError.of(error) from None
        print(f"{done.key} = {done.shown} in {done.path}")
        return 0
    try:
        setting, key = setting_named(args.name)
    except ValidationError as error:
        raise UsageError.of(error) from None
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

        value = _inline_table(value)

        def check(table: Any) -> None:
            Thresholds.from_table(table)

    try:
        done = set_setting(key, value, secrets=secrets, check_table=check)
    except ValidationError as error:  # a value or a folder the command line got wrong: exit 2
        raise UsageError.of(error) from None
    print(redact(f"{done.key} = {_one_line(done.shown)} in {done.path}"))
    if setting.variable is not None and not setting.secret:  # (a secret goes to .env itself)
        _say_what_wins(key)
    return 0


def _one_line(shown: str) -> str:
    """A value as written, a table (TOML writes one a line a key) on one line, as it is typed."""
    lines = [line.strip() for line in shown.strip().splitlines() if line.strip()]
    return "{ " + ", ".join(lines) + " }" if len(lines) > 1 else shown


def _inline_table(value: str) -> str:
    """A rule's value as `config get` prints it (`threshold=70%,min_volume=5`) in the TOML form
    `set` takes (`{ threshold = "70%", min_volume = 5 }`); any other value as it is."""
    pairs = [part.split("=", 1) for part in value.split(",")]
    if any(len(p) != 2 or not re.fullmatch(r"\s*[a-z_]+\s*", p[0]) for p in pairs):
        return value
    number = re.compile(r"-?\d+(\.\d+)?")
    written = []
    for name, given in ((k.strip(), v.strip()) for k, v in pairs):
        written.append(f"{name} = {given}" if number.fullmatch(given) else f'{name} = "{given}"')
    return "{ " + ", ".join(written) + " }"


def _say_what_wins(key: str) -> None:
    """A note when the environment or `.env` sets `key` too: the value just written is not used."""
    from ..config import current_sources
    from ..redaction import redact
    from ..settings import DOTENV, ENVIRONMENT

    found = current_sources().found(key)
    if found.source in (ENVIRONMENT, DOTENV):
        print(
            redact(f"note: {found.where} wins over it: the value in use stays {found.value}"), file=sys.stderr
        )


def _secret_input(name: str) -> str:
    """A secret typed without echo, or the first line of what is piped in."""
    import getpass

    return getpass.getpass(f"{name}: ") if sys.stdin.isatty() else sys.stdin.readline().rstrip("\n")


def _site_key_variables(sources: Sources) -> set[str]:
    """The variables `sites.toml` names as its sites' keys."""
    from ..errors import ConfigurationError
    from ..locate import where
    from ..sites import site_settings

    try:
        found = site_settings(where(env=sources.variables()).path)
    except ConfigurationError:
        return set()  # `config list` says what is wrong with the file
    return {str(each.value) for each in found if each.setting.name == "secret_key_env"}
