"""The contract's matchable 400 messages (part 7.2): the text local checks raise, and the parser
that turns a message from the service into a `DealFailure` with a kind.

The parser is tolerant: the service's wording may drift, so each pattern keys on the message's
stable core, and an unknown message still becomes a failure (kind `None`), never an exception.
"""

from __future__ import annotations

import re

from .errors import DealFailure, DealRuleKind, require

__all__ = [
    "END_DATE_REQUIRED",
    "OPEN_DEAL_BUYERS",
    "OPEN_DEAL_SEATS",
    "RUN_OF_NETWORK_AND_TARGETING",
    "SEATS_EMPTY",
    "SEATS_MISSING",
    "START_DATE",
    "STATUS_INVALID",
    "TAKE_RATE",
    "TOO_MANY_GROUPS",
    "parse_failure",
    "split_validation_message",
    "values_message",
]

TAKE_RATE = "takeRate is a decimal fraction; expected 0 ≤ x ≤ 0.85"
START_DATE = "startDate must be today or later (UTC)"
RUN_OF_NETWORK_AND_TARGETING = "runOfNetwork and targeting are mutually exclusive; provide one or the other"
TOO_MANY_GROUPS = "at most 25 targeting groups per deal request"
END_DATE_REQUIRED = "schedule.endDate is required for buyers on a demand platform that requires it"
OPEN_DEAL_SEATS = "open deals are non-seat: omit seatIds — each buyer carries the DSP only"
OPEN_DEAL_BUYERS = "buyers cannot be edited on an open deal; create a new deal request instead"
SEATS_MISSING = "Invalid input: expected array, received undefined"
SEATS_EMPTY = "Too small: expected array to have >=1 items"
STATUS_INVALID = 'Invalid option: expected one of "active"|"paused"|"archived"|"scheduled"'

_VALUES_PREFIX = {
    "audience.segmentids": "unknown audience segment id(s)",
    "device.geo.country": "country code(s) not available for targeting",
    "publisher.id": "publisher id(s) not valid",
}


def values_message(attribute: str, values: list[str]) -> str:
    """The contract's message naming the values of `attribute` that were refused."""
    require(attribute, str, "attribute", "a targeting attribute name, e.g. device.geo.country")
    require(values, (list, tuple), "values", "the refused values as a list")
    prefix = _VALUES_PREFIX.get(attribute, f"{attribute} value(s) not available for targeting")
    return f"{prefix}: {', '.join(str(v) for v in values)}"


_LIST = r":\s*(?P<list>.*)$"
_PATTERNS: tuple[tuple[re.Pattern[str], DealRuleKind], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE | re.DOTALL), kind)
    for pattern, kind in (
        (r"^takeRate is a decimal fraction", DealRuleKind.TAKE_RATE),
        (r"^startDate must be today or later", DealRuleKind.START_DATE),
        (
            r"^runOfNetwork and targeting are mutually exclusive",
            DealRuleKind.RUN_OF_NETWORK_AND_TARGETING,
        ),
        (r"^at most 25 targeting groups", DealRuleKind.TOO_MANY_TARGETING_GROUPS),
        (r"^unknown audience segment id\(s\)" + _LIST, DealRuleKind.UNKNOWN_SEGMENTS),
        (
            r"^country code\(s\) not available for targeting" + _LIST,
            DealRuleKind.COUNTRY_NOT_AVAILABLE,
        ),
        (
            r"^device\.deviceType value\(s\) not available for targeting" + _LIST,
            DealRuleKind.DEVICE_TYPE_NOT_AVAILABLE,
        ),
        (
            r"^\S+ value\(s\) not available for targeting" + _LIST,
            DealRuleKind.TARGETING_VALUE_NOT_AVAILABLE,
        ),
        # The contract's anonymised text says "the service id(s)"; the attribute is publisher.id.
        (
            r"^(?:publisher|the service)(?:\.id)? id\(s\) not valid" + _LIST,
            DealRuleKind.PUBLISHER_ID_INVALID,
        ),
        (r"^schedule\.endDate is required", DealRuleKind.END_DATE_REQUIRED),
        (r"^open deals are non-seat", DealRuleKind.OPEN_DEAL_SEATS),
        (r"^buyers cannot be edited on an open deal", DealRuleKind.OPEN_DEAL_BUYERS),
        (r"^Invalid option: expected one of \"active\"", DealRuleKind.INVALID_STATUS),
        (
            r"^status is not settable on this deal.*?(?:\((?P<detail>[^()]*)\))?\s*$",
            DealRuleKind.STATUS_NOT_SETTABLE,
        ),
        (r"^Invalid deal request ID", DealRuleKind.INVALID_DEAL_ID),
    )
)
_SEATS = re.compile(r"^body/buyers/\d+/seatIds$")
_PATH_START = r"(?:body|params|querystring|headers)(?=[/\s]|$)"
_BETWEEN_FAILURES = re.compile(r",\s*(?=" + _PATH_START + ")")
_PATH = re.compile(r"^(?P<path>" + _PATH_START + r"\S*)\s*(?P<message>.*)$", re.DOTALL)


def split_validation_message(message: str) -> list[DealFailure]:
    """Cut a validation message into one failure per field (the service joins them with commas).

    A comma only separates failures when a field path follows it, so lists inside a message
    (`unknown audience segment id(s): 1, 2`) stay whole.
    """
    require(message, str, "message", "the `message` of a 400 answer")
    return [_with_path(part) for part in _BETWEEN_FAILURES.split(message.strip()) if part.strip()]


def _with_path(part: str) -> DealFailure:
    match = _PATH.match(part.strip())
    if match is None:
        return parse_failure("", part.strip())
    return parse_failure(match["path"], match["message"].strip())


def parse_failure(path: str, message: str) -> DealFailure:
    """A failure for `message` at `path`, with its kind, the values it lists and any detail."""
    require(path, str, "path", 'a field path such as "body/commercial/takeRate", or ""')
    require(message, str, "message", "the message after the path")
    for pattern, kind in _PATTERNS:
        match = pattern.match(message)
        if match is None:
            continue
        groups = match.groupdict()
        values = tuple(v.strip().strip("'\"") for v in (groups.get("list") or "").split(","))
        return DealFailure(
            path, message, kind, tuple(v for v in values if v), (groups.get("detail") or "").strip()
        )
    if _SEATS.match(path) and message.startswith(("Invalid input", "Too small")):
        return DealFailure(path, message, DealRuleKind.SEATS_REQUIRED)
    return DealFailure(path, message)
