"""Seed data of the deals sandbox: accounts, demand platforms, targeting value lists, stored deals.

Everything a test or a person trying the client needs to meet each documented case: an active
deal, an archived one, an open deal, one whose buyers are all on a DSP that manages status itself,
and one on another account.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

__all__ = [
    "ACCOUNT",
    "COUNTRIES",
    "DISABLED_ACCOUNT",
    "DSPS",
    "OTHER_ACCOUNT",
    "SEEDED",
    "TARGETING_VALUES",
    "UPSTREAM",
    "Dsp",
    "seed_deals",
]

ACCOUNT = "acct-1001"  # enabled for the API; owns the write and read keys
DISABLED_ACCOUNT = "acct-2002"  # not enabled: 403 Partner not authorized for this API
OTHER_ACCOUNT = "acct-3003"  # owns deal 9001, which the sandbox keys cannot see
UPSTREAM = "dealhub"  # the downstream deal system named in 502s


@dataclass(frozen=True)
class Dsp:
    """A demand platform's traits that change what the service accepts."""

    manages_status: bool = False  # status set through its own integration: not settable here
    requires_end_date: bool = False


DSPS = {
    "alphadsp": Dsp(),
    "betadsp": Dsp(requires_end_date=True),
    "gammadsp": Dsp(manages_status=True),
}

# 2-letter to 3-letter codes of the countries open for targeting (rule 3 converts them).
COUNTRIES = {
    "AU": "AUS",
    "BE": "BEL",
    "BR": "BRA",
    "CA": "CAN",
    "CH": "CHE",
    "DE": "DEU",
    "ES": "ESP",
    "FR": "FRA",
    "GB": "GBR",
    "IE": "IRL",
    "IN": "IND",
    "IT": "ITA",
    "JP": "JPN",
    "MX": "MEX",
    "NL": "NLD",
    "SE": "SWE",
    "US": "USA",
}

TARGETING_VALUES: dict[str, list[str]] = {
    "device.geo.country": sorted(COUNTRIES.values()),
    "device.geo.region": ["DE-BE", "FR-IDF", "GB-ENG", "US-CA", "US-NY", "US-TX"],
    "device.language": ["de", "en", "es", "fr", "it", "ja", "nl", "pt"],
    "device.deviceType": ["ctv", "desktop", "mobile", "tablet"],
    "audience.segmentids": ["1001", "1002", "1003", "2001", "2002"],
    "content.categorization.v3": ["1", "52", "150", "483", "596"],
    "content.categorization.v1": ["IAB1", "IAB2", "IAB3", "IAB17", "IAB19"],
}

SEEDED = {
    "active": "1001",
    "archived": "1002",
    "open": "1003",
    "status_managed": "1004",
    "other_account": "9001",
}


def seed_deals(today: date) -> dict[str, tuple[str, dict[str, Any]]]:
    """The stored deals by id, each with its owning account, as of `today`."""
    schedule = {"startDate": (today - timedelta(days=30)).isoformat()}

    def deal(deal_id: str, **fields: Any) -> dict[str, Any]:
        return {
            "id": deal_id,
            "type": "private",
            "status": "active",
            "statusSettable": True,
            "buyers": [{"dsp": "alphadsp", "seatIds": ["seat-1"]}],
            "commercial": {"takeRate": 0.2},
            "schedule": dict(schedule),
            "targeting": [{"device.geo.country": ["USA"]}],
        } | fields

    return {
        "1001": (ACCOUNT, deal("1001", name="Spring sports")),
        "1002": (ACCOUNT, deal("1002", name="Last year's retail", status="archived")),
        "1003": (
            ACCOUNT,
            deal("1003", name="Open auction", type="open", buyers=[{"dsp": "alphadsp"}]),
        ),
        "1004": (
            ACCOUNT,
            deal(
                "1004",
                name="Managed by gammadsp",
                statusSettable=False,
                buyers=[{"dsp": "gammadsp", "seatIds": ["g-7"]}],
            ),
        ),
        "9001": (OTHER_ACCOUNT, deal("9001", name="Someone else's")),
    }
