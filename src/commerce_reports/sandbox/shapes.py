"""A transaction row as served: the contract's nested or flat shape, or the published dialect's.

The flat shape is derived from the nested one (groups merged, a few fields renamed, the device as
a DSK/MBL/TBL/UKN code) so that the two can never disagree. The published element follows the
vendor's `TransactionModel`: every property present with its declared type, nothing else; without
click detail the click's strings are empty and its codes are UNK (product) and UKN (device).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Any

from .catalog import DEVICE_CODES, DEVICES

__all__ = ["Row", "flat", "nested", "published"]

_EPOCH = date(1970, 1, 1)
_UTM_KEYS = ("Source", "Medium", "Campaign", "Term", "Content")
_FLAT_NAMES = {
    "publisherNetRevenue": "publisherRevenue",
    "linkUrl": "destinationUrl",
    "partnerProduct": "affProduct",
    "network": "networkName",
}

Row = Mapping[str, Any]


def _day(number: int) -> str:
    return (_EPOCH + timedelta(number)).isoformat()


def _utm(row: Row, where: str) -> dict[str, str]:
    return {f"utm{key}": row[f"{where}_utm_{key.lower()}"] for key in _UTM_KEYS}


def _click(row: Row) -> dict[str, object]:
    """The click group; without click detail either empty fields or nothing (rule 2 of 2.1)."""
    if not row["detail"]:
        if int(row["cid"]) % 3 == 0:
            return {}
        empty = {f"utm{key}": "" for key in _UTM_KEYS}
        return {
            "clickId": "",
            "clickDate": "",
            "cuid": "",
            "linkUtmInfo": empty,
            "pageUtmInfo": dict(empty),
            "partnerProduct": "",
            "country": "",
        }
    click: dict[str, object] = {
        "clickId": row["click_id"],
        "clickDate": _day(row["click_day"]),
        "cuid": row["cuid"],
        "linkUtmInfo": _utm(row, "link"),
        "pageUtmInfo": _utm(row, "page"),
        "pageUrl": row["page_url"],
        "linkUrl": row["link_url"],
        "partnerProduct": row["partner_product"],
        "country": row["country_code"],
    }
    device = DEVICES[row["device"]]
    if device is not None:
        click["device"] = device
    return click


def _groups(row: Row, account_id: int) -> dict[str, dict[str, object]]:
    return {
        "account": {
            "accountId": account_id,
            "campaignId": row["campaign_id"],
            "campaignName": row["campaign_name"],
        },
        "commission": {
            "revenueId": f"rv{row['cid']}",
            "commissionId": row["cid"],
            "commissionDate": _day(row["commission_day"]),
            "updateDate": _day(row["update_day"]),
            "orderValue": row["order_cents"] / 100,
            "publisherNetRevenue": row["revenue_cents"] / 100,
            "programType": row["program_type"],
        },
        "click": _click(row),
        "merchant": {
            "merchantGroupId": row["merchant_group_id"],
            "merchantGroupName": row["merchant_group_name"],
            "network": row["network"],
        },
    }


def _products(row: Row) -> list[dict[str, object]]:
    return [
        {
            "productId": item["product_id"],
            "productName": item["product_name"],
            "price": item["price_cents"] / 100,
            "quantity": item["quantity"],
        }
        for item in row["items"]
    ]


def nested(row: Row, account_id: int) -> dict[str, object]:
    """One element of `transactions` in the nested shape (contract 2.1)."""
    return {**_groups(row, account_id), "product": _products(row)}


def flat(row: Row, account_id: int) -> dict[str, object]:
    """One element of `transactions` in the flat shape of the notes."""
    merged: dict[str, object] = {}
    for fields in _groups(row, account_id).values():
        merged.update(fields)
    merged.pop("device", None)
    if row["detail"]:
        merged["deviceType"] = DEVICE_CODES[row["device"]]
    merged["merchandise"] = _products(row)
    return {_FLAT_NAMES.get(name, name): value for name, value in merged.items()}


_FIXED_STYLES = ("iso", "datetime", "slashes", "us", "epoch-ms")
_STRFTIME = {"iso": "%Y-%m-%d", "datetime": "%Y-%m-%dT%H:%M:%SZ", "slashes": "%Y/%m/%d", "us": "%m/%d/%Y"}


def _written(ts: int, style: str) -> str:
    """The UTC day of epoch second `ts` in a date style (epoch-ms: the moment, as a digit string)."""
    if style == "epoch-ms":
        return str(ts * 1000)  # the published type is string, so the digits go out quoted
    return datetime.fromtimestamp(ts, UTC).strftime(_STRFTIME[style])


def published(row: Row, account_id: int, date_style: str = "iso") -> dict[str, object]:
    """One element of `transactions` in the published dialect (`TransactionModel`).

    `date_style` "mixed" rotates the five styles over rows and over the three dates of a row.
    """
    detail = bool(row["detail"])
    number = int(row["cid"])

    def written(column: str, k: int) -> str:
        style = _FIXED_STYLES[(number + k) % len(_FIXED_STYLES)] if date_style == "mixed" else date_style
        return _written(row[column], style)

    empty = {f"utm{key}": "" for key in _UTM_KEYS}
    return {
        "revenueId": number,
        "clickSid": row["click_id"] if detail else "",
        "accountId": account_id,
        "commissionId": row["cid"],
        "merchantGroupId": row["merchant_group_id"],
        "merchantGroupName": row["merchant_group_name"],
        "campaignId": row["campaign_id"],
        "campaignName": row["campaign_name"],
        "clickDate": written("click_ts", 0) if detail else "",
        "commissionDate": written("commission_ts", 1),
        "updateDate": written("update_ts", 2),
        "publisherRevenue": row["revenue_cents"] / 100,
        "orderValue": row["order_cents"] / 100,
        "cuid": row["cuid"] if detail else "",
        "linkUtmInfo": _utm(row, "link") if detail else empty,
        "pageUtmInfo": _utm(row, "page") if detail else dict(empty),
        "destinationUrl": row["link_url"] if detail else "",
        "pageUrl": row["page_url"] if detail else "",
        "affProduct": row["partner_code"] if detail else "UNK",
        "affProductSubType": row["partner_subtype"] if detail else "",
        "programType": row["program_type"],
        "networkName": row["network"],
        "country": row["country_code"] if detail else "",
        "deviceType": DEVICE_CODES[row["device"]] if detail else "UKN",
        "merchandise": _products(row),
    }
