"""What the deals sandbox refuses, in the words of contract part 7.2.

`validate_create` and `validate_patch` return the validation failures of a body, each as
`"<path> <message>"`, in the order a Fastify schema and the service's submit-time rules report
them; the app joins them with commas. The rules checked against a stored deal (open deal, status
not settable) live in the app, which holds the deals. Written from the contract alone: the sandbox
shares no code with the client.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from .deals_world import COUNTRIES, DSPS, TARGETING_VALUES

__all__ = [
    "MAX_TARGETING_GROUPS",
    "STATUSES",
    "normalise_targeting",
    "validate_create",
    "validate_id",
    "validate_patch",
]

STATUSES = ("active", "paused", "archived", "scheduled")
MAX_TARGETING_GROUPS = 25
_DEAL_ID = re.compile(r"^[1-9][0-9]{0,17}$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_END_DATE_REQUIRED = "schedule.endDate is required for buyers on a demand platform that requires it"
_OPEN_DEAL_SEATS = "open deals are non-seat: omit seatIds — each buyer carries the DSP only"
_VALUES_MESSAGE = {
    "audience.segmentids": "unknown audience segment id(s)",
    "device.geo.country": "country code(s) not available for targeting",
}


def validate_id(deal_id: str) -> list[str]:
    return [] if _DEAL_ID.match(deal_id) else ["params/id Invalid deal request ID"]


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def validate_create(body: Any, today: date) -> list[str]:
    """Failures of a create (dry run included): schema first, then the submit-time rules."""
    if not isinstance(body, dict):
        return ["body must be object"]
    missing = [
        f"body must have required property '{name}'"
        for name in ("buyers", "commercial", "schedule")
        if name not in body
    ]
    if missing:
        return missing
    failures = []
    buyers = body["buyers"]
    if not isinstance(buyers, list) or not buyers:
        failures.append("body/buyers must be array with at least 1 item")
        buyers = []
    for i, buyer in enumerate(buyers):
        if not isinstance(buyer, dict) or not isinstance(buyer.get("dsp"), str):
            failures.append(f"body/buyers/{i} must have required property 'dsp'")
        elif "seatIds" in buyer and not isinstance(buyer["seatIds"], list):
            failures.append(f"body/buyers/{i}/seatIds must be array")
    if not isinstance(body["commercial"], dict) or "takeRate" not in body["commercial"]:
        failures.append("body/commercial must have required property 'takeRate'")
    if not isinstance(body["schedule"], dict) or "startDate" not in body["schedule"]:
        failures.append("body/schedule must have required property 'startDate'")
    failures += _shared(body, today)
    if failures:
        return failures
    return _create_rules(body)


def _create_rules(body: dict[str, Any]) -> list[str]:
    failures = []
    dsps = [DSPS.get(b["dsp"]) for b in body["buyers"]]
    if any(d and d.requires_end_date for d in dsps) and "endDate" not in body["schedule"]:
        failures.append(f"body/schedule/endDate {_END_DATE_REQUIRED}")
    if body.get("type") == "open":
        failures += [
            f"body/buyers/{i}/seatIds {_OPEN_DEAL_SEATS}"
            for i, buyer in enumerate(body["buyers"])
            if "seatIds" in buyer
        ]
    return failures


def validate_patch(body: Any, today: date) -> list[str]:
    """Failures of an update: every buyer lists at least one seat, then the shared rules."""
    if not isinstance(body, dict):
        return ["body must be object"]
    failures = []
    buyers = body.get("buyers", [])
    if not isinstance(buyers, list):
        failures.append(f"body/buyers Invalid input: expected array, received {_json_type(buyers)}")
        buyers = []
    for i, buyer in enumerate(buyers):
        present = isinstance(buyer, dict) and "seatIds" in buyer
        seats = buyer["seatIds"] if present else None
        if not isinstance(seats, list):
            received = _json_type(seats) if present else "undefined"
            message = f"Invalid input: expected array, received {received}"
            failures.append(f"body/buyers/{i}/seatIds {message}")
        elif not seats:
            failures.append(f"body/buyers/{i}/seatIds Too small: expected array to have >=1 items")
    return failures + _shared(body, today)


def _shared(body: dict[str, Any], today: date) -> list[str]:
    """Rules of both creates and updates, for the fields present."""
    failures = []
    if "status" in body and body["status"] not in STATUSES:
        failures.append(
            'body/status Invalid option: expected one of "active"|"paused"|"archived"|"scheduled"'
        )
    commercial = body.get("commercial")
    if isinstance(commercial, dict) and "takeRate" in commercial:
        rate = commercial["takeRate"]
        if _json_type(rate) != "number" or not 0 <= rate <= 0.85:
            failures.append("body/commercial/takeRate takeRate is a decimal fraction; expected 0 ≤ x ≤ 0.85")
    schedule = body.get("schedule")
    if isinstance(schedule, dict):
        failures += _dates(schedule, today)
    targeting = body.get("targeting")
    if body.get("runOfNetwork") and targeting:
        failures.append("body runOfNetwork and targeting are mutually exclusive; provide one or the other")
    if targeting is not None:
        failures += _targeting(targeting)
    return failures


def _dates(schedule: dict[str, Any], today: date) -> list[str]:
    failures = []
    for name in ("startDate", "endDate"):
        value = schedule.get(name)
        if value is not None and not (isinstance(value, str) and _DATE.match(value) and _is_date(value)):
            failures.append(f'body/schedule/{name} must match format "date"')
    start = schedule.get("startDate")
    if not failures and isinstance(start, str) and date.fromisoformat(start) < today:
        failures.append("body/schedule/startDate startDate must be today or later (UTC)")
    return failures


def _is_date(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _targeting(targeting: Any) -> list[str]:
    if not isinstance(targeting, list) or not all(isinstance(g, dict) for g in targeting):
        return ["body/targeting must be array of objects"]
    if len(targeting) > MAX_TARGETING_GROUPS:
        return ["body/targeting at most 25 targeting groups per deal request"]
    failures = []
    for i, group in enumerate(targeting):
        for attribute, given in group.items():
            values = given if isinstance(given, list) else [given]
            bad = _refused(attribute, values)
            if bad:
                failures.append(f"body/targeting/{i}/{attribute} {_message(attribute)}: {', '.join(bad)}")
    return failures


def _refused(attribute: str, values: list[Any]) -> list[str]:
    if attribute == "publisher.id":
        return [str(v) for v in values if not _is_publisher_id(v)]
    if attribute == "device.geo.country":
        return [str(v) for v in values if _country(v) is None]
    allowed = TARGETING_VALUES.get(attribute)
    if allowed is None:  # free text, adUnit.size included: not validated (rule 4)
        return []
    return [str(v) for v in values if str(v) not in allowed]


def _message(attribute: str) -> str:
    if attribute == "publisher.id":
        return "publisher id(s) not valid"
    return _VALUES_MESSAGE.get(attribute, f"{attribute} value(s) not available for targeting")


def _is_publisher_id(value: Any) -> bool:
    return _json_type(value) == "number" and float(value).is_integer() and 1 <= value <= 2_147_483_647


def _country(value: Any) -> str | None:
    """The 3-letter code of a targetable country given in 2 or 3 letters, else None."""
    code = str(value).upper()
    code = COUNTRIES.get(code, code)
    return code if code in TARGETING_VALUES["device.geo.country"] else None


def normalise_targeting(targeting: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Targeting as stored: 2-letter country codes converted to their 3-letter codes (rule 3)."""
    return [
        {
            k: [_country(c) for c in (v if isinstance(v, list) else [v])] if k == "device.geo.country" else v
            for k, v in group.items()
        }
        for group in targeting
    ]
