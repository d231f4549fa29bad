"""`commerce-reports deals`: create and update deal requests, list targeting values.

A thin shell over `commerce_reports.deals.DealsClient`. The key comes from
COMMERCE_REPORTS_DEALS_API_KEY, the URL from `--base-url` or COMMERCE_REPORTS_DEALS_BASE_URL.
Success prints the JSON result on stdout; a failure prints one line on stderr and exits with the
status of its kind (`exit_codes()`; `--help` shows the table).
"""

from __future__ import annotations

import argparse
import sys
from functools import cache

from .parser import COMMON_EXITS, USAGE, add_command

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without loading typing: `--help` starts at once
if TYPE_CHECKING:
    import warnings
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    from ..deals import DealsClient
    from ..errors import CommerceReportsError
    from .parser import CommandParser

__all__ = ["exit_codes", "register", "run"]


@cache
def exit_codes() -> dict[type[CommerceReportsError], tuple[int, str]]:
    """Each error kind's exit status and meaning. Order does not matter: `exit_code` walks each
    error's MRO to its nearest listed class. Loaded with the deal errors, when a deal command runs."""
    from ..deals import errors as deal
    from ..errors import ConfigurationError, ValidationError

    return {
        deal.DealSettingMissingError: (3, "configuration: no API key or base URL"),
        ConfigurationError: (USAGE, COMMON_EXITS[USAGE]),  # a setting that cannot be used
        deal.DealArgumentError: (USAGE, COMMON_EXITS[USAGE]),  # a value that cannot be used
        ValidationError: (4, "input file unreadable or not a JSON object"),
        deal.DealValidationError: (5, "a local check failed; nothing was sent"),
        deal.DealSchemaError: (10, "400 schema validation"),
        deal.DealIdInvalidError: (11, "400 malformed deal request id"),
        deal.DealRuleError: (12, "400 rule checked against the stored deal"),
        deal.DealBadRequestError: (13, "400, other"),
        deal.ApiKeyMissingError: (20, "401 api key not provided"),
        deal.ApiKeyInvalidError: (21, "401 invalid api key"),
        deal.ApiKeySyntaxError: (22, "401 invalid api key syntax"),
        deal.DealAuthError: (23, "401, other"),
        deal.InsufficientScopeError: (30, "403 insufficient scope (read-only key)"),
        deal.AccountNotEnabledError: (31, "403 account not enabled for the API"),
        deal.DealForbiddenError: (32, "403, other"),
        deal.DealNotFoundError: (40, "404 not found"),
        deal.UnsupportedMediaTypeError: (41, "415 unsupported media type"),
        deal.DealRateLimitedError: (42, "429 rate limited, retries exhausted"),
        deal.DealServerError: (50, "5xx other than 502 (500, 503, 504, ...), retries exhausted"),
        deal.DealUpstreamError: (51, "502, retries exhausted"),
        deal.DealMayExistError: (
            52,
            "create got a 5xx or lost its answer: may exist, confirm before re-sending",
        ),
        deal.ArchiveUnconfirmedError: (53, "archive kept getting 502, not confirmed"),
        deal.DealTransportError: (60, "no answer from the service"),
        deal.DealMalformedResponseError: (61, "a 2xx answer with an unreadable body"),
        deal.DealResponseTooLargeError: (
            62,
            "an answer over the size ceiling (COMMERCE_REPORTS_MAX_BODY_MB)",
        ),
        deal.DealStatusError: (69, "another HTTP status"),
    }


def exit_code(error: CommerceReportsError) -> int:
    """The exit status of `error`'s kind (the nearest class in `exit_codes()`)."""
    codes = exit_codes()
    for cls in type(error).__mro__:
        if cls in codes:
            return codes[cls][0]
    return 1


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `deals` subcommand; its handler is `args.handler(args) -> int`."""
    add_command(
        subparsers,
        "deals",
        help="create and update deal requests, list targeting values",
        description="Create and update deal requests on the deal-request interface. The key comes "
        "from COMMERCE_REPORTS_DEALS_API_KEY, the URL from --base-url or "
        "COMMERCE_REPORTS_DEALS_BASE_URL. Success prints the JSON result on standard output; a "
        "failure prints one line on standard error and exits with the status of its kind.",
        examples=[
            "commerce-reports deals create deal.json --dry-run",
            "commerce-reports deals update 7f3c2a10-0000-4000-8000-000000000001 changes.json",
            "commerce-reports deals values device.geo.country",
        ],
        define=_arguments,
    )


def _arguments(deals: CommandParser) -> None:
    deals.exits.update({code: meaning for code, meaning in exit_codes().values()})
    deals.add_argument("--base-url", help="deal interface URL (default: $COMMERCE_REPORTS_DEALS_BASE_URL)")
    deals.set_defaults(handler=_missing_action(deals))
    actions = deals.add_subparsers(dest="deals_action", metavar="ACTION")
    add_command(
        actions,
        "create",
        help="create a deal request from a JSON file",
        description="Create a deal request from a JSON file (checked locally first).",
        examples=[
            "commerce-reports deals create deal.json",
            "cat deal.json | commerce-reports deals create -",
        ],
        exits=deals.exits,
        define=_create_arguments,
        handler=run,
    )
    add_command(
        actions,
        "update",
        help="apply a JSON file of changes to a deal request",
        description="Apply a JSON file of changes to the deal request ID.",
        examples=["commerce-reports deals update 7f3c2a10-0000-4000-8000-000000000001 changes.json"],
        exits=deals.exits,
        define=_update_arguments,
        handler=run,
    )
    add_command(
        actions,
        "values",
        help="list the allowed values of a targeting attribute",
        description="List the allowed values of a targeting attribute, as JSON.",
        examples=["commerce-reports deals values device.geo.country"],
        exits=deals.exits,
        define=_values_arguments,
        handler=run,
    )


def _create_arguments(create: CommandParser) -> None:
    from pathlib import Path

    create.add_argument("deal", type=Path, help="deal JSON file ('-' for stdin)")
    create.add_argument("--dry-run", action="store_true", help="validate only, create nothing")
    create.add_argument(
        "--check-values", action="store_true", help="check targeting values against their lists"
    )


def _update_arguments(update: CommandParser) -> None:
    from pathlib import Path

    update.add_argument("id", help="deal request id")
    update.add_argument("changes", type=Path, help="changes JSON file ('-' for stdin)")
    update.add_argument(
        "--check-values", action="store_true", help="check targeting values against their lists"
    )


def _values_arguments(values: CommandParser) -> None:
    values.add_argument("attribute", help="e.g. device.geo.country")


def _missing_action(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    def handler(args: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return 2

    return handler


def _read_json(path: Path) -> dict[str, Any]:
    """The file's JSON object, its whole numbers exact (orjson reads one past 64 bits as a float:
    an id lost its digits), for the client to send or refuse as they are."""
    import json

    from ..errors import ValidationError

    try:
        raw = sys.stdin.buffer.read() if str(path) == "-" else path.read_bytes()
        data = json.loads(raw)
    except OSError as exc:
        raise ValidationError(str(path), f"cannot be read ({exc.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValidationError(str(path), f"is not JSON ({exc})", "fix the file") from None
    if not isinstance(data, dict):
        raise ValidationError(str(path), "must hold one JSON object", 'e.g. {"buyers": [...]}')
    return data


def _document(args: argparse.Namespace) -> dict[str, Any]:
    """The JSON an action sends (create: the deal, update: the changes; values: none), read before
    the client and its HTTP stack load, so that a wrong file is said first."""
    if args.deals_action == "create":
        return _read_json(args.deal)
    if args.deals_action == "update":
        return _read_json(args.changes)
    return {}


def _result(args: argparse.Namespace, client: DealsClient, document: dict[str, Any]) -> Any:
    if args.deals_action == "create":
        return client.create(document, dry_run=args.dry_run, check_values=args.check_values).to_dict()
    if args.deals_action == "update":
        updated = client.update(args.id, document, check_values=args.check_values)
        return updated.to_dict() if updated is not None else {"id": args.id}
    return list(client.targeting_values(args.attribute))


def run(args: argparse.Namespace) -> int:
    """Run one `deals` action; print the JSON result or one error line; return the exit status."""
    import warnings

    import orjson  # with an action, not with `--help`

    from ..errors import CommerceReportsError

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            document = _document(args)
            from ..config import current_settings
            from ..deals import DealsClient
            from ..deals.config import DealSettings

            settings = DealSettings.resolved(current_settings(), "--base-url")  # resolved here, handed down
            with DealsClient(base_url=args.base_url, settings=settings) as client:
                result = _result(args, client, document)
        except CommerceReportsError as error:
            _report(caught)
            print(f"error: {' '.join(str(error).split())}", file=sys.stderr)
            return exit_code(error)
    _report(caught)
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
    return 0


def _report(caught: list[warnings.WarningMessage]) -> None:
    for warning in caught:
        print(f"warning: {' '.join(str(warning.message).split())}", file=sys.stderr)
