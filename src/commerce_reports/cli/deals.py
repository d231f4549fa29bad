"""`commerce-reports deals`: create and update deal requests, list targeting values.

A thin shell over `commerce_reports.deals.DealsClient`. The key comes from
COMMERCE_REPORTS_DEALS_API_KEY, the URL from `--base-url` or COMMERCE_REPORTS_DEALS_BASE_URL.
Success prints the JSON result on stdout; a failure prints one line on stderr and exits with the
status of its kind (the table below is built from `EXIT_CODES`; `--help` shows it too).

"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..deals import DealsClient

from ..deals.errors import (
    AccountNotEnabledError,
    ApiKeyInvalidError,
    ApiKeyMissingError,
    ApiKeySyntaxError,
    ArchiveUnconfirmedError,
    DealAuthError,
    DealBadRequestError,
    DealForbiddenError,
    DealIdInvalidError,
    DealMalformedResponseError,
    DealMayExistError,
    DealNotFoundError,
    DealRateLimitedError,
    DealResponseTooLargeError,
    DealRuleError,
    DealSchemaError,
    DealServerError,
    DealStatusError,
    DealTransportError,
    DealUpstreamError,
    DealValidationError,
    InsufficientScopeError,
    UnsupportedMediaTypeError,
)
from ..errors import (
    CommerceReportsError,
    ConfigurationError,
    ValidationError,
)

__all__ = ["EXIT_CODES", "register", "run"]

# Order does not matter: `exit_code` walks each error's MRO to its nearest listed class.
EXIT_CODES: dict[type[CommerceReportsError], tuple[int, str]] = {
    ConfigurationError: (3, "configuration: no API key or base URL"),
    ValidationError: (4, "input file unreadable or not a JSON object"),
    DealValidationError: (5, "a local check failed; nothing was sent"),
    DealSchemaError: (10, "400 schema validation"),
    DealIdInvalidError: (11, "400 malformed deal request id"),
    DealRuleError: (12, "400 rule checked against the stored deal"),
    DealBadRequestError: (13, "400, other"),
    ApiKeyMissingError: (20, "401 api key not provided"),
    ApiKeyInvalidError: (21, "401 invalid api key"),
    ApiKeySyntaxError: (22, "401 invalid api key syntax"),
    DealAuthError: (23, "401, other"),
    InsufficientScopeError: (30, "403 insufficient scope (read-only key)"),
    AccountNotEnabledError: (31, "403 account not enabled for the API"),
    DealForbiddenError: (32, "403, other"),
    DealNotFoundError: (40, "404 not found"),
    UnsupportedMediaTypeError: (41, "415 unsupported media type"),
    DealRateLimitedError: (42, "429 rate limited, retries exhausted"),
    DealServerError: (50, "5xx other than 502 (500, 503, 504, ...), retries exhausted"),
    DealUpstreamError: (51, "502, retries exhausted"),
    DealMayExistError: (52, "create got a 5xx or lost its answer: may exist, confirm before re-sending"),
    ArchiveUnconfirmedError: (53, "archive kept getting 502, not confirmed"),
    DealTransportError: (60, "no answer from the service"),
    DealMalformedResponseError: (61, "a 2xx answer with an unreadable body"),
    DealResponseTooLargeError: (62, "an answer over the size ceiling (COMMERCE_REPORTS_MAX_BODY_MB)"),
    DealStatusError: (69, "another HTTP status"),
}
EXIT_TABLE = "exit statuses:\n  0  success\n  2  usage error\n" + "\n".join(
    f"  {code:<2} {meaning}" for code, meaning in sorted(EXIT_CODES.values())
)
__doc__ = (__doc__ or "") + EXIT_TABLE


def exit_code(error: CommerceReportsError) -> int:
    """The exit status of `error`'s kind (the nearest class in `EXIT_CODES`)."""
    for cls in type(error).__mro__:
        if cls in EXIT_CODES:
            return EXIT_CODES[cls][0]
    return 1


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `deals` subcommand; its handler is `args.handler(args) -> int`."""
    deals = subparsers.add_parser(
        "deals",
        help="create and update deal requests, list targeting values",
        description="Create and update deal requests on the deal-request interface.",
        epilog=EXIT_TABLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    deals.add_argument("--base-url", help="deal interface URL (default: $COMMERCE_REPORTS_DEALS_BASE_URL)")
    deals.set_defaults(handler=_missing_action(deals))
    actions = deals.add_subparsers(dest="deals_action", metavar="ACTION")
    create = actions.add_parser("create", help="create a deal request from a JSON file")
    create.add_argument("deal", type=Path, help="deal JSON file ('-' for stdin)")
    create.add_argument("--dry-run", action="store_true", help="validate only, create nothing")
    create.add_argument(
        "--check-values", action="store_true", help="check targeting values against their lists"
    )
    update = actions.add_parser("update", help="apply a JSON file of changes to a deal request")
    update.add_argument("id", help="deal request id")
    update.add_argument("changes", type=Path, help="changes JSON file ('-' for stdin)")
    update.add_argument(
        "--check-values", action="store_true", help="check targeting values against their lists"
    )
    values = actions.add_parser("values", help="list the allowed values of a targeting attribute")
    values.add_argument("attribute", help="e.g. device.geo.country")
    for action in (create, update, values):
        action.set_defaults(handler=run)


def _missing_action(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    def handler(args: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return 2

    return handler


def _read_json(path: Path) -> dict[str, Any]:
    import orjson

    try:
        raw = sys.stdin.buffer.read() if str(path) == "-" else path.read_bytes()
        data = orjson.loads(raw)
    except OSError as exc:
        raise ValidationError(str(path), f"cannot be read ({exc.strerror})") from None
    except orjson.JSONDecodeError as exc:
        raise ValidationError(str(path), f"is not JSON ({exc})", "fix the file") from None
    if not isinstance(data, dict):
        raise ValidationError(str(path), "must hold one JSON object", 'e.g. {"buyers": [...]}')
    return data


def _result(args: argparse.Namespace, client: DealsClient) -> Any:
    if args.deals_action == "create":
        deal = _read_json(args.deal)
        return client.create(deal, dry_run=args.dry_run, check_values=args.check_values).to_dict()
    if args.deals_action == "update":
        changes = _read_json(args.changes)
        updated = client.update(args.id, changes, check_values=args.check_values)
        return updated.to_dict() if updated is not None else {"id": args.id}
    return list(client.targeting_values(args.attribute))


def run(args: argparse.Namespace) -> int:
    """Run one `deals` action; print the JSON result or one error line; return the exit status."""
    import orjson  # with an action, not with `--help`

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            from ..deals import DealsClient

            with DealsClient(base_url=args.base_url) as client:
                result = _result(args, client)
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
