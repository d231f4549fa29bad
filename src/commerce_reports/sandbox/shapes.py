"""A transaction row as served: the nested shape of contract 2.1, or the flat shape of the notes.

The flat shape is derived from the nested one (groups merged, a few fields renamed, the device as
a DSK/MBL/TBL/UKN code) so that the two can never disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, timedelta
from typing import Any

from .catalog import DEVICE_CODES, DEVICES

__all__ = ["flat", "nested"]

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
