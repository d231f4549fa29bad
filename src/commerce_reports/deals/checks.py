"""Local checks run before a deal request is sent, with the contract's own messages (4.4, 7.2).

They catch what the service would refuse with a 400 without spending a request (or a rate-limit
slot) on it. Failures come in the service's order; the seat rule of an update comes before the
open-deal rule, as the service orders them. Malformed `adUnit.size` tokens are only warned about:
the service takes them silently and the deal then never matches traffic.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from . import messages as m
from .errors import DealArgumentError, DealFailure, DealRuleKind, require
from .models import STATUSES, Deal

__all__ = [
    "ENUMERATED_ATTRIBUTES",
    "MAX_PUBLISHER_ID",
    "MAX_TAKE_RATE",
    "MAX_TARGETING_GROUPS",
    "AdUnitSizeWarning",
    "CheckReport",
    "check_create",
    "check_targeting_values",
    "check_update",
]

ENUMERATED_ATTRIBUTES = (
    "device.geo.country",
    "device.geo.region",
    "device.language",
    "device.deviceType",
    "audience.segmentids",
    "content.categorization.v3",
    "content.categorization.v1",
)
MAX_TARGETING_GROUPS = 25
MAX_TAKE_RATE = 0.85
MAX_PUBLISHER_ID = 2_147_483_647
_AD_SIZE = re.compile(r"^[1-9][0-9]{0,4}x[1-9][0-9]{0,4}$")
_COUNTRY_ALPHA2 = re.compile(r"^[A-Za-z]{2}$")


class AdUnitSizeWarning(UserWarning):
    """An `adUnit.size` token is malformed: the service accepts it and the deal never matches."""


@dataclass(frozen=True)
class CheckReport:
    """What the local checks found: failures (nothing may be sent) and warnings (send anyway)."""

    failures: list[DealFailure] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def check_create(deal: Deal, today: date) -> CheckReport:
    """Check a deal about to be created (dry run included) against the contract's rules."""
    return _check(deal, today, update=False)


def check_update(changes: Deal, today: date) -> CheckReport:
    """Check the changes of an update: every buyer must list a seat, besides the shared rules."""
    return _check(changes, today, update=True)


def _check(deal: Deal, today: date, *, update: bool) -> CheckReport:
    require(deal, Deal, "deal" if not update else "changes", "a Deal, e.g. Deal.from_dict({...})")
    require(today, date, "today", "today's date (UTC), e.g. date(2031, 3, 10)")
    failures = [
        *_status(deal),
        *_buyers(deal, update=update),
        *_take_rate(deal),
        *_start_date(deal, today),
        *_targeting_shape(deal),
        *_publisher_ids(deal),
    ]
    return CheckReport(failures, _ad_size_warnings(deal))


def _status(deal: Deal) -> list[DealFailure]:
    if deal.status is None or deal.status in STATUSES:
        return []
    return [DealFailure("body/status", m.STATUS_INVALID, DealRuleKind.INVALID_STATUS)]


def _buyers(deal: Deal, *, update: bool) -> list[DealFailure]:
    buyers = deal.buyers or []
    if update:
        missing = [
            DealFailure(
                f"body/buyers/{i}/seatIds",
                m.SEATS_MISSING if buyer.seat_ids is None else m.SEATS_EMPTY,  # as the service says
                DealRuleKind.SEATS_REQUIRED,
            )
            for i, buyer in enumerate(buyers)
            if not buyer.seat_ids
        ]
        if missing:
            return missing
    if not deal.is_open:
        return []
    return [
        DealFailure(f"body/buyers/{i}/seatIds", m.OPEN_DEAL_SEATS, DealRuleKind.OPEN_DEAL_SEATS)
        for i, buyer in enumerate(buyers)
        if buyer.seat_ids is not None
    ]


def _take_rate(deal: Deal) -> list[DealFailure]:
    rate = deal.commercial.take_rate if deal.commercial else None
    if rate is None:
        return []
    if isinstance(rate, int | float) and not isinstance(rate, bool) and 0 <= rate <= MAX_TAKE_RATE:
        return []
    return [DealFailure("body/commercial/takeRate", m.TAKE_RATE, DealRuleKind.TAKE_RATE)]


def _start_date(deal: Deal, today: date) -> list[DealFailure]:
    if deal.schedule is None or deal.schedule.start_date is None:
        return []
    start = deal.schedule.start
    if start is None:
        return [DealFailure("body/schedule/startDate", 'must match format "date"')]
    if start < today:
        return [DealFailure("body/schedule/startDate", m.START_DATE, DealRuleKind.START_DATE)]
    return []


def _targeting_shape(deal: Deal) -> list[DealFailure]:
    failures = []
    if deal.run_of_network and deal.targeting:
        kind = DealRuleKind.RUN_OF_NETWORK_AND_TARGETING
        failures.append(DealFailure("body", m.RUN_OF_NETWORK_AND_TARGETING, kind))
    if len(deal.targeting or []) > MAX_TARGETING_GROUPS:
        kind = DealRuleKind.TOO_MANY_TARGETING_GROUPS
        failures.append(DealFailure("body/targeting", m.TOO_MANY_GROUPS, kind))
    return failures


def _is_publisher_id(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return float(value).is_integer() and 1 <= value <= MAX_PUBLISHER_ID


def _publisher_ids(deal: Deal) -> list[DealFailure]:
    failures = []
    for i, group in enumerate(deal.targeting or []):
        bad = [str(v) for v in group.criteria.get("publisher.id", []) if not _is_publisher_id(v)]
        if bad:
            message = m.values_message("publisher.id", bad)
            kind = DealRuleKind.PUBLISHER_ID_INVALID
            failures.append(DealFailure(f"body/targeting/{i}/publisher.id", message, kind, tuple(bad)))
    return failures


def _ad_size_warnings(deal: Deal) -> list[str]:
    return [
        f"body/targeting/{i}/adUnit.size: {token!r} is not WIDTHxHEIGHT (e.g. 300x250); the "
        "service accepts it silently and the deal will never match traffic"
        for i, group in enumerate(deal.targeting or [])
        for token in group.criteria.get("adUnit.size", [])
        if not (isinstance(token, str) and _AD_SIZE.match(token))
    ]


def check_targeting_values(deal: Deal, values_of: Callable[[str], Sequence[str]]) -> list[DealFailure]:
    """Check enumerated targeting values against the service's lists (`values_of(attribute)`).

    Values match as listed, letter for letter (the service refuses `EN` for `en`); a 2-letter
    country code is taken as the 3-letter code the service converts it to.
    """
    require(deal, Deal, "deal", "a Deal, e.g. Deal.from_dict({...})")
    if not callable(values_of):
        raise DealArgumentError(
            "values_of", f"got {type(values_of).__name__}, not a function", "e.g. client.targeting_values"
        )
    failures = []
    for i, group in enumerate(deal.targeting or []):
        for attribute in ENUMERATED_ATTRIBUTES:
            given = group.criteria.get(attribute)
            if not given:
                continue
            allowed = {str(v) for v in values_of(attribute)}
            bad = [str(v) for v in given if not _allowed(attribute, v, allowed)]
            if bad:
                message = m.values_message(attribute, bad)
                failures.append(m.parse_failure(f"body/targeting/{i}/{attribute}", message))
    return failures


def _allowed(attribute: str, value: Any, allowed: set[str]) -> bool:
    """Whether the service takes `value`: as listed, letter for letter; a country in 2 or 3
    letters of either case, as the 3-letter code it stands for (rule 3: `us` for `USA`; `ZZ`,
    no country, is refused by the service, not converted)."""
    if attribute != "device.geo.country":
        return str(value) in allowed
    code = str(value).upper()
    if _COUNTRY_ALPHA2.match(code):
        import pycountry  # (its tables load at the first country checked)

        country = pycountry.countries.get(alpha_2=code)
        code = "" if country is None else country.alpha_3
    return code in allowed
